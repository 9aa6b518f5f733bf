"""Worker deaths: what a dying worker prints, and what the main process reports.

PyTorch installs C handlers in each worker that print a line on SIGSEGV/SIGBUS/SIGFPE before the
default action, and a SIGCHLD handler in the main process that checks its workers. Here a worker
enables `faulthandler`, which prints the Python traceback of every thread on those signals. The
main process needs no SIGCHLD handler: it waits on each worker's sentinel (a descriptor that
becomes readable when the process ends) together with the result queue, so a death wakes it at
once, and `worker_failure_message` says who died and how.
"""
import faulthandler
import signal


def _set_worker_signal_handlers():
    faulthandler.enable()


def worker_failure_message(_worker_id, process):
    """PyTorch's report of a dead worker (its C++ _error_if_any_worker_fails' wording)."""
    code = process.exitcode
    who = f"DataLoader worker (pid {process.pid})"
    if code is not None and code < 0:
        name = signal.strsignal(-code) or f"signal {-code}"
        if -code == signal.SIGBUS:
            return (f"{who} is killed by signal: {name}. It is possible that dataloader's "
                    "workers are out of shared memory. Please try to raise your shared memory "
                    "limit.")
        return f"{who} is killed by signal: {name}. "
    return (f"{who} exited unexpectedly with exit code {code}. Details are lost due to "
            "multiprocessing. Rerunning with num_workers=0 may give better error trace.")
