"""DataLoader worker processes: start methods, faults, shutdown, and what they leave behind.

This module does not import torch at the top: a 'spawn' or 'forkserver' worker imports it to
find the datasets below, and should not pay for torch. Every test runs under `guard`: a hard
time limit, and afterwards a check that no child process and no /dev/shm entry is left.
"""
import gc
import importlib
import math
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from _mpich_shm import mpich_segments

import ember
from ember.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info

TIME_LIMIT = 60  # seconds per test, enforced with SIGALRM


def _children():
    """Processes whose parent is this one (multiprocessing's helper processes excepted, and the
    `addr2line` helpers torch keeps after symbolizing a C++ stack in an earlier test)."""
    me, found = str(os.getpid()), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if ppid == me and not any(helper in cmdline for helper in
                                  (b"resource_tracker", b"forkserver", b"addr2line")):
            found.append(int(entry))
    return found


def _gone(pid):
    """The process has exited (or is a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def wait_until(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _shm():
    # MPI jobs of other tests running at the same time (pytest-xdist) keep MPICH's segments there
    return set(os.listdir("/dev/shm")) - mpich_segments()


@pytest.fixture(autouse=True)
def guard():
    def expired(signum, frame):
        raise TimeoutError(f"test exceeded {TIME_LIMIT} s")

    shm_before = _shm()
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TIME_LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    multiprocessing.active_children()  # reaps finished multiprocessing children
    if _children() or _shm() - shm_before:
        # What a reference cycle (say, through a traceback) keeps is freed by the collector:
        # an iterator then stops its workers, a spawn-context queue unlinks its semaphores.
        gc.collect()
    assert wait_until(lambda: not _children()), f"processes left behind: {_children()}"
    # (ember's segments never have a name; torch's workers unlink theirs a moment after exit)
    assert wait_until(lambda: _shm() <= shm_before), \
        f"/dev/shm entries left behind: {_shm() - shm_before}"


# ---- datasets (module level, so that they pickle for 'spawn') -------------------------------

class Squares(Dataset):
    """(tensor([i, i*i]), i); misbehaves at chosen indices."""

    def __init__(self, n=16, libname="ember", fail_at=None, kill_at=None, exit_at=None,
                 sleep=0.0):
        self.n, self.libname, self.sleep = n, libname, sleep
        self.fail_at, self.kill_at, self.exit_at = fail_at, kill_at, exit_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"cannot load sample {i}")
        if i == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if i == self.exit_at:
            os._exit(3)
        time.sleep(self.sleep)
        lib = importlib.import_module(self.libname)
        return lib.tensor([i, i * i]), i


class Probe(Dataset):
    """What a worker sees: its info and a draw from each random generator it was seeded with."""

    def __init__(self, n=8, libname="ember"):
        self.n, self.libname = n, libname

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        lib = importlib.import_module(self.libname)
        info = lib.utils.data.get_worker_info()
        return {"index": i, "worker": info.id, "num_workers": info.num_workers,
                "seed": info.seed, "pid": os.getpid(), "random": random.random(),
                "numpy": float(np.random.rand()), "lib": lib.rand(2)}


class Stream(IterableDataset):
    """range(start, end), split between workers through get_worker_info()."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = math.ceil((self.end - self.start) / info.num_workers)
        lo = self.start + info.id * per_worker
        return iter(range(lo, min(lo + per_worker, self.end)))


def send_back(queue, received, tensor, parameter):
    """A child's round trip for test_data_shared_memory."""
    tensor.mul_(2)  # shared: the parent sees this
    queue.put((tensor[1:], parameter, ember.arange(3) + 10))
    received.wait(30)  # a DupFd is fetched from its sender, which must still be there


def failing_init(worker_id):
    if worker_id == 1:
        raise KeyError("no config for worker 1")


def loader_batches(loader):
    return [[x.tolist(), y.tolist()] for x, y in loader]


