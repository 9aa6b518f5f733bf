"""CPU/Meta kernels of the `special_*` ops that have no older ATen name
(torch.special.xlog1py, erfcx, i0e, i1e, ndtri, log_ndtr, entr, zeta, the Bessel and Airy
functions). The ops torch.special shares with torch (expit = sigmoid, gammaln = lgamma, ...)
are the existing ops; `ember/special.py` aliases them.

SciPy computes the values; it is imported on first use (see elementwise._scipy_special), so a
missing SciPy is an error naming the op, not a failure of `import ember`. Like PyTorch, most of
these kernels are compiled for float32 and float64 only (integers compute in the default float
dtype); the rest also take float16 and bfloat16, computed in float32.
"""
import numpy as np

from .elementwise import unary, binary, not_implemented, _float_result, _scipy_special

def _real_float_check(kernel, reduced_too):
    """PyTorch's dtype coverage: real types only; float16/bfloat16 only if reduced_too."""
    def check(dt, *extra):
        if dt.is_complex or (not reduced_too and dt.is_floating_point and dt.itemsize == 2):
            raise not_implemented(kernel, dt)
    return check


def _scipy_unary(scipy_name, pick=None):
    def compute(a):
        with np.errstate(all="ignore"):
            r = _scipy_special(scipy_name)(a)
        if pick is not None:
            r = r[pick]
        return np.asarray(r).astype(a.dtype, copy=False)
    compute.__name__ = scipy_name
    return compute


def _spherical_j0(a):
    """sin(x) / x: 1 at 0, 0 at the infinities."""
    with np.errstate(all="ignore"):
        r = np.where(a == 0, a.dtype.type(1), np.sin(a) / a)
    return np.where(np.isinf(a), a.dtype.type(0), r)


# (op, computation, float16/bfloat16 accepted)
for _name, _compute, _reduced in (
        ("erfcx", _scipy_unary("erfcx"), False),
        ("i0e", _scipy_unary("i0e"), True),
        ("i1e", _scipy_unary("i1e"), True),
        ("ndtri", _scipy_unary("ndtri"), False),
        ("log_ndtr", _scipy_unary("log_ndtr"), False),
        ("entr", _scipy_unary("entr"), True),
        ("bessel_j0", _scipy_unary("j0"), False),
        ("bessel_j1", _scipy_unary("j1"), False),
        ("bessel_y0", _scipy_unary("y0"), False),
        ("bessel_y1", _scipy_unary("y1"), False),
        ("modified_bessel_i0", _scipy_unary("i0"), False),
        ("modified_bessel_i1", _scipy_unary("i1"), False),
        ("modified_bessel_k0", _scipy_unary("k0"), False),
        ("modified_bessel_k1", _scipy_unary("k1"), False),
        ("scaled_modified_bessel_k0", _scipy_unary("k0e"), False),
        ("scaled_modified_bessel_k1", _scipy_unary("k1e"), False),
        ("airy_ai", _scipy_unary("airy", pick=0), False),
        ("spherical_bessel_j0", _spherical_j0, False)):
    unary("special_" + _name, _compute, result=_float_result,
          check=_real_float_check(_name + "_cpu", _reduced))


def _binary_check(kernel, reduced_too):
    unary_check = _real_float_check(kernel, reduced_too)
    return lambda self, other, dt: unary_check(dt)


def _xlog1py(a, b, dt):
    with np.errstate(all="ignore"):
        return np.asarray(_scipy_special("xlog1py")(a, b)).astype(dt._np, copy=False)


def _zeta(x, q, dt):
    """The Hurwitz zeta function; NaN at q = +inf unless x = 1 (SciPy's limit there is 0;
    PyTorch's kernel tests x = 1, the pole, first)."""
    with np.errstate(all="ignore"):
        r = _scipy_special("zeta")(x, q)
    return np.where(np.isposinf(q) & (x != 1), np.nan, r).astype(dt._np, copy=False)


binary("special_xlog1py", _xlog1py, operands=_float_result,
       check=_binary_check("xlog1py_cpu", True))
binary("special_zeta", _zeta, operands=_float_result, check=_binary_check("zeta_cpu", False))


