"""Samplers PyTorch exposes for torch.distributions: binomial, _standard_gamma and
_sample_dirichlet.

_standard_gamma and _sample_dirichlet are PyTorch's CPU sampler (Marsaglia and Tsang's
rejection method, `sample_gamma` in ATen's Distributions.h) reading the same doubles from the
generator, uniform and Box-Muller normal (its cached second value included), one element after
the other: a seeded generator gives torch's draws. binomial draws with NumPy's sampler seeded
from the generator's stream: reproducible, distributed like PyTorch's, not its bit stream.
"""
import math

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import _grad_state
from .. import _refs as B
from .._core.type_info import finfo

__all__ = ["binomial", "_standard_gamma", "_sample_dirichlet"]


def _numpy_rng(generator):
    words = B.empty(2, dtype=D.int64).random_(0, 2 ** 31, generator=generator).tolist()
    return np.random.default_rng(words)


def _check(name, *tensors):
    for t in tensors:
        if not t.is_floating_point():
            from .._aten.elementwise import not_implemented
            raise not_implemented(name, t.dtype)
        if t.requires_grad and _grad_state.enabled:
            raise NotImplementedError(f"{name}: gradients with respect to the parameters are "
                                      f"not supported in ember")


def binomial(count, prob, generator=None):
    _check("binomial_cpu", count, prob)
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"expected scalar type {count.dtype} but found {prob.dtype}")
    B.broadcast_shapes(count.shape, prob.shape)  # PyTorch's error for shapes that do not
    c = count.detach().numpy().astype(np.float64)
    p = prob.detach().numpy().astype(np.float64)
    c, p = np.broadcast_arrays(c, p)
    draws = _numpy_rng(generator).binomial(c.astype(np.int64), np.clip(p, 0, 1))
    draws = np.where(np.isnan(p) | np.isnan(c), np.nan, draws)
    return B.tensor(draws, dtype=count.dtype)


_THIRD_F = float(np.float32(1.0) / np.float32(3.0))  # the float literal 1.0f / 3.0f
_SQUEEZE_F = float(np.float32(0.0331))


def _sample_gamma(alpha, uniform, normal, single):
    """One draw of ATen's sample_gamma(alpha); `single`: alpha is a float32 (the scalar_t
    arithmetic the C++ does in float: alpha - 1/3, 1/alpha, alpha + 1)."""
    f = np.float32 if single else float
    alpha = f(alpha)
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0:
            return 0.0
        scale *= math.pow(1 - uniform(), float(f(1.0) / alpha))
        alpha = f(alpha + f(1.0))
    d = float(f(alpha - f(_THIRD_F)))
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gamma_draws(alpha, generator, single):
    """sample_gamma for every element of the float64 array `alpha`, in row-major order."""
    from .._aten import distributions
    from .._aten.factory import _gen, _gen_impl
    g = _gen_impl(_gen(generator))
    with g._lock:
        def uniform():
            return float(distributions.uniform_real_f64(g, 1)[0])

        def normal():
            return float(distributions._normal_scalar_path(g, 1, 0.0, 1.0)[0])
        out = [_sample_gamma(a, uniform, normal, single) for a in alpha.reshape(-1).tolist()]
    return np.asarray(out, dtype=np.float64).reshape(alpha.shape)


def _standard_gamma(input, generator=None):
    _check("_standard_gamma", input)
    alpha = input.detach().numpy().astype(np.float64)
    draws = _gamma_draws(alpha, generator, input.dtype is not D.float64)
    draws = draws.astype(D.np_dtype(input.dtype))
    # PyTorch keeps the draw away from zero: the smallest positive normal number
    return B.tensor(np.maximum(draws, finfo(input.dtype).tiny), dtype=input.dtype)


def _sample_dirichlet(input, generator=None):
    """Gamma draws in float64 (whatever the input's dtype), normalised, and kept inside
    [tiny, the float below 1] of the input's dtype, as PyTorch's CPU kernel does."""
    _check("_sample_dirichlet", input)
    alpha = input.detach().numpy().astype(np.float64)
    gamma = np.maximum(_gamma_draws(alpha, generator, False), np.finfo(np.float64).tiny)
    ratio = (gamma / gamma.sum(-1, keepdims=True)).astype(D.np_dtype(input.dtype))
    top = np.nextafter(ratio.dtype.type(1), ratio.dtype.type(0))
    return B.tensor(np.clip(ratio, finfo(input.dtype).tiny, top), dtype=input.dtype)
