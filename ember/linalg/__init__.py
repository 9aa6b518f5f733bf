"""torch.linalg: decompositions, solvers, norms and products of (batches of) matrices.

The decompositions (inv, det, slogdet, solve, cholesky, qr, svd, eigh) are ops with LAPACK
kernels (through NumPy and SciPy's LAPACK) and backward formulas in
`ember/autograd/derivatives/linalg.py`, as are their `_ex` variants (LAPACK's info instead of
an error), LDL, eig and matrix_exp; pinv, lstsq,
matrix_rank, matrix_power and multi_dot are written here from them, so autograd sees the ops
they are made of (PyTorch computes lstsq's gradient through pinv as well).
"""
import builtins
import functools

import numpy as np

from .._core import dtype as D
from .._aten.linalg import LinAlgError, _expect_same_dtype
from .._aten.elementwise import _scalar_type_name
from .._dispatch.dispatcher import impl, lookup as _op
from .._bindings.out import _call_with_out, _finish, _finish_tuple
from .._bindings import where, zeros, eye, matmul, diagonal as _diagonal, tensor
from .._refs.reduction import _vector_norm as vector_norm, _matrix_norm as matrix_norm

__all__ = ["LinAlgError", "inv", "inv_ex", "solve_ex", "cholesky_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "tensorinv", "tensorsolve", "vander", "det", "slogdet",
           "solve", "cholesky", "qr", "svd",
           "svdvals", "eigh", "eigvalsh", "pinv", "lstsq", "matrix_rank", "norm", "vector_norm",
           "matrix_norm", "cross", "matmul", "vecdot", "multi_dot", "matrix_power", "diagonal"]


def inv(A, *, out=None):
    return _finish(_op("linalg_inv")(A), False, out, "linalg_inv", (A,))


