"""torch.backends.cudnn without cuDNN: the library is reported absent; `benchmark` and
`deterministic` steer ember's own convolution algorithm choice (see Note [Benchmark mode] in
ember/_aten/conv.py, which holds the two flags), the other flags keep PyTorch's defaults and
only record writes."""
import sys
import types

from .._aten import conv as _conv

enabled = True
allow_tf32 = True


def is_available():
    return False


def version():
    return None


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
