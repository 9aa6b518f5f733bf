"""Samplers PyTorch exposes for torch.distributions: binomial, _standard_gamma and
_sample_dirichlet, as PyTorch's CPU kernels draw them (ATen's Distributions.h: Marsaglia and
Tsang's rejection method for Gamma, inversion or Hormann's BTRS for Binomial), one element
after the other, reading the same doubles from the generator (uniform, and Box-Muller normals
with the cached second value): a seeded generator gives torch's draws.
"""
import math

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import _grad_state
from .. import _refs as B
from .._core.type_info import finfo

__all__ = ["binomial", "_standard_gamma", "_sample_dirichlet"]


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
    c, p = np.broadcast_arrays(count.detach().numpy(), prob.detach().numpy())
    from .._aten.factory import _gen, _gen_impl
    g = _gen_impl(_gen(generator))
    f = np.float32 if count.dtype is not D.float64 else np.float64
    pairs = list(zip(c.reshape(-1).astype(f).tolist(), p.reshape(-1).astype(f).tolist()))
    with g._lock:
        stream = _DoubleStream(g, 2 * len(pairs) + 8)
        out = [_sample_binomial(f(n), f(q), stream.uniform, f) for n, q in pairs]
        stream.settle()
    return B.tensor(np.asarray(out, dtype=np.float64).reshape(c.shape), dtype=count.dtype)


_STIRLING_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                   0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                   0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                   0.00833056343336287)


def _stirling_tail(k):
    if k <= 9:
        return _STIRLING_TAILS[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _sample_binomial(count, prob, uniform, f):
    """ATen's sample_binomial: inversion for count * p < 10, else Hormann's BTRS; `f` is the
    scalar type (its arithmetic where the C++ computes in scalar_t)."""
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return float(count)
    if prob <= 0.5:
        if float(count * prob) >= 10.0:
            return _btrs(count, prob, uniform, f)
        return _binomial_inversion(count, prob, uniform)
    if prob > 0.5:
        qprob = f(1.0 - float(prob))
        if float(count * qprob) >= 10.0:
            return float(count - f(_btrs(count, qprob, uniform, f)))
        return float(count - f(_binomial_inversion(count, qprob, uniform)))
    return math.nan


def _binomial_inversion(count, prob, uniform):
    geom_sum, num_geom = 0.0, 0.0
    logprob = math.log1p(-float(prob))
    while True:
        geom = math.ceil(math.log(uniform()) / logprob)
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _btrs(count, prob, uniform, f):
    count_d, prob_d = float(count), float(prob)
    stddev = float(np.sqrt(f(count * prob * (f(1) - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob_d
    c = float(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob_d / float(f(1) - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(float(count + f(1)) * prob_d)
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = float(f(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > count_d:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        upperbound = ((m + 0.5) * math.log((m + 1) / (r * (count_d - m + 1)))
                      + (count_d + 1) * math.log((count_d - m + 1) / (count_d - k + 1))
                      + (k + 0.5) * math.log(r * (count_d - k + 1) / (k + 1))
                      + _stirling_tail(m) + _stirling_tail(count_d - m)
                      - _stirling_tail(k) - _stirling_tail(count_d - k))
        if v <= upperbound:
            return k


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


class _DoubleStream:
    """The generator's uniform_real_distribution<double> draws and Box-Muller normals (with
    its cached second value), read ahead in vectorised blocks for a scalar sampler loop;
    `settle()` then leaves the generator exactly as far on as the draws used."""

    def __init__(self, g, n):
        from .._aten import distributions
        self._uniform_block = lambda k: distributions.uniform_real_f64(g, k).tolist()
        self._g, self._state, self._twist = g, g._bitgen.state, g._next_at_twist
        self._buf, self._used = self._uniform_block(n), 0
        self.cache = g._normal_cache

    def uniform(self):
        if self._used == len(self._buf):
            self._buf += self._uniform_block(len(self._buf))
        self._used += 1
        return self._buf[self._used - 1]

    def normal(self):
        if self.cache is not None:
            value, self.cache = self.cache, None
            return value
        theta = (2.0 * math.pi) * self.uniform()
        radius = math.sqrt(-2.0 * math.log1p(-self.uniform()))
        self.cache = radius * math.sin(theta)
        return radius * math.cos(theta)

    def settle(self):
        g = self._g
        g._bitgen.state, g._next_at_twist = self._state, self._twist
        if self._used:
            self._uniform_block(self._used)
        g._normal_cache = self.cache


def _gamma_draws(alpha, generator, single):
    """sample_gamma for every element of the float64 array `alpha`, in row-major order."""
    from .._aten.factory import _gen, _gen_impl
    g = _gen_impl(_gen(generator))
    values = alpha.reshape(-1).tolist()
    with g._lock:
        stream = _DoubleStream(g, 3 * len(values) + 8)  # about 2.1 draws per sample
        out = [_sample_gamma(a, stream.uniform, stream.normal, single) for a in values]
        stream.settle()
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