def test_torch_utils_data_without_importing_it():
    code = ("import ember as torch\n"
            "loader = torch.utils.data.DataLoader(range(5), batch_size=2)\n"
            "print([b.tolist() for b in loader])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[[0, 1], [2, 3], [4]]", out.stderr


# ---- start methods --------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_start_methods_give_the_batches_of_fork(method):
    dataset = TensorDataset(ember.arange(24.).reshape(12, 2), ember.arange(12))
    expected = loader_batches(DataLoader(dataset, batch_size=5, num_workers=2,
                                         multiprocessing_context="fork"))
    loader = DataLoader(dataset, batch_size=5, num_workers=2, multiprocessing_context=method)
    it = iter(loader)
    assert loader_batches(it) == expected
    assert all(not w.is_alive() for w in it._workers)
    assert dataset.tensors[0].is_shared()  # sent to the workers by descriptor, not copied


@pytest.mark.parametrize("name,kwargs", [
    ("collate_fn", {"collate_fn": lambda batch: batch}),
    ("worker_init_fn", {"worker_init_fn": lambda worker_id: None}),
])
def test_unpicklable_argument_under_spawn_is_named_up_front(name, kwargs):
    loader = DataLoader(Squares(), num_workers=2, multiprocessing_context="spawn", **kwargs)
    with pytest.raises(Exception, match=f"its {name} .* cannot be pickled"):
        iter(loader)


def test_unpicklable_dataset_under_spawn_is_named_up_front():
    class Local(Squares):
        pass
    with pytest.raises(Exception, match="its dataset .* cannot be pickled"):
        iter(DataLoader(Local(), num_workers=1, multiprocessing_context="spawn"))


# ---- batches travel through shared memory ---------------------------------------------------

def test_worker_batches_arrive_in_shared_memory():
    loader = DataLoader(Squares(8), batch_size=4, num_workers=2)
    for x, y in loader:
        assert x.is_shared() and y.is_shared()
        assert x.tolist() == [[i, i * i] for i in y.tolist()]


# ---- faults ---------------------------------------------------------------------------------

def test_worker_exception_is_reraised_with_its_type_worker_and_traceback():
    loader = DataLoader(Squares(fail_at=5), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    message = str(info.value)
    assert "Caught ValueError in DataLoader worker process 0." in message  # batch 2 -> worker 0
    assert "Original Traceback (most recent call last):" in message
    assert 'raise ValueError(f"cannot load sample {i}")' in message
    assert "cannot load sample 5" in message


def test_worker_init_fn_exception_is_reraised():
    loader = DataLoader(Squares(), batch_size=2, num_workers=2, worker_init_fn=failing_init)
    with pytest.raises(KeyError, match="in DataLoader worker process 1") as info:
        list(loader)
    assert "no config for worker 1" in str(info.value)


def lambda_batch(batch):
    return lambda: batch  # cannot be pickled back to the main process


def test_a_batch_that_cannot_be_sent_is_reported():
    loader = DataLoader(Squares(), batch_size=2, num_workers=1, collate_fn=lambda_batch)
    with pytest.raises(AttributeError, match="while sending a batch from DataLoader worker "
                                             "process 0.(.|\n)*Can't pickle local object"):
        next(iter(loader))


def test_a_worker_killed_by_a_signal_is_reported_at_once():
    loader = DataLoader(Squares(kill_at=6), batch_size=2, num_workers=2)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by "
                                           r"signal: Killed\. "):
        list(loader)
    assert time.monotonic() - start < 4  # the sentinel wakes us, no status-check interval


def test_a_worker_that_exits_is_reported_with_its_exit_code():
    loader = DataLoader(Squares(exit_at=3), batch_size=2, num_workers=2)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) exited "
                                           r"unexpectedly with exit code 3"):
        list(loader)


def test_timeout_expires():
    loader = DataLoader(Squares(sleep=1), num_workers=1, timeout=0.3)
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        next(iter(loader))


# ---- shutdown -------------------------------------------------------------------------------

def test_breaking_early_stops_every_worker():
    loader = DataLoader(Squares(64, sleep=0.01), batch_size=2, num_workers=2)
    it = iter(loader)
    next(it)
    pids = [w.pid for w in it._workers]
    del it
    assert wait_until(lambda: all(_gone(pid) for pid in pids), 5)


def test_keyboard_interrupt_in_the_loop_stops_every_worker():
    loader = DataLoader(Squares(64, sleep=0.01), batch_size=2, num_workers=2)
    pids = []
    with pytest.raises(KeyboardInterrupt):
        for it_batch in (it := iter(loader)):
            pids = [w.pid for w in it._workers]
            raise KeyboardInterrupt
    del it
    assert pids and wait_until(lambda: all(_gone(pid) for pid in pids), 5)


SCRIPT = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {tests!r})
    from test_data_workers import Squares
    from ember.utils.data import DataLoader
    it = iter(DataLoader(Squares(10_000, sleep=0.01), batch_size=4, num_workers=2))
    next(it)
    print(" ".join(str(w.pid) for w in it._workers), flush=True)
    {then}
""")


def _run_script(then):
    code = SCRIPT.format(tests=os.path.dirname(__file__), then=then)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, text=True)


def test_ctrl_c_ends_the_main_process_and_its_workers():
    proc = _run_script("for batch in it: pass")
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole process group
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert "KeyboardInterrupt" in err
    assert len(pids) == 2 and wait_until(lambda: all(_gone(pid) for pid in pids), 10)


def test_workers_exit_when_the_main_process_is_killed():
    proc = _run_script("time.sleep(60)")
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        proc.kill()
    finally:
        proc.kill()
        proc.wait()
    # the workers notice their parent is gone within MP_STATUS_CHECK_INTERVAL (5 s)
    assert len(pids) == 2 and wait_until(lambda: all(_gone(pid) for pid in pids), 15)
