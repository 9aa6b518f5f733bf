"""Hand-written bindings of the ops whose Python overloads no single schema line describes:
`max(x)`, `max(x, dim)` and `max(x, other)`; `var(x, dim, unbiased)` beside `correction=`;
`prod(x)` and `prod(x, dim)`; `sort(x, dim, descending, stable)`; `unique(...)` returning only
what was asked for; `where(condition)`; `scatter` with `src`, `value` and `reduce`; `clamp`
with numbers or tensors; `view(*shape)` and `view(dtype)` (PyTorch's python_arg_parser picks
among the overloads; here each binding does). The codegen skips these names
(codegen.HAND_WRITTEN_*), and every other op's binding is generated.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor
from .._dispatch.dispatcher import lookup as _op
from . import arg_parser as _ap
from .codegen import numpy_names, out_needs_dim
from .out import _OutVariant, _finish, _finish_tuple, dtype_from_out
from .generated import maximum, minimum, atan2, view_as_real

_remainder = _op("remainder.Tensor")
_remainder_scalar = _op("remainder.Scalar_Tensor")
_where = _op("where.self")
_clamp = _op("clamp")
_clamp_ = _op("clamp_")
_clamp_tensor = _op("clamp.Tensor")
_clamp_tensor_ = _op("clamp_.Tensor")


def remainder(input, other, *, out=None):
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            _ap.two_numbers("remainder", ("input", "other"), (input, other))
        return _finish(_remainder_scalar(input, other), False, out, "remainder", (other,))
    return _finish(_remainder(input, other), False, out, "remainder", (input, other))


def masked_fill(input, mask, value):
    """`value` a number (masked_fill.Scalar) or a 0-d tensor, differentiable (.Tensor)."""
    if isinstance(value, Tensor):
        return _op("masked_fill.Tensor")(input, mask, value)
    return _op("masked_fill.Scalar")(input, mask, _ap.scalar_arg("masked_fill", "value", 3, value))


def _masked_fill_(self, mask, value):
    if isinstance(value, Tensor):
        return _op("masked_fill_.Tensor")(self, mask, value)
    return _op("masked_fill_.Scalar")(self, mask, _ap.scalar_arg("masked_fill_", "value", 2, value))


@numpy_names
def index_fill(input, dim, index, value):
    if isinstance(value, Tensor):
        return _op("index_fill.int_Tensor")(input, dim, index, value)
    value = _ap.scalar_arg("index_fill", "value", 4, value)
    return _op("index_fill.int_Scalar")(input, dim, index, value)


@numpy_names
def _index_fill_(self, dim, index, value):
    if isinstance(value, Tensor):
        return _op("index_fill_.int_Tensor")(self, dim, index, value)
    value = _ap.scalar_arg("index_fill_", "value", 3, value)
    return _op("index_fill_.int_Scalar")(self, dim, index, value)


def nonzero(input, *, out=None, as_tuple=False):
    if as_tuple:
        if out is not None:
            raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
        return tuple(_op("nonzero.as_tuple")(input))
    return _finish(_op("nonzero")(input), False, out, "nonzero", (input,))


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return _finish(_where(condition, input, other), False, out, "where",
                   (condition, input, other))


def clamp(input, min=None, max=None, *, out=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _finish(_clamp_tensor(input, min, max), False, out, "clamp", (input, min, max))
    return _finish(_clamp(input, min, max), False, out, "clamp", (input,))


_prod = _op("prod.dim_int")
_max_dim = _op("max.dim")
_min_dim = _op("min.dim")
_var = _op("var.correction")
_std = _op("std.correction")


def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        return [int(dim)]
    return list(dim)


# prod(x) and max(x) reduce everything; prod(x, dim) takes an int dim, and None is refused
# as PyTorch's argument parser refuses it: `_FULL` marks "no dim given".
_FULL = object()


def _int_dim(name, dim):
    if dim is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
    return dim


@numpy_names
def prod(input, dim=_FULL, keepdim=False, *, dtype=None, out=None):
    if keepdim.__class__ is not bool:
        _ap.as_bool("prod", "keepdim", 3, keepdim)
    if dim is _FULL and out is not None:
        out_needs_dim("prod", dtype, keepdim)
    dim = None if dim is _FULL else _int_dim("prod", dim)
    dtype = dtype_from_out(dtype, out)   # Note [The dtype of out=]
    return _finish(_prod(input, dim, keepdim, dtype), False, out)


def _max_min(input, dim, keepdim, other, full, by_dim, pairwise, name, out):
    if keepdim.__class__ is not bool:
        _ap.as_bool(name, "keepdim", 3, keepdim)
    if isinstance(dim, Tensor):
        return pairwise(input, dim, out=out)
    if other is not None:
        return pairwise(input, other, out=out)
    if dim is _FULL:
        # a reduction: PyTorch checks no overlap
        return _finish(full(input), False, out, f"{name}_unary")
    values_indices = by_dim(input, _int_dim(name, dim), keepdim)
    return _finish_tuple(name, ["values", "indices"], values_indices, out, (input,))


@numpy_names
def max(input, dim=_FULL, keepdim=False, *, other=None, out=None):
    return _max_min(input, dim, keepdim, other, _op("max"), _max_dim, maximum, "max", out)


@numpy_names
def min(input, dim=_FULL, keepdim=False, *, other=None, out=None):
    return _max_min(input, dim, keepdim, other, _op("min"), _min_dim, minimum, "min", out)


def _var_args(dim, unbiased, keepdim, correction, out=None, name="var"):
    if isinstance(dim, bool):  # var(input, unbiased): the one overload without out=
        if out is not None:
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (Tensor, bool, "
                f"out=Tensor), but expected one of:\n * (Tensor input, tuple of ints dim, bool "
                f"unbiased = True, bool keepdim = False, *, Tensor out = None)\n * (Tensor "
                f"input, tuple of ints dim = None, *, Number correction = None, bool keepdim = "
                f"False, Tensor out = None)\n * (Tensor input, bool unbiased = True)\n")
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return _dims(dim), correction, keepdim


@numpy_names
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    d, c, k = _var_args(dim, unbiased, keepdim, correction, out, "var")
    return _finish(_var(input, d, c, k), False, out)


@numpy_names
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    d, c, k = _var_args(dim, unbiased, keepdim, correction, out, "std")
    return _finish(_std(input, d, c, k), False, out)


_squeeze = _op("squeeze.dims")


@numpy_names
def squeeze(input, dim=None):
    if dim is None:
        return _op("squeeze")(input)
    dim = _ap.int_or_int_list_arg("squeeze", "dim", 1, dim)
    if dim.__class__ is int:
        return _op("squeeze.dim")(input, dim)
    return _squeeze(input, dim)


def _view_method(self, *shape, **size):
    if size:   # view(size=...) or view(dtype=...)
        if shape or len(size) != 1 or not size.keys() <= {"size", "dtype"}:
            raise _view_error(shape, size)
        shape = tuple(size.values())
    elif not shape:
        raise _view_error(shape, size)
    given = shape
    if len(shape) == 1:
        if shape[0].__class__ in _ap.INT_SEQUENCES:
            shape = shape[0]
        elif isinstance(shape[0], D.dtype):
            return _op("view.dtype")(self, shape[0])
    for s in shape:
        if s.__class__ is not int:
            shape = _ap.as_int_list("view", "size", 1, given, 0, True)
            break
    return _view_op(self, shape)


_view_op = _op("view")


def _view_error(shape, size):
    got = ", ".join([_ap.type_name(s) for s in shape] +
                    [f"{k}={_ap.type_name(v)}" for k, v in size.items()])
    return TypeError(f"view() received an invalid combination of arguments - got ({got}), but "
                     "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")


def _scatter_op(name, src, value, reduce):
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    src = value if src is None else src
    if reduce is None:
        return _op(f"{name}.src" if isinstance(src, Tensor) else f"{name}.value"), src
    if isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                      "instead for more reduction options.", UserWarning, stacklevel=_user_stacklevel())
        return (lambda s, d, i, v: _op(f"{name}.reduce")(s, d, i, v, reduce)), src
    return (lambda s, d, i, v: _op(f"{name}.value_reduce")(s, d, i, v, reduce)), src


@numpy_names
def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    op, src = _scatter_op("scatter", src, value, reduce)
    return _finish(op(input, dim, index, src), False, out, "scatter", (input, index, src))


@numpy_names
def _scatter_method(self, dim, index, src=None, *, value=None, reduce=None):
    return scatter(self, dim, index, src, value=value, reduce=reduce)


@numpy_names
def _scatter_inplace(self, dim, index, src=None, *, value=None, reduce=None):
    op, src = _scatter_op("scatter_", src, value, reduce)
    return op(self, dim, index, src)


def _clamp_method(self, min=None, max=None):
    return clamp(self, min, max)


def _clamp_inplace(self, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor_(self, min, max)
    return _clamp_(self, min, max)


@numpy_names
def _max_method(self, dim=_FULL, keepdim=False):
    return max(self, dim, keepdim)


@numpy_names
def _min_method(self, dim=_FULL, keepdim=False):
    return min(self, dim, keepdim)


# (torch.round: below this line the builtin is builtins.round)
def _round_positional(name, given, method):
    """PyTorch's parser on round with decimals passed positionally (it is keyword-only)."""
    if method and len(given) == 1:
        return TypeError(f"{name}() takes from 1 to 0 positional arguments but 1 were given")
    if name == "round_" and not method and len(given) == 2:
        return TypeError("round_() takes from 2 to 1 positional arguments but 2 were given")
    got = ", ".join("Tensor" if isinstance(g, Tensor) else type(g).__name__ for g in given)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected (Tensor input, *, int decimals)")


