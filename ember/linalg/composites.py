"""Linear-algebra functions PyTorch also offers, written from ember's linalg ops so autograd
sees what they are made of: the deprecated triangular_solve (over the linalg_solve_triangular
op), Cholesky solves and inverses
(through L's triangle, with L's gradient the full-matrix one PyTorch returns), matrix_exp (an
op), cond; and the functions PyTorch removed in 1.9,
which raise pointing at their replacements.
"""
import math
import warnings

import numpy as np

from ember._core.flags import warn_once

from .._aten.elementwise import _scalar_type_name
from .._aten.linalg import _expect_same_dtype
from .._aten.autocast import cached_cast
from .._core import dtype as D
from .._core.autocast_state import _autocast_state
from .._core.tensor import Tensor, _wrap_dim
from .. import _refs as B
from .._bindings import install_methods
from .._dispatch.dispatcher import impl, lookup
from .._bindings.out import _finish_tuple, _finish
from .._refs.reduction import _vector_norm

__all__ = ["triangular_solve", "cholesky_solve", "cholesky_inverse", "matrix_exp",
           "_compute_linear_combination",
           "frobenius_norm", "nuclear_norm", "norm_except_dim", "_weight_norm", "adjoint",
           "matrix_rank", "solve", "lstsq", "eig", "symeig", "pinverse", "matrix_power", "chain_matmul"]


def _linalg():
    from .. import linalg  # imported late: ember.linalg re-exports this module's functions
    return linalg


def _check_square(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() > 1 else 1} by {A.shape[-1]} matrices")


def _check_float(A, name):
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar_name(A.dtype)}")


def _scalar_name(dtype):
    from .._aten.elementwise import _scalar_type_name
    return _scalar_type_name(dtype)


def solve_triangular(A, B_, *, upper, left=True, unitriangular=False, out=None):
    _check_square(A, "linalg.solve_triangular")
    _check_float(A, "linalg.solve_triangular")
    if B_.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    n = A.shape[-1]
    if (B_.shape[-2] if left else B_.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({A.shape[-2]}x{n} and {B_.shape[-2]}x"
                           f"{B_.shape[-1]})")
    dtype = A.dtype  # PyTorch solves in A's dtype: B is copied into a result made like A
    return _finish(lookup("linalg_solve_triangular")(A.to(dtype), B_.to(dtype), upper=upper,
                                                     left=left, unitriangular=unitriangular),
                   False, out, "linalg_solve_triangular", (A, B_))


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """The deprecated form: solves op(A) X = input and also returns a copy of A."""
    return _finish_tuple("triangular_solve", ["solution", "cloned_coefficient"],
                         lookup("triangular_solve")(input, A, upper, transpose, unitriangular),
                         out)


@impl("triangular_solve", "CompositeImplicitAutograd")
def _triangular_solve_composite(input, A, upper, transpose, unitriangular):
    warn_once("torch.triangular_solve is deprecated in favor of "
              "torch.linalg.solve_triangularand will be removed in a future PyTorch "
              "release.\ntorch.linalg.solve_triangular has its arguments reversed and "
              "does not return a copy of one of the inputs.\n"
              "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
              "X = torch.linalg.solve_triangular(A, B).")
    _expect_same_dtype(input, A, "b", "A", end=".")
    T = A.mT if transpose else A
    X = solve_triangular(T, input, upper=upper != transpose, unitriangular=unitriangular)
    return X, A.clone()


def _factor(L, upper):
    """L's triangle (the one LAPACK's potrs/potri read), with the gradient reaching the whole of
    L: PyTorch's derivatives of cholesky_solve and cholesky_inverse are full-matrix formulas."""
    tri = L.triu() if upper else L.tril()
    return L + (tri - L).detach()


def _gram(L, upper):
    """A = L L^H for a lower factor, U^H U for an upper one."""
    L = _factor(L, upper)
    return L.mH.matmul(L) if upper else L.matmul(L.mH)


def cholesky_solve(input, input2, upper=False, *, out=None):
    for name, t in (("b", input), ("u", input2)):
        if t.dim() < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.dim()} "
                               f"dimensions instead")
    if input2.dim() < 2 or input2.shape[-1] != input2.shape[-2]:
        raise RuntimeError(f"cholesky_solve: A must be batches of square matrices, but they are "
                           f"{input2.shape[-2] if input2.dim() > 1 else 1} by "
                           f"{input2.shape[-1]} matrices")
    if input.dim() < 2 or input.shape[-2] != input2.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{input2.shape[-1]} by {input2.shape[-1]} but each b matrix is "
                           f"{input.shape[-2] if input.dim() > 1 else 1} by {input.shape[-1]}")
    if input.dtype is not input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_scalar_type_name(input.dtype)} and A of type "
                           f"{_scalar_type_name(input2.dtype)} instead.")
    _check_float(input2, "cholesky_solve")
    return _finish(_linalg().solve(_gram(input2, upper), input), False, out, "cholesky_solve",
                   (input, input2))


