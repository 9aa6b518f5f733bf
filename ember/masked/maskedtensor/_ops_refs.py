"""The functions MaskedTensor implements, keyed by the public function `__torch_function__`
receives (`ember.exp` and `Tensor.exp` alike): PyTorch's lists of unary, binary, reduction and
pass-through ops for MaskedTensor (torch/masked/maskedtensor/{unary,binary,reductions,
passthrough,_ops_refs}.py), each with its mask rule."""
import ember
from ember._core.tensor import Tensor
from ember._dispatch.dispatcher import OpOverloadPacket

from ..._core import dtype as D
from .. import _ops as masked_ops
from .core import (MaskedTensor, _get_data, _map_mt_args_kwargs, _masks_match,
                   _maybe_get_mask, _wrap_result, is_masked_tensor)
from .creation import as_masked_tensor

MASKEDTENSOR_FUNCTION_TABLE = {}


def _register(names, impl, namespaces=(ember, Tensor, ember.ops.aten)):
    for name in names:
        for namespace in namespaces:
            fn = getattr(namespace, name, None)
            if fn is not None:
                MASKEDTENSOR_FUNCTION_TABLE[fn] = impl(fn)


# ---- unary: the op on the data, the same mask ---------------------------------------------
UNARY_NAMES = [
    "abs", "absolute", "acos", "arccos", "acosh", "arccosh", "angle", "asin", "arcsin", "asinh",
    "arcsinh", "atan", "arctan", "atanh", "arctanh", "bitwise_not", "ceil", "clamp", "clip",
    "conj_physical", "cos", "cosh", "deg2rad", "digamma", "erf", "erfc", "erfinv", "exp", "exp2",
    "expm1", "fix", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "logit", "i0",
    "isnan", "nan_to_num", "neg", "negative", "positive", "pow", "rad2deg", "reciprocal",
    "round", "rsqrt", "sigmoid", "sign", "sgn", "signbit", "sin", "sinc", "sinh", "sqrt",
    "square", "tan", "tanh", "trunc"]
INPLACE_UNARY_NAMES = [n + "_" for n in UNARY_NAMES
                       if n not in ("angle", "positive", "signbit", "isnan")]


def _aten_positional(fn, args, kwargs):
    """An aten op's call with its arguments in schema order, as `__torch_dispatch__` sees it in
    PyTorch (`aten.clamp(x, min=a, max=b)` is `aten.clamp(x, a, b)`)."""
    if not kwargs or not isinstance(fn, OpOverloadPacket):
        return args, kwargs
    for op in fn._overloads.values():
        try:
            bound = op.schema.bind(args, kwargs, op.short_name)
        except (RuntimeError, TypeError):
            continue
        if not any(a.kwarg_only for a in op.schema.arguments):
            return tuple(bound), {}
    return args, kwargs


def _unary(fn, inplace):
    def impl(*args, **kwargs):
        args, kwargs = _aten_positional(fn, args, kwargs)
        if kwargs:
            raise ValueError("MaskedTensor unary ops require that len(kwargs) == 0. If you need "
                             "support for this, please open an issue on Github.")
        for a in args[1:]:
            if isinstance(a, Tensor):
                raise TypeError("MaskedTensor unary ops do not support additional Tensor "
                                "arguments")
        mask_args, _ = _map_mt_args_kwargs(args, {}, lambda x: x._masked_mask)
        data_args, _ = _map_mt_args_kwargs(args, {}, lambda x: x._masked_data)
        if inplace:
            result = fn(*data_args)
            args[0]._set_data_mask(result, mask_args[0])
            return args[0]
        return _wrap_result(fn(*data_args), mask_args[0])
    return impl


# ---- binary: equal masks (or one operand plain), the op on the data ------------------------
BINARY_NAMES = [
    "add", "atan2", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "div", "divide", "floor_divide", "fmod", "logaddexp", "logaddexp2",
    "mul", "multiply", "nextafter", "remainder", "sub", "subtract", "true_divide", "eq", "ne",
    "le", "ge", "greater", "greater_equal", "gt", "less_equal", "lt", "less", "maximum",
    "minimum", "fmax", "fmin", "not_equal"]