# ---- the orthogonal polynomials -------------------------------------------------------------
# Note [Orthogonal polynomials]
# chebyshev_polynomial_t(x, n) and its eleven siblings evaluate, as PyTorch's Math.h does, the
# three-term recurrence of their family from p_0 = 1 and p_1(x), elementwise, each element at
# its own degree n (a floating degree is truncated; a negative one gives 0). Before recurring,
# some elements get a closed form: the ends of the Chebyshev interval have exact integer
# values, and inside it a high-degree Chebyshev polynomial is a cosine or a ratio of sines of
# n * acos(x), which costs one step instead of n. The recurrence runs vectorised over the
# remaining elements: step k advances every element whose degree is above k, and an element
# leaves as soon as it reaches its degree or becomes NaN (NaN stays NaN, and PyTorch's loops
# stop there too), so a huge degree where the polynomial overflows costs a few hundred steps.
# Only float32 and float64 are computed, in their own precision; the degree and x share the
# promoted dtype, integers promote to the default float. None of them is differentiable.
def _degree(n):
    """The degree as PyTorch's kernels read it: truncated to int64; NaN, infinities and values
    out of int64's range become its most negative value (what x86 converts them to)."""
    ok = np.abs(n) < 2.0 ** 63
    degree = np.full(n.shape, np.iinfo(np.int64).min)
    degree[ok] = n[ok].astype(np.int64)
    return degree


def _recurrence(x, n, first, step):
    """p_n(x) for degrees n >= 2, from p_0 = 1, p_1 = first(x) and
    p_{k+1} = step(k, x, p_k, p_{k-1}); x and n are 1-d arrays."""
    out = np.empty_like(x)
    idx = np.arange(x.size)
    p, q = np.ones_like(x), first(x)
    k = 1
    while idx.size:
        p, q = q, step(k, x, q, p)
        k += 1
        done = (n <= k) | np.isnan(q)
        out[idx[done]] = q[done]
        keep = ~done
        idx, x, n, p, q = idx[keep], x[keep], n[keep], p[keep], q[keep]
    return out


def _polynomial(first, step, special=()):
    """The compute function of a polynomial op: 0 below degree 0, then the first of the
    `special` (condition(x, n), value(x, n)) pairs that holds, then p_0 = 1, p_1 = first(x),
    then the recurrence. Values are computed on the elements they serve only."""
    def compute(x, n, dt):
        x, n = np.broadcast_arrays(np.asarray(x, dtype=dt._np), np.asarray(n, dtype=dt._np))
        n = _degree(n)
        out = np.zeros(x.shape, dtype=dt._np)
        todo = n >= 0
        cases = (*special, (lambda x, n: n == 0, lambda x, n: 1),
                 (lambda x, n: n == 1, lambda x, n: first(x)))
        with np.errstate(all="ignore"):
            for condition, value in cases:
                chosen = todo & condition(x, n)
                out[chosen] = value(x[chosen], n[chosen])
                todo &= ~chosen
            out[todo] = _recurrence(x[todo], n[todo], first, step)
        return out
    return compute


def _by_parity(n, even, odd):
    return np.where(n % 2 == 0, even, odd)


def _chebyshev(first, ends, closed_form, above, shifted):
    """A Chebyshev polynomial: p_{k+1} = 2y p_k - p_{k-1} with y = x (or 2x - 1, shifted),
    `ends(at_one, n)` its values at y = +1 and -1, `closed_form(acos(y), n, y)` its value
    inside (-1, 1) for degrees above `above` (the angle is n * acos(y) in x's precision, as in
    PyTorch, which converts n to x's type there)."""
    def y_of(x):
        return x + x - 1 if shifted else x

    def at_end(x, n):
        return (x == 1) | (x == 0) if shifted else np.abs(x) == 1

    def at_one(x):
        return x == 1 if shifted else x > 0

    def inside(x, n):
        return (n > above) & (np.abs(y_of(x)) < 1)

    return _polynomial(
        lambda x: first(y_of(x)),
        lambda k, x, q, p: (y_of(x) + y_of(x)) * q - p,
        ((at_end, lambda x, n: ends(at_one(x), n)),
         (inside, lambda x, n: closed_form(np.arccos(y_of(x)), n, y_of(x)))))


