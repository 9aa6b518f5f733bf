"""torch.backends.cudnn without cuDNN: the library is reported absent; `benchmark` and
`deterministic` steer ember's own convolution algorithm choice (see Note [Benchmark mode] in
ember/_aten/conv.py, which holds the two flags), the other flags keep PyTorch's defaults and
only record writes."""
import sys
import types
from contextlib import contextmanager

from .._aten import conv as _conv

enabled = True
allow_tf32 = True
benchmark_limit = None   # (PyTorch reads None back without cuDNN)
fp32_precision = "none"


def is_available():
    return False


def version():
    return None


_FLAGS = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32",
          "fp32_precision")


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
              _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None):
    """Set the flags given (None leaves one alone; the benchmark limit and the depthwise
    kernel choice concern cuDNN alone and are not kept); the previous flags are returned."""
    module = sys.modules[__name__]
    orig = tuple(getattr(module, name) for name in _FLAGS) + (None,)
    values = (_enabled, _benchmark, None, _deterministic, _allow_tf32, _fp32_precision)
    for name, value in zip(_FLAGS, values):
        if value is not None:
            setattr(module, name, value)
    return orig


@contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Set the flags for the `with` block (or a decorated function) and restore them after."""
    orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                     fp32_precision, depthwise_kernel)
    try:
        yield
    finally:
        set_flags(*orig)


def _flag(name):
    def get(self):
        return _conv.algorithm_flags[name]

    def set(self, value):
        _conv.algorithm_flags[name] = bool(value)
    return property(get, set)


class _CudnnModule(types.ModuleType):
    """The module with `benchmark` and `deterministic` read from and written to the
    convolution kernels' flags (PyTorch's cudnn module forwards them to torch._C likewise)."""
    benchmark = _flag("benchmark")
    deterministic = _flag("deterministic")


sys.modules[__name__].__class__ = _CudnnModule
