"""Work: the handle on a communication in flight (PyTorch's c10d::Work), and the watchdog that
keeps a wait on it from ever hanging.

Every collective and point-to-point call in ember.distributed is issued as a *non-blocking*
MPI operation (MPI_Iallreduce, MPI_Ibcast, MPI_Isend, ...). The call returns a Work at once;
`async_op=False` is nothing more than `work.wait()` before returning.

Note [Waiting without hanging]
------------------------------
A blocking MPI call (MPI_Allreduce, MPI_Wait) has no timeout: if one rank never arrives —
its process died, it exited early, it raised and sits in MPI_Finalize, or it is stuck in a
loop — the others wait inside the MPI library forever. (Try it: two ranks, one raises before
an Allreduce; mpiexec never returns.) PyTorch's NCCL backend solves this with a watchdog
thread that watches each collective's deadline and tears the communicator down.

ember waits by *polling*: `wait()` calls MPI_Testall on the operation's requests until they
complete or the process group's timeout (init_process_group(timeout=...), 30 minutes by
default as in PyTorch) runs out. Polling is also what drives MPICH's progress engine, so the
bytes keep moving while we poll. It spins for the first few milliseconds (a small collective
between ranks that are in step completes in microseconds, and sleeping would only add
latency), then sleeps between polls with a growing interval, capped at a millisecond, so a
rank that waits a long time for a slow peer hands its core back.

While it waits, it also watches for a peer announcing that its program has ended
(failure.py, case 3): a collective that peer never joined can never complete, so the wait
fails at once, naming it, rather than sitting out the timeout.

When the deadline passes, wait() raises DistBackendError naming this rank, the operation,
its sequence number on the group and the group's ranks, and marks the group *broken*: the
timed-out request can never be matched consistently again, so any later operation on the
group raises at once instead of pairing with the wrong message. Left uncaught, that
exception ends the job (see failure.py), so a dead or stuck peer costs at most one timeout
— never a hang. MPI collectives carry no record of who has arrived, so a timeout cannot say
which peer is missing; `monitored_barrier` can (rank 0 waits for each peer separately).
"""
import time
from datetime import timedelta

from . import _mpi, failure

__all__ = ["Work", "DistError", "DistBackendError", "DistStoreError", "DistNetworkError"]

_SPIN_SECONDS = 0.005     # poll without sleeping for this long first
_MAX_SLEEP = 0.001        # then sleep between polls, doubling up to this
_EXIT_GRACE = 1.0         # after a peer announced its exit, wait this long for bytes in flight


class DistError(RuntimeError):
    """Base class of ember.distributed's errors (PyTorch's torch.distributed.DistError)."""


class DistBackendError(DistError):
    """The communication engine failed or timed out (PyTorch's DistBackendError)."""


class DistStoreError(DistError):
    """A store operation failed or timed out (PyTorch's DistStoreError)."""


class DistNetworkError(DistError):
    """A connection could not be made or was lost (PyTorch's DistNetworkError)."""


def wait_requests(requests, deadline, describe, statuses=None, group=None):
    """Poll `requests` until all complete; past `deadline` (time.monotonic()), raise.

    `describe(exited_rank)` builds the error message; it is only called on failure. With
    `group`, the wait also watches for another rank of the group announcing that it has
    exited (failure.py): the wait then gets a short grace period for bytes already in flight
    and fails naming that rank instead of waiting out the timeout.
    """
    MPI = _mpi.MPI()
    if not requests or MPI.Request.Testall(requests, statuses):
        return
    start = time.monotonic()
    sleep = 0.0
    exited = None
    while True:
        now = time.monotonic()
        if now > deadline:
            raise DistBackendError(describe(exited))
        if now - start > _SPIN_SECONDS:
            sleep = min(_MAX_SLEEP, sleep * 2 or 1e-5)
            time.sleep(sleep)
            if group is not None and exited is None:
                exited = failure.exited_member(group)
                if exited is not None:
                    deadline = min(deadline, time.monotonic() + _EXIT_GRACE)
        if MPI.Request.Testall(requests, statuses):
            return


