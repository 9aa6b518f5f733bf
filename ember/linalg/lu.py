"""LU factorization with partial pivoting: linalg.lu, lu_factor(_ex), lu_solve, and the older
torch.lu, torch.lu_unpack and torch.lu_solve.

The factorization is the ops linalg_lu_factor_ex and linalg_lu (LAPACK's getrf through SciPy,
in _aten/linalg.py; their backward is PyTorch's linalg_lu_backward, in
autograd/derivatives/linalg.py). lu_solve is two triangular solves of the unpacked factors.
"""


import numpy as np

from .._core import dtype as D
from .._core.flags import warn_once
from .._aten.linalg import _expect_same_dtype, _raise_info, lu_factor_message, \
    permutation_matrices
from .._dispatch.dispatcher import lookup
from .._aten.autocast import cached_cast
from .._core.autocast_state import _autocast_state
from .._core.tensor import Tensor
from .. import _refs as B
from .._bindings.out import _finish_tuple, _finish

__all__ = ["lu", "lu_unpack", "lu_solve"]


def _linalg():
    from .. import linalg
    return linalg


_lu_factor_ex = lookup("linalg_lu_factor_ex")
_linalg_lu = lookup("linalg_lu")


def linalg_lu(A, *, pivot=True, out=None):
    return _finish_tuple("linalg_lu", ["P", "L", "U"], tuple(_linalg_lu(A, pivot=pivot)), out)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    return _finish_tuple("linalg_lu_factor_ex", ["LU", "pivots", "info"],
                         tuple(_lu_factor_ex(A, pivot=pivot, check_errors=check_errors)), out)


def lu_factor(A, *, pivot=True, out=None):
    """lu_factor_ex, raising for a singular matrix (PyTorch's linalg_lu_factor)."""
    LU, pivots, info = _lu_factor_ex(A, pivot=pivot)
    if not info.is_meta:   # (a meta matrix has no values to be singular)
        _raise_info(info.numpy(), A.dim() > 2, lu_factor_message("torch.linalg.lu_factor"),
                    RuntimeError)
    return _finish_tuple("linalg_lu_factor", ["LU", "pivots"], (LU, pivots), out)


def lu(A, pivot=True, get_infos=False, out=None):
    """The deprecated torch.lu: (LU, pivots[, infos])."""
    warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
              "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
              "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
              "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
              "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
              "should be replaced with\n"
              "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    result = (LU, pivots, info) if get_infos else (LU, pivots)
    if out is not None:
        # torch.lu is Python in PyTorch: it fills `out` with resize_as_ and copy_, so an out of
        # another shape is resized without the deprecation warning and any dtype is cast into
        if len(out) - get_infos != 2:
            raise TypeError(f"expected tuple of {2 + get_infos} elements but got {len(out)}")
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        for o, r in zip(out, result):
            o.resize_as_(r).copy_(r)
        return out
    return result


def _permutation_matrix(pivots, m, dtype):
    """lu_unpack's P from the 1-based interchanges `pivots` (each a row of LU)."""
    piv = pivots.numpy(force=True)
    if piv.size and (piv.min() < 1 or piv.max() > m):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")
    return B.tensor(permutation_matrices(piv, m, np.float64), dtype=dtype)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    if LU_pivots.dtype is not D.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype. Note: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = B.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        eye = B.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = LU_data[..., :, :k].tril(-1) + eye
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty
    if not unpack_pivots:
        P = empty
    elif LU_pivots.is_meta:   # a permutation matrix per pivots' matrix, without their values
        P = B.empty(tuple(LU_pivots.shape[:-1]) + (m, m), dtype=LU_data.dtype, device="meta")
    else:
        P = _permutation_matrix(LU_pivots, m, LU_data.dtype)
    return _finish_tuple("lu_unpack", ["P", "L", "U"], (P, L, U), out)


def _check_solve_pivots(pivots, m):
    """lu_solve's kernel reads each pivot as a row index of LU."""
    if pivots.numel() == 0:
        return
    if bool((pivots < 1).any()):
        raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did you "
                           "properly pass the result of lu_factor?")
    if bool((pivots > m).any()):
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to "
                           "LU.size(-2). Did you properly pass the result of lu_factor?")


def linalg_lu_solve(LU, pivots, B_, *, left=True, adjoint=False, out=None):
    """X with A X = B (or X A = B, or with A^H), from A's packed factors."""
    _expect_same_dtype(LU, B_, "LU", "B", "linalg.lu_solve: ")
    _check_solve_pivots(pivots, LU.shape[-2])
    P, L, U = lu_unpack(LU, pivots)
    tri = _linalg().solve_triangular
    if not left:     # X A = B  <=>  A^H X^H = B^H
        X = linalg_lu_solve(LU, pivots, B_.mH, left=True, adjoint=not adjoint)
        return _finish(X.mH, False, out, "linalg_lu_solve", (LU, B_))
    if adjoint:      # A^H = U^H L^H P^T
        Y = tri(L.mH, tri(U.mH, B_, upper=False), upper=True, unitriangular=True)
        return _finish(P.matmul(Y), False, out, "linalg_lu_solve", (LU, B_))
    Y = tri(L, P.mT.matmul(B_), upper=False, unitriangular=True)
    return _finish(tri(U, Y, upper=True), False, out, "linalg_lu_solve", (LU, B_))


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """The deprecated torch.lu_solve(b, LU_data, LU_pivots); warns once per process."""
    warn_once("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
              "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has "
              "its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be "
              "replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    if _autocast_state.cpu:  # aten::lu_solve is on autocast's float32 list
        b, LU_data = cached_cast(D.float32, b), cached_cast(D.float32, LU_data)
    return linalg_lu_solve(LU_data, LU_pivots, b, out=out)


Tensor.lu = lambda self, pivot=True, get_infos=False: lu(self, pivot, get_infos)
Tensor.lu_solve = lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots)