INPLACE_BINARY_NAMES = [n + "_" for n in BINARY_NAMES if n not in (
    "logaddexp", "logaddexp2", "equal", "fmin", "minimum", "maximum", "fmax")]


def _binary(fn, inplace):
    def impl(*args, **kwargs):
        if len(args) < 2:
            raise TypeError(f"{fn.__name__}() on a MaskedTensor takes two operands")
        for a in args[2:]:
            if isinstance(a, Tensor):
                raise TypeError("MaskedTensor binary ops do not support Tensor arguments aside "
                                "from the lhs and rhs")
        if not _masks_match(*args[:2]):
            raise ValueError("Input masks must match. If you need support for this, please open "
                             "an issue on Github.")
        data_args, data_kwargs = _map_mt_args_kwargs(args, kwargs, lambda x: x._masked_data)
        mask_args, _ = _map_mt_args_kwargs(args, {}, lambda x: x.get_mask())
        result = fn(*data_args, **data_kwargs)
        if inplace:
            args[0]._set_data_mask(result, mask_args[0])
            return args[0]
        mask = args[0].get_mask() if is_masked_tensor(args[0]) else args[1].get_mask()
        return _wrap_result(result, mask.expand_as(result))
    return impl


# ---- reductions: torch.masked's rule on the data; specified where any element was ----------
REDUCE_NAMES = ["sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "norm", "var",
                "std"]
# reductions whose masked-out elements become the identity (torch.masked's Combine)
_IDENTITY_OF = {"sum": "sum", "mean": "sum", "prod": "prod", "amax": "amax", "amin": "amin",
                "norm": "norm"}


class _Combine(ember.autograd.Function):
    """data with its masked-out elements set to the reduction's identity; the gradient goes
    back unmasked, as torch.masked's Combine does for a MaskedTensor input."""

    @staticmethod
    def forward(ctx, data, mask, op_name):
        return masked_ops._combine_input_and_mask(op_name, data, mask)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


def _multidim_any(mask, dim, keepdim):
    if isinstance(dim, int):
        dim = [dim]
    for d in sorted(dim, reverse=True):
        mask = ember.any(mask, dim=d, keepdim=keepdim)
    return mask


def _reduce_data(name, data, mask, dim=None, keepdim=False, dtype=None):
    """The reduction of the specified elements (all of them when dim is None)."""
    if name == "all":
        filled = data.masked_fill(~mask, True)
        return filled.all() if dim is None else ember.all(filled, dim=dim, keepdim=keepdim)
    if name in _IDENTITY_OF:
        combined = _Combine.apply(data, mask, _IDENTITY_OF[name])
        if name == "mean":
            total = masked_ops.sum(combined, dim, keepdim=keepdim, dtype=dtype)
            count = masked_ops.sum(mask, dim, keepdim=keepdim, dtype=D.int64)
            return ember.divide(total, count).to(dtype=total.dtype)
        return getattr(masked_ops, name)(combined, dim=dim, keepdim=keepdim, dtype=dtype)
    return getattr(masked_ops, name)(data, dim=dim, keepdim=keepdim, dtype=dtype, mask=mask)


def _reduction(name):
    def impl(self, *args, **kwargs):
        if not is_masked_tensor(self):
            raise TypeError("Input to reduce_dim must be a MaskedTensor")
        data, mask = self._masked_data, self.get_mask()
        if not args and not kwargs:
            return as_masked_tensor(_reduce_data(name, data, mask), ember.any(mask))
        bound = dict(zip(("dim", "keepdim", "dtype"), args), **kwargs)
        dim, keepdim = bound.get("dim"), bound.get("keepdim", False)
        result = _reduce_data(name, data, mask, dim, keepdim, bound.get("dtype"))
        return as_masked_tensor(result, _multidim_any(mask, dim, keepdim))
    return lambda fn: impl


# ---- functions applied to data and mask alike ---------------------------------------------
PASSTHROUGH_NAMES = ["select", "transpose", "split", "t", "__getitem__", "expand", "view",
                     "reshape", "cat", "unsqueeze", "unfold", "stack"]


