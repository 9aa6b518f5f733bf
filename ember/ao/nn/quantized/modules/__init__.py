"""torch.ao.nn.quantized.modules: no quantized module classes in ember (see ember.ao)."""
from .....nn import MaxPool2d  # noqa: F401  (PyTorch's is nn.MaxPool2d too)

__all__ = []
