"""torch.cuda.amp: `autocast`, `GradScaler`, `custom_fwd` and `custom_bwd` fixed to the "cuda"
device -- deprecated in PyTorch in favour of `torch.amp`'s with device_type="cuda". Without a
GPU, autocast and GradScaler warn and disable themselves, as PyTorch's do on a CPU-only machine."""
from .autocast_mode import autocast, custom_bwd, custom_fwd
from .common import amp_definitely_not_available
from .grad_scaler import GradScaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]