def _passthrough(fn):
    def impl(*args, **kwargs):
        data_args, data_kwargs = _map_mt_args_kwargs(args, kwargs, lambda x: x._masked_data)
        mask_args, mask_kwargs = _map_mt_args_kwargs(args, kwargs, lambda x: x.get_mask())
        return _wrap_result(fn(*data_args, **data_kwargs), fn(*mask_args, **mask_kwargs))
    return impl


def _on_data(fn):
    """detach, clone, contiguous, ones_like: the op on the data, the same mask."""
    def impl(self, *args, **kwargs):
        return MaskedTensor._from_values(fn(_get_data(self), *args, **kwargs),
                                         _maybe_get_mask(self))
    return impl


def _to(fn):
    def impl(self, *args, **kwargs):
        data = fn(_get_data(self), *args, **kwargs)
        mask = self.get_mask()
        if data.device != mask.device:
            mask = mask.to(data.device)
        return MaskedTensor._from_values(data, mask)
    return impl


def _where(fn):
    def impl(condition, input, other):
        if not isinstance(condition, Tensor):
            raise ValueError("__torch_function__, where, args[0] must be a Tensor")
        x = input if is_masked_tensor(input) else MaskedTensor(input, ember.ones_like(
            input, dtype=D.bool))
        y = other if is_masked_tensor(other) else MaskedTensor(other, ember.ones_like(
            other, dtype=D.bool))
        return MaskedTensor._from_values(ember.where(condition, x._masked_data, y._masked_data),
                                         ember.where(condition, x.get_mask(), y.get_mask()))
    return impl


def _softmax(fn):
    def impl(self, dim, *args, **kwargs):
        data = masked_ops.softmax(self._masked_data, dim, mask=self.get_mask())
        return MaskedTensor._from_values(data, self.get_mask())
    return impl


def _copy_(fn):
    def impl(self, src, *args, **kwargs):
        if not _masks_match(self, src):
            raise ValueError("args[0] mask and args[1] mask must match but do not")
        self._masked_data.copy_(_get_data(src))
        return self
    return impl


def _tensor_where(fn):
    """Tensor.where(condition, other) is where(condition, self, other)."""
    impl = _where(fn)
    return lambda self, condition, other: impl(condition, self, other)


def function_table():
    """{public function: its MaskedTensor implementation}, built on first use (after
    `import ember` has given every function its final, dispatching form)."""
    if not MASKEDTENSOR_FUNCTION_TABLE:
        _build()
    return MASKEDTENSOR_FUNCTION_TABLE


def _build():
    _register(UNARY_NAMES, lambda fn: _unary(fn, inplace=False))
    _register(INPLACE_UNARY_NAMES, lambda fn: _unary(fn, inplace=True))
    _register(BINARY_NAMES, lambda fn: _binary(fn, inplace=False))
    _register(INPLACE_BINARY_NAMES, lambda fn: _binary(fn, inplace=True))
    for name in REDUCE_NAMES:
        _register([name], _reduction(name))
    _register(PASSTHROUGH_NAMES, _passthrough)
    _register(["detach", "clone", "contiguous", "ones_like"], _on_data)
    _register(["to", "float", "double", "half", "int", "long", "bool"], _to, (Tensor,))
    _register(["where"], _where, (ember,))
    _register(["where"], _tensor_where, (Tensor,))
    _register(["softmax"], _softmax, (ember, ember.nn.functional, Tensor))
    _register(["copy_"], _copy_, (Tensor,))
    # the operators whose __torch_function__ call names them rather than a method
    MASKEDTENSOR_FUNCTION_TABLE[Tensor.__rsub__] = _binary(lambda a, b: b - a, inplace=False)
    MASKEDTENSOR_FUNCTION_TABLE[Tensor.__rdiv__] = _binary(lambda a, b: b / a, inplace=False)
    MASKEDTENSOR_FUNCTION_TABLE[Tensor.__floordiv__] = _binary(ember.floor_divide, inplace=False)
    MASKEDTENSOR_FUNCTION_TABLE[Tensor.__eq__] = _binary(ember.eq, inplace=False)
    MASKEDTENSOR_FUNCTION_TABLE[Tensor.__rtruediv__] = MASKEDTENSOR_FUNCTION_TABLE[Tensor.__rdiv__]
