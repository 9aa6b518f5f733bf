"""torch._C._functions: the autograd nodes PyTorch's C++ side hands to Python (ember keeps
them in ember/autograd/delayed_error.py and graph.py)."""
from ..autograd.delayed_error import DelayedError, Error, UndefinedGrad, UndefinedGradBackward  # noqa: F401
from ..autograd.graph import AccumulateGrad  # noqa: F401
