"""Composite neural-network functions of the torch namespace (PyTorch's _refs role): softmax
and log_softmax with their dtype argument, selu, celu, prelu, rrelu."""

import numpy as np

from .._bindings import arg_parser as _ap
from .._core import dtype as D
from .._core.math_bits import resolved_values
from .._dispatch.dispatcher import impl, lookup as _op
from .._aten.elementwise import _scalar_type_name
from .._refs.shape import reshape
from .._bindings.factories import tensor
from .._bindings.codegen import numpy_names
from .._bindings.out import _finish

# ---- softmax ----------------------------------------------------------------------------------
_softmax = _op("_softmax")
_log_softmax = _op("_log_softmax")


_softmax_int = _op("softmax.int")
_log_softmax_int = _op("log_softmax.int")


@numpy_names
def softmax(input, dim, dtype=None, *, out=None, _stacklevel=3):
    if dim.__class__ is not int:
        dim = _ap.int_arg("softmax", "dim", 2, dim)
    if out is None:
        return _softmax_int(input, dim, dtype)
    return _finish(_softmax_int(input, dim, dtype), False, out, "softmax", (input,))


@numpy_names
def log_softmax(input, dim, dtype=None, *, out=None, _stacklevel=3):
    if dim.__class__ is not int:
        dim = _ap.int_arg("log_softmax", "dim", 2, dim)
    if out is None:
        return _log_softmax_int(input, dim, dtype)
    return _finish(_log_softmax_int(input, dim, dtype), False, out, "log_softmax", (input,))


@impl("_safe_softmax", "CompositeImplicitAutograd")
def _safe_softmax(self, dim, dtype=None):
    """softmax whose rows of only -inf (fully masked attention rows) are 0 rather than NaN."""
    masked = _op("all.dims")(_op("eq.Scalar")(self, float("-inf")), [dim], True)
    # those rows are zeroed before the softmax too, so that no NaN reaches the backward
    out = _softmax_int(_op("where.self")(masked, 0, self), dim, dtype)
    return _op("where.self")(masked, 0.0, out)


@impl("softmax.int", "CompositeImplicitAutograd")
def _softmax_composite(input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(input, dim, False)


@impl("log_softmax.int", "CompositeImplicitAutograd")
def _log_softmax_composite(input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    return _log_softmax(input, dim, False)


# activations with a torch.* form (the rest are in nn.functional)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input):
    return _op("elu")(input, _SELU_ALPHA, _SELU_SCALE, 1)


def selu_(input):
    return _op("elu_")(input, _SELU_ALPHA, _SELU_SCALE, 1)


def celu(input, alpha=1.0):
    return _op("elu")(input, alpha, 1, 1 / alpha)


def celu_(input, alpha=1.0):
    return _op("elu_")(input, alpha, 1, 1 / alpha)


def prelu(input, weight):
    """x where x > 0, else weight * x, one weight for all channels or one per channel (dim 1)."""
    return _prelu(input, weight)


_prelu = _op("prelu")


@impl("prelu", "CompositeImplicitAutograd")
def _prelu_composite(input, weight):
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_scalar_type_name(input.dtype)} and "
                           f"{_scalar_type_name(weight.dtype)}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input._size[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if input.dim() >= 2:
        weight = reshape(weight, (1, weight.numel()) + (1,) * (input.dim() - 2))
    elif input.dim() == 0:
        weight = reshape(weight, ())
    return _op("_prelu_kernel")(input, weight)


def _rrelu_noise(input, lower, upper, generator):
    """The random slopes of rrelu in training: like PyTorch's rrelu_with_noise, one
    uniform(lower, upper) double per element <= 0, drawn in element order; 1 elsewhere."""
    from .._core.generator import default_generator
    from .._aten.distributions import uniform_real_f64
    if input.dtype is D.float16 or not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{_scalar_type_name(input.dtype)}'")
    if input.is_meta:   # no values to draw slopes for
        return input.new_empty(input.shape)
    g = default_generator if generator is None else generator
    x = resolved_values(input.detach())._np.reshape(-1)
    negative = x <= 0
    with g._lock:
        slopes = uniform_real_f64(g, int(negative.sum())) * (upper - lower) + lower
    noise = np.ones(x.shape, dtype=np.float64)
    noise[negative] = slopes
    return tensor(noise.reshape(input._size), dtype=input.dtype, device=input.device)


def _check_rrelu_bounds(lower, upper):
    if lower > upper:   # (PyTorch's rrelu checks; rrelu_with_noise does not)
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    _check_rrelu_bounds(lower, upper)
    if not training:
        return _op("leaky_relu")(input, (lower + upper) / 2)
    return input * _rrelu_noise(input, lower, upper, generator)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    _check_rrelu_bounds(lower, upper)
    if not training:
        return _op("leaky_relu_")(input, (lower + upper) / 2)
    return input.mul_(_rrelu_noise(input, lower, upper, generator))


METHODS = dict(softmax=softmax, log_softmax=log_softmax, prelu=prelu)

__all__ = ["celu", "celu_", "log_softmax", "prelu", "rrelu", "rrelu_", "selu", "selu_", "softmax"]


@impl("_masked_softmax", "CompositeImplicitAutograd")
def _masked_softmax_composite(input, mask, dim, mask_type):
    """Softmax over `dim` (the last by default) of the entries whose mask is False. mask_type
    says how the mask covers a (B, H, L, L) attention input: 0 an (L, L) attention mask, 1 a
    (B, L) padding mask, 2 (or None) a mask of the input's own shape -- as PyTorch's CPU
    kernel, types 0 and 1 apply only to a 2-d mask of a 4-d input, any other is taken as
    type 2. A row masked entirely gives NaN (the softmax of all -inf), as on PyTorch's CPU;
    no gradient reaches a masked entry, as masked_fill's backward zeroes it there."""
    if not input.is_floating_point():
        raise NotImplementedError(f"\"masked_softmax\" not implemented for "
                                  f"'{_scalar_type_name(input.dtype)}'")
    if dim is None:
        dim = input.dim() - 1
    if mask.dim() == 2 and input.dim() == 4 and mask_type in (0, 1):
        shape = (1, 1) + tuple(mask.shape) if mask_type == 0 else \
            (mask.shape[0], 1, 1, mask.shape[1])
        mask = mask.view(shape).expand(input.shape)
    return _softmax(input.masked_fill(mask.bool(), float("-inf")), dim, False)
