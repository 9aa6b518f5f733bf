"""The op test table's rows for torch.special: the aliases of torch.* functions (called through
ember.special, so the names resolve to the same ops) and the special_* ops of
ember/_aten/special.py (xlog1py, erfcx, i0e, i1e, ndtri, log_ndtr, entr, zeta, the Bessel
and Airy functions, the orthogonal polynomials).

Same conventions as op_db.py, which appends these rows to its OPS.
"""
import functools

import numpy as np

from op_db import (ALL, BOOL, FLOATS, INTS, NUMBERS, ErrorInput, OpInfo, Sample, T,
                   binary_samples, f32, make, round_to, unary_samples)

MIXED = ("int64", "float64")
# the dtypes of the special_* kernels PyTorch compiles for float32/float64 only
NO_REDUCED = BOOL + INTS + ("float32", "float64")


def _unary(low=None, high=None, **kw):
    return functools.partial(unary_samples, low=low, high=high, **kw)


def _special(name):
    return lambda m, *a, **kw: getattr(m.special, name)(*a, **kw)


def _binary(low=None, high=None, **kw):
    return functools.partial(binary_samples, low=low, high=high, **kw)


def _in_range(low, high):
    """Floats in [low, high]; integers (which PyTorch turns into floats) as they come."""
    def samples(dtype, rng):
        if dtype in FLOATS:
            return unary_samples(dtype, rng, low=low, high=high)
        return unary_samples(dtype, rng)
    return samples


def _zeta_samples(dtype, rng):
    """zeta has a gradient for q (other) only: x does not require grad."""
    return [Sample(make(rng, s, dtype, low=1.5, high=4, grad=False), make(rng, s2, dtype,
                                                                        low=0.5, high=3))
            for s, s2 in (((5,), (5,)), ((3, 4), (4,)), ((3, 1), (1, 4)))]


def _reduce_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), d) for d in (0, 1, -1)]


# PyTorch's float64 kernels of these are approximations with absolute errors up to ~1e-6
# (airy_ai near its zeros, checked against mpmath); ember's values are SciPy's, accurate to
# float64 rounding
_TORCH_APPROX = {n: {"float64": (1e-5, 2e-6)} for n in ("bessel_y0", "bessel_y1", "airy_ai")}

_ALIASES = [
    ("expit", ALL, _unary()), ("logit", ALL, _in_range(0.05, 0.95)), ("erf", ALL, _unary()),
    ("erfc", ALL, _unary()), ("erfinv", ALL, _unary(-0.9, 0.9)), ("exp2", ALL, _unary()),
    ("expm1", ALL, _unary()), ("log1p", ALL, _unary(-0.5, 4)), ("gammaln", ALL, _unary(0.2, 5)),
    ("digamma", ALL, _unary(0.2, 5)), ("psi", ALL, _unary(0.2, 5)), ("i0", ALL, _unary()),
    ("i1", ALL, _unary()), ("sinc", ALL, _unary()),
]

