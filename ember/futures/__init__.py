"""torch.futures: Future, the handle of a value that arrives later (an RPC reply, a forked
task), with callbacks chained on it (`then`, `add_done_callback`) and helpers to wait on many
(`collect_all`, `wait_all`).

A Future is completed once, by `set_result` or `set_exception`; waiting blocks on a condition
variable until then. Callbacks registered before completion run, in order, in the thread that
completes the future; registered after, they run at once. A `then` callback's result completes
the Future it returned; its exception completes that Future with PyTorch's RuntimeError.
"""
import sys
import threading
import traceback

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value that will be set once, by `set_result` or `set_exception`."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._result = None
        self._exception = None
        self._callbacks = []

    def done(self):
        """True once the future holds a value or an exception."""
        return self._done

    def wait(self):
        """Block until completed; the value, or the stored exception raised."""
        with self._cond:
            self._cond.wait_for(lambda: self._done)
        return self.value()

    def value(self):
        """The value of a completed future (its exception is raised)."""
        if not self._done:
            raise RuntimeError("Future.value() called on a Future that is not completed yet: "
                               "wait() for it, or check done() first")
        if self._exception is not None:
            raise self._exception
        return self._result

    def then(self, callback):
        """A new Future completed with `callback(self)` once this one completes."""
        fut = Future()

        def run(this):
            try:
                result = callback(this)
            except Exception as e:
                fut.set_exception(_callback_error(e))
            else:
                fut.set_result(result)
        self._add(run)
        return fut

    def add_done_callback(self, callback):
        """Run `callback(self)` on completion; its exceptions are reported and dropped."""
        def run(this):
            try:
                callback(this)
            except Exception as e:
                print(_callback_error(e), file=sys.stderr)
        self._add(run)

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _add(self, run):
        with self._cond:
            if not self._done:
                self._callbacks.append(run)
                return
        run(self)

    def _complete(self, result, exception):
        with self._cond:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._result, self._exception, self._done = result, exception, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for run in callbacks:
            run(self)

    def __class_getitem__(cls, item):  # Future[int] in annotations
        return cls

    def __reduce__(self):
        # a pending value and its waiters cannot travel: torch.save, pickle and copy refuse
        raise RuntimeError("Can not pickle torch.futures.Future")


def _callback_error(e):
    frames = traceback.extract_tb(e.__traceback__)
    where = "".join(f"  {f.filename}({f.lineno}): {f.name}\n" for f in reversed(frames))
    return RuntimeError(f"Got the following error when running the callback: "
                        f"{type(e).__name__}: {e}\n\nAt:\n{where}")


def collect_all(futures):
    """A Future completed with the list `futures` once all of them are; the first exception
    among them (in list order) completes it instead."""
    for f in futures:
        if not isinstance(f, Future):
            raise TypeError(f"collect_all(): expected a list of Futures, got an item of type "
                            f"{type(f).__name__}")
    out = Future()
    futures = list(futures)
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            failed = next((f._exception for f in futures if f._exception is not None), None)
            if failed is not None:
                out.set_exception(failed)
            else:
                out.set_result(futures)
    if not futures:
        out.set_result([])
    for f in futures:
        f._add(one_done)
    return out


def wait_all(futures):
    """Wait for every future; their values, or the first exception raised."""
    return [f.wait() for f in collect_all(futures).wait()]
