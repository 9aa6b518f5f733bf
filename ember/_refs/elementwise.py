"""Composite elementwise functions (PyTorch's _refs role): torch functions written from ops, so
autograd, explain and tracing see the ops they call."""
import builtins
import math

from .._core import dtype as D
from .._core.tensor import Tensor
from .._bindings import arg_parser as _ap
from .._dispatch.dispatcher import impl, lookup as _op
from .._aten.elementwise import _scalar_type_name
from .._bindings.overloads import _clamp_inplace
from .._refs.shape import broadcast_tensors
from .._bindings.generated import pow, isclose, stack, view_as_complex
from .._bindings.out import _finish
from .._dispatch.vmap_state import refuse_batched
from .._bindings.factories import arange
from .._bindings.overloads import clamp

_eq = _op("eq.Tensor")
_pow = _op("pow.Tensor_Tensor")


def square(input, *, out=None):
    return _finish(_square(input), False, out)


_square = _op("square")


@impl("square", "CompositeImplicitAutograd")
def _square_composite(input):
    return _pow(input, 2)


def equal(input, other):
    refuse_batched((input, other), "aten::equal", ". We could not generate a fallback.")
    if input.dtype is D.complex32:  # (the same view of the same memory runs the not-NaN test)
        same = input.data_ptr() == other.data_ptr() and input.stride() == other.stride()
        raise NotImplementedError(f"\"equal{'_notnan' if same else ''}_cpu\" not implemented "
                                  "for 'ComplexHalf'")
    return input._size == other._size and bool(_eq(input, other).all())


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def clamp_min(input, min, *, out=None):
    return clamp(input, min=_real_bound(min), out=out)


def clamp_max(input, max, *, out=None):
    return clamp(input, max=_real_bound(max), out=out)


def clamp_min_(input, min):
    return _clamp_inplace(input, min=_real_bound(min))


def clamp_max_(input, max):
    return _clamp_inplace(input, max=_real_bound(max))


def _real_bound(bound):
    """clamp_min/clamp_max take their Scalar bound into the result type, so a complex number
    makes it complex, which clamp refuses (clamp itself first converts a bound to double)."""
    if type(bound) is complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return bound


def _float_power_dtype(input, exponent):
    complex_ = builtins.any(x.is_complex() if isinstance(x, Tensor) else isinstance(x, complex)
                   for x in (input, exponent))
    return D.complex128 if complex_ else D.float64


def float_power(input, exponent, *, out=None):
    """pow computed in double (complex double if either operand is complex)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        _ap.two_numbers("float_power", ("input", "exponent"), (input, exponent))
    dt = _float_power_dtype(input, exponent)
    if out is not None and out.dtype is not dt:
        raise RuntimeError(f"the output given to float_power has dtype "
                           f"{_scalar_type_name(out.dtype)} but the operation's result "
                           f"requires dtype {_scalar_type_name(dt)}")
    base = input.to(dt) if isinstance(input, Tensor) else input
    exponent = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    return pow(base, exponent, out=out)


def _float_power_(self, exponent):
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_scalar_type_name(self.dtype)} but the operation's result "
                           f"requires dtype {_scalar_type_name(dt)}")
    return self.pow_(exponent.to(dt) if isinstance(exponent, Tensor) else exponent)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma: sum_j lgamma(x - j/2) for j < p, plus p(p-1)/4 log(pi)."""
    if input.dtype is D.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    dt = input.dtype if input.is_floating_point() else D.get_default_dtype()
    offsets = arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=dt, device=input.device)
    result = (offsets + input.unsqueeze(-1)).lgamma().sum(-1) + p * (p - 1) * math.log(
        math.pi) / 4
    return _finish(result, False, out, "mvlgamma")


def _mvlgamma_(self, p):
    result = mvlgamma(self, p)
    if not self.is_floating_point():
        raise RuntimeError(f"mvlgamma: result type {_scalar_type_name(result.dtype)} can't be "
                           f"cast to the desired output type {_scalar_type_name(self.dtype)}")
    return self.copy_(result)


def positive(input):
    return _positive(input)


_positive = _op("positive")


@impl("positive", "CompositeImplicitAutograd")
def _positive_composite(input):
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def square_(input):
    return _square_(input)


_square_ = _op("square_")


@impl("square_", "CompositeImplicitAutograd")
def _square_inplace_composite(input):
    return input.pow_(2)


def fill(input, value):
    """`value` a number (fill.Scalar) or a 0-d tensor, differentiable (fill.Tensor)."""
    if isinstance(value, Tensor):
        return _op("fill.Tensor")(input, value)
    return _op("fill.Scalar")(input, _ap.scalar_arg("fill", "value", 2, value))


def resolve_conj(input):
    """`input`'s values in a tensor without the conjugate bit: `input` itself if it has none,
    else a new tensor (conj() takes the bit off the view, conj_physical computes)."""
    if not input.is_conj():
        return input
    return input.conj().conj_physical()


def resolve_neg(input):
    """`input`'s values in a tensor without the negative bit (see resolve_conj)."""
    if not input.is_neg():
        return input
    if input.dtype is D.bool:  # PyTorch runs the neg kernel itself, without neg's bool check
        if input.numel():
            raise NotImplementedError('"neg_cpu" not implemented for \'Bool\'')
        return input._neg_view().clone()
    return input._neg_view().neg()


def _complex(real, imag, *, out=None):
    """A complex tensor from its real and imaginary parts (which broadcast)."""
    _check_complex_parts(real, imag)
    return _finish(view_as_complex(stack(broadcast_tensors(real, imag), -1)), False, out,
                   "complex", (real, imag))


def _check_complex_parts(real, imag):
    """complex() and polar() take two float tensors of one dtype."""
    for x in (real, imag):
        if x.dtype not in (D.float16, D.float32, D.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                               f"got {_scalar_type_name(real.dtype)} and "
                               f"{_scalar_type_name(imag.dtype)}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_scalar_type_name(real.dtype)} but "
                           f"got scalar type {_scalar_type_name(imag.dtype)} for second argument")


def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle))."""
    if out is None:
        return _polar(abs, angle)
    return _finish(_polar(abs, angle), False, out, "polar", (abs, angle))


_polar = _op("polar")


@impl("polar", "CompositeImplicitAutograd")
def _polar_composite(abs, angle):
    _check_complex_parts(abs, angle)  # (here, after autocast has cast the operands)
    if abs.dtype is D.float16:  # (complex32 has no cos/sin kernels)
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    return _complex(abs * angle.cos(), abs * angle.sin())


METHODS = dict(
    square=square, square_=square_, equal=equal, allclose=allclose,
    clamp_min=clamp_min, clamp_max=clamp_max, clamp_min_=clamp_min_, clamp_max_=clamp_max_,
    float_power=float_power,
    float_power_=_float_power_, mvlgamma=mvlgamma, mvlgamma_=_mvlgamma_, positive=positive,
    resolve_conj=resolve_conj, resolve_neg=resolve_neg,
)

__all__ = ["allclose", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_",
           "equal", "fill", "float_power", "mvlgamma", "polar", "positive",
           "resolve_conj", "resolve_neg", "square", "square_"]
