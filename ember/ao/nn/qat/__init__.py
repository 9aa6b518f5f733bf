"""torch.ao.nn.qat: quantization-aware-training modules (see ember.ao.quantization)."""
from . import modules  # noqa: F401
from .modules import Linear

__all__ = ["Linear"]
