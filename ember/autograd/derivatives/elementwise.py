"""Derivatives of the elementwise ops: arithmetic, comparisons, math functions, activations."""
import cmath
import functools
import math


from ..variable_type import derivative, not_differentiable, not_implemented
from ... import _refs as E
from ..._core import dtype as D
from ..._aten.elementwise import _PI_180, _180_PI
from ._common import _aten, _conj, _float_only_backward, _masked, _zero


def _in_float(formula):
    """A half or bfloat16 activation's backward as PyTorch's CPU kernels compute it: the
    gradient and the input are read into float, the whole formula runs there, and the result
    is rounded to the input's dtype once (in the input's dtype every step would round)."""
    @functools.wraps(formula)
    def run(grad, self, *args):
        if self.dtype is D.float16 or self.dtype is D.bfloat16:
            return formula(grad.float(), self.float(), *args).to(self.dtype)
        return formula(grad, self, *args)
    return run


# ---- elementwise binary
derivative("add.Tensor", {"self": lambda grad: grad,
                          "other": lambda grad, alpha: grad if alpha == 1 else grad * alpha})
derivative("sub.Tensor", {"self": lambda grad: grad,
                          "other": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha})
derivative("rsub.Tensor", {"self": lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
                           "other": lambda grad: grad},
           node_name=lambda other: "RsubBackward0" if hasattr(other, "_size")
           else "RsubBackward1")
derivative("mul.Tensor", {"self": lambda grad, other: grad * _conj(other),
                          "other": lambda grad, self: grad * _conj(self)})
derivative("mul.Scalar", {"self": lambda grad, other: grad * _conj(other)})


def _div_self(grad, other, rounding_mode):
    if rounding_mode is not None:
        return _zero(grad)
    return grad / _conj(other)


def _div_other(grad, self, other, rounding_mode):
    if rounding_mode is not None:
        return _zero(grad)
    return -grad * _conj((self / other) / other)


derivative("div.Tensor_mode", {"self": _div_self, "other": _div_other}, node_name="DivBackward0")
derivative("remainder.Tensor", {
    "self": lambda grad: grad,
    "other": lambda grad, self, other: -grad * E.div(self, other, rounding_mode="floor")})


def _pow_self(grad, self, exponent):
    if not hasattr(exponent, "_size"):
        return _zero(grad) if exponent == 0 else grad * _conj(exponent * self.pow(exponent - 1))
    return E.where(exponent == 0, 0.0, grad * _conj(exponent * self.pow(exponent - 1)))


def _pow_exponent(grad, self, exponent, result):
    """grad * result * log(self), with log taken in the result's dtype; 0 ** e for e >= 0 has
    derivative 0 in e (not 0 * -inf)."""
    if not hasattr(self, "_size"):
        if self == 0:
            return grad * E.where(exponent >= 0, 0.0, result * -math.inf)
        if exponent.is_complex() or isinstance(self, complex):  # log of a complex base
            log = cmath.log(self)
        else:
            log = math.log(self) if self > 0 else math.nan
        return grad * _conj(result * log)
    nonnegative = (E.real(exponent) if exponent.is_complex() else exponent) >= 0
    return grad * _conj(E.where((self == 0) & nonnegative, 0.0,
                                result * self.to(result.dtype).log()))


def _pow_node(self, exponent):
    """pow.Tensor_Scalar, pow.Tensor_Tensor and pow.Scalar are three nodes in PyTorch."""
    if not hasattr(exponent, "_size"):
        return "PowBackward0"
    return "PowBackward1" if hasattr(self, "_size") else "PowBackward2"


derivative("pow.Tensor_Tensor", {"self": _pow_self, "exponent": _pow_exponent},
           node_name=_pow_node)
derivative("pow_.Tensor", {"self": _pow_self, "exponent": _pow_exponent}, node_name=_pow_node)


def _minmax_grad(pick_self):
    """maximum/minimum: half the gradient to each side of a tie, none to the side that loses
    (a NaN side loses to nothing, as in PyTorch)."""
    def f(grad, self, other):
        loses = (self < other) if pick_self else (self > other)
        return _masked(~loses, E.where(self == other, grad / 2, grad))
    return f


