"""torch.cuda.amp.GradScaler: `torch.amp.GradScaler("cuda", ...)` under its old name (warns
FutureWarning); without a GPU it warns again and is disabled, as PyTorch's is."""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ... import amp as _amp
from ...amp.grad_scaler import OptState  # noqa: F401

__all__ = ["GradScaler"]


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=_user_stacklevel())
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
