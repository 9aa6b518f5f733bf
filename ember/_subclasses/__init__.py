"""torch._subclasses: the tensor subclasses PyTorch's tracing uses -- FakeTensor and its mode
(fake_tensor.py), the meta converter (meta_utils.py), CrossRefFakeMode (fake_utils.py)."""
from .fake_tensor import (  # noqa: F401
    DynamicOutputShapeException, FakeTensor, FakeTensorMode, UnsupportedOperatorException)
from .fake_utils import CrossRefFakeMode  # noqa: F401

__all__ = ["FakeTensor", "FakeTensorMode", "UnsupportedOperatorException",
           "DynamicOutputShapeException", "CrossRefFakeMode"]
