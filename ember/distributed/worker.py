"""The entry of each rank started by `python -m ember.distributed.run` (torchrun's worker side).

mpiexec starts `python -m ember.distributed.worker script.py args...` N times. Each copy:

1. works out its rank and local rank from what mpiexec set (PMI_RANK, MPI_LOCALRANKID for
   MPICH; OMPI_COMM_WORLD_* for Open MPI; ...) and exports them the way torchrun does
   (RANK, LOCAL_RANK, ROLE_RANK, ...), so the script can read them before it initialises
   anything;
2. leaves a start record (rank, pid, host) in the run directory, so that the launcher can
   name a rank that mpiexec reports only by pid;
3. runs the script as `__main__` (or a module with --module, or a program with --no-python);
4. if the script raises (or exits with a non-zero status), writes an error record with the
   traceback (torchrun's error file) and ends the job through MPI_Abort (failure.py).
"""
import json
import os
import runpy
import socket
import sys
import time
import traceback

from . import failure
from .process_group import launcher_env, MPI_RANK_VARS, MPI_SIZE_VARS, MPI_LOCAL_RANK_VARS


def _export_rank_environment():
    """RANK, LOCAL_RANK, WORLD_SIZE (and ROLE_RANK) from what mpiexec set."""
    rank = launcher_env(MPI_RANK_VARS)
    rank = launcher_env(("RANK",)) if rank is None else rank
    size = launcher_env(MPI_SIZE_VARS) or launcher_env(("WORLD_SIZE",)) or 1
    local = launcher_env(MPI_LOCAL_RANK_VARS)
    rank = 0 if rank is None else rank
    local = rank if local is None else local
    os.environ.update({"RANK": str(rank), "LOCAL_RANK": str(local), "ROLE_RANK": str(rank),
                       "WORLD_SIZE": str(size)})
    return rank, local, size


def _record(run_dir, fields):
    """Write this rank's record (atomically: the launcher may read it at any time)."""
    if not run_dir:
        return
    path = os.path.join(run_dir, f"rank_{fields['rank']}.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(fields, f)
    os.replace(tmp, path)


def _script_traceback(exc):
    """The traceback from the script's first frame on (without this entry and runpy)."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename == __file__ or
                              tb.tb_frame.f_code.co_filename.startswith("<frozen")):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def main(argv):
    module = no_python = False
    while argv and argv[0] in ("--module", "--no-python"):
        module |= argv[0] == "--module"
        no_python |= argv[0] == "--no-python"
        argv = argv[1:]
    if not argv:
        sys.exit("usage: python -m ember.distributed.worker [--module|--no-python] script "
                 "[args...]")
    rank, local, size = _export_rank_environment()
    run_dir = os.environ.get("EMBER_RUN_DIR")
    start = dict(rank=rank, local_rank=local, pid=os.getpid(), host=socket.gethostname())
    _record(run_dir, start)
    if no_python:
        os.execvp(argv[0], argv)
    sys.argv = list(argv)
    try:
        if module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code in (None, 0):
            raise
        what = f"SystemExit({e.code!r})"
        _record(run_dir, dict(start, time=time.time(), error=what, traceback=""))
        failure.abort_job(rank, size, what, e.code if isinstance(e.code, int) else 1)
    except BaseException as e:
        tb = _script_traceback(e)
        sys.stderr.write(tb)
        what = failure.describe_exception(type(e), e)
        _record(run_dir, dict(start, time=time.time(), error=what, traceback=tb))
        failure.abort_job(rank, size, what)


if __name__ == "__main__":
    main(sys.argv[1:])