def inv_ex(A, *, check_errors=False, out=None):
    return _finish_tuple("linalg_inv_ex", ["inverse", "info"],
                         _op("linalg_inv_ex")(A, check_errors), out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return _finish_tuple("linalg_solve_ex", ["result", "info"],
                         _op("linalg_solve_ex")(A, B, left, check_errors), out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    return _finish_tuple("linalg_cholesky_ex", ["L", "info"],
                         _op("linalg_cholesky_ex")(A, upper, check_errors), out)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    return _finish_tuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"],
                         _op("linalg_ldl_factor_ex")(A, hermitian, check_errors), out)


def ldl_factor(A, *, hermitian=False, out=None):
    """ldl_factor_ex, raising where D has an exactly zero pivot (PyTorch raises a RuntimeError
    there as well)."""
    LD, pivots, info = _op("linalg_ldl_factor_ex")(A, hermitian, False)
    bad = info.reshape(-1) > 0
    if bool(bad.any()):
        k = int(bad.int().argmax())
        code = int(info.reshape(-1)[k])
        where_ = f"(Batch element {k}): " if A.dim() > 2 else ""
        raise RuntimeError(f"torch.linalg.ldl_factor: {where_}The factorization could not be "
                           f"completed because D[{code},{code}] is exactly zero.")
    return _finish_tuple("linalg_ldl_factor", ["LD", "pivots"], (LD, pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    return _finish(_op("linalg_ldl_solve")(LD, pivots, B, hermitian), False, out,
                   "linalg_ldl_solve", (LD, pivots, B))


def tensorinv(A, ind=2, *, out=None):
    return _finish(_op("linalg_tensorinv")(A, ind), False, out, "linalg_tensorinv", (A,))


def tensorsolve(A, B, dims=None, *, out=None):
    return _finish(_op("linalg_tensorsolve")(A, B, dims), False, out, "linalg_tensorsolve",
                   (A, B))


def vander(x, *, N=None):
    return _op("linalg_vander")(x, N)


def det(A, *, out=None):
    return _finish(_op("linalg_det")(A), False, out, "linalg_det", (A,))


def slogdet(A, *, out=None):
    return _finish_tuple("linalg_slogdet", ["sign", "logabsdet"], _op("linalg_slogdet")(A), out)


def solve(A, B, *, left=True, out=None):
    return _finish(_op("linalg_solve")(A, B, left), False, out, "linalg_solve", (A, B))


def cholesky(A, *, upper=False, out=None):
    return _finish(_op("linalg_cholesky")(A, upper), False, out, "linalg_cholesky", (A,))


def qr(A, mode="reduced", *, out=None):
    return _finish_tuple("linalg_qr", ["Q", "R"], _op("linalg_qr")(A, mode), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    return _finish_tuple("linalg_svd", ["U", "S", "Vh"],
                         _op("linalg_svd")(A, full_matrices, driver), out)


def svdvals(A, *, driver=None, out=None):
    return _finish(_op("linalg_svdvals")(A, driver), False, out, "linalg_svdvals", (A,))


def eigh(A, UPLO="L", *, out=None):
    return _finish_tuple("linalg_eigh", ["eigenvalues", "eigenvectors"],
                         _op("linalg_eigh")(A, UPLO), out)


def eigvalsh(A, UPLO="L", *, out=None):
    return _finish(_op("linalg_eigh")(A, UPLO)[0], False, out, "linalg_eigvalsh", (A,))


def _check_pinv_input(A, name):
    if A.dim() < 2 or A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise RuntimeError(f"{name}({_scalar_type_name(A.dtype)}{{{list(A.shape)}}}): expected "
                           f"a tensor with 2 or more dimensions of float, double, cfloat or "
                           f"cdouble types")


def _tolerance(A, S, atol, rtol, name="torch.linalg.pinv"):
    """max(atol, rtol * largest singular value); rtol defaults to eps * max(m, n) when atol is
    not given (PyTorch's rule for pinv and matrix_rank). A tensor atol/rtol holds one value
    per matrix of the batch."""
    for label, t in (("atol", atol), ("rtol", rtol)):
        if hasattr(t, "shape") and t.is_complex():
            raise RuntimeError(f"{name}: {label} tensor of complex type is not supported. "
                               f"Got {_scalar_type_name(t.dtype)}")
    atol, rtol = (t.unsqueeze(-1) if hasattr(t, "shape") else t for t in (atol, rtol))
    if rtol is None:
        rtol = np.finfo(A.dtype._np).eps * builtins.max(A.shape[-2:]) \
            if atol is None or (not hasattr(atol, "shape") and atol <= 0) else 0.0
    smax = S.amax(-1, keepdim=True) if S.numel() else S.sum(-1, keepdim=True)
    tol = smax * rtol
    if atol is not None:
        tol = where(tol > atol, tol, atol)
    return tol


def _legacy_tolerance(name, legacy, legacy_name, atol, rtol):
    """PyTorch's older overload `op(A, rcond/tol, hermitian)`: that tolerance is relative for
    pinv and absolute for matrix_rank (the other one 0); it cannot be mixed with atol/rtol."""
    if legacy is None:
        return atol, rtol
    if name == "linalg_pinv" and hasattr(legacy, "shape") and legacy.is_complex():
        raise RuntimeError(f"torch.linalg.pinv: rcond tensor of complex type is not supported. "
                           f"Got {_scalar_type_name(legacy.dtype)}")
    if atol is not None or rtol is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"{legacy_name} together with atol/rtol")
    return (0.0, legacy) if name == "linalg_pinv" else (legacy, 0.0)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The pseudo-inverse through the SVD (eigh if hermitian): V diag(1/s) U^T over the singular
    values above the tolerance."""
    atol, rtol = _legacy_tolerance("linalg_pinv", rcond, "rcond", atol, rtol)
    _check_pinv_input(A, "linalg.pinv")
    if hermitian:
        L, Q = eigh(A)
        keep = L.abs() > _tolerance(A, L.abs(), atol, rtol)
        L_inv = where(keep, 1 / where(keep, L, 1.0), 0.0)
        return _finish((Q * L_inv.unsqueeze(-2)).matmul(Q.mH), False, out, "linalg_pinv", (A,))
    U, S, Vh = svd(A, full_matrices=False)
    keep = S > _tolerance(A, S, atol, rtol)
    S_inv = where(keep, 1 / where(keep, S, 1.0), 0.0)
    return _finish((Vh.mH * S_inv.unsqueeze(-2)).matmul(U.mH), False, out, "linalg_pinv",
                   (A,))


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    atol, rtol = _legacy_tolerance("linalg_matrix_rank", tol, "tol", atol, rtol)
    return _finish(_op("linalg_matrix_rank.atol_rtol_tensor")(A, atol=atol, rtol=rtol,
                                                              hermitian=hermitian), False, out,
                   "linalg_matrix_rank", (A,))


@impl("linalg_matrix_rank.atol_rtol_tensor", "CompositeImplicitAutograd")
def _matrix_rank_composite(A, atol=None, rtol=None, hermitian=False):
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    return (S > _tolerance(A, S, atol, rtol, "torch.linalg.matrix_rank")).sum(-1)


def lstsq(A, B, rcond=None, *, driver=None, out=None):
    return _finish_tuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"],
                         _op("linalg_lstsq")(A, B, rcond, driver=driver), out)


@impl("linalg_lstsq", "CompositeImplicitAutograd")
def _lstsq_composite(A, B, rcond=None, driver=None):
    """The least-squares solution of AX = B, as pinv(A) @ B (PyTorch's CPU default driver,
    gelsy, reports the rank; residuals are given when m > n and A has full rank)."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if B.dim() == A.dim() - 1 and A.shape[-2] != B.shape[-1]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
    if B.dim() != A.dim() - 1 and A.shape[-2] != B.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_scalar_type_name(A.dtype)} and "
                           f"other's dtype {_scalar_type_name(B.dtype)}")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    rtol = rcond if rcond is not None and rcond > 0 else None
    m, n = A.shape[-2], A.shape[-1]
    if driver == "gels" or driver == "gelsd" and (builtins.min(m, n) == 1 or rtol is not None
                                                  and rtol >= 1):
        rtol = None  # gels has no rcond; gelsd reads rcond >= 1 as eps, keeps a lone value
    elif driver == "gelsy" and rtol is not None:  # its QR keeps the first pivot column
        rtol = builtins.min(rtol, 1 - float(np.finfo(A.dtype.to_real()._np).eps))
    X = pinv(A, rtol=rtol).matmul(Bm)
    S = svdvals(A.detach())
    full_rank = (S > _tolerance(A, S, None, rtol)).sum(-1)  # the singular values pinv kept
    rank = full_rank if driver != "gels" else zeros(0, dtype=D.int64)
    residuals = zeros(0, dtype=S.dtype) * X.sum().abs()  # empty, in the graph, as PyTorch's
    if m > n and driver != "gelsy" and bool((full_rank == n).all()):
        residuals = (A.matmul(X) - Bm).abs().pow(2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    # as in PyTorch, only the solution and the residuals are differentiable
    S = S if driver in ("gelsd", "gelss") else zeros(0, dtype=S.dtype)
    return X.squeeze(-1) if vector else X, residuals, rank, S


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """PyTorch's dispatch of linalg.norm: a str ord is a matrix norm (over dims 0 and 1 when dim
    is not given); a numeric ord is a matrix norm over a 2-tuple dim or of a 2-D A without dim;
    everything else (ord=None included) a vector norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                           f"{list(dim)}")
    if dim is None and ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    if isinstance(ord, str):
        result = matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    elif ord is not None and (dim is None and A.dim() == 2 or dim is not None and len(dim) == 2):
        result = matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    else:
        result = vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return _finish(result, False, out, "linalg_norm", (A,))   # with linalg.norm's out= check


def cross(input, other, *, dim=-1, out=None):
    return _finish(_op("linalg_cross")(input, other, dim), False, out, "linalg_cross",
                   (input, other))


def vecdot(x, y, *, dim=-1, out=None):
    return _call_with_out(_vecdot, out, x, y, dim, name="linalg_vecdot")


_vecdot = _op("linalg_vecdot")


@impl("linalg_vecdot", "CompositeImplicitAutograd")
def _vecdot_composite(x, y, dim):
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_scalar_type_name(x.dtype)}")
    _expect_same_dtype(x, y, "x", "y", "linalg.vecdot: ")
    return (x.conj() * y).sum(dim)


def multi_dot(tensors, *, out=None):
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for where_, t in (("first", tensors[0]), ("last", tensors[-1])):
        if t.dim() not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {where_} tensor must be 1D or 2D but got "
                               f"{t.dim()}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {D.c_type_name(tensors[0].dtype)} and tensor {i} "
                               f"{D.c_type_name(t.dtype)}")
    for i, (a, b) in enumerate(zip(tensors, tensors[1:])):
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} "
                               f"and {list(b.shape)} cannot be multiplied")
    return _finish(functools.reduce(matmul, tensors), False, out, "linalg_multi_dot",
                   tuple(tensors))


def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring; A^0 is the identity and a negative n inverts first."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A.shape[-2] if A.dim() > 1 else 1} by {A.shape[-1]} "
                           f"matrices")
    if n == 0:
        return _finish(A * 0 + eye(A.shape[-1], dtype=A.dtype, device=A.device), False, out,
                       "linalg_matrix_power", (A,))
    # A or the identity are copied into out (any dtype they cast to); a product is written by
    # matmul, which takes out= in its own dtype only
    name = "linalg_matrix_power" if n == 1 else "linalg_matrix_power_mm"
    if n < 0:
        A, n = inv(A), -n
    result, power = None, A
    while n:
        if n & 1:
            result = power if result is None else result.matmul(power)
        n >>= 1
        if n:
            power = power.matmul(power)
    return _finish(result, False, out, name, (A,))


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return _diagonal(A, offset, dim1, dim2)


from .composites import solve_triangular, matrix_exp, cond  # noqa: E402 (coverage)
from .lu import linalg_lu as lu, lu_factor, lu_factor_ex, linalg_lu_solve as lu_solve
from .householder import householder_product  # noqa: E402
from .eig import eig, eigvals  # noqa: E402
__all__ += ["solve_triangular", "matrix_exp", "cond", "lu", "lu_factor", "lu_factor_ex",
            "lu_solve", "householder_product", "eig", "eigvals"]

del tensor
