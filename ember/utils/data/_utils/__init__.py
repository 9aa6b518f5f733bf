"""The DataLoader's machinery: collation, fetching, the worker loop and worker-failure reports.

Functions that run in worker processes live at module level so that they pickle by reference
(the 'spawn' and 'forkserver' start methods send the worker's target and arguments by pickle).
"""
import sys
import traceback

MP_STATUS_CHECK_INTERVAL = 5.0
"""Seconds between checks that the other side is still alive, wherever a process waits on
another: a worker waiting for indices checks that the main process lives; the main process
waiting for a batch also wakes at once when a worker dies (it waits on the workers' sentinels)."""


class KeyErrorMessage(str):
    """A str that is its own repr: KeyError shows repr(message), which would mangle a traceback."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process and re-raised there with the
    same type and a message naming where it happened, followed by the original traceback."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = sys.exc_info() if exc_info is None else exc_info
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))  # no frames kept alive
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # the type needs other arguments: say it in a RuntimeError
            raise RuntimeError(msg) from None
        raise exception


from . import collate, fetch, signal_handling, worker  # noqa: E402,F401