def cholesky_inverse(input, upper=False, *, out=None):
    if _autocast_state.cpu:
        # aten::cholesky_inverse is on autocast's float32 list: the whole composite, its
        # products included, runs in float32 with the AutocastCPU key off
        _autocast_state.cpu = False
        try:
            return cholesky_inverse(cached_cast(D.float32, input), upper, out=out)
        finally:
            _autocast_state.cpu = True
    _check_square(input, "cholesky_inverse")
    _check_float(input, "cholesky_inverse")
    _check_factor_diagonal(input)
    # potri's way: the factor's inverse F, then A^-1 = F^H F (A = L L^H) or F F^H (A = U^H U)
    # -- no product with the factor first, whose condition number would be squared
    F = _linalg().inv(_factor(input, upper))
    return _finish(F.matmul(F.mH) if upper else F.mH.matmul(F), False, out, "cholesky_inverse",
                   (input,))


def _check_factor_diagonal(L):
    """LAPACK's potri inverts the triangular factor first and refuses one with an exact zero on
    its diagonal; PyTorch's CPU kernel raises for it, naming the first such element."""
    from .._aten.linalg import _raise_info
    zero = (L.detach().diagonal(0, -2, -1) == 0).numpy()
    if zero.any():
        info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0)
        _raise_info(info, L.dim() > 2, lambda k: (
            f"cholesky_inverse: The diagonal element {k} is zero, the inversion could not be "
            f"completed because the input matrix is singular."))


def matrix_exp(A):
    """The op linalg_matrix_exp (SciPy's expm; PyTorch's derivative, a matrix_exp of a block
    matrix)."""
    from .._dispatch.dispatcher import lookup
    return lookup("linalg_matrix_exp")(A)


def _compute_linear_combination(input, coefficients, *, out=None):
    """torch._compute_linear_combination: result[i] = sum_j coefficients[i, j] * input[j]. With
    out= the combination is added to what `out` holds (PyTorch's kernel accumulates into its
    result, which the function form creates as zeros)."""
    result = lookup("_compute_linear_combination")(input, coefficients)
    return result if out is None else out.add_(result)


def cond(A, p=None, *, out=None):
    if A.dim() >= 2 and A.numel() == 0:  # PyTorch: 0 for an empty matrix, whatever its shape
        real = A.detach().abs().dtype
        return _finish(B.zeros(tuple(A.shape[:-2]), dtype=real, device=A.device), False, out,
                       "linalg_cond", (A,))
    if p in (None, 2, -2):
        if A.dim() < 2:
            raise RuntimeError("linalg.cond: The input tensor A must have at least 2 "
                               "dimensions.")
        s = _linalg().svdvals(A)
        big, small = s.amax(-1), s.amin(-1)
        return _finish(small / big if p == -2 else big / small, False, out, "linalg_cond", (A,))
    if p not in (1, -1, math.inf, -math.inf, "fro", "nuc"):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _check_square(A, f"linalg.cond(ord={p})")
    linalg = _linalg()
    # a singular matrix (an exactly zero pivot, LAPACK's test) has condition number inf
    singular = linalg.lu_factor_ex(A.detach()).info > 0
    eye = B.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    inverse = linalg.inv(B.where(singular.unsqueeze(-1).unsqueeze(-1), eye, A))
    result = linalg.matrix_norm(A, p) * linalg.matrix_norm(inverse, p)
    return _finish(B.where(singular, float("inf"), result), False, out, "linalg_cond", (A,))


