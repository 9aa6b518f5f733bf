"""LU factorization with partial pivoting: linalg.lu, lu_factor(_ex), lu_solve, and the older
torch.lu, torch.lu_unpack and torch.lu_solve.

The row permutation is LAPACK's (getrf through SciPy, which also gives PyTorch's pivots); the
factors of the permuted matrix are then computed by Gaussian elimination written in
differentiable ops (one Schur-complement update per column), so autograd differentiates the
factorization itself. lu_solve is two triangular solves of the unpacked factors.
"""
import warnings

import math

import numpy as np

from .._core import dtype as D
from .._core.flags import warn_once
from .._aten.linalg import _expect_same_dtype
from .._aten.autocast import cached_cast
from .._core.autocast_state import _autocast_state
from .._core.tensor import Tensor
from .. import _refs as B
from .._bindings.out import _finish_tuple, _finish

__all__ = ["lu", "lu_unpack", "lu_solve"]


def _linalg():
    from .. import linalg
    return linalg


def _check_matrix(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (D.float16, D.bfloat16):
        from .._aten.elementwise import not_implemented
        raise not_implemented("lu_cpu", A.dtype)


def _pivots(A):
    """LAPACK's 1-based row interchanges (int32) and the permutation they make, as an index
    array: row i of P^T A is row perm[i] of A."""
    import scipy.linalg
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    data = A.numpy(force=True)  # (a lazy conjugate/negative view's values)
    data = data.reshape((math.prod(data.shape[:-2]), m, n))
    pivots = np.empty((data.shape[0], k), np.int32)
    perms = np.empty((data.shape[0], m), np.int64)
    for b, mat in enumerate(data):
        if k == 0:
            piv = np.zeros(0, np.int32)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")          # singular: LAPACK still factors
                piv = scipy.linalg.lu_factor(mat, check_finite=False)[1]
        pivots[b] = piv + 1
        perm = np.arange(m)
        for i, p in enumerate(piv):
            perm[[i, p]] = perm[[p, i]]
        perms[b] = perm
    batch = tuple(A.shape[:-2])
    return pivots.reshape(batch + (k,)), perms.reshape(batch + (m,))


def _permutation_matrix(perm, dtype):
    """P with A = P (P^T A): column i of P is the unit vector at perm[i]."""
    m = perm.shape[-1]
    P = (perm[..., None, :] == np.arange(m)[:, None]).astype(np.float64)
    return B.tensor(P, dtype=dtype)


def _eliminate(A):
    """(L, U) of a matrix whose rows are already in pivot order, by Gaussian elimination."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    L_cols, U_rows, S = [], [], A
    for j in range(k):
        u = S[..., 0, :]
        pivot = u[..., :1]
        safe = B.where(pivot == 0, B.ones_like(pivot), pivot)    # a zero column: l = 0
        l = S[..., 1:, 0] / safe
        U_rows.append(B.cat([B.zeros(batch + (j,), dtype=A.dtype), u], -1))
        L_cols.append(B.cat([B.zeros(batch + (j,), dtype=A.dtype),
                             B.ones(batch + (1,), dtype=A.dtype), l], -1))
        S = S[..., 1:, 1:] - l.unsqueeze(-1) * u[..., 1:].unsqueeze(-2)
    if k == 0:  # empty factors, still on A's graph (its gradient is an empty tensor)
        return A[..., :, :0], A[..., :0, :]
    return B.stack(L_cols, -1), B.stack(U_rows, -2)


def _factor(A, name):
    _check_matrix(A, name)
    pivots, perm = _pivots(A)
    index = B.tensor(perm, dtype=D.int64).unsqueeze(-1).expand(tuple(A.shape))
    L, U = _eliminate(A.gather(-2, index))
    return L, U, pivots, perm


def _meta_column_major(shape, dtype, device):
    """A tensor without data laid out as LAPACK writes it: each matrix column-major."""
    strides = B.empty(tuple(shape[:-2]) + (shape[-1], shape[-2]), dtype=dtype,
                      device=device).mT.stride()
    return B.empty_strided(tuple(shape), strides, dtype=dtype, device=device)


def _meta_factors(A, name):
    """lu_factor_ex's (LU, pivots, info) and linalg.lu's (P, L, U) of a meta A: their shapes,
    dtypes and PyTorch's strides (LU column-major, the rest contiguous)."""
    _check_matrix(A, name)
    batch, (m, n) = tuple(A.shape[:-2]), tuple(A.shape[-2:])
    k = min(m, n)
    like = dict(dtype=A.dtype, device=A.device)
    index = dict(dtype=D.int32, device=A.device)
    return ((_meta_column_major(A.shape, **like), B.empty(batch + (k,), **index),
             B.empty(batch, **index)),
            (B.empty(batch + (m, m), **like), B.empty(batch + (m, k), **like),
             B.empty(batch + (k, n), **like)))


def linalg_lu(A, *, pivot=True, out=None):
    if not pivot:
        raise NotImplementedError("linalg.lu: LU without pivoting is not implemented on the "
                                  "CPU")
    if A.is_meta:
        return _finish_tuple("linalg_lu", ["P", "L", "U"], _meta_factors(A, "linalg.lu")[1],
                             out)
    L, U, _, perm = _factor(A, "linalg.lu")
    P = _permutation_matrix(perm, A.dtype)
    return _finish_tuple("linalg_lu", ["P", "L", "U"], (P, L, U), out)


def _pack(L, U):
    m, n = L.shape[-2], U.shape[-1]
    k = L.shape[-1]
    batch = tuple(L.shape[:-2])
    lower = B.cat([L.tril(-1), B.zeros(batch + (m, n - k), dtype=L.dtype)], -1) if n > k \
        else L.tril(-1)
    upper = B.cat([U, B.zeros(batch + (m - k, n), dtype=U.dtype)], -2) if m > k else U
    return lower + upper


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented "
                                  "on the CPU")
    if A.is_meta:
        return _finish_tuple("linalg_lu_factor_ex", ["LU", "pivots", "info"],
                             _meta_factors(A, "linalg.lu_factor_ex")[0], out)
    L, U, pivots, _ = _factor(A, "linalg.lu_factor_ex")
    LU = _pack(L, U)
    k = min(A.shape[-2], A.shape[-1])
    diag = U.detach().diagonal(0, -2, -1).numpy()
    zero = diag == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0) if k else np.zeros(diag.shape[:-1])
    info = B.tensor(np.asarray(info, dtype=np.int32))
    if check_errors and bool((info > 0).any()):
        raise _linalg().LinAlgError(f"linalg.lu_factor_ex: U[{int(info.max())},"
                                    f"{int(info.max())}] is zero and using it on lu_solve "
                                    f"would result in a division by zero.")
    return _finish_tuple("linalg_lu_factor_ex", ["LU", "pivots", "info"],
                           (LU, B.tensor(pivots), info), out)


def lu_factor(A, *, pivot=True, out=None):
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
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


def _perm_from_pivots(pivots, m):
    piv = pivots.numpy(force=True).astype(np.int64) - 1
    flat = piv.reshape((math.prod(piv.shape[:-1]), piv.shape[-1]))
    perms = np.tile(np.arange(m), (flat.shape[0], 1))
    for b in range(flat.shape[0]):
        for i, p in enumerate(flat[b]):
            if not 0 <= p < m:
                raise RuntimeError("pivots passed to lu_unpack must be between 1 and "
                                   "LU.size(-2) inclusive.Did you properly pass the result of "
                                   "lu_factor?")
            perms[b, [i, p]] = perms[b, [p, i]]
    return perms.reshape(piv.shape[:-1] + (m,))


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
        P = _permutation_matrix(_perm_from_pivots(LU_pivots, m), LU_data.dtype)
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
