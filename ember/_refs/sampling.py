"""Samplers PyTorch exposes for torch.distributions: binomial, _standard_gamma and
_sample_dirichlet, as PyTorch's CPU kernels draw them (ATen's Distributions.h: Marsaglia and
Tsang's rejection method for Gamma, inversion or Hormann's BTRS for Binomial), reading the same
doubles from the generator in the same order (uniform, and Box-Muller normals with the cached
second value): a seeded generator gives torch's draws. Binomial runs element after element;
Gamma walks a table of every start state in the stream (Note [Gamma draws as a walk ...]).
"""
import math

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import _grad_state
from .. import _refs as B
from .._core.type_info import finfo
from .._dispatch.vmap_state import random_function

__all__ = ["binomial", "_standard_gamma", "_sample_dirichlet"]


def _check(name, *tensors):
    for t in tensors:
        if not t.is_floating_point():
            from .._aten.elementwise import not_implemented
            raise not_implemented(name, t.dtype)
        if t.requires_grad and _grad_state.enabled:
            raise NotImplementedError(f"{name}: gradients with respect to the parameters are "
                                      f"not supported in ember")


@random_function
def binomial(count, prob, generator=None):
    for name, t in (("count", count), ("prob", prob)):
        if not t.is_floating_point():
            from .._aten.elementwise import _scalar_type_name
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_scalar_type_name(t.dtype)}")
    _check("binomial_cpu", count, prob)
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"expected scalar type {count.dtype} but found {prob.dtype}")
    B.broadcast_shapes(count.shape, prob.shape)  # PyTorch's error for shapes that do not
    c, p = np.broadcast_arrays(count.numpy(force=True), prob.numpy(force=True))
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
        # a prob so small that log1p(-prob) underflows makes the draw inf: the sum passes count
        geom = math.log(uniform()) / logprob
        geom_sum += geom if math.isinf(geom) else math.ceil(geom)
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


class _DoubleStream:
    """The generator's uniform_real_distribution<double> draws and Box-Muller normals (with
    its cached second value), read ahead in vectorised blocks for a scalar sampler loop;
    `settle()` then leaves the generator exactly as far on as the draws used."""

    def __init__(self, g, n):
        from .._aten import distributions
        self._uniform_block = lambda k: distributions.uniform_real_f64(g, k).tolist()
        self._g, self._state, self._twist = g, g._bitgen.state, g._next_at_twist
        self._buf, self._used = self._uniform_block(n), 0

    def uniform(self):
        if self._used == len(self._buf):
            self._buf += self._uniform_block(len(self._buf))
        self._used += 1
        return self._buf[self._used - 1]

    def settle(self):
        g = self._g
        g._bitgen.state, g._next_at_twist = self._state, self._twist
        if self._used:
            self._uniform_block(self._used)


# Note [Gamma draws as a walk over a table of start states]
#     ATen's sample_gamma (Marsaglia and Tsang) draws element after element from one stream:
#     for alpha < 1 a uniform for the boost, then attempts of (a normal, and a uniform when
#     1 + c*x > 0) until one is accepted. A normal costs two uniforms (Box-Muller) and caches
#     its sine half, or costs none and uses the cache. So where element k starts in the
#     stream depends on how many attempts every earlier element needed: a sequential chain.
#
#     The chain is cheap once each step is a table lookup. Read a block of uniforms ahead;
#     a "state" is (p, cached): the next uniform is u[p], and a normal is cached or not. An
#     element ends with an accepted attempt, whose normal (if it left a cache) came from the
#     pair at p-3, p-2 followed by the acceptance uniform at p-1; so the cached value of a
#     state is sin-half(p - 3), except at p = 0, where it is the generator's own cache. For
#     one alpha, running the rejection loop from every state at once (NumPy, masked) gives
#     each state's draw and the state the next element starts in. The walk along the chain
#     is then one list lookup per element. Each distinct alpha needs its own table, so many
#     distinct alphas are drawn by the scalar loop instead (_sample_gamma_scalar).

