"""Derivatives of torch.special's own functions."""
import math


from ..variable_type import derivative, not_differentiable
from ... import _refs as E
from ._common import _aten, _float_only_backward


# ---- torch.special's own ops (ember/_aten/special.py)
_SQRT_2PI = math.sqrt(2 * math.pi)
derivative("special_xlog1py", {   # 0 where self is 0 and log1p(other) is -inf or nan (PyTorch's)
    "self": lambda grad, self, other: E.where((self == 0) & (other <= -1), 0.0,
                                              _aten.special_xlog1py(grad, other)),
    "other": lambda grad, self, other: grad * self / (other + 1)})
derivative("special_erfcx", {"self": lambda grad, self, result:
                             (2.0 * self * result - 2.0 / math.sqrt(math.pi)) * grad})
derivative("special_i0e", {"self": lambda grad, self, result:
                           grad * (_aten.special_i1e(self) - self.sgn() * result)})
derivative("special_i1e", {"self": lambda grad, self, result: _float_only_backward(
    "i1e_backward", self) * grad * E.where(
    self == 0, 0.5, _aten.special_i0e(self) - result * (self.sgn() + 1 / self))})
derivative("special_ndtri", {"self": lambda grad, result:
                             grad * _SQRT_2PI * (result.square() / 2).exp()})
derivative("special_log_ndtr", {"self": lambda grad, self, result:
                                grad / _SQRT_2PI * (result + self.pow(2) / 2).neg().exp()})
derivative("special_entr", {"self": lambda grad, self: grad * -(1 + self.log())})


def _zeta_self(grad):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


derivative("special_zeta", {"self": _zeta_self, "other": lambda grad, self, other:
                            grad * -self * _aten.special_zeta(self + 1.0, other)})
not_differentiable(*("special_" + _n for _n in (
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai",
    "spherical_bessel_j0")))
# the orthogonal polynomials are not differentiable in x or n, as in PyTorch
not_differentiable(*("special_" + _n for _n in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")))
