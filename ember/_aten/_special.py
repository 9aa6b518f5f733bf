"""Special functions NumPy lacks (erf, erfc, erfinv, lgamma, digamma).

SciPy computes them when it is installed; it is imported on first use, so `import ember` does
not pay for it. Without SciPy each function has a pure NumPy fallback accurate to about float64
rounding (a few ulps more near the poles). Every function takes and returns a float32 or
float64 array, and follows PyTorch at the special points where SciPy differs from it.
"""
import math

import numpy as np

_scipy = None  # scipy.special once looked up, False when SciPy is missing


def _scipy_special():
    global _scipy
    if _scipy is None:
        try:
            import scipy.special as special
        except ImportError:
            special = False
        _scipy = special
    return _scipy


def _via_float64(fallback, x):
    x = np.asarray(x)
    return np.asarray(fallback(x.astype(np.float64))).astype(x.dtype, copy=False)


def erf(x):
    s = _scipy_special()
    return s.erf(x) if s else _via_float64(_erf_numpy, x)


def erfc(x):
    s = _scipy_special()
    return s.erfc(x) if s else _via_float64(_erfc_numpy, x)


def erfinv(x):
    s = _scipy_special()
    return s.erfinv(x) if s else _via_float64(_erfinv_numpy, x)


def lgamma(x):
    s = _scipy_special()
    r = s.gammaln(x) if s else _via_float64(_lgamma_numpy, x)
    # log|Gamma(-inf)| is +inf in PyTorch (C's lgamma); SciPy gives -inf
    return np.where(x == -np.inf, np.inf, r).astype(r.dtype, copy=False)


def digamma(x):
    s = _scipy_special()
    return s.psi(x) if s else _via_float64(_digamma_numpy, x)


def polygamma(n, x):
    """The n-th derivative of digamma (PyTorch's own series for n = 1, as it has one)."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    s = _scipy_special()
    r = s.polygamma(n, x).astype(x.dtype, copy=False) if s else \
        _via_float64(lambda v: _polygamma_numpy(n, v), x)
    return np.where(x == np.inf, np.nan, r).astype(x.dtype, copy=False)  # zeta(n + 1, inf)


def trigamma(x):
    """PyTorch's trigamma: the reflection pi^2 / sin(pi x)^2 below 1/2, six steps of the
    recurrence, then the asymptotic series. sin(pi x) is taken in x's dtype, as PyTorch does,
    so at the poles the result is as huge (or as infinite) as PyTorch's."""
    x = np.asarray(x)
    pi = x.dtype.type(np.pi)
    reflect = x < 0.5
    sin_pi_x = np.sin(pi * x)
    result = np.where(reflect, -(pi * pi) / (sin_pi_x * sin_pi_x), 0).astype(np.float64)
    z = np.where(reflect, 1 - x, x).astype(np.float64)
    for _ in range(6):
        result = result + 1 / (z * z)
        z = z + 1
    ixx = 1 / (z * z)
    result = result + (1 + 1 / (2 * z) + ixx * (1 / 6 - ixx * (1 / 30 - ixx / 42))) / z
    return np.where(reflect, -result, result).astype(x.dtype)


# ---- NumPy fallbacks (float64 in, float64 out) ----------------------------------------------
_ERF_SERIES_TERMS = 60
_ERFC_FRACTION_TERMS = 60
_ERFINV_NEWTON_STEPS = 6


def _erf_numpy(x):
    # the Maclaurin series for |x| < 2.5, 1 - erfc from the continued fraction beyond
    ax = np.abs(x)
    small = ax < 2.5
    out = np.empty_like(ax)
    out[small] = _erf_series(ax[small])
    out[~small] = 1 - _erfc_fraction(ax[~small])
    return np.sign(x) * out


def _erfc_numpy(x):
    # erfc(x) = 1 - erf(x) loses every digit for large x: there the continued fraction gives
    # erfc directly, and erfc(-x) = 2 - erfc(x)
    ax = np.abs(x)
    small = ax < 2.5
    tail = np.empty_like(ax)
    tail[small] = 1 - _erf_series(ax[small])
    tail[~small] = _erfc_fraction(ax[~small])
    return np.where(x < 0, 2 - tail, tail)


def _erf_series(x):
    term = x.copy()
    total = x.copy()
    x2 = x * x
    for n in range(1, _ERF_SERIES_TERMS):
        term = term * (-x2) / n
        total = total + term / (2 * n + 1)
    return 2 / np.sqrt(np.pi) * total


