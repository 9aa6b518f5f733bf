"""Elementwise kernels (CPU and Meta): binary arithmetic with broadcasting, comparisons, logical
and unary math.

CPU kernels take ember Tensors (or Python numbers) and compute on their `_np` arrays with NumPy
ufuncs. The result dtype is PyTorch's (`result_type`), not NumPy's: tensor operands are cast to
it first, and Python scalars stay Python scalars, which NumPy (NEP 50) treats as "weak" just as
PyTorch treats wrapped numbers. Meta kernels compute the same shape and dtype without data.
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import Tensor, _wrap, _meta

_binary_dtype = D.binary_dtype


def operand(x, dt):
    """The NumPy value of an operand, as dtype `dt` (Python scalars are left weak)."""
    if isinstance(x, Tensor):
        a = x._np
        return a if x.dtype is dt else a.astype(dt._np)
    if isinstance(x, bool) and dt is not D.bool:
        return int(x)
    return x


def broadcast_error(a, b):
    sa = getattr(a, "_size", ())
    sb = getattr(b, "_size", ())
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b "
                                f"({pb[i]}) at non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast together")


def broadcast_shape(*shapes):
    out = []
    n = max((len(s) for s in shapes), default=0)
    for i in range(-n, 0):
        dim = 1
        for s in shapes:
            if len(s) >= -i:
                d = s[i]
                if d != 1:
                    if dim != 1 and d != dim:
                        raise RuntimeError(
                            f"The size of tensor a ({dim}) must match the size of tensor b ({d}) "
                            f"at non-singleton dimension {n + i}")
                    dim = d
        out.append(dim)
    return tuple(out)


def shape_of(x):
    return x._size if isinstance(x, Tensor) else ()


def can_cast(src, dst):
    """PyTorch's canCast: no float -> integral, complex -> non-complex, non-bool -> bool."""
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex):
        return False
    if src is not D.bool and dst is D.bool:
        return False
    return True


def check_inplace(self, dt, name):
    if not can_cast(dt, self.dtype):
        raise RuntimeError(f"result type {_scalar_type_name(dt)} can't be cast to the desired "
                           f"output type {_scalar_type_name(self.dtype)}")


def _scalar_type_name(d):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}[d.name]


def _inplace_shape_error(self, other):
    return RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                        f"shape {list(broadcast_shape(self._size, shape_of(other)))}")


# ---- binary kernels -------------------------------------------------------------------------
def binary(name, compute, *, dtype_rule=None, inplace=None):
    """Register CPU and Meta kernels of a binary op (and its in-place form `inplace`).

    compute(a, b, dt, *extra) -> ndarray works on NumPy operands already cast to `dt`, the
    PyTorch result type; dtype_rule(dt) gives the output dtype when it is not `dt` (comparisons
    give bool, true division of integers gives the default float).
    """
    def cpu(self, other, *extra):
        dt = _binary_dtype(self, other)
        cdt = dtype_rule(dt) if dtype_rule is not None else dt
        try:
            return _wrap(compute(operand(self, cdt), operand(other, cdt), cdt, *extra))
        except ValueError:
            raise broadcast_error(self, other) from None

    def meta(self, other, *extra):
        dt = _binary_dtype(self, other)
        if dtype_rule is not None:
            dt = _out_dtype_of_rule(dtype_rule, dt)
        return _meta(broadcast_shape(shape_of(self), shape_of(other)), dt, device=_dev(self, other))

    cpu.__qualname__ = cpu.__name__ = name.split(".")[0]
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    if inplace is not None:
        def cpu_(self, other, *extra):
            dt = _binary_dtype(self, other)
            cdt = dtype_rule(dt) if dtype_rule is not None else dt
            check_inplace(self, cdt, inplace)
            try:
                r = compute(operand(self, cdt), operand(other, cdt), cdt, *extra)
                np.copyto(self._np, r, casting="unsafe")
            except ValueError:
                raise _inplace_shape_error(self, other) from None
            return self

        def meta_(self, other, *extra):
            dt = _binary_dtype(self, other)
            check_inplace(self, dtype_rule(dt) if dtype_rule else dt, inplace)
            if broadcast_shape(self._size, shape_of(other)) != self._size:
                raise _inplace_shape_error(self, other)
            return self
        cpu_.__qualname__ = cpu_.__name__ = inplace.split(".")[0]
        impl(inplace, "CPU")(cpu_)
        impl(inplace, "Meta")(meta_)