def round(input, *args, decimals=None, out=None):
    """round(x) is round.default (integers pass through); round(x, decimals=d), even d=0, is
    round.decimals, whose kernel refuses integers, as PyTorch's parser picks them."""
    if args:
        raise _round_positional("round", (input,) + args, False)
    if decimals is None:
        return _finish(_op("round")(input), False, out, "round", (input,))
    return _finish(_op("round.decimals")(input, decimals), False, out, "round", (input,))


def round_(input, *args, decimals=None):
    if args:
        raise _round_positional("round_", (input,) + args, False)
    return _op("round_")(input) if decimals is None else _op("round_.decimals")(input, decimals)


def _round_method(self, *args, decimals=None):
    if args:
        raise _round_positional("round", args, True)
    return round(self, decimals=decimals)


def _round_inplace_method(self, *args, decimals=None):
    if args:
        raise _round_positional("round_", args, True)
    return round_(self, decimals=decimals)


def _median_fn(name):
    full, by_dim = _op(name), _op(f"{name}.dim")

    def fn(input, dim=None, keepdim=False, *, out=None):
        if dim is None:
            if out is not None:   # only the per-dim overload has an out= form
                raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
            return full(input)
        return _finish_tuple(name, ["values", "indices"], by_dim(input, dim, keepdim), out)
    fn.__name__ = fn.__qualname__ = name
    return numpy_names(fn)