_LIBM_LOOPS = {}
_MATH = {"log": math.log, "log1p": math.log1p, "cos": math.cos, "sin": math.sin}


def _libm(name, x):
    """The C library's `name` (math.<name>) element-wise, as the C++ sampler computes it: with
    NumPy's loop when that loop is the C library's function (on a machine where NumPy has no
    vector version of its own, every probe agrees), else one math call per element."""
    exact = _LIBM_LOOPS.get(name)
    if exact is None:
        from .._aten.distributions import _libm as one_by_one
        probe = np.random.default_rng(0).random(4096) * (4.0 if name == "log" else 1.0)
        probe = {"log1p": -probe, "cos": 2 * math.pi * probe, "sin": 2 * math.pi * probe}.get(
            name, probe)
        exact = np.array_equal(getattr(np, name)(probe), one_by_one(_MATH[name], probe))
        _LIBM_LOOPS[name] = exact
    if exact:
        return getattr(np, name)(x)
    from .._aten.distributions import _libm as one_by_one
    return one_by_one(_MATH[name], x)


def _box_muller_halves(u):
    """(cos half, sin half) of the normal pair each position p starts: theta from u[p],
    radius from u[p+1]."""
    theta = (2.0 * math.pi) * u[:-1]
    radius = np.sqrt(-2.0 * _libm("log1p", -u[1:]))
    return radius * _libm("cos", theta), radius * _libm("sin", theta)


def _gamma_constants(alpha, single):
    """(boost exponent or None, d, c) of sample_gamma for one alpha; `single`: alpha is a
    float32 (the scalar_t arithmetic the C++ does in float: alpha - 1/3, 1/alpha, alpha + 1)."""
    f = np.float32 if single else float
    alpha = f(alpha)
    exponent = None
    if alpha < 1.0:
        exponent = float(f(1.0) / alpha)
        alpha = f(alpha + f(1.0))
    d = float(f(alpha - f(_THIRD_F)))
    with np.errstate(divide="ignore", invalid="ignore"):  # C's inf and NaN, not exceptions
        return exponent, d, float(1.0 / np.sqrt(np.float64(9.0 * d)))


def _gamma_table(d, c, boosted, u, cos_half, sin_half, first_cache, lo, hi):
    """For the start states s = 2*p + cached with lo <= p < hi: y**3 of the accepted attempt
    (the draw is scale * d * y**3, the boost's scale applied after the walk), and the state
    the next element starts in (-1 where the uniforms run out). States that cannot occur
    (cached at p = 1, 2) get values nobody reads."""
    n_pos = len(u)
    cubes = np.zeros(2 * (min(hi, n_pos) - lo))
    nxt = np.full(len(cubes), -1, dtype=np.int64)
    hi = min(hi, n_pos - 4)  # start positions with room for the boost and one attempt
    m = max(hi - lo, 0)
    q = lo + 1 if boosted else lo
    cached_x = sin_half[lo - 3:hi - 3] if lo >= 3 else \
        np.concatenate((np.zeros(3 - lo), sin_half[:max(hi - 3, 0)]))[:m]
    if lo == 0 and first_cache is not None:
        cached_x = cached_x.copy()
        cached_x[0] = first_cache
    # the first normal of every start: a fresh pair at q, or the cached half
    idx = np.concatenate((np.arange(0, 2 * m, 2), np.arange(1, 2 * m, 2)))
    x = np.concatenate((cos_half[q:q + m], cached_x))
    pos = np.concatenate((np.arange(q + 2, q + 2 + m), np.arange(q, q + m)))
    cached = np.arange(2 * m) < m
    cache = np.concatenate((sin_half[q:q + m], cached_x))
    while True:
        y = 1.0 + c * x
        tries = ~(y <= 0)  # the C++ rejects y <= 0, so a NaN y goes on to the test
        v = y * y * y
        uu = 1.0 - u[pos]
        pos = pos + tries
        xx = x * x
        accept = tries & (uu < 1.0 - _SQUEEZE_F * xx * xx)
        slow = np.flatnonzero(tries & ~accept)
        if len(slow):
            vs = v[slow]
            lhs = _libm("log", uu[slow])
            accept[slow] = lhs < 0.5 * xx[slow] + d * (1.0 - vs + _libm("log", vs))
        done = idx[accept]
        cubes[done] = v[accept]
        nxt[done] = 2 * pos[accept] + cached[accept]
        keep = ~accept & (pos <= n_pos - 3)  # the rest, where a pair and a uniform still fit
        if not keep.any():
            return cubes, nxt
        idx, pos, cached, cache = idx[keep], pos[keep], cached[keep], cache[keep]
        fresh = ~cached
        x = np.where(cached, cache, cos_half[pos])
        cache = np.where(fresh, sin_half[pos], cache)
        pos = pos + 2 * fresh
        cached = fresh