def _out_dtype_of_rule(rule, dt):
    return rule(dt) if rule is not _bool_out else D.bool


def _dev(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x._device
    from .._device import meta
    return meta


def _bool_out(dt):
    return dt


def _float_out(dt):
    """Ops that always give a floating result: integers go to the default dtype."""
    return dt if (dt.is_floating_point or dt.is_complex) else D.get_default_dtype()


def _add(a, b, dt, alpha=1):
    if alpha != 1:
        _check_alpha(dt, alpha)
        b = np.multiply(b, alpha, dtype=dt._np) if dt is not D.bool else np.logical_and(b, alpha)
    return np.add(a, b, dtype=dt._np) if dt is not D.bool else np.logical_or(a, b)


def _sub(a, b, dt, alpha=1):
    if dt is D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if alpha != 1:
        _check_alpha(dt, alpha)
        b = np.multiply(b, alpha, dtype=dt._np)
    return np.subtract(a, b, dtype=dt._np)


def _check_alpha(dt, alpha):
    if not (dt.is_floating_point or dt.is_complex) and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _mul(a, b, dt):
    if dt is D.bool:
        return np.logical_and(a, b)
    return np.multiply(a, b, dtype=dt._np)


def _div(a, b, dt, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b, dtype=dt._np)
    if rounding_mode == "trunc":
        if dt.is_floating_point:
            return np.trunc(np.true_divide(a, b, dtype=dt._np))
        _check_int_zero_div(b)
        q = np.floor_divide(a, b, dtype=dt._np)
        r = np.remainder(a, b, dtype=dt._np)
        fix = (r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
        return np.add(q, fix, dtype=dt._np, casting="unsafe")
    if rounding_mode == "floor":
        if not dt.is_floating_point:
            _check_int_zero_div(b)
        return _floor_div(a, b, dt)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def _floor_div(a, b, dt):
    if dt.is_floating_point:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.floor_divide(a, b, dtype=dt._np)
    _check_int_zero_div(b)
    return np.floor_divide(a, b, dtype=dt._np)


def _check_int_zero_div(b):
    if np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _remainder(a, b, dt):
    if not dt.is_floating_point:
        _check_int_zero_div(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.remainder(a, b, dtype=dt._np)


def _pow(a, b, dt):
    if not (dt.is_floating_point or dt.is_complex) and np.any(np.asarray(b) < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.power(a, b, dtype=dt._np)


def _maximum(a, b, dt):
    return np.maximum(a, b, dtype=dt._np)


def _minimum(a, b, dt):
    return np.minimum(a, b, dtype=dt._np)


def _cmp(ufunc):
    def compute(a, b, dt):
        return ufunc(a, b)
    return compute


def _same(dt):
    return dt


def _logical(ufunc):
    def compute(a, b, dt):
        return ufunc(a, b)
    return compute


def _bitwise(ufunc):
    def compute(a, b, dt):
        if dt.is_floating_point or dt.is_complex:
            raise RuntimeError(f"\"{ufunc.__name__}_cpu\" not implemented for "
                               f"'{_scalar_type_name(dt)}'")
        return ufunc(a, b, dtype=dt._np)
    return compute


binary("add.Tensor", _add, inplace="add_.Tensor")
binary("sub.Tensor", _sub, inplace="sub_.Tensor")
binary("rsub.Tensor", lambda a, b, dt, alpha=1: _sub(b, a, dt, alpha))
binary("mul.Tensor", _mul, inplace="mul_.Tensor")
binary("div.Tensor_mode", _div, inplace="div_.Tensor_mode")
binary("floor_divide", _floor_div, inplace="floor_divide_.Tensor")
binary("remainder.Tensor", _remainder, inplace="remainder_.Tensor")
binary("pow.Tensor_Tensor", _pow, inplace="pow_.Tensor")
binary("maximum", _maximum)
binary("minimum", _minimum)
for _name, _uf in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    binary(f"{_name}.Tensor", _cmp(_uf), dtype_rule=_bool_out)
for _name, _uf in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)):
    binary(_name, _logical(_uf), dtype_rule=_bool_out)
for _name, _uf in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)):
    binary(f"{_name}.Tensor", _bitwise(_uf))