class Work:
    """A communication in flight. `wait()` blocks until it has completed (and raises if the
    process group's timeout passes first); `is_completed()` asks without blocking;
    `result()` lists the output tensors.

    `on_complete` runs once, after the bytes have arrived: it copies a staging buffer back
    into a non-contiguous tensor, divides for ReduceOp.AVG, unpacks a gather, ...
    """

    def __init__(self, group, op_name, requests, on_complete=None, outputs=(), peer=None):
        self._group = group
        self._op_name = op_name
        self._seq = group._next_seq()
        self._requests = list(requests)
        self._on_complete = on_complete
        self._outputs = list(outputs)
        self._statuses = None
        if peer is not None and requests:
            self._statuses = [_mpi.MPI().Status() for _ in requests]
        self._completed = False
        self._exception = None
        self._started = time.monotonic()

    def __repr__(self):
        state = "completed" if self._completed else "pending"
        return f"<Work {self._op_name} #{self._seq} on {self._group.group_name!r}: {state}>"

    def _finish(self):
        self._completed = True
        if self._on_complete is not None:
            fn, self._on_complete = self._on_complete, None
            fn()

    def is_completed(self):
        """True once the operation has completed (never blocks)."""
        if not self._completed and self._exception is None:
            try:
                done = _mpi.MPI().Request.Testall(self._requests, self._statuses)
            except _mpi.MPI().Exception as e:
                self._fail(e)
            if done:
                self._finish()
        return self._completed

    def _fail(self, mpi_error):
        """An error reported by MPI (a message longer than the receiving tensor, ...)."""
        MPI = _mpi.MPI()
        details = [MPI.Get_error_string(s.Get_error()) for s in self._statuses or []
                   if s.Get_error() != MPI.SUCCESS] or [mpi_error.Get_error_string()]
        g = self._group
        self._exception = DistBackendError(
            f"[rank {g._global_rank}] ember.distributed: {self._op_name} (#{self._seq} on "
            f"process group {g.group_name!r}) failed in MPI: {'; '.join(details)}")
        raise self._exception from mpi_error

    def wait(self, timeout=None):
        """Block until the operation has completed; return True.

        Raises DistBackendError if the process group's timeout (or `timeout`, a timedelta)
        passes first; the group is then broken and refuses further operations.
        """
        if self._completed:
            return True
        if self._exception is not None:
            raise self._exception
        limit = self._group._timeout if timeout is None else timeout
        if isinstance(limit, timedelta):
            limit = limit.total_seconds()
        try:
            wait_requests(self._requests, self._started + limit, self._failure_message,
                          self._statuses, self._group)
        except DistBackendError as e:
            self._exception = e
            self._group._broken = str(e)
            raise
        except _mpi.MPI().Exception as e:
            self._fail(e)
        self._finish()
        return True

    def _failure_message(self, exited_rank=None):
        g = self._group
        what = (f"[rank {g._global_rank}] ember.distributed: {self._op_name} "
                f"(#{self._seq} on process group {g.group_name!r} of ranks {g._ranks})")
        if exited_rank is not None:
            return (f"{what} cannot complete: {failure.how_it_ended(exited_rank)} without "
                    "joining it")
        timeout = timedelta(seconds=round(self._timeout_seconds()))
        return (f"{what} did not complete within the timeout of {timeout}: a rank of the "
                "group has not joined it (it died, raised, or is stuck elsewhere). The "
                "timeout is init_process_group(timeout=...).")

    def _timeout_seconds(self):
        t = self._group._timeout
        return t.total_seconds() if isinstance(t, timedelta) else t

    def is_success(self):
        """True if the operation completed without error (raises if still pending)."""
        if not self._completed and self._exception is None:
            raise RuntimeError("Work.is_success() called on a work that has not completed; "
                               "call wait() first")
        return self._exception is None

    def exception(self):
        return self._exception

    def result(self):
        """The output tensors of the operation."""
        return self._outputs

    def _source_rank(self):
        """The global rank a recv(src=None) got its message from."""
        self.wait()
        if self._statuses is None:
            return None
        return self._group._ranks[self._statuses[0].Get_source()]

    def synchronize(self):
        self.wait()