def _walk_tables(constants, which, u, first_cache, block=1 << 14):
    """The chain of start states, one element of class `which[k]` after the other, over the
    tables of each class (built a block of positions at a time: small arrays stay in
    cache). Returns the visited states, their y**3, and the state after the last."""
    cos_half, sin_half = _box_muller_halves(u)
    tables = []
    for k in constants:
        if k is None:  # alpha == 0: no draws, the state stays
            tables.append((np.zeros(2 * len(u) + 2), np.arange(2 * len(u) + 2)))
            continue
        parts = [_gamma_table(k[1], k[2], k[0] is not None, u, cos_half, sin_half,
                              first_cache, lo, lo + block) for lo in range(0, len(u), block)]
        # ... and the state past the last uniform, where every class stops
        tables.append((np.concatenate([p[0] for p in parts] + [np.zeros(2)]),
                       np.concatenate([p[1] for p in parts] + [np.full(2, -1)])))
    nexts = [t[1].tolist() for t in tables]
    state = 1 if first_cache is not None else 0
    visited = []
    for kind in which:
        step = nexts[kind][state]
        if step < 0:
            break
        visited.append(state)
        state = step
    visited = np.asarray(visited, dtype=np.int64)
    cubes = np.empty(len(visited))
    kinds = np.asarray(which[:len(visited)], dtype=np.int64)
    for i, (table, _) in enumerate(tables):
        mine = kinds == i
        cubes[mine] = table[visited[mine]]
    return visited, cubes, state, sin_half


