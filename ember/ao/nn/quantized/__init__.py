"""torch.ao.nn.quantized: no quantized module classes in ember (see ember.ao); MaxPool2d is
nn.MaxPool2d, as in PyTorch."""
from . import modules  # noqa: F401
from .modules import MaxPool2d  # noqa: F401

__all__ = []
