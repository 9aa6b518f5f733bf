"""torch.amp: automatic mixed precision. `autocast` runs a region's ops in the dtypes of
PyTorch's autocast lists (through the AutocastCPU dispatch key, `ember/_aten/autocast.py`);
`GradScaler` scales the loss so float16 gradients keep their small values, and skips steps
whose gradients overflowed."""
from .autocast_mode import (autocast, custom_bwd, custom_fwd, is_autocast_available,
                            _enter_autocast, _exit_autocast)
from .grad_scaler import GradScaler