def _gamma_draws(alpha, generator, single):
    """sample_gamma for every element of the float64 array `alpha`, in row-major order
    (Note [Gamma draws as a walk over a table of start states])."""
    from .._aten.factory import _gen, _gen_impl
    from .._aten import distributions
    from .._aten.distributions import _libm as one_by_one
    g = _gen_impl(_gen(generator))
    flat = alpha.reshape(-1)
    classes, which = np.unique(flat, return_inverse=True)
    if len(classes) > _MAX_TABLES:
        with g._lock:
            return np.asarray(_gamma_draws_scalar(flat.tolist(), g, single)).reshape(alpha.shape)
    constants = [None if a == 0 else _gamma_constants(a, single) for a in classes.tolist()]
    out = np.zeros(len(flat))
    done, spare = 0, 64
    with g._lock:
        while done < len(flat):
            left = flat[done:]
            n_pos = int(_UNIFORMS_PER_DRAW * len(left) +
                        _UNIFORMS_PER_BOOST * np.count_nonzero(left < 1)) + spare
            saved = g._bitgen.state, g._next_at_twist
            u = distributions.uniform_real_f64(g, n_pos)
            g._bitgen.state, g._next_at_twist = saved
            visited, cubes, state, sin_half = _walk_tables(constants, which[done:].tolist(),
                                                           u, g._normal_cache)
            kinds = which[done:done + len(visited)]
            for i, k in enumerate(constants):
                mine = np.flatnonzero(kinds == i)
                if k is None or not len(mine):
                    continue
                exponent, d, _ = k
                scale = 1.0
                if exponent is not None:
                    # NumPy's power has fast paths of its own (exponents 2, 0.5): libm's
                    scale = one_by_one(lambda b: math.pow(b, exponent),
                                       1.0 - u[visited[mine] // 2])
                out[done + mine] = scale * d * cubes[mine]
            done += len(visited)
            spare = spare if len(visited) else 2 * spare  # an element longer than the block
            p, cached = divmod(state, 2)
            if p:
                distributions.uniform_real_f64(g, p)
                g._normal_cache = float(sin_half[p - 3]) if cached else None
    return out.reshape(alpha.shape)


# uniforms read ahead per element (about 2.1 are used, and one more for alpha < 1): a block
# that runs out is followed by another from where the walk stopped
_UNIFORMS_PER_DRAW, _UNIFORMS_PER_BOOST = 2.25, 1.1
# more distinct alphas than this are drawn by the scalar loop: each needs its own table, and
# a table costs about a third of drawing every element one by one (measured: one or two
# alphas, as Gamma, Chi2, StudentT and Beta draw, are 5x and 2.7x faster; three break even)
_MAX_TABLES = 2


def _sample_gamma_scalar(alpha, uniform, normal, single):
    """One draw of ATen's sample_gamma(alpha), element by element."""
    if alpha == 0:
        return 0.0
    exponent, d, c = _gamma_constants(alpha, single)
    scale = 1.0 if exponent is None else math.pow(1 - uniform(), exponent)
    while True:
        while True:
            x = normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1 - uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gamma_draws_scalar(values, g, single):
    """The scalar loop, for many distinct alphas (each would need its own table)."""
    stream = _DoubleStream(g, 3 * len(values) + 8)  # about 2.1 draws per sample
    cache = [g._normal_cache]

    def normal():
        if cache[0] is not None:
            value, cache[0] = cache[0], None
            return value
        theta = (2.0 * math.pi) * stream.uniform()
        radius = math.sqrt(-2.0 * math.log1p(-stream.uniform()))
        cache[0] = radius * math.sin(theta)
        return radius * math.cos(theta)

    out = [_sample_gamma_scalar(a, stream.uniform, normal, single) for a in values]
    stream.settle()
    g._normal_cache = cache[0]
    return out


def _at_least(draws, low):
    """std::max(low, draw) element-wise: a NaN draw gives `low`."""
    return np.where(draws > low, draws, low).astype(draws.dtype)


@random_function
def _standard_gamma(input, generator=None):
    _check("_standard_gamma", input)
    alpha = input.numpy(force=True).astype(np.float64)
    draws = _gamma_draws(alpha, generator, input.dtype is not D.float64)
    draws = draws.astype(D.np_dtype(input.dtype))
    # PyTorch keeps the draw away from zero: the smallest positive normal number
    return B.tensor(_at_least(draws, finfo(input.dtype).tiny), dtype=input.dtype)


@random_function
def _sample_dirichlet(input, generator=None):
    """Gamma draws in float64 (whatever the input's dtype), normalised, and kept inside
    [tiny, the float below 1] of the input's dtype, as PyTorch's CPU kernel does."""
    _check("_sample_dirichlet", input)
    alpha = input.numpy(force=True).astype(np.float64)
    gamma = _at_least(_gamma_draws(alpha, generator, False), np.finfo(np.float64).tiny)
    ratio = (gamma / gamma.sum(-1, keepdims=True)).astype(D.np_dtype(input.dtype))
    top = np.nextafter(ratio.dtype.type(1), ratio.dtype.type(0))
    return B.tensor(np.clip(ratio, finfo(input.dtype).tiny, top), dtype=input.dtype)