def _t_closed(a, n, y):
    return np.cos(n.astype(a.dtype) * a)


def _u_closed(a, n, y):
    s, m = np.sin(a), (n + 1).astype(a.dtype)
    return np.where(s != 0, np.sin(m * a) / s, m * np.cos(m * a) / y)


def _v_closed(a, n, y):
    m = n.astype(a.dtype) + 0.5
    return np.where(np.sin(a / 2) != 1, np.cos(m * a) / np.cos(a / 2),
                    _by_parity(n, n + n + 1, -(n + n + 1)))


def _w_closed(shifted):
    def closed(a, n, y):
        edge = _by_parity(n, 1, -1) if shifted else np.where(
            y > 0, n + n + 1, _by_parity(n, 1, -1))
        m = n.astype(a.dtype) + 0.5
        return np.where(np.cos(a / 2) != 1, np.sin(m * a) / np.sin(a / 2), edge)
    return closed


def _t_ends(at_one, n):
    return np.where(at_one, 1, _by_parity(n, 1, -1))


def _u_ends(at_one, n):
    return np.where(at_one, n + 1, _by_parity(n, n + 1, -(n + 1)))


def _v_ends(at_one, n):
    return np.where(at_one, 1, _by_parity(n, n + n + 1, -(n + n + 1)))


def _w_ends(at_one, n):
    return np.where(at_one, n + n + 1, _by_parity(n, 1, -1))


def _hermite_limit(x, n):
    """Beyond this degree the recurrence has overflowed anyway: PyTorch answers NaN at once."""
    return n > (128 if x.dtype == np.float32 else 512)


_NAN = (_hermite_limit, lambda x, n: np.nan)

_POLYNOMIALS = [
    ("chebyshev_polynomial_t", _chebyshev(lambda y: y, _t_ends, _t_closed, 6, False)),
    ("chebyshev_polynomial_u", _chebyshev(lambda y: y + y, _u_ends, _u_closed, 8, False)),
    ("chebyshev_polynomial_v", _chebyshev(lambda y: y + y - 1, _v_ends, _v_closed, 8, False)),
    ("chebyshev_polynomial_w", _chebyshev(lambda y: y + y + 1, _w_ends, _w_closed(False), 8,
                                          False)),
    ("shifted_chebyshev_polynomial_t", _chebyshev(lambda y: y, _t_ends, _t_closed, 6, True)),
    ("shifted_chebyshev_polynomial_u", _chebyshev(lambda y: y + y, _u_ends, _u_closed, 6,
                                                  True)),
    ("shifted_chebyshev_polynomial_v", _chebyshev(lambda y: y + y - 1, _v_ends, _v_closed, 6,
                                                  True)),
    ("shifted_chebyshev_polynomial_w", _chebyshev(lambda y: y + y + 1, _w_ends, _w_closed(True),
                                                  4, True)),
    # physicists' Hermite: H_{k+1} = 2x H_k - 2k H_{k-1}
    ("hermite_polynomial_h", _polynomial(lambda x: x + x,
                                         lambda k, x, q, p: (x + x) * q - (k + k) * p, (_NAN,))),
    # probabilists' Hermite: He_{k+1} = x He_k - k He_{k-1}
    ("hermite_polynomial_he", _polynomial(lambda x: x, lambda k, x, q, p: x * q - k * p,
                                          (_NAN,))),
    # Laguerre: (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}; L_n(0) = 1
    ("laguerre_polynomial_l", _polynomial(
        lambda x: 1 - x, lambda k, x, q, p: (((k + k) + (1 - x)) * q - k * p) / (k + 1),
        ((lambda x, n: x == 0, lambda x, n: 1),))),
    # Legendre: (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}; P_n(1) = 1, P_n(-1) = (-1)^n
    ("legendre_polynomial_p", _polynomial(
        lambda x: x, lambda k, x, q, p: ((k + k + 1) * x * q - k * p) / (k + 1),
        ((lambda x, n: np.abs(x) == 1,
          lambda x, n: np.where((x > 0) | (n == 0), 1, _by_parity(n, 1, -1))),))),
]

for _name, _compute in _POLYNOMIALS:
    binary("special_" + _name, _compute, operands=_float_result,
           check=_binary_check(_name + "_cpu", False))