derivative("maximum", {"self": _minmax_grad(True),
                       "other": lambda grad, self, other: _minmax_grad(True)(grad, other, self)})
derivative("minimum", {"self": _minmax_grad(False),
                       "other": lambda grad, self, other: _minmax_grad(False)(grad, other, self)})
# the unselected side gets an exact 0 (not grad * 0, which is NaN where grad is inf or NaN)
derivative("where.self", {"self": lambda grad, condition: E.where(condition, grad,
                                                                  grad.new_zeros(())),
                          "other": lambda grad, condition: E.where(condition, grad.new_zeros(()),
                                                                   grad)})


def _clamp_grad(grad, self, min, max):
    mask = E.ones_like(self, dtype=D.bool)
    if min is not None:
        mask = mask & (self >= min)
    if max is not None:
        mask = mask & (self <= max)
    return _masked(mask, grad)


derivative("clamp", {"self": _clamp_grad}, node_name="ClampBackward1")


def _clamp_bounds_grad(grad, self, min, max, needs):
    """A bound gets the gradient where it is the output: min where x < min (and min < max,
    else max wins), max where x > max or max < min."""
    if min is not None and max is not None:
        return (E.where((self < min) & (min < max), grad, 0.0) if needs[0] else None,
                E.where((self > max) | (max < min), grad, 0.0) if needs[1] else None)
    if min is not None:
        return E.where(self < min, grad, 0.0), None
    return None, E.where(self > max, grad, 0.0)


derivative("clamp.Tensor", {"self": _clamp_grad, "min, max": _clamp_bounds_grad},
           node_name="ClampBackward0")

# ---- elementwise unary
derivative("neg", {"self": lambda grad: -grad})
derivative("abs", {"self": lambda grad, self: grad * E.sgn(self)})  # sgn: x/|x| if complex
derivative("sign", {"self": _zero})


def _sgn_grad(grad, self):
    """Zero for real inputs; for complex z, the part of grad / |z| orthogonal to sgn(z) (the
    derivative of z / |z| along the circle), and 0 at z = 0. Written from `self`, not the saved
    result, so that its own derivative (double backward) sees how sgn(z) moves with z."""
    if not self.is_complex():
        return _zero(grad)
    magnitude = self.abs()
    direction = self.sgn()
    tangential = (grad - direction * E.real(grad * direction.conj())) / magnitude
    return E.where(magnitude == 0, 0.0, tangential)


derivative("sgn", {"self": _sgn_grad})
derivative("exp", {"self": lambda grad, result: grad * _conj(result)})
derivative("log", {"self": lambda grad, self: grad / _conj(self)})
derivative("log1p", {"self": lambda grad, self: grad / _conj(self + 1)})
derivative("expm1", {"self": lambda grad, result: grad * _conj(result + 1)})
derivative("sqrt", {"self": lambda grad, result: grad / (2 * _conj(result))})
derivative("rsqrt", {"self": lambda grad, result: -0.5 * grad * _conj(result.pow(3))})
derivative("sin", {"self": lambda grad, self: grad * _conj(self.cos())})
derivative("cos", {"self": lambda grad, self: -grad * _conj(self.sin())})
derivative("tanh", {"self": lambda grad, result: _aten.tanh_backward(grad, result)})
derivative("sigmoid", {"self": lambda grad, result: _aten.sigmoid_backward(grad, result)})
derivative("relu", {"self": lambda grad, result: _aten.threshold_backward(grad, result, 0)})
derivative("gelu", {"self": lambda grad, self, approximate:
                    _aten.gelu_backward(grad, self, approximate=approximate)})


@_in_float
def _silu_grad(grad, self):
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


derivative("silu", {"self": _silu_grad})


derivative("softplus", {"self": lambda grad, self, beta, threshold:
                        _aten.softplus_backward(grad, self, beta, threshold)})

# backward helpers: their own derivatives make double backward work
derivative("threshold_backward", {
    "grad_output": lambda grad, self, threshold: _aten.threshold_backward(grad, self,
                                                                               threshold),
    "self": _zero})
derivative("sigmoid_backward", {
    "grad_output": lambda grad, output: _aten.sigmoid_backward(grad, output),
    "output": lambda grad, grad_output, output: grad * grad_output * _conj(1 - 2 * output)})
