"""torch.autograd.grad_mode: the grad-mode context managers. The state they switch lives in the
core layer (`ember._core.grad_mode`), below the dispatcher that reads it on every call."""
from .._core.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                               is_grad_enabled, is_inference_mode_enabled)
