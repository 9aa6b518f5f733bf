"""spawn / start_processes: run fn(i, *args) in nprocs new processes and watch them, as
torch.multiprocessing.spawn.

Each process gets its index i and a file to leave its traceback in. The parent waits on the
processes' sentinels: the first one to end with a non-zero status ends the run: the others
are terminated (SIGTERM, then SIGKILL after a grace period) and the parent raises
ProcessRaisedException carrying the child's traceback text, or ProcessExitedException with
the exit code (or the name of the signal that killed it). `join=False` returns the
ProcessContext instead, whose join(timeout) does one round of that waiting.

With ember.distributed, the usual program is

    def main(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)  # MASTER_ADDR/PORT set
        ...
    mp.spawn(main, args=(world_size,), nprocs=world_size)

and the processes form one MPI world without mpiexec (ember/distributed/_pmi.py).
"""
import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]

log = logging.getLogger(__name__)


class ProcessException(Exception):
    """A spawned process failed: `error_index` is its index, `error_pid` its pid."""
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """The process's function raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """The process exited with a non-zero status or was killed by a signal."""
    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return (type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                             self.signal_name))


def _die_with_parent():
    """Linux: have the kernel send this process SIGINT when its parent dies."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)   # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _wrap(fn, i, args, error_file):
    """The body of each spawned process."""
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass        # the parent interrupted us
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        if "mpi4py.MPI" in sys.modules:
            # A rank of an ember.distributed world: leave without MPI_Finalize, which
            # would wait for the other ranks. The process manager sees this rank go and
            # tells the others, whose waits fail at once (ember/distributed/_pmi.py).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        sys.exit(1)


class ProcessContext:
    """The processes of one spawn: `processes`, `pids()`, and `join(timeout)`."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Wait (up to `timeout` seconds) for a process to end.

        Returns True once all processes have ended successfully, False if some are still
        running. If one ended with a non-zero status, terminates the others (after
        `grace_period` seconds, if given) and raises the matching ProcessException.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        self._stop_the_others(grace_period)
        raise self._exception(error_index)

    def _stop_the_others(self, grace_period):
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting "
                            "via SIGKILL", p.pid)
                p.kill()
            p.join()

    def _exception(self, index):
        process = self.processes[index]
        path = self.error_files[index]
        if not os.access(path, os.R_OK):
            code = process.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                return ProcessExitedException(f"process {index:d} terminated with signal {name}",
                                              error_index=index, error_pid=process.pid,
                                              exit_code=code, signal_name=name)
            return ProcessExitedException(f"process {index:d} terminated with exit code "
                                          f"{code:d}", error_index=index,
                                          error_pid=process.pid, exit_code=code)
        with open(path, "rb") as f:
            original = pickle.load(f)
        os.unlink(path)
        message = f"\n\n-- Process {index:d} terminated with the following error:\n{original}"
        return ProcessRaisedException(message, index, process.pid)


class SpawnContext(ProcessContext):
    """The pre-1.4 name of ProcessContext."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start `nprocs` processes running fn(i, *args) with the given start method; with
    join=True wait for all of them (raising on the first failure), else return the
    ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        # the file exists only if the process's function raised
        handle, path = tempfile.mkstemp(prefix="ember-errorfile-", suffix=".pickle")
        os.close(handle)
        os.unlink(path)
        process = context.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(path)
    process_context = ProcessContext(processes, error_files)
    if not join:
        return process_context
    while not process_context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawn `nprocs` processes that run fn(i, *args) (always with the 'spawn' start method;
    start_processes takes others). See the module docstring for how failures surface."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t "
                      "ember.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