def adjoint(input):
    """The conjugate transpose of the last two dims, as a view (of a 0-d tensor: its conjugate,
    deprecated)."""
    if input.dim() == 0:
        warn_once("adjoint() is deprecated on 0-D tensors. Consider using x.conj().")
        return input.conj()
    if input.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.dim()}-D tensor.")
    return input.transpose(-2, -1).conj()


# ---- deprecated norm entry points, kept by PyTorch for TorchScript -----------------------------
def frobenius_norm(input, dim, keepdim=False, *, out=None):
    warn_once("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
              "It will be removed in a future PyTorch release. Please use "
              "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dim = [dim] if isinstance(dim, int) else list(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           f"instead.")
    return _finish(_vector_norm(input, 2, dim, keepdim), False, out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
              "will be removed in a future PyTorch release. Please use "
              "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):             # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    dim = (-2, -1) if dim is None else tuple(dim)
    return _finish(_linalg().matrix_norm(input, "nuc", dim, keepdim), False, out)


def norm_except_dim(v, pow=2, dim=0):
    """The norm over every dim but `dim`, kept as size-1 dims (weight_norm's g); dim=-1 means
    the norm of the whole tensor."""
    if dim == -1:
        return _vector_norm(v, pow)
    dim = _wrap_dim(dim, v.dim())
    if v.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if v.shape[dim] == 0:  # PyTorch views v as (v.size(dim), -1) first: ambiguous then
        kept = [v.shape[dim], -1] if dim != v.dim() - 1 else [-1, v.shape[dim]]
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {kept} because the "
                           f"unspecified dimension size -1 can be any value and is ambiguous")
    others = [d for d in range(v.dim()) if d != dim]
    return _vector_norm(v, pow, others, True)


def _weight_norm(v, g, dim=0):
    """w = v * g / ||v||, the norm over every dim but `dim`: the fused `_weight_norm_interface`
    op for the first or last dim, else composed."""
    v, g = v.contiguous(), g.contiguous()
    if dim == 0 or dim == v.dim() - 1:
        return lookup("_weight_norm_interface")(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


# ---- removed in PyTorch 1.9 ---------------------------------------------------------------------
def _removed(name, replacement):
    def fn(*args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. "
                           f"Use `{replacement}` instead.")
    fn.__name__ = fn.__qualname__ = name
    return fn


matrix_rank = _removed("matrix_rank", "torch.linalg.matrix_rank")
solve = _removed("solve", "torch.linalg.solve")
lstsq = _removed("lstsq", "torch.linalg.lstsq")
eig = _removed("eig", "torch.linalg.eig")
symeig = _removed("symeig", "torch.linalg.eigh")

_METHODS = dict(
    triangular_solve=triangular_solve,
    cholesky_solve=lambda s, input2, upper=False: cholesky_solve(s, input2, upper),
    cholesky_inverse=lambda s, upper=False: cholesky_inverse(s, upper),
    matrix_exp=matrix_exp, adjoint=adjoint, solve=solve, lstsq=lstsq, eig=eig, symeig=symeig,
)
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)


def pinverse(input, rcond=1e-15):
    return lookup("pinverse")(input, rcond)


@impl("pinverse", "CompositeImplicitAutograd")
def _pinverse_composite(input, rcond):
    return _linalg().pinv(input, rtol=rcond)


def matrix_power(input, n):
    return _linalg().matrix_power(input, n)


def chain_matmul(*matrices, out=None):
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning)
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return _finish(matrices[0].clone(), False, out)
    return _finish(_linalg().multi_dot(list(matrices)), False, out)


install_methods(dict(pinverse=pinverse, matrix_power=matrix_power))
