"""Weight normalisation and spectral normalisation as parametrizations (see parametrize.py):
the newer forms of `nn.utils.weight_norm` / `spectral_norm`, which keep `module.weight` a
computed property instead of rewriting it in a forward pre-hook.

- weight_norm: `parametrizations.weight.original0` is the magnitude g, `original1` the
  direction v, and weight = g * v / ||v|| (the norm over all dimensions but `dim`).
- spectral_norm: `original` is the unnormalised weight; buffers `_u`, `_v` hold the power
  iteration's singular-vector estimates (refined in place in training mode, cloned before use,
  for the reasons given in the hook-based spectral_norm.py); weight = original / sigma.
- orthogonal: weight = base @ f(original), f mapping an unconstrained matrix onto the
  orthogonal ones (the exponential or Cayley transform of its skew-symmetric part, or a
  product of Householder reflections); see `orthogonal` for the "trivialization" base.
"""
import enum
import math

import numpy as np

from ... import _refs as E
from ..._core.tensor import Tensor
from ..._core.memory_format import contiguous_format
from ... import linalg
from ...linalg.householder import geqrf
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Parametrize `module.<name>` as g * v / ||v||; state dicts of the hook-based form
    (`<name>_g`, `<name>_v`) still load. Returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from a good estimate rather than from noise
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        for _ in range(n_power_iterations):
            self._u = F.normalize(E.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
            self._v = F.normalize(E.mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                                  out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone(memory_format=contiguous_format)
        v = self._v.clone(memory_format=contiguous_format)
        sigma = E.vdot(u, E.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Parametrize `module.<name>` as itself divided by its (power-iteration estimate of its)
    largest singular value; `dim` defaults to 1 for transposed convolutions, else 0. Returns
    the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _matrix_exp(A):
    """exp(A) for a (batch of) square matrices by scaling and squaring: the degree-18 Taylor
    polynomial (Horner form) of A / 2^s, with s chosen so that ||A / 2^s||_1 <= 1 (which puts
    the truncation error below double precision), squared s times. Built from matmuls, so
    autograd differentiates it."""
    n = A.size(-1)
    with no_grad():
        norm = A.abs().sum(-2).amax().item() if A.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm))) if norm > 1 else 0
    A = A / 2 ** s
    Id = E.eye(n, dtype=A.dtype, device=A.device)
    P = Id + A / 18
    for j in range(17, 0, -1):
        P = Id + (A @ P) / j
    for _ in range(s):
        P = P @ P
    return P


def _householder_product(A, tau):
    """The first k columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, v_i being column i
    of A below the diagonal with a 1 on it (LAPACK's orgqr layout), applied right to left."""
    n, k = A.size(-2), A.size(-1)
    eye_nk = E.eye(n, k, dtype=A.dtype, device=A.device)
    V = A.tril(-1) + eye_nk
    Q = eye_nk.expand(*A.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mH @ Q))
    return Q


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    Id = E.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * float(np.finfo(Q.dtype._np).eps)
    return E.allclose(Q.mH @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q factor of A's QR decomposition, each column's sign fixed so R's diagonal would be
    positive: the orthogonal matrix nearest in spirit to A, and unique."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == _OrthMaps.householder:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))  # makes every H_i an exact reflection
            Q = _householder_product(A, tau)
            # the diagonal of X (+-1 after right_inverse) chooses each column's sign
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            # the lower triangle of X (padded to square) defines a skew-symmetric A
            X = X.tril()
            if n != k:
                X = E.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _matrix_exp(A)
            else:
                Id = E.eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(E.add(Id, A, alpha=-0.5), E.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        if n < k:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map == _OrthMaps.householder:
                # the inverse of forward: Q's Householder vectors (geqrf), with a diagonal of
                # +-1 giving the signs that make R's diagonal positive (tau == 0: no
                # reflection was used for that column, so its sign flips back)
                A, tau = geqrf(Q)
                diag = A.diagonal(dim1=-2, dim2=-1)
                diag.sign_()
                diag[tau == 0.0] *= -1
                return A.mT if n != Q_init.size(-2) else A
            raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                      "or the Cayley parametrizations when "
                                      "use_trivialization=False.")
        # trivialization: keep Q (completed to a square orthogonal matrix) as `base`, and
        # return the X whose image is the identity (-I: its diagonal gives Householder's +1s,
        # its skew part is zero)
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = E.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(E.cat([Q, N], dim=-1))
        self.base = Q
        neg_Id = E.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain `module.<name>` (a matrix or batch of matrices) to be orthogonal (or, if not
    square, to have orthonormal columns or rows), via `orthogonal_map`: "matrix_exp" (default
    for square matrices), "cayley", or "householder" (default otherwise).

    With `use_trivialization` (the default) the current weight, made orthogonal, is stored as
    the buffer `base`, and the weight is base @ f(original) with original starting where f
    gives the identity: training moves around the current weight, and assigning to
    `module.<name>` resets `base`. Returns the module.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
