"""torch.testing._internal.common_mkldnn: the oneDNN reduced-precision float32 (bf32/tf32)
switches PyTorch's CPU tests run under. ember's CPU kernels have no reduced-precision float32
mode, so `reduced_f32_on_and_off` runs the test once, as PyTorch does on a CPU without it."""
import contextlib
import functools


def bf32_is_not_fp32():
    return False


def tf32_is_not_fp32():
    return False


@contextlib.contextmanager
def reduced_f32_off():
    yield


@contextlib.contextmanager
def bf32_on(self, bf32_precision=1e-2):
    yield


@contextlib.contextmanager
def tf32_on(self, tf32_precision=1e-5):
    yield


def reduced_f32_on_and_off(bf32_precision=1e-2, tf32_precision=1e-5):
    def wrapper(f):
        @functools.wraps(f)
        def wrapped(*args, **kwargs):
            return f(*args, **kwargs)
        return wrapped
    return wrapper