SPECIAL_OPS = [OpInfo("special." + n, _special(n), dt, s) for n, dt, s in _ALIASES] + [
    # special.round is round.decimals, which PyTorch computes for floating types only
    OpInfo("special.round", _special("round"), FLOATS,
           _unary(kwargs=({}, {"decimals": 2}, {"decimals": -1})), gradcheck=False),
    OpInfo("special.xlogy", _special("xlogy"), ALL, _binary(0.1, 4, mixed=MIXED)),
    OpInfo("special.gammainc", _special("gammainc"), FLOATS,
           _binary(0.1, 4, scalars=False), grad=False),
    OpInfo("special.gammaincc", _special("gammaincc"), FLOATS,
           _binary(0.1, 4, scalars=False), grad=False),
    OpInfo("special.polygamma", lambda m, x, n: m.special.polygamma(n, x), ALL,
           _unary(0.5, 4, kwargs=({"n": 1}, {"n": 2}))),
    OpInfo("special.multigammaln", _special("multigammaln"), NUMBERS,
           _unary(2, 6, kwargs=({"p": 1}, {"p": 3}))),
    OpInfo("special.softmax", _special("softmax"), ("float32", "float64"), _reduce_samples,
           other_dtypes_raise=False),
    OpInfo("special.log_softmax", _special("log_softmax"), ("float32", "float64"),
           _reduce_samples, other_dtypes_raise=False),
    OpInfo("special.logsumexp", _special("logsumexp"), FLOATS, _reduce_samples,
           other_dtypes_raise=False),
    OpInfo("special.ndtr", _special("ndtr"), ALL, _unary()),
    # the special_* ops
    OpInfo("special.xlog1py", _special("xlog1py"), ALL, _binary(0.1, 4, mixed=MIXED)),
    OpInfo("special.erfcx", _special("erfcx"), NO_REDUCED, _unary()),
    # float16: PyTorch's i0e works in float16 itself (a few ulps from the rounded value)
    OpInfo("special.i0e", _special("i0e"), ALL, _unary(), tol={"float16": (5e-3, 1e-3)}),
    OpInfo("special.i1e", _special("i1e"), ALL, _unary()),
    OpInfo("special.ndtri", _special("ndtri"), NO_REDUCED, _in_range(0.05, 0.95)),
    OpInfo("special.log_ndtr", _special("log_ndtr"), NO_REDUCED, _unary()),
    OpInfo("special.entr", _special("entr"), ALL, _unary(0.1, 4)),
    OpInfo("special.zeta", _special("zeta"), ("float32", "float64"), _zeta_samples,
           other_dtypes_raise=False),
    OpInfo("special.zeta_values", _special("zeta"), NO_REDUCED,
           _binary(0.5, 4, scalars=False), grad=False),
] + [OpInfo("special." + n, _special(n), NO_REDUCED, _unary(low, high), grad=False,
            tol=_TORCH_APPROX.get(n)) for n, low, high in (
         ("bessel_j0", None, None), ("bessel_j1", None, None), ("bessel_y0", 0.1, 9),
         ("bessel_y1", 0.1, 9), ("modified_bessel_i0", None, None),
         ("modified_bessel_i1", None, None), ("modified_bessel_k0", 0.1, 9),
         ("modified_bessel_k1", 0.1, 9), ("scaled_modified_bessel_k0", 0.1, 9),
         ("scaled_modified_bessel_k1", 0.1, 9), ("airy_ai", None, None),
         ("spherical_bessel_j0", None, None))]


# ---- the orthogonal polynomials: not differentiable (outputs never require grad), float32 and
# float64 kernels only; x and n may each be a tensor or a number
_POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                "laguerre_polynomial_l", "legendre_polynomial_p")


def _polynomial_samples(name):
    """Degrees from -1 to 20 (numbers, tensors that broadcast, fractional ones that truncate),
    x inside and outside the family's interval, at its ends, and as a number; high degrees take
    the Chebyshev closed forms. (No NaN x: PyTorch's loops return an uninitialised value there.)"""
    shifted = name.startswith("shifted")
    ends = (0.0, 1.0, 0.5) if shifted else (-1.0, 1.0, 0.0)
    lo, hi = (-0.1, 1.1) if shifted else (-1.2, 1.2)

    def samples(dtype, rng):
        x = make(rng, (4, 6), dtype, low=lo, high=hi)
        degrees = T(np.array([0, 1, 2, 7, 9, 12] if dtype != "bool" else [0, 1, 1, 0, 1, 0]),
                    dtype, grad=False)
        out = [Sample(x, n) for n in (0, 1, 2, 3, 5, -1)]
        out += [Sample(x, degrees), Sample(make(rng, (3, 1), dtype, low=lo, high=hi),
                                           T(np.array([[3, 5, 20, 6]]) % (2 if dtype == "bool"
                                                                          else 99), dtype))]
        if dtype in FLOATS:
            ends_x = T(round_to(np.array(ends * 2), dtype), dtype, grad=False)
            out += [Sample(ends_x, T(round_to(np.arange(6.0) * 3, dtype), dtype)),
                    Sample(x, T(round_to(np.array([2.5, 7.9, -0.5, 9.2, 1.0, 0.7]), dtype),
                                dtype)),
                    Sample(make(rng, (0, 6), dtype), degrees), Sample(make(rng, (), dtype), 4)]
        out.append(Sample(0.5, degrees))
        return out
    return samples


# float32: PyTorch's compiled loop may fuse a multiply and an add, and a 20-step recurrence
# carries that last-bit difference into the 6th digit
POLYNOMIAL_OPS = [OpInfo("special." + n, lambda m, *a, n=n, **kw: getattr(m.special, n)(*a, **kw),
                         NO_REDUCED, _polynomial_samples(n), grad=False,
                         tol={"float32": (2e-5, 1e-5)},
                         errors=lambda n=n: [ErrorInput(2.0, 3, match="invalid combination"),
                                             ErrorInput(f32(3), f32(4), match="size")])
                  for n in _POLYNOMIALS]
SPECIAL_OPS += POLYNOMIAL_OPS