# true division of integers: the result is the default float, and the operands are cast first
def _div_dtype_fix():
    from .._dispatcher import lookup
    op = lookup("div.Tensor_mode")
    cpu = op._table["CPU"]

    def div(self, other, rounding_mode=None):
        if rounding_mode is None:
            dt = _float_out(_binary_dtype(self, other))
            try:
                return _wrap(np.true_divide(operand(self, dt), operand(other, dt), dtype=dt._np))
            except ValueError:
                raise broadcast_error(self, other) from None
        return cpu(self, other, rounding_mode)

    def div_meta(self, other, rounding_mode=None):
        dt = _binary_dtype(self, other)
        if rounding_mode is None:
            dt = _float_out(dt)
        return _meta(broadcast_shape(shape_of(self), shape_of(other)), dt, device=_dev(self, other))

    inplace = lookup("div_.Tensor_mode")
    cpu_ = inplace._table["CPU"]

    def div_(self, other, rounding_mode=None):
        if rounding_mode is None:
            dt = _float_out(_binary_dtype(self, other))
            check_inplace(self, dt, "div_")
            try:
                r = np.true_divide(operand(self, dt), operand(other, dt), dtype=dt._np)
                np.copyto(self._np, r, casting="unsafe")
            except ValueError:
                raise _inplace_shape_error(self, other) from None
            return self
        return cpu_(self, other, rounding_mode)
    impl(op, "CPU")(div)
    impl(op, "Meta")(div_meta)
    impl(inplace, "CPU")(div_)


_div_dtype_fix()


# ---- where, clamp -----------------------------------------------------------------------
@impl("where.self", "CPU")
def where(condition, self, other):
    dt = _binary_dtype(self, other)
    if condition.dtype is not D.bool and condition.dtype is not D.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_scalar_type_name(condition.dtype)}")
    try:
        return _wrap(np.where(condition._np, operand(self, dt), operand(other, dt))
                     .astype(dt._np, copy=False))
    except ValueError:
        raise RuntimeError(f"where: shapes {list(condition._size)}, {list(shape_of(self))} and "
                           f"{list(shape_of(other))} are not broadcastable") from None


@impl("where.self", "Meta")
def where_meta(condition, self, other):
    return _meta(broadcast_shape(condition._size, shape_of(self), shape_of(other)),
                 _binary_dtype(self, other), device=condition._device)


def _clamp_np(self, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = D.result_type_of([x for x in (self, lo, hi) if x is not None])
    a = operand(self, dt)
    if lo is not None:
        a = np.maximum(a, lo, dtype=dt._np)
    if hi is not None:
        a = np.minimum(a, hi, dtype=dt._np)
    if lo is not None and dt.is_floating_point:
        a = np.where(np.isnan(self._np), self._np, a) if np.isnan(self._np).any() else a
    return a, dt


@impl("clamp", "CPU")
def clamp(self, min=None, max=None):
    a, _ = _clamp_np(self, min, max)
    return _wrap(np.array(a, copy=True) if a is self._np else a)


@impl("clamp_", "CPU")
def clamp_(self, min=None, max=None):
    a, dt = _clamp_np(self, min, max)
    check_inplace(self, dt, "clamp_")
    np.copyto(self._np, a, casting="unsafe")
    return self


@impl("clamp", "Meta")
def clamp_meta(self, min=None, max=None):
    return _meta(self._size, D.result_type_of([x for x in (self, min, max) if x is not None]))


@impl("clamp_", "Meta")
def clamp_meta_(self, min=None, max=None):
    return self


# ---- unary kernels ----------------------------------------------------------------------------
def unary(name, compute, *, floating=False, inplace=None, bool_out=False):
    """Register CPU and Meta kernels of a unary op; `floating` ops turn integers into floats."""
    def out_dtype(dt):
        if bool_out:
            return D.bool
        if floating and not (dt.is_floating_point or dt.is_complex):
            return D.get_default_dtype()
        return dt

    def cpu(self, *extra):
        dt = out_dtype(self.dtype)
        a = self._np if dt is self.dtype or bool_out else self._np.astype(dt._np)
        with np.errstate(all="ignore"):
            return _wrap(np.asarray(compute(a, *extra)))

    def meta(self, *extra):
        return _meta(self._size, out_dtype(self.dtype), device=self._device)

    cpu.__qualname__ = cpu.__name__ = name
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    if inplace is not None:
        def cpu_(self, *extra):
            check_inplace(self, out_dtype(self.dtype), inplace)
            with np.errstate(all="ignore"):
                np.copyto(self._np, compute(self._np, *extra), casting="unsafe")
            return self
        cpu_.__qualname__ = cpu_.__name__ = inplace
        impl(inplace, "CPU")(cpu_)
        impl(inplace, "Meta")(lambda self, *extra: self)


def _neg(a):
    if a.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return np.negative(a)


def _abs(a):
    if a.dtype == np.bool_:
        return a.copy()
    return np.abs(a)


def _sign(a):
    if a.dtype == np.bool_:
        return a.copy()
    return np.sign(a)


def _rsqrt(a):
    return np.reciprocal(np.sqrt(a))


def _sigmoid(a):
    # exp(-|x|) never overflows; the two branches are the same function
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)


