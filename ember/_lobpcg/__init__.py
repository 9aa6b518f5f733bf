"""torch._lobpcg: the module PyTorch's tests import lobpcg and its worker class from; ember's
implementation lives in linalg/lobpcg.py."""
from ..linalg.lobpcg import LOBPCG, lobpcg  # noqa: F401

__all__ = ["lobpcg"]
