"""Autocast state: per device type, whether autocast is on and its lower-precision dtype, plus the
cast cache (PyTorch's `torch.set_autocast_enabled`, `torch.get_autocast_dtype`, ...).

In PyTorch, "autocast is enabled on CPU" means the AutocastCPU dispatch key is not excluded for
this thread; here it is one flag the dispatcher reads (`_autocast_state.cpu`), process-wide like
grad mode. Only the CPU flag reaches the dispatcher: ember computes on the CPU, and the other
device types are kept so that code querying them gets PyTorch's answers. This module is a leaf
of the import graph; the AutocastCPU kernel itself is `ember/_aten/autocast.py`.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .device import device as _device
from .dtype import bfloat16, float16


class _AutocastState:
    cpu = False          # is the AutocastCPU key active (read on every dispatcher call)
    cache_enabled = True
    nesting = 0


_autocast_state = _AutocastState()
_enabled = {}            # device type -> bool, for the device types other than cpu
# PyTorch's default lower-precision dtype per device type
_dtypes = {"cpu": bfloat16, "cuda": float16, "hip": float16, "xpu": float16, "mps": float16,
           "ipu": float16, "xla": bfloat16, "hpu": bfloat16, "mtia": float16, "maia": float16}
# the casts of fp32 leaf weights made inside the outermost autocast region (see cached_cast in
# ember/_aten/autocast.py): id(source) -> (source, cast); holding the source keeps its id unique
_cast_cache = {}


def _device_type(device_type):
    if not isinstance(device_type, str):
        raise TypeError(f"device_type must be a str, got {type(device_type).__name__}")
    return _device(device_type).type if device_type not in _dtypes else device_type


def is_autocast_enabled(device_type="cuda"):
    device_type = _device_type(device_type)
    if device_type == "cpu":
        return _autocast_state.cpu
    return _enabled.get(device_type, False)


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # the old one-argument form sets CUDA's flag
        device_type, enabled = "cuda", device_type
    device_type = _device_type(device_type)
    if device_type == "cpu":
        _autocast_state.cpu = bool(enabled)
    else:
        _enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type):
    return _dtypes.get(_device_type(device_type))


def set_autocast_dtype(device_type, dtype):
    _dtypes[_device_type(device_type)] = dtype


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "torch.is_autocast_enabled('cpu')")
    return _autocast_state.cpu


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "torch.set_autocast_enabled('cpu', enabled)")
    _autocast_state.cpu = bool(enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "torch.get_autocast_dtype('cpu')")
    return _dtypes["cpu"]


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "torch.set_autocast_dtype('cpu', dtype)")
    _dtypes["cpu"] = dtype


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "torch.get_autocast_dtype('cuda')")
    return _dtypes["cuda"]


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "torch.set_autocast_dtype('cuda', dtype)")
    _dtypes["cuda"] = dtype


def is_autocast_cache_enabled():
    return _autocast_state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _autocast_state.cache_enabled = bool(enabled)


def autocast_increment_nesting():
    _autocast_state.nesting += 1
    return _autocast_state.nesting


def autocast_decrement_nesting():
    _autocast_state.nesting -= 1
    return _autocast_state.nesting


def clear_autocast_cache():
    _cast_cache.clear()


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use {new} instead.", DeprecationWarning,
                  stacklevel=_user_stacklevel())
