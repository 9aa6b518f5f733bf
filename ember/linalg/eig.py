"""linalg.eig and linalg.eigvals: eigen-decomposition of general square matrices through
NumPy's LAPACK geev (the routine PyTorch calls, so the same order and normalisation of the
eigenvectors), with complex results. Their derivatives are not implemented in ember: an input
that requires grad raises rather than giving a result autograd would silently stop at.
"""
import numpy as np

from .._core import dtype as D
from .. import _refs as B
from .._bindings.out import _finish_tuple, _finish
from ..autograd.grad_mode import is_grad_enabled

_COMPLEX = {"float32": D.complex64, "float64": D.complex128, "complex64": D.complex64,
            "complex128": D.complex128}


def _decompose(A, name, vectors):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() > 1 else 1} by {A.shape[-1]} matrices")
    if A.dtype.name not in _COMPLEX:
        from .._aten.elementwise import not_implemented
        raise not_implemented("linalg_eig_out_cpu", A.dtype)
    if A.requires_grad and is_grad_enabled():
        raise NotImplementedError(f"linalg.{name}: the derivative is not implemented in ember "
                                  f"(call it under torch.no_grad() or on a detached tensor)")
    data = A.detach().numpy()
    if not np.isfinite(data).all():
        raise _linalg_error(f"linalg.{name}: The algorithm failed to converge because the "
                            f"input matrix contained non-finite values.")
    dtype = _COMPLEX[A.dtype.name]
    if not vectors:
        return B.tensor(np.linalg.eigvals(data), dtype=dtype)
    values, vecs = np.linalg.eig(data)
    return B.tensor(values, dtype=dtype), B.tensor(vecs, dtype=dtype)


def _linalg_error(message):
    from .._aten.linalg import LinAlgError
    return LinAlgError(message)


def eig(A, *, out=None):
    return _finish_tuple("linalg_eig", ["eigenvalues", "eigenvectors"],
                           _decompose(A, "eig", True), out)


def eigvals(A, *, out=None):
    return _finish(_decompose(A, "eigvals", False), False, out)
