"""torch._linalg_utils: the small dense helpers lobpcg is written with (products that accept a
sparse COO matrix or None for the identity, bilinear and quadratic forms, ordered eigenpairs),
which PyTorch's tests import by this name."""
from ._core import dtype as D

__all__ = ["is_sparse", "get_floating_dtype", "matmul", "bform", "qform", "basis", "symeig"]


def is_sparse(A):
    """True for a sparse COO tensor (the other sparse layouts are not)."""
    from ._core.tensor import Tensor
    if not isinstance(A, Tensor):
        raise TypeError(f"expected Tensor but got {type(A)}")
    return A.is_sparse


def get_floating_dtype(A):
    """A's dtype if it is a real floating dtype; float32 for every other."""
    return A.dtype if A.dtype in (D.float16, D.float32, D.float64) else D.float32


def matmul(A, B):
    """A @ B, where A may be None (the identity) or sparse COO; B is dense."""
    if A is None:
        return B
    return A.mm(B) if is_sparse(A) else A.matmul(B)


def bform(X, A, Y):
    """The bilinear form X^T A Y."""
    return matmul(X.mT, matmul(A, Y))


def qform(A, S):
    """The quadratic form S^T A S."""
    return bform(S, A, S)


def basis(A):
    """An orthonormal basis of A's columns."""
    from . import linalg
    return linalg.qr(A).Q


def symeig(A, largest=False):
    """The eigenpairs of the symmetric A (its upper triangle read), ascending or, with
    `largest`, descending."""
    from . import linalg
    values, vectors = linalg.eigh(A, UPLO="U")
    if largest:
        return values.flip(-1), vectors.flip(-1)
    return values, vectors