median = _median_fn("median")
nanmedian = _median_fn("nanmedian")


@numpy_names
def count_nonzero(input, dim=None):
    return _op("count_nonzero.dim_IntList")(input, _dims(dim) or [])


# sorting and selection
@numpy_names
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    if descending.__class__ is not bool:
        _ap.as_bool("sort", "descending", 3, descending)
    values_indices = _op("sort.stable")(input, stable, dim, descending)
    return _finish_tuple("sort", ["values", "indices"], values_indices, out, (input,))


def _requested(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


@numpy_names(own={"input": None})  # torch.unique_consecutive is Python: no `x=`
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    outs = _op("unique_consecutive")(input, return_inverse, return_counts, dim)
    return _requested(*outs, return_inverse, return_counts)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        outs = _op("_unique2")(input, sorted, return_inverse, return_counts)
    else:
        outs = _op("unique_dim")(input, dim, sorted, return_inverse, return_counts)
    return _requested(*outs, return_inverse, return_counts)


def _unique2(input, sorted=True, return_inverse=False, return_counts=False):
    """torch._unique2: (values, inverse, counts); what was not asked for comes back empty."""
    values, inverse, counts = _op("_unique2")(input, sorted, return_inverse, return_counts)
    return (values, inverse if return_inverse else inverse.new_empty(0),
            counts if return_counts else counts.new_empty(0))


def _unique(input, sorted=True, return_inverse=False):
    """torch._unique: (values, inverse); the inverse is empty unless asked for."""
    return _unique2(input, sorted, return_inverse, False)[:2]


# ---- in-place view ops and resize_ (issue 3, remaining ops) -----------------------------------
@numpy_names
def _squeeze_(self, dim=None):
    if dim is None:
        return _op("squeeze_")(self)
    dim = _ap.int_or_int_list_arg("squeeze_", "dim", 1, dim)
    if dim.__class__ is int:
        return _op("squeeze_.dim")(self, dim)
    return _op("squeeze_.dims")(self, dim)


def angle(input, *, out=None):
    if input.dtype is D.complex32:
        raise NotImplementedError("\"angle_cpu\" not implemented for 'ComplexHalf'")
    if input.is_complex():
        return atan2(imag(input), real(input), out=out)
    return _finish(_op("angle")(input), False, out, "angle", (input,))


def real(input):
    """A view of the real parts (of the memory, for a conjugate view: the same numbers)."""
    if not input.is_complex():
        return input
    return view_as_real(input.conj() if input.is_conj() else input).select(-1, 0)


def imag(input):
    """A view of the imaginary parts; of a conjugate view, the memory's with the negative bit."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if input.is_conj():
        return view_as_real(input.conj()).select(-1, 1)._neg_view()
    return view_as_real(input).select(-1, 1)


clip = clamp


def clamp_(input, min=None, max=None):
    return _clamp_inplace(input, min, max)


clip_ = clamp_


def conj(input):
    return input.conj()


detach = Tensor.detach
detach_ = Tensor.detach_


def _native_batch_norm_legit(input, weight, bias, *args, out=None):
    """(input, weight, bias, running_mean, running_var, training, momentum, eps), or without
    the running statistics (.no_stats)."""
    name = "_native_batch_norm_legit" + (".no_stats" if len(args) == 3 else "")
    if out is None:
        return _op(name)(input, weight, bias, *args)
    with _OutVariant():
        result = _op(name)(input, weight, bias, *args)
    return _finish_tuple("_native_batch_norm_legit", None, result, out, (input,))

METHODS = dict(
    remainder=remainder, clamp=_clamp_method, clip=_clamp_method, clamp_=_clamp_inplace,
    clip_=_clamp_inplace, prod=prod, max=_max_method, min=_min_method, var=var, std=std,
    squeeze=squeeze, squeeze_=_squeeze_, median=median, nanmedian=nanmedian,
    count_nonzero=count_nonzero, sort=sort, unique=unique, unique_consecutive=unique_consecutive,
    round=_round_method, round_=_round_inplace_method,
    scatter=_scatter_method, scatter_=_scatter_inplace, nonzero=nonzero, view=_view_method, angle=angle,
    masked_fill=masked_fill, masked_fill_=_masked_fill_, index_fill=index_fill,
    index_fill_=_index_fill_,
)

__all__ = ["_native_batch_norm_legit",
           "clamp_", "clip", "clip_", "conj", "detach", "detach_", "angle", "clamp", "masked_fill",
           "index_fill",
           "count_nonzero", "imag", "max", "median", "min", "nanmedian", "nonzero", "prod", "real",
           "remainder", "round", "round_", "scatter", "sort", "squeeze", "std", "unique",
           "unique_consecutive", "var", "where", "_unique", "_unique2"]
