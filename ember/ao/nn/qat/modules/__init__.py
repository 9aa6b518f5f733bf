"""torch.ao.nn.qat.modules: quantization-aware-training modules (see ember.ao.quantization)."""
from .linear import Linear

__all__ = ["Linear"]