derivative("tanh_backward", {
    "grad_output": lambda grad, output: _aten.tanh_backward(grad, output),
    "output": lambda grad, grad_output, output: -2 * grad * grad_output * _conj(output)})


def _gelu_double(grad, grad_output, self, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        c = 0.044715
        inner = k * (self + c * self.pow(3))
        t = inner.tanh()
        dinner = k * (1 + 3 * c * self * self)
        sech2 = 1 - t * t
        second = sech2 * dinner + 0.5 * self * (-2 * t * sech2 * dinner * dinner) + \
            0.5 * self * sech2 * k * 6 * c * self
        return grad * grad_output * second
    pdf = (-0.5 * self * self).exp() / math.sqrt(2 * math.pi)
    return grad * grad_output * pdf * (2 - self * self)


derivative("gelu_backward", {
    "grad_output": lambda grad, self, approximate: _aten.gelu_backward(
        grad, self, approximate=approximate),
    "self": _gelu_double})

# ---- math functions, activations
_LN2, _LN10 = math.log(2), math.log(10)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

derivative("tan", {"self": lambda grad, result: grad * _conj(1 + result * result)})
derivative("asin", {"self": lambda grad, self: grad * _conj((1 - self * self).rsqrt())})
derivative("acos", {"self": lambda grad, self: -grad * _conj((1 - self * self).rsqrt())})
derivative("atan", {"self": lambda grad, self: grad / _conj(self * self + 1)})
derivative("sinh", {"self": lambda grad, self: grad * _conj(self.cosh())})
derivative("cosh", {"self": lambda grad, self: grad * _conj(self.sinh())})
derivative("asinh", {"self": lambda grad, self: grad * _conj((self * self + 1).rsqrt())})
# complex z: sqrt(z + 1) sqrt(z - 1), whose branch differs from sqrt(z * z - 1)'s
derivative("acosh", {"self": lambda grad, self: grad * (
    _conj((self + 1).rsqrt() * (self - 1).rsqrt()) if self.is_complex()
    else (self * self - 1).rsqrt())})
derivative("atanh", {"self": lambda grad, self: grad / _conj(1 - self * self)})
not_implemented("asinh_", "acosh_", "atanh_")  # as in PyTorch: their backward raises
derivative("log2", {"self": lambda grad, self: grad / _conj(self * _LN2)})
derivative("log10", {"self": lambda grad, self: grad / _conj(self * _LN10)})
derivative("exp2", {"self": lambda grad, result: grad * _conj(result) * _LN2})
derivative("reciprocal", {"self": lambda grad, result: -grad * _conj(result * result)})
derivative("erf", {"self": lambda grad, self: grad * _TWO_OVER_SQRT_PI * (-self * self).exp()})
derivative("erfc", {"self": lambda grad, self: -grad * _TWO_OVER_SQRT_PI * (-self * self).exp()})
derivative("erfinv", {"self": lambda grad, result:
                    grad * (math.sqrt(math.pi) / 2) * (result * result).exp()})
derivative("lgamma", {"self": lambda grad, self: grad * self.digamma()})
derivative("digamma", {"self": lambda grad, self: grad * E.polygamma(1, self)})
derivative("polygamma", {"self": lambda grad, n, self: grad * E.polygamma(n + 1, self)})
derivative("polygamma_", {"self": lambda grad, n, self: grad * E.polygamma(n + 1, self)},
           node_name="PolygammaBackward0")
for _name in ("trunc", "floor", "ceil", "round"):
    derivative(_name, {"self": _zero})
derivative("round.decimals", {"self": _zero}, node_name="RoundBackward1")
derivative("frac", {"self": lambda grad: grad})
derivative("nan_to_num", {"self": lambda grad, self: grad * self.isfinite()})


def _fmod_node(other):
    return "FmodBackward1" if hasattr(other, "_size") else "FmodBackward0"


_fmod = {"self": lambda grad: grad,
         "other": lambda grad, self, other: -grad * E.div(self, other, rounding_mode="trunc")}
derivative("fmod.Tensor", _fmod, node_name=_fmod_node)
derivative("hypot", {"self": lambda grad, self, result: grad * self / result,
                   "other": lambda grad, other, result: grad * other / result})


def _atan2_grads(grad, self, other, needs):
    """At the origin (0, 0), where atan2 has no derivative, both gradients are 0, as
    PyTorch's."""
    denom = self * self + other * other
    scale = grad * denom.reciprocal().masked_fill(denom == 0, 0)
    return (scale * other if needs[0] else None, scale * -self if needs[1] else None)


derivative("atan2", {"self, other": _atan2_grads})


def _copysign_node(other):
    return "CopysignBackward0" if hasattr(other, "_size") else "CopysignBackward1"


_copysign = {"self": lambda grad, self, result: grad * E.where(self == 0, 0.0, result / self),
             "other": _zero}
derivative("copysign.Tensor", _copysign, node_name=_copysign_node)


# torch's remaining public elementwise callables (coverage)
derivative("logaddexp", {"self": lambda grad, self, other: grad / _conj(1 + (other - self).exp()),
                         "other": lambda grad, self, other: grad / _conj(1 + (self - other).exp())})
derivative("logaddexp2", {"self": lambda grad, self, other: grad / (1 + (other - self).exp2()),
                          "other": lambda grad, self, other: grad / (1 + (self - other).exp2())})


def _fmaxmin_grads(self_wins):
    """fmax/fmin: the gradient goes to self where it is picked (ties included) or `other` is
    NaN, to `other` everywhere else."""
    def grads(grad, self, other, needs):
        pick_self = self_wins(self, other) | other.isnan()
        return (E.where(pick_self, grad, 0.0) if needs[0] else None,
                E.where(pick_self, 0.0, grad) if needs[1] else None)
    return grads


derivative("fmax", {"self, other": _fmaxmin_grads(lambda a, b: a >= b)})
derivative("fmin", {"self, other": _fmaxmin_grads(lambda a, b: a <= b)})
# d/dself is log(other), taken as 0 where self is 0 and log(other) is -inf or nan (PyTorch's)
_xlogy = {"self": lambda grad, self, other: E.where((self == 0) & (other <= 0), 0.0,
                                                   E.xlogy(grad, other)),
          "other": lambda grad, self, other: grad * self / other}
derivative("xlogy.Tensor", _xlogy)


def _igamma_self(grad):
    raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")


def _igamma_density(self, other):
    """d/dx of the regularized lower incomplete gamma P(a, x): x^(a-1) e^-x / Gamma(a)."""
    return ((self - 1) * other.log() - other - self.lgamma()).exp()


derivative("igamma", {"self": _igamma_self,
                    "other": lambda grad, self, other: grad * _igamma_density(self, other)})
derivative("igammac", {"self": _igamma_self,
                     "other": lambda grad, self, other: -grad * _igamma_density(self, other)})
derivative("nextafter", {"self": lambda grad: grad, "other": _zero})


def _sinc_grad(grad, self):
    """0 where pi x^2 is 0, which a tiny x underflows to as well (PyTorch's sinc_backward)."""
    pi_x = self * math.pi
    pi_x2 = pi_x * self
    return E.where(pi_x2 == 0, 0.0, grad * _conj((pi_x * pi_x.cos() - pi_x.sin()) / pi_x2))


derivative("sinc", {"self": _sinc_grad})
# deg2rad_backward / rad2deg_backward: the gradient times the same factor (as a wrapped double)
derivative("deg2rad", {"self": lambda grad: grad * _PI_180})
derivative("rad2deg", {"self": lambda grad: grad * _180_PI})
derivative("i0", {"self": lambda grad, self: grad * _aten.special_i1(self)})
derivative("special_i1", {"self": lambda grad, self, result: _float_only_backward(
    "i1_backward", self) * grad * E.where(self == 0, 0.5, self.i0() - result / self)})


def _logit_grad(grad, self, eps):
    """grad / (x (1 - x)); outside [eps, 1 - eps] 0 (x was clamped), or NaN outside [0, 1]
    without eps."""
    lo, hi, outside = (0.0, 1.0, math.nan) if eps is None else (eps, 1 - eps, 0.0)
    return E.where((self < lo) | (self > hi), outside, grad / (self * (1 - self)))


derivative("logit", {"self": _logit_grad})
derivative("frexp.Tensor", {"self": lambda grad, result1: grad / E.pow(2.0, result1.to(
    grad.dtype))}, output_differentiability=[True, False])
not_differentiable("gcd", "gcd_", "lcm", "lcm_", "signbit", "isposinf", "isneginf", "isreal")
derivative("angle", {"self": _zero})  # real inputs: piecewise constant
derivative("view_as_real", {"self": lambda grad: E.view_as_complex(grad.contiguous())})
derivative("conj_physical", {"self": lambda grad: E.conj_physical(grad)})
derivative("view_as_complex",  # (a conj view of a gradient resolved first, as PyTorch's)
           {"self": lambda grad: E.view_as_real(grad.contiguous().resolve_conj())})
# PyTorch's formula takes 2 ** other in other's dtype: an integer pow, 0 for negative exponents
# (complex: the conjugate of each factor, as PyTorch's self * 2 ** other backpropagates)
derivative("ldexp.Tensor", {"self": lambda grad, other: grad * _conj(E.pow(2, other)),
                            "other": lambda grad, self, other:
                            grad * _conj(self) * _conj(E.pow(2, other) * _LN2)})


def _lerp_node(weight):
    return "LerpBackward1" if hasattr(weight, "_size") else "LerpBackward0"


_lerp = {"self": lambda grad, weight: grad * _conj(1 - weight),
         "end": lambda grad, weight: grad * _conj(weight),
         "weight": lambda grad, self, end: grad * _conj(end - self)}
derivative("lerp.Tensor", _lerp, node_name=_lerp_node)
derivative("addcmul", {"self": lambda grad: grad,
                     "tensor1": lambda grad, tensor2, value: grad * _conj(tensor2 * value),
                     "tensor2": lambda grad, tensor1, value: grad * _conj(tensor1 * value)})
derivative("addcdiv", {"self": lambda grad: grad,
                     "tensor1": lambda grad, tensor2, value: grad * _conj(value / tensor2),
                     "tensor2": lambda grad, tensor1, tensor2, value:
                         -grad * _conj(value * tensor1 / (tensor2 * tensor2))})

# activations: each formula compares as PyTorch's backward kernel does (which side of the
# kink a boundary point takes, and where NaN goes); through the backward ops where PyTorch's
# go (so double backward is theirs). The in-place forms are other nodes in PyTorch: their
# formulas read the output, which the backward kernels refuse for a negative slope
derivative("elu", {"self": lambda grad, self, alpha, scale, input_scale:
                   _aten.elu_backward(grad, alpha, scale, input_scale, False, self)})
derivative("elu_", {"self": lambda grad, result, alpha, scale, input_scale:
                    _aten.elu_backward(grad, alpha, scale, input_scale, True, result)},
           node_name="EluBackward1")
derivative("leaky_relu", {"self": lambda grad, self, negative_slope:
                          _aten.leaky_relu_backward(grad, self, negative_slope, False)})
derivative("leaky_relu_", {"self": lambda grad, result, negative_slope:
                           _aten.leaky_relu_backward(grad, result, negative_slope, True)},
           node_name="LeakyReluBackward1")
derivative("hardtanh", {"self": lambda grad, self, min_val, max_val:
                        _aten.hardtanh_backward(grad, self, min_val, max_val)})
derivative("hardsigmoid", {"self": lambda grad, self: _aten.hardsigmoid_backward(grad, self)})
derivative("hardswish", {"self": lambda grad, self: _aten.hardswish_backward(grad, self)})


@_in_float
def _mish_grad(grad, self):
    t = _aten.softplus(self, 1, 20).tanh()
    return grad * (t + self * self.sigmoid() * (1 - t * t))


derivative("mish", {"self": _mish_grad})
def _log_sigmoid_grad(grad, self):
    """PyTorch's: from the forward's buffer z = exp(-|x|), kept in the input's dtype, the
    derivative 1 - z / (1 + z) for x < 0 and z / (1 + z) otherwise, in float for half and
    bfloat16 and rounded once."""
    z = (-self.abs()).exp()
    g, x = grad, self
    if self.dtype is D.float16 or self.dtype is D.bfloat16:
        g, x, z = grad.float(), self.float(), z.float()
    s = z / (1 + z)
    return (E.where(x < 0, 1 - s, s) * g).to(self.dtype)


derivative("log_sigmoid", {"self": _log_sigmoid_grad})


derivative("hardshrink", {"self": lambda grad, self, lambd:
                          _aten.hardshrink_backward(grad, self, lambd)})
derivative("softshrink", {"self": lambda grad, self, lambd:
                          _aten.softshrink_backward(grad, self, lambd)})


# their backward ops, differentiable again (double backward) as in PyTorch: linear in
# grad_output, and the second derivative at self (zero for the piecewise linear ones).
# silu, mish, hardsigmoid and logit's have no derivative in PyTorch (their forward's double backward
# goes through other ops)
not_implemented("silu_backward", "mish_backward", "hardsigmoid_backward", "logit_backward",
                listed=False)


def _softplus_double(grad, grad_output, self, beta, threshold):
    s = (self * beta).sigmoid()
    return _masked(self * beta < threshold, grad * grad_output * beta * s * (1 - s))


derivative("softplus_backward", {
    "grad_output": lambda grad, self, beta, threshold: _aten.softplus_backward(
        grad, self, beta, threshold),
    "self": _softplus_double})
derivative("hardswish_backward", {
    "grad_output": lambda grad, self: _aten.hardswish_backward(grad, self),
    "self": lambda grad, grad_output, self: _masked((self > -3) & (self < 3),
                                                    grad * grad_output / 3)})
derivative("hardtanh_backward", {
    "grad_output": lambda grad, self, min_val, max_val: _aten.hardtanh_backward(
        grad, self, min_val, max_val),
    "self": _zero})
derivative("leaky_relu_backward", {
    "grad_output": lambda grad, self, negative_slope, self_is_result: _aten.leaky_relu_backward(
        grad, self, negative_slope, self_is_result),
    "self": _zero})
derivative("hardshrink_backward", {
    "grad_out": lambda grad, self, lambd: _aten.hardshrink_backward(grad, self, lambd),
    "self": _zero})
derivative("softshrink_backward", {
    "grad_output": lambda grad, self, lambd: _aten.softshrink_backward(grad, self, lambd),
    "self": _zero})


def _elu_double(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    negative = self_or_result < 0
    if is_result:
        return _masked(negative, grad * grad_output * input_scale)
    return _masked(negative, _aten.elu_backward(grad * grad_output * input_scale, alpha, scale,
                                                input_scale, False, self_or_result))


derivative("elu_backward", {
    "grad_output": lambda grad, alpha, scale, input_scale, is_result, self_or_result:
        _aten.elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result),
    "self_or_result": _elu_double})
derivative("threshold", {"self": lambda grad, self, threshold:
                       _aten.threshold_backward(grad, self, threshold)})


def _glu_grad(grad, self, dim):
    """As PyTorch's kernel: the gate sigmoid(b) is kept in the input's dtype; the second
    half's grad * a * gate * (1 - gate) runs in float for half and bfloat16, rounded once."""
    a, b = self.chunk(2, dim)
    gate = b.sigmoid()
    first = grad * gate
    if self.dtype is D.float16 or self.dtype is D.bfloat16:
        g, a, gate = grad.float(), a.float(), gate.float()
        return E.cat([first, (g * a * gate * (1 - gate)).to(self.dtype)], dim)
    return E.cat([first, grad * a * gate * (1 - gate)], dim)


derivative("glu", {"self": _glu_grad})
derivative("_prelu_kernel", {
    "self": lambda grad, self, weight: E.where(self > 0, grad, weight * grad),
    "weight": lambda grad, self: _masked(self <= 0, self * grad)},
    node_name="PreluKernelBackward0")
not_differentiable("eq.Tensor", "eq.Scalar", "any.dim", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor",
                   "logical_and", "logical_or", "logical_xor", "logical_not",
                   "bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor", "bitwise_not")
not_implemented("floor_divide", "floor_divide_.Tensor", "remainder.Scalar_Tensor", "heaviside",
                "heaviside_", listed=False)
not_implemented("_add_relu.Tensor", "_add_relu_.Tensor", listed=False)  # PyTorch's fused kernel has no derivatives.yaml entry
not_differentiable("isclose")
