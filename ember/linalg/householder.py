"""Householder reflectors: geqrf (LAPACK's compact QR, through SciPy), and products of the
reflectors it describes -- linalg.householder_product (= orgqr) and ormqr.

Column i of `input` below the diagonal, with an implicit 1 on the diagonal, is the vector v_i
of the reflector H_i = I - tau_i v_i v_i^H; Q = H_1 H_2 ... H_k. All four are ops, as in
PyTorch (so autocast runs them in float32): geqrf has a CPU kernel and no derivative, as in
PyTorch; the products are CompositeImplicitAutograd kernels written in differentiable ops, so
their gradients come from autograd.
"""
import math

import numpy as np

from .._core import dtype as D
from .._aten.elementwise import _scalar_type_name
from .._core.tensor import Tensor, _meta, _wrap
from .. import _refs as B
from .._bindings.out import _finish_tuple, _finish
from .._dispatch.dispatcher import impl, lookup

__all__ = ["geqrf", "orgqr", "ormqr"]


def _check_float(A, kernel):
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (D.float16, D.bfloat16):
        from .._aten.elementwise import not_implemented
        raise not_implemented(kernel, A.dtype)


def _check_geqrf(input):
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: The input tensor A must have at least 2 dimensions.")
    _check_float(input, "geqrf_cpu")
    m, n = input.shape[-2], input.shape[-1]
    return tuple(input.shape[:-2]), m, n


@impl("geqrf", "CPU")
def _geqrf_cpu(input):
    """LAPACK's geqrf of each matrix. Its factors are written column-major, one matrix after
    another, as PyTorch's kernel leaves them (the result's transpose is contiguous)."""
    import scipy.linalg.lapack as lapack
    batch, m, n = _check_geqrf(input)
    data = input._np.reshape((math.prod(batch), m, n))
    fn = lapack.get_lapack_funcs("geqrf", (data,))
    qr_t = np.empty((data.shape[0], n, m), data.dtype)   # each matrix's transpose, row-major
    tau = np.empty((data.shape[0], min(m, n)), data.dtype)
    for b, mat in enumerate(data):
        if mat.size:
            qr, tau[b] = fn(mat)[:2]
            qr_t[b] = qr.T
    qr_t = qr_t.reshape(batch + (n, m)).astype(input.dtype._np, copy=False)
    return (_wrap(np.swapaxes(qr_t, -1, -2)),
            _wrap(tau.reshape(batch + (min(m, n),)).astype(input.dtype._np, copy=False)))


@impl("geqrf", "Meta")
def _geqrf_meta(input):
    batch, m, n = _check_geqrf(input)
    return (_meta(batch + (m, n), input.dtype, device=input.device),
            _meta(batch + (min(m, n),), input.dtype, device=input.device))


_geqrf = lookup("geqrf")


def geqrf(input, *, out=None):
    return _finish_tuple("geqrf", ["a", "tau"], _geqrf(input), out, (input,))


def _reflector_product(A, tau, columns):
    """H_1 ... H_k applied to the first `columns` columns of the identity."""
    m = A.shape[-2]
    eye = B.eye(m, dtype=A.dtype, device=A.device)
    Q = eye[:, :columns].expand(*A.shape[:-2], m, columns)
    if not tau.shape[-1]:  # no reflectors: still a function of A and tau (an exact 0 added)
        Q = Q + A[..., :0].sum((-2, -1), keepdim=True) + tau[..., :0].sum(-1)[..., None, None]
    for i in reversed(range(tau.shape[-1])):     # Q <- H_i Q, last reflector first
        v = _reflector(A, i)
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        Q = Q - t * v.matmul(v.mH.matmul(Q))
    return Q


def _reflector(A, i):
    """v_i as an (m, 1) column: zeros above i, 1 at i, A's column i below."""
    m = A.shape[-2]
    batch = tuple(A.shape[:-2])
    like = dict(dtype=A.dtype, device=A.device)
    head = B.cat([B.zeros(batch + (i,), **like), B.ones(batch + (1,), **like)], -1)
    return B.cat([head, A[..., i + 1:, i]], -1).reshape(batch + (m, 1))


_householder_product = lookup("linalg_householder_product")
_orgqr = lookup("orgqr")
_ormqr = lookup("ormqr")


def householder_product(A, tau, *, out=None):
    return _finish(_householder_product(A, tau), False, out, "linalg_householder_product",
                   (A, tau))


def orgqr(input, tau, *, out=None):
    return _finish(_orgqr(input, tau), False, out, "linalg_householder_product", (input, tau))


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    return _finish(_ormqr(input, tau, other, left, transpose), False, out, "ormqr",
                   (input, tau, other))


def _check_tau_ndim(name, input, tau):
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{input.dim()}")


@impl("linalg_householder_product", "CompositeImplicitAutograd")
def _householder_product_composite(A, tau):
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    _check_tau_ndim(name, A, tau)
    if A.dtype is not tau.dtype:
        raise RuntimeError(f"{name}: tau dtype {_scalar_type_name(tau.dtype)} does not match "
                           f"input dtype {_scalar_type_name(A.dtype)}")
    _check_float(A, "orgqr_cpu")
    return _reflector_product(A, tau, A.shape[-1])


@impl("orgqr", "CompositeImplicitAutograd")
def _orgqr_composite(input, tau):
    return _householder_product(input, tau)


def _check_ormqr(input, tau, other, left):
    """PyTorch's checks of ormqr's arguments, in its order: tau holds one scalar per reflector
    of the min(m, n) that geqrf of an m x n input makes, other's side multiplied by Q has m
    rows, and the batch shapes and dtypes of the three agree (no broadcasting)."""
    name = "torch.ormqr"
    for what, t in (("input", input), ("other", other)):
        if t.dim() < 2:
            raise RuntimeError(f"{name}: {what} must have at least 2 dimensions.")
    side = -2 if left else -1
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    _check_tau_ndim(name, input, tau)
    if input.dim() != other.dim():
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.dim()} and input.ndim is "
                           f"equal to {input.dim()}")
    batch = tuple(input.shape[:-2])
    for what, batch_of in (("tau", tuple(tau.shape[:-1])), ("other", tuple(other.shape[:-2]))):
        if batch_of != batch:
            raise RuntimeError(f"{name}: Expected batch dimensions of {what} to be equal to "
                               f"input.shape[:-2], but got {list(batch_of)}")
    for what, t in (("tau", tau), ("other", other)):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"{name}: Expected input and {what} to have the same dtype, but "
                               f"input has dtype{_scalar_type_name(input.dtype)} and {what} has "
                               f"dtype {_scalar_type_name(t.dtype)}")


@impl("ormqr", "CompositeImplicitAutograd")
def _ormqr_composite(input, tau, other, left, transpose):
    """op(Q) @ other (left) or other @ op(Q), with Q the full m x m product of the
    reflectors and op the conjugate transpose when `transpose`."""
    _check_ormqr(input, tau, other, left)
    _check_float(input, "ormqr_cpu")
    Q = _reflector_product(input, tau, input.shape[-2])
    Q = Q.mH if transpose else Q
    return Q.matmul(other) if left else other.matmul(Q)


Tensor.geqrf = lambda self: geqrf(self)
Tensor.orgqr = lambda self, input2: orgqr(self, input2)
Tensor.ormqr = lambda self, input2, input3, left=True, transpose=False: ormqr(
    self, input2, input3, left, transpose)
