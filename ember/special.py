"""torch.special: special mathematical functions, SciPy-style names.

Many are other names of torch.* functions and run the very same op (special.expit is
torch.sigmoid, special.gammaln is torch.lgamma, special.psi is torch.digamma, ...), so their
results carry the same grad_fn as in PyTorch. The rest are the `special_*` ATen ops of
`ember/_aten/special.py`, the orthogonal polynomials among them; ndtr is, as in PyTorch, a
composite of erf.
"""
import math

from . import (sigmoid as expit, logit, xlogy, erf, erfc, erfinv, exp2, expm1, log1p, lgamma as
               gammaln, igamma as gammainc, igammac as gammaincc, digamma, digamma as psi,
               polygamma, mvlgamma as multigammaln, i0, sinc, logsumexp)
from ._dispatch.dispatcher import lookup as _op
from ._bindings.out import _finish
from ._bindings.arg_parser import two_numbers as _two_numbers
from ._core.tensor import Tensor
from ._refs.activations import softmax as _softmax, log_softmax as _log_softmax

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]


def _unary(opname):
    op = _op(opname)

    def fn(input, *, out=None):
        return _finish(op(input), False, out)
    fn.__name__ = fn.__qualname__ = opname[len("special_"):]
    return fn


(erfcx, i0e, i1, i1e, ndtri, log_ndtr, entr, bessel_j0, bessel_j1, bessel_y0, bessel_y1,
 modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
 scaled_modified_bessel_k0, scaled_modified_bessel_k1, airy_ai, spherical_bessel_j0) = (
    _unary("special_" + _n) for _n in (
        "erfcx", "i0e", "i1", "i1e", "ndtri", "log_ndtr", "entr", "bessel_j0", "bessel_j1",
        "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
        "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
        "scaled_modified_bessel_k1", "airy_ai", "spherical_bessel_j0"))


def _binary(opname):
    """A function of two operands of which one may be a number, not both (PyTorch's three
    overloads: Tensor and Tensor, Number and Tensor, Tensor and Number)."""
    op = _op(opname)

    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            _two_numbers(opname, ("input", "other"), (input, other))
        return _finish(op(input, other), False, out)
    fn.__name__ = fn.__qualname__ = opname[len("special_"):]
    return fn


xlog1py = _binary("special_xlog1py")
zeta = _binary("special_zeta")


def _polynomial(opname):
    """p_n(x) of one orthogonal family; x or n may be a number, not both."""
    op = _op(opname)

    def fn(x, n, *, out=None):
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            _two_numbers(opname, ("x", "n"), (x, n))
        return _finish(op(x, n), False, out)
    fn.__name__ = fn.__qualname__ = opname[len("special_"):]
    return fn


(chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
 shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
 shifted_chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he,
 laguerre_polynomial_l, legendre_polynomial_p) = (
    _polynomial("special_" + _n) for _n in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
        "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
        "laguerre_polynomial_l", "legendre_polynomial_p"))


def ndtr(input, *, out=None):
    """The standard normal CDF, (1 + erf(x / sqrt(2))) / 2, PyTorch's composite."""
    return _finish((1 + erf(input * math.sqrt(0.5))) * 0.5, False, out)


def round(input, *, decimals=0, out=None):
    """torch.round, always through its `decimals` overload, as PyTorch's special.round is:
    so integers are refused and the grad_fn is RoundBackward1."""
    return _finish(_op("round.decimals")(input, decimals), False, out)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _log_softmax(input, dim, dtype=dtype)
