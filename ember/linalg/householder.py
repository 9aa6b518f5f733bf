"""Householder reflectors: geqrf (LAPACK's compact QR, through SciPy), and products of the
reflectors it describes -- linalg.householder_product (= orgqr) and ormqr.

Column i of `input` below the diagonal, with an implicit 1 on the diagonal, is the vector v_i
of the reflector H_i = I - tau_i v_i v_i^H; Q = H_1 H_2 ... H_k. The products are written in
differentiable ops, so their gradients come from autograd; geqrf has no derivative, as in
PyTorch.
"""
import math

import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor
from .. import _refs as B
from .._bindings.out import _finish_tuple, _finish

__all__ = ["geqrf", "orgqr", "ormqr"]


def _check_float(A, kernel):
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (D.float16, D.bfloat16):
        from .._aten.elementwise import not_implemented
        raise not_implemented(kernel, A.dtype)


def geqrf(input, *, out=None):
    import scipy.linalg.lapack as lapack
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: The input tensor A must have at least 2 dimensions.")
    _check_float(input, "geqrf_cpu")
    m, n = input.shape[-2], input.shape[-1]
    data = input.detach().numpy()
    data = data.reshape((math.prod(data.shape[:-2]), m, n))
    fn = lapack.get_lapack_funcs("geqrf", (data,))
    qr = np.empty_like(data)
    tau = np.empty((data.shape[0], min(m, n)), data.dtype)
    for b, mat in enumerate(data):
        if mat.size:
            qr[b], tau[b] = fn(mat)[:2]
    batch = tuple(input.shape[:-2])
    result = (B.tensor(qr.reshape(batch + (m, n)), dtype=input.dtype),
              B.tensor(tau.reshape(batch + (min(m, n),)), dtype=input.dtype))
    return _finish_tuple("geqrf", ["a", "tau"], result, out)


def _reflector_product(A, tau, columns):
    """H_1 ... H_k applied to the first `columns` columns of the identity."""
    m = A.shape[-2]
    eye = B.eye(m, dtype=A.dtype)
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
    head = B.cat([B.zeros(batch + (i,), dtype=A.dtype), B.ones(batch + (1,), dtype=A.dtype)],
                 -1)
    return B.cat([head, A[..., i + 1:, i]], -1).reshape(batch + (m, 1))


def householder_product(A, tau, *, out=None):
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{A.dim()}")
    if A.dtype is not tau.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype} does not match input dtype "
                           f"{A.dtype}")
    _check_float(A, "orgqr_cpu")
    return _finish(_reflector_product(A, tau, A.shape[-1]), False, out)


def orgqr(input, tau, *, out=None):
    return householder_product(input, tau, out=out)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """op(Q) @ other (left) or other @ op(Q), with Q the full m x m product of the
    reflectors and op the conjugate transpose when `transpose`."""
    if input.dim() < 2 or other.dim() < 2:
        raise RuntimeError("torch.ormqr: input and other must have at least 2 dimensions.")
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be less than or equal to "
                           "input.shape[-1]")
    needed = other.shape[-2] if left else other.shape[-1]
    if needed != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to "
                           f"input.shape[-2]")
    _check_float(input, "ormqr_cpu")
    Q = _reflector_product(input, tau, input.shape[-2])
    Q = Q.mH if transpose else Q
    return _finish(Q.matmul(other) if left else other.matmul(Q), False, out)


Tensor.geqrf = lambda self: geqrf(self)
Tensor.orgqr = lambda self, input2: orgqr(self, input2)
Tensor.ormqr = lambda self, input2, input3, left=True, transpose=False: ormqr(
    self, input2, input3, left, transpose)
