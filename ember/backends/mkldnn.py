"""torch.backends.mkldnn: the oneDNN switches. ember's CPU kernels are NumPy's, with no oneDNN
behind them, so `is_available()` is False and the flags are plain settings that change
nothing (they keep PyTorch's defaults and round-trip as its do)."""
from contextlib import contextmanager

__all__ = ["is_available", "is_acl_available", "set_flags", "flags", "verbose",
           "VERBOSE_OFF", "VERBOSE_ON", "VERBOSE_ON_CREATION"]

VERBOSE_OFF, VERBOSE_ON, VERBOSE_ON_CREATION = 0, 1, 2

enabled = True
deterministic = False
allow_tf32 = None  # what PyTorch 2.13 reads back by default (fp32_precision replaced it)
fp32_precision = "none"


def is_available():
    """False: ember was not built with oneDNN."""
    return False


def is_acl_available():
    return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Set the flags given (None leaves one alone); the previous four flags are returned."""
    global enabled, deterministic, allow_tf32, fp32_precision
    orig = (enabled, deterministic, allow_tf32, fp32_precision)
    if _enabled is not None:
        enabled = _enabled
    if _deterministic is not None:
        deterministic = _deterministic
    if _allow_tf32 is not None:
        allow_tf32 = _allow_tf32
    if _fp32_precision is not None:
        fp32_precision = _fp32_precision
    return orig


@contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    orig = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*orig)


class verbose:
    """`with verbose(VERBOSE_ON):` turns oneDNN's logging on; without oneDNN only level 0
    (off) is accepted, as PyTorch's builds without oneDNN do."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        if self.level != VERBOSE_OFF:
            raise AssertionError("Failed to set MKLDNN into verbose mode. Please consider to "
                                 "disable this verbose scope. (ember has no oneDNN)")
        return self

    def __exit__(self, *exc):
        return False
