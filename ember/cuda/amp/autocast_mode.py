"""torch.cuda.amp.autocast and custom_fwd/custom_bwd: `torch.amp`'s with device_type="cuda",
each warning FutureWarning that it is deprecated when it is called."""
import functools
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ... import amp as _amp
from ..._core import dtype as D

__all__ = ["autocast", "custom_fwd", "custom_bwd"]


def _deprecated(old, new):
    warnings.warn(f"`torch.cuda.amp.{old}` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=_user_stacklevel())


class autocast(_amp.autocast):
    """`torch.amp.autocast("cuda", ...)` under its old name; without a GPU it warns and runs
    disabled, as PyTorch's does."""

    def __init__(self, enabled=True, dtype=D.float16, cache_enabled=True):
        _deprecated("autocast(args...)", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def _cast(value, dtype):
    _deprecated("autocast_mode._cast(value, dtype)",
                "torch.amp.autocast_mode._cast(value, 'cuda', dtype)")
    return _amp.autocast_mode._cast(value, "cuda", dtype)


def custom_fwd(fwd=None, *, cast_inputs=None):
    _deprecated("custom_fwd(args...)", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return functools.partial(_amp.custom_fwd, device_type="cuda")(fwd=fwd,
                                                                  cast_inputs=cast_inputs)


def custom_bwd(bwd):
    _deprecated("custom_bwd(args...)", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return functools.partial(_amp.custom_bwd, device_type="cuda")(bwd)
