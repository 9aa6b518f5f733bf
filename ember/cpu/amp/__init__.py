"""torch.cpu.amp: `autocast` and `GradScaler` fixed to the CPU, deprecated in PyTorch in favour
of `torch.amp.autocast("cpu", ...)` and `torch.amp.GradScaler("cpu", ...)`."""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ... import amp as _amp
from ..._core import dtype as D

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """`torch.amp.autocast("cpu", ...)` under its old name (warns FutureWarning)."""

    def __init__(self, enabled=True, dtype=D.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=_user_stacklevel())
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """`torch.amp.GradScaler("cpu", ...)` under its old name (warns FutureWarning)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=_user_stacklevel())
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