def _erfc_fraction(x):
    """erfc(x) for x >= 2.5: exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / ...)))."""
    cf = np.zeros_like(x)
    for n in range(_ERFC_FRACTION_TERMS, 0, -1):
        cf = (n / 2) / (x + cf)
    with np.errstate(invalid="ignore"):
        return np.exp(-x * x) / np.sqrt(np.pi) / (x + cf)


def _erfinv_numpy(y):
    """M. Giles' single-precision approximation, refined by Newton steps on erf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1 - y) * (1 + y))
        central = w < 5
        wc = w - 2.5
        pc = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
            pc = c + pc * wc
        wt = np.sqrt(w) - 3
        pt = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
            pt = c + pt * wt
        x = np.where(central, pc, pt) * y
        # Newton on erf(|x|) = |y|; near |y| = 1 on log erfc(|x|) = log(1 - |y|), which keeps
        # the digits and converges in the far tail, where erfc falls faster than exponentially
        ay, tail = np.abs(y), np.abs(y) > 0.5
        for _ in range(_ERFINV_NEWTON_STEPS):
            ax = np.abs(x)
            density = 2 / np.sqrt(np.pi) * np.exp(-x * x)
            erfc = _erfc_numpy(ax)
            step = np.where(tail, (np.log(1 - ay) - np.log(erfc)) * erfc / density,
                            (_erf_numpy(ax) - ay) / density)
            x = np.where(np.isfinite(step), x - np.sign(y) * step, x)
        x = np.where(np.abs(y) == 1, np.copysign(np.inf, y), x)
        return np.where(np.abs(y) > 1, np.nan, x)


# Lanczos approximation, g = 7, n = 9 (the coefficients Numerical Recipes and Boost use)
_LANCZOS_G = 7
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_numpy(x):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reflect = x < 0.5
        z = np.where(reflect, 1 - x, x) - 1
        series = np.full_like(z, _LANCZOS[0])
        for i, c in enumerate(_LANCZOS[1:], start=1):
            series = series + c / (z + i)
        t = z + _LANCZOS_G + 0.5
        positive = 0.5 * np.log(2 * np.pi) + (z + 0.5) * np.log(t) - t + np.log(series)
        # Gamma(x) Gamma(1 - x) = pi / sin(pi x); sin(pi x) is 0 at the poles (x = 0, -1, ...)
        sin_pi_x = np.abs(np.sin(np.pi * (x - np.round(x))))
        reflected = np.log(np.pi / sin_pi_x) - positive
        out = np.where(reflect, reflected, positive)
        out = np.where(reflect & (x == np.round(x)), np.inf, out)
        return np.where(np.isinf(x), np.inf, out)


def _digamma_numpy(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0.5
        # psi(1 - x) - psi(x) = pi / tan(pi x)
        cot = np.pi / np.tan(np.pi * (x - np.round(x)))
        z = np.where(reflect, 1 - x, x)
        shift = np.zeros_like(z)
        for _ in range(6):  # psi(z) = psi(z + 1) - 1 / z, until z >= 6
            low = z < 6
            shift = shift - np.where(low, 1 / z, 0)
            z = np.where(low, z + 1, z)
        inv2 = 1 / (z * z)
        tail = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
            1 / 240 - inv2 * (1 / 132)))))
        positive = np.log(z) - 0.5 / z - tail + shift
        out = np.where(reflect, positive - cot, positive)
        poles = reflect & (x == np.round(x))
        out = np.where(poles, np.nan, out)
        return np.where(x == 0, np.copysign(np.inf, -x), out)


# B_2k / (2k)!: the Euler-Maclaurin tail of the Hurwitz zeta function
_BERNOULLI_OVER_FACTORIAL = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                             -691 / 1307674368000, 1 / 74724249600)


def _polygamma_numpy(n, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta summed directly for the
    first terms and by Euler-Maclaurin beyond (n >= 1)."""
    s = n + 1
    shift = 10 + max(0, int(np.ceil(-np.nanmin(x, initial=0))))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        total = np.zeros_like(x)
        for k in range(shift):
            total = total + (x + k) ** -s
        q = x + shift
        total = total + q ** (1 - s) / (s - 1) + 0.5 * q ** -s
        rising = float(s)  # s (s + 1) ... (s + 2j - 2)
        power = q ** (-s - 1)
        for j, coef in enumerate(_BERNOULLI_OVER_FACTORIAL, start=1):
            total = total + coef * rising * power
            rising *= (s + 2 * j - 1) * (s + 2 * j)
            power = power / (q * q)
        out = (-1) ** (n + 1) * math.factorial(n) * total
        return np.where((x <= 0) & (x == np.round(x)), np.inf if n % 2 else np.nan, out)