def _relu(a):
    if a.dtype == np.bool_:
        raise RuntimeError("\"clamp_min_cpu\" not implemented for 'Bool'")
    return np.maximum(a, 0, dtype=a.dtype)


def _gelu(a, approximate="none"):
    if approximate == "tanh":
        inner = np.float64(np.sqrt(2 / np.pi)) * (a + 0.044715 * a * a * a)
        return (0.5 * a * (1 + np.tanh(inner))).astype(a.dtype, copy=False)
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    from ._special import erf
    return (0.5 * a * (1 + erf(a * np.float64(1 / np.sqrt(2))))).astype(a.dtype, copy=False)


def _silu(a):
    return (a * _sigmoid(a)).astype(a.dtype, copy=False)


def _softplus(a, beta=1, threshold=20):
    z = a * beta
    out = np.where(z > threshold, a, np.log1p(np.exp(np.minimum(z, threshold))) / beta)
    return out.astype(a.dtype, copy=False)


unary("neg", _neg)
unary("abs", _abs)
unary("sign", _sign)
for _name, _fn in (("exp", np.exp), ("log", np.log), ("log1p", np.log1p), ("expm1", np.expm1),
                   ("sqrt", np.sqrt), ("rsqrt", _rsqrt), ("sin", np.sin), ("cos", np.cos),
                   ("tanh", np.tanh), ("sigmoid", _sigmoid)):
    unary(_name, _fn, floating=True)
unary("relu", _relu, inplace="relu_")
unary("gelu", _gelu)
unary("silu", _silu)
unary("softplus", _softplus)
unary("logical_not", np.logical_not, bool_out=True)
unary("bitwise_not", lambda a: np.invert(a) if a.dtype != np.bool_ or True else a)


# ---- backward helpers -------------------------------------------------------------------------
@impl("threshold_backward", "CPU")
def threshold_backward(grad_output, self, threshold):
    g = grad_output._np
    return _wrap(np.where(self._np <= threshold, np.zeros((), g.dtype), g))


@impl("sigmoid_backward", "CPU")
def sigmoid_backward(grad_output, output):
    y = output._np
    return _wrap((grad_output._np * (1 - y) * y).astype(y.dtype, copy=False))


@impl("tanh_backward", "CPU")
def tanh_backward(grad_output, output):
    y = output._np
    return _wrap((grad_output._np * (1 - y * y)).astype(y.dtype, copy=False))


@impl("gelu_backward", "CPU")
def gelu_backward(grad_output, self, approximate="none"):
    x = self._np.astype(np.float64)
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        inner = k * (x + 0.044715 * x ** 3)
        t = np.tanh(inner)
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    else:
        from ._special import erf
        d = 0.5 * (1 + erf(x / np.sqrt(2))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    return _wrap((grad_output._np * d).astype(self._np.dtype, copy=False))


for _name in ("threshold_backward", "sigmoid_backward", "tanh_backward", "gelu_backward"):
    impl(_name, "Meta")(lambda g, *rest: _meta(g._size, g.dtype, device=g._device))
