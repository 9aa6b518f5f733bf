"""How a failing rank ends the whole job, naming itself, instead of leaving the others waiting.

Note [A rank that dies]
-----------------------
There are three ways a rank stops while the others still expect it in a collective:

1. It is killed (SIGKILL, out of memory, a segfault). mpiexec (MPICH's Hydra) notices that
   one of its processes ended abnormally and kills the rest within about a second, printing
   "BAD TERMINATION ... PID <pid> ... EXIT CODE: 9". The launcher
   (`python -m ember.distributed.run`) maps that pid back to the rank it recorded at start-up
   and reports "rank 1 (pid ...) was killed by signal 9 (SIGKILL)".

2. It raises an exception that nobody catches. This is the dangerous case: Python prints the
   traceback, then mpi4py's exit handler calls MPI_Finalize, which waits for the other ranks
   — who wait in their collective for this one. Nobody ever exits. (mpi4py documents the
   same trap and offers `python -m mpi4py script.py` as its cure.) So init_process_group
   installs a sys.excepthook that, after printing the traceback, prints
   "ember.distributed: rank 1 of 2 failed with ValueError: ...; aborting all ranks" and calls
   MPI_Abort on COMM_WORLD, which makes mpiexec end every rank at once with a non-zero exit
   status. The launcher's worker entry catches the exception itself (to write the error
   record the launcher reports) and then takes the same path.

   Without mpiexec (processes started by mp.spawn or by hand, joined by _pmi.py), ember's
   own process manager sees the dead rank's connection close and tells the others, whose
   waits then fail naming it (exited_member below).

3. Its program ends normally while the others still wait for it (it ran out of data, or
   returned early). Python exits, mpi4py's exit handler enters MPI_Finalize, and the others
   would wait for their timeout. So init_process_group also registers an exit handler that
   runs before MPI_Finalize and sends each other rank a one-word notice, "rank k has
   exited", on a communicator of its own. A rank waiting for a collective looks for such
   notices while it polls (Note [Waiting without hanging] in work.py); if the exited rank
   belongs to the collective's group, the wait fails at once with a DistBackendError naming
   it, which, uncaught, is case 2 on that rank's side. At the normal end of a program every
   rank sends its notices and nobody is waiting for them; they are simply never received.

4. It is stuck (a deadlock, an endless loop). Nothing announces it: the others' waits time
   out after the process group's timeout with a DistBackendError, and again case 2 follows.

In every case mpiexec returns non-zero, the output names the rank that failed first, and no
rank waits longer than the process group's timeout.
"""
import atexit
import os
import signal
import sys
import time
import traceback

import numpy as np

from . import _mpi

_installed = False
_previous_hook = None
_notices = None         # the communicator exit notices travel on (case 3)
_exited = set()         # global ranks known to have exited
_died = {}              # global rank -> how it died, as the process manager saw it (_pmi.py)
_EXIT_TAG = 7


def describe_exception(exc_type, exc):
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{exc_type.__name__}: {first}" if first else exc_type.__name__


def abort_job(rank, world_size, what, code=1):
    """Print why rank `rank` is ending the job, then MPI_Abort every rank."""
    sys.stderr.write(f"ember.distributed: rank {rank} of {world_size} failed with {what}; "
                     f"aborting all ranks\n")
    sys.stderr.flush()
    sys.stdout.flush()
    # mpiexec forwards the ranks' output through pipes; once MPI_Abort starts tearing the
    # job down, what is still in a pipe may be lost. Give it a moment to get through.
    time.sleep(0.3)
    if _mpi.is_initialized():
        _mpi.MPI().COMM_WORLD.Abort(code)
    os._exit(code)


def _excepthook(exc_type, exc, tb):
    (_previous_hook or sys.__excepthook__)(exc_type, exc, tb)
    MPI = _mpi.MPI()
    world = MPI.COMM_WORLD
    if issubclass(exc_type, KeyboardInterrupt):
        code = 128 + signal.SIGINT
    else:
        code = 1
    abort_job(world.Get_rank(), world.Get_size(), describe_exception(exc_type, exc), code)


def abort_on_uncaught_exception():
    """Install the hook of case 2 above (once per process, chaining to the previous hook)."""
    global _installed, _previous_hook
    if _installed:
        return
    _installed = True
    _previous_hook = sys.excepthook
    sys.excepthook = _excepthook


def watch_exits(world_comm):
    """Case 3: announce this rank's exit to the others, and be able to hear theirs."""
    global _notices
    if _notices is None:
        _notices = world_comm.Dup()
        atexit.register(_announce_exit)


def _announce_exit():
    try:
        MPI = _mpi.MPI()
        if MPI.Is_finalized():
            return
        me, size = _notices.Get_rank(), _notices.Get_size()
        word = np.array([me], dtype=np.int64)
        requests = [_notices.Isend(word, peer, _EXIT_TAG) for peer in range(size) if peer != me]
        deadline = time.monotonic() + 1.0
        while not MPI.Request.Testall(requests) and time.monotonic() < deadline:
            time.sleep(1e-4)
    except Exception:   # exiting anyway: a notice that cannot be sent is not worth a traceback
        pass


def peer_died(rank, how):
    """Called from _pmi.py's watch thread: the process manager saw rank `rank` die."""
    _died.setdefault(rank, how)


def how_it_ended(rank):
    """What is known of how rank `rank` stopped: how it died, or that its program ended."""
    if rank in _died:
        return f"rank {rank} has died: {_died[rank]}"
    return f"rank {rank} has exited (its program ended)"


def exited_member(group):
    """A global rank of `group` that has announced its exit or been seen dying, or None."""
    for rank in group._ranks:
        if rank in _died:
            return rank
    if _notices is None:
        return None
    MPI = _mpi.MPI()
    status = MPI.Status()
    word = np.zeros(1, dtype=np.int64)
    while _notices.Iprobe(MPI.ANY_SOURCE, _EXIT_TAG, status):
        _notices.Recv(word, status.Get_source(), _EXIT_TAG)
        _exited.add(int(word[0]))
    for rank in group._ranks:
        if rank in _exited:
            return rank
    return None


def format_exception(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
