"""torch._linalg_utils: the small dense helpers lobpcg is written with (products that accept a
sparse COO matrix or None for the identity, bilinear and quadratic forms, ordered eigenpairs),
which PyTorch's tests import by this name. They live next to lobpcg, in linalg/lobpcg.py."""
from ..linalg.lobpcg import (  # noqa: F401
    basis, bform, get_floating_dtype, is_sparse, matmul, qform, symeig)

__all__ = ["is_sparse", "get_floating_dtype", "matmul", "bform", "qform", "basis", "symeig"]
