"""torch.profiler.itt: Intel ITT (VTune) range annotations. ember is a build without ITT, as a
PyTorch built without it: `is_available()` is False and the annotating functions raise."""
from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def _no_itt(*args, **kwargs):
    raise RuntimeError("ITT functions not installed. Are you sure you have a ITT build?")


def is_available():
    """Whether ITT annotations can be emitted: never in ember."""
    return False


def range_push(msg):
    """Push a range onto the nested range stack (needs an ITT build)."""
    return _no_itt(msg)


def range_pop():
    """Pop the innermost range (needs an ITT build)."""
    return _no_itt()


def mark(msg):
    """An instantaneous event (needs an ITT build)."""
    return _no_itt(msg)


@contextmanager
def range(msg, *args, **kwargs):
    """Push a range formatted from `msg` for the scope (needs an ITT build)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
