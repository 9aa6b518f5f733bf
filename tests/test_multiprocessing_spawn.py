"""ember.multiprocessing.spawn / start_processes / ProcessContext against
torch.multiprocessing's: the same exception types, fields and messages when a child raises,
exits non-zero or is killed by a signal, the other children terminated, and join(timeout).

The comparisons start their children with the 'fork' method (start_processes), which skips
each child's re-import of ember/torch (seconds on a loaded machine); the 'spawn' method itself
runs in the success, join and termination tests.

The children run functions from tests/distributed_programs/spawn_programs.py. A child that is
not terminated sleeps at most 60 s, so no test can wait longer than that plus the 30 s
SIGTERM grace (none should come near it: each asserts its elapsed time)."""
import os
import signal
import sys
import time
from pathlib import Path

import pytest

import ember.multiprocessing as mp
from ember.multiprocessing import (ProcessContext, ProcessExitedException,
                                   ProcessRaisedException, SpawnContext)

PROGRAMS = Path(__file__).resolve().parent / "distributed_programs"
sys.path.insert(0, str(PROGRAMS))
import spawn_programs  # noqa: E402

LIMIT = 45      # seconds any one spawn may take here (children sleep 60 s unless terminated)


def libraries():
    libs = [mp]
    try:
        import torch.multiprocessing
        libs.append(torch.multiprocessing)
    except ImportError:
        pass
    return libs


def failure(lib, fn, args, nprocs=2):
    """The exception lib.start_processes raises for `fn` (forked children)."""
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        lib.start_processes(fn, args=args, nprocs=nprocs, start_method="fork")
    elapsed = time.monotonic() - start
    assert elapsed < LIMIT, elapsed
    return info.value


def fields(e):
    out = {"type": type(e).__name__, "error_index": e.error_index, "msg": str(e)}
    if hasattr(e, "exit_code"):
        out.update(exit_code=e.exit_code, signal_name=e.signal_name)
    return out


def test_success_runs_every_index(tmp_path):
    assert mp.spawn(spawn_programs.ok, args=(str(tmp_path),), nprocs=2) is None
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1"]


def test_child_exception_carries_its_traceback():
    results = []
    for lib in libraries():
        e = failure(lib, spawn_programs.raise_in_one, (1,))
        assert type(e).__name__ == "ProcessRaisedException"
        text = str(e)
        assert text.startswith("\n\n-- Process 1 terminated with the following error:\n"), text
        assert "Traceback (most recent call last):" in text
        assert 'raise ValueError(f"process {i} is broken")' in text
        assert text.rstrip().endswith("ValueError: process 1 is broken"), text
        results.append((type(e).__name__, e.error_index, text.splitlines()[-1]))
    assert len(set(results)) == 1, results


def test_nonzero_exit_code():
    got = [fields(failure(lib, spawn_programs.exit_with, (1, 3))) for lib in libraries()]
    assert got[0] == {"type": "ProcessExitedException", "error_index": 1, "exit_code": 3,
                      "signal_name": None, "msg": "process 1 terminated with exit code 3"}
    assert all(g == got[0] for g in got), got


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_killed_by_signal(signum):
    got = [fields(failure(lib, spawn_programs.kill_self, (0, signum))) for lib in libraries()]
    name = signal.Signals(signum).name
    assert got[0] == {"type": "ProcessExitedException", "error_index": 0,
                      "exit_code": -int(signum), "signal_name": name,
                      "msg": f"process 0 terminated with signal {name}"}
    assert all(g == got[0] for g in got), got


def test_failure_terminates_the_others_and_join_false_returns_the_context():
    context = mp.spawn(spawn_programs.raise_in_one, args=(1,), nprocs=2, join=False)
    assert isinstance(context, ProcessContext) and len(context.processes) == 2
    assert context.pids() == [p.pid for p in context.processes]
    start = time.monotonic()
    with pytest.raises(ProcessRaisedException) as info:
        while not context.join(timeout=LIMIT):
            pass
    assert time.monotonic() - start < LIMIT
    assert info.value.error_index == 1 and info.value.error_pid == context.pids()[1]
    assert not any(p.is_alive() for p in context.processes)
    # the survivors were terminated by SIGTERM, not left sleeping
    assert [p.exitcode for p in context.processes] == [-signal.SIGTERM, 1]


def test_join_with_timeout_reports_progress():
    context = mp.start_processes(spawn_programs.sleep_then_ok, args=(1.5,), nprocs=2,
                                 join=False, start_method="fork")
    assert context.join(timeout=0.01) is False
    deadline = time.monotonic() + LIMIT
    while not context.join(timeout=1):
        assert time.monotonic() < deadline
    assert context.join() is True          # joining again is harmless
    assert [p.exitcode for p in context.processes] == [0, 0]


def test_exceptions_pickle_and_names():
    e = ProcessExitedException("process 1 terminated with signal SIGKILL", 1, 123, -9,
                               "SIGKILL")
    import pickle
    back = pickle.loads(pickle.dumps(e))
    assert (back.error_index, back.error_pid, back.exit_code, back.signal_name) == \
        (1, 123, -9, "SIGKILL")
    raised = pickle.loads(pickle.dumps(ProcessRaisedException("m", 0, 5)))
    assert (raised.msg, raised.error_index, raised.error_pid) == ("m", 0, 5)
    with pytest.warns(UserWarning, match="SpawnContext is renamed to ProcessContext"):
        SpawnContext([], [])
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(spawn_programs.sleep_then_ok, args=(0,), nprocs=1, start_method="fork")
    torch = pytest.importorskip("torch")
    import torch.multiprocessing as tmp
    for name in ("spawn", "start_processes", "ProcessContext", "SpawnContext",
                 "ProcessRaisedException", "ProcessExitedException"):
        assert hasattr(mp, name) and hasattr(tmp, name), name
    assert issubclass(ProcessExitedException, Exception)
    assert ProcessRaisedException.__mro__[1].__name__ == \
        tmp.ProcessRaisedException.__mro__[1].__name__ == "ProcessException"
