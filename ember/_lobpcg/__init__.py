"""torch._lobpcg: the module PyTorch's tests import lobpcg and its worker class from; ember's
implementation lives in linalg/lobpcg.py (lobpcg here is the public torch.lobpcg)."""
from .. import lobpcg  # noqa: F401
from ..linalg.lobpcg import LOBPCG  # noqa: F401

__all__ = ["lobpcg"]
