"""Elementwise kernels (CPU and Meta): binary arithmetic with broadcasting, comparisons, logical
and unary math.

CPU kernels take ember Tensors (or Python numbers) and compute on their `_np` arrays with NumPy
ufuncs. The result dtype is PyTorch's (`result_type`), not NumPy's: tensor operands are cast to
it first, and Python scalars stay Python scalars, which NumPy (NEP 50) treats as "weak" just as
PyTorch treats wrapped numbers. Meta kernels compute the same shape and dtype without data.

Two dtypes are involved in every kernel, as in PyTorch's TensorIterator:
- the *result* dtype: what the op returns (bool for comparisons, the default float for the
  true division of integers, otherwise the promoted dtype of the operands);
- the *math* dtype (PyTorch's `opmath_type`): float16 and bfloat16 are computed in float32 and
  rounded once at the end, the way PyTorch's CPU kernels load half values into float registers.
  This also keeps bfloat16 (an ml_dtypes user dtype with few NumPy loops) out of the ufuncs.
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import Tensor, _wrap, _meta

_binary_dtype = D.binary_dtype
_OPMATH = {D.float16: D.float32, D.bfloat16: D.float32}


def operand(x, dt):
    """The NumPy value of an operand, as dtype `dt` (Python scalars are left weak)."""
    if isinstance(x, Tensor):
        a = x._np
        return a if x.dtype is dt else a.astype(dt._np)
    if isinstance(x, bool) and dt is not D.bool:
        return int(x)
    return x


def _wrapped_operand(x, dt):
    """operand() for a Python int outside `dt`'s range: it wraps around, as a C cast does."""
    if isinstance(x, int) and not isinstance(x, bool) and not (dt.is_floating_point or
                                                                dt.is_complex):
        return np.array(x, dtype=np.int64).astype(dt._np)
    return operand(x, dt)


def as_result(r, dt):
    """A kernel's NumPy result as an array of dtype `dt` (ufuncs return scalars for 0-d)."""
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    return r if r.dtype == dt._np else r.astype(dt._np)


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


def not_implemented(kernel, dt):
    """PyTorch's error for a dtype a kernel was not compiled for (AT_DISPATCH's message)."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_type_name(dt)}'")


def _is_integral(dt):
    return not (dt.is_floating_point or dt.is_complex)


def _inplace_shape_error(self, other):
    return RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                        f"shape {list(broadcast_shape(self._size, shape_of(other)))}")


# ---- binary kernels -------------------------------------------------------------------------
def _bool_result(dt):
    return D.bool


def _float_result(dt):
    """Ops that always give a floating result: integers go to the default dtype."""
    return dt if (dt.is_floating_point or dt.is_complex) else D.get_default_dtype()


def _compute(compute, self, other, dt, rdt, extra):
    """compute(a, b, math_dtype, *extra) on the operands cast to dt's math dtype, as an array
    of the result dtype rdt (compute gives rdt itself unless it worked in float32)."""
    mdt = _OPMATH.get(dt)
    if mdt is not None:
        return as_result(compute(_reduced_operand(self, dt, mdt), _reduced_operand(other, dt, mdt),
                                 mdt, *extra), rdt)
    try:
        r = compute(operand(self, dt), operand(other, dt), dt, *extra)
    except OverflowError:
        r = compute(_wrapped_operand(self, dt), _wrapped_operand(other, dt), dt, *extra)
    return r if type(r) is np.ndarray else np.asarray(r)


def _math_operand(x, dt):
    """An operand as a NumPy value of dt's math dtype (see _reduced_operand)."""
    mdt = _OPMATH.get(dt)
    return operand(x, dt) if mdt is None else _reduced_operand(x, dt, mdt)


def _reduced_operand(x, dt, mdt):
    """An operand of a float16/bfloat16 op: rounded to dt (the common dtype every operand is
    cast to, a float64 zero-dim tensor or a Python float too), then widened to float32."""
    if isinstance(x, Tensor):
        a = x._np if x.dtype is dt else x._np.astype(dt._np)
    else:
        a = np.array(x, dtype=dt._np)
    return a.astype(mdt._np)


def binary(name, compute, *, operands=None, result=None, check=None, finish=None,
           inplace=None):
    """Register CPU and Meta kernels of a binary op (and of its in-place form `inplace`).

    operands(dt, *extra) is the dtype the operands are cast to, given their promoted dtype dt
    (true division casts integers to the default float), by default dt itself; result(dt) the
    dtype returned (comparisons return bool), by default the operands' dtype.
    compute(a, b, math_dtype, *extra) works on NumPy values and returns the result dtype (its
    ufuncs take dtype=math_dtype); check(self, other, dt, *extra) raises PyTorch's errors for
    inputs it refuses; finish(r, *extra) post-processes the result in the result dtype.
    """
    def dtypes(self, other, extra):
        dt = _binary_dtype(self, other)
        if operands is not None:
            dt = operands(dt, *extra)
        if check is not None:
            check(self, other, dt, *extra)
        return dt, (dt if result is None else result(dt))

    def cpu(self, other, *extra):
        # the hot path (a + b): no helper calls beyond what the common case needs
        dt = _binary_dtype(self, other)
        if operands is not None:
            dt = operands(dt, *extra)
        if check is not None:
            check(self, other, dt, *extra)
        try:
            if dt in _OPMATH:
                r = _compute(compute, self, other, dt, dt if result is None else result(dt),
                             extra)
            else:
                r = compute(operand(self, dt), operand(other, dt), dt, *extra)
                if type(r) is not np.ndarray:
                    r = np.asarray(r)
        except ValueError:
            raise broadcast_error(self, other) from None
        except OverflowError:  # a Python int outside dt's range: _compute wraps it around
            r = _compute(compute, self, other, dt, dt if result is None else result(dt), extra)
        return _wrap(r if finish is None else finish(r, *extra))

    def meta(self, other, *extra):
        rdt = dtypes(self, other, extra)[1]
        return _meta(broadcast_shape(shape_of(self), shape_of(other)), rdt,
                     device=_dev(self, other))

    cpu.__qualname__ = cpu.__name__ = name.split(".")[0]
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    if inplace is None:
        return

    def cpu_(self, other, *extra):
        dt, rdt = dtypes(self, other, extra)
        check_inplace(self, rdt, inplace)
        try:
            r = _compute(compute, self, other, dt, rdt, extra)
            np.copyto(self._np, r if finish is None else finish(r, *extra), casting="unsafe")
        except ValueError:
            raise _inplace_shape_error(self, other) from None
        return self

    def meta_(self, other, *extra):
        check_inplace(self, dtypes(self, other, extra)[1], inplace)
        if broadcast_shape(self._size, shape_of(other)) != self._size:
            raise _inplace_shape_error(self, other)
        return self
    cpu_.__qualname__ = cpu_.__name__ = inplace.split(".")[0]
    impl(inplace, "CPU")(cpu_)
    impl(inplace, "Meta")(meta_)


def _dev(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x._device
    from .._device import meta
    return meta


# -- the checks PyTorch makes before computing
def _check_alpha(dt, alpha):
    if isinstance(alpha, bool):
        if dt is not D.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and _is_integral(dt):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _check_sub(self, other, dt, alpha=1):
    a_bool = type(self) is bool or getattr(self, "dtype", None) is D.bool
    b_bool = type(other) is bool or getattr(other, "dtype", None) is D.bool
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _no_bool(kernel):
    def check(self, other, dt, *extra):
        if dt is D.bool:
            raise not_implemented(kernel, dt)
    return check


def _div_operands(dt, rounding_mode=None):
    """True division of integers gives the default float: the operands are cast to it first."""
    return _float_result(dt) if rounding_mode is None else dt


def _check_div(self, other, dt, rounding_mode=None):
    if rounding_mode is None:
        return
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    if dt is D.bool:
        raise not_implemented(f"div_{rounding_mode}_cpu", dt)


def _check_pow(self, exponent, dt):
    if dt is D.bool:
        raise not_implemented("pow", dt)
    # only a negative Python int exponent is refused; tensor exponents follow C's integer pow
    if isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0 and \
            isinstance(self, Tensor) and _is_integral(self.dtype):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _integral_only(kernel):
    def check(self, other, dt):
        if not _is_integral(dt):
            raise not_implemented(kernel, dt)
    return check


# -- the computations, on NumPy values already in the math dtype
def _add(a, b, dt, alpha=1):
    if alpha != 1 or type(alpha) is bool:
        _check_alpha(dt, alpha)
        b = np.logical_and(b, alpha) if dt is D.bool else np.multiply(b, alpha, dtype=dt._np)
    return np.logical_or(a, b) if dt is D.bool else np.add(a, b, dtype=dt._np)


def _sub(a, b, dt, alpha=1):
    if alpha != 1 or type(alpha) is bool:
        _check_alpha(dt, alpha)
        b = np.multiply(b, alpha, dtype=dt._np)
    return np.subtract(a, b, dtype=dt._np)


def _mul(a, b, dt):
    if dt is D.bool:
        return np.logical_and(a, b)
    return np.multiply(a, b, dtype=dt._np)


# Division and pow can divide by zero or leave their domain; PyTorch does so silently, so
# NumPy's floating-point warnings are turned off around them (only for floats: an integer
# division by zero is an error).
def _div(a, b, dt, rounding_mode=None):
    if not _is_integral(dt):
        with np.errstate(all="ignore"):
            if rounding_mode == "floor":
                return np.floor_divide(a, b, dtype=dt._np)
            # a "trunc" quotient is truncated by _div_finish, once rounded to its dtype
            return np.true_divide(a, b, dtype=dt._np)
    _check_int_zero_div(b)
    q = np.floor_divide(a, b, dtype=dt._np)
    if rounding_mode == "floor":
        return q
    # floor rounds a negative inexact quotient down; trunc rounds it towards zero
    inexact = np.multiply(q, b, dtype=dt._np) != a
    return np.add(q, inexact & ((np.asarray(a) < 0) != (np.asarray(b) < 0)), dtype=dt._np,
                  casting="unsafe")


def _div_finish(r, rounding_mode=None):
    """Trunc division of floats truncates the quotient after rounding it to the result dtype
    (PyTorch's float16/bfloat16 kernels do: a quotient just below an integer may round up)."""
    if rounding_mode == "trunc" and r.dtype.kind != "i" and r.dtype.kind != "u":
        return np.trunc(r)
    return r


def _check_int_zero_div(b):
    if np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _division(ufunc):
    """floor_divide, remainder: an integer division by zero is an error, a float one is not."""
    def compute(a, b, dt):
        if _is_integral(dt):
            _check_int_zero_div(b)
            return ufunc(a, b, dtype=dt._np)
        with np.errstate(all="ignore"):
            return ufunc(a, b, dtype=dt._np)
    compute.__name__ = ufunc.__name__
    return compute


_floor_divide = _division(np.floor_divide)
_remainder = _division(np.remainder)


def _pow(a, b, dt):
    if not _is_integral(dt):
        with np.errstate(all="ignore"):
            return np.power(a, b, dtype=dt._np)
    if not isinstance(b, np.ndarray) or not (b < 0).any():
        return np.power(a, b, dtype=dt._np)
    # C's integer pow: x ** -n is 1 for x == 1, +-1 for x == -1 and 0 (truncated) otherwise
    a = np.asarray(a)
    r = np.power(a, np.maximum(b, 0), dtype=dt._np)
    neg = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.where(b < 0, neg, r).astype(dt._np, copy=False)


def _ufunc(ufunc):
    def compute(a, b, dt):
        return ufunc(a, b)
    compute.__name__ = ufunc.__name__
    return compute


def _typed_ufunc(ufunc):
    def compute(a, b, dt):
        return ufunc(a, b, dtype=dt._np)
    compute.__name__ = ufunc.__name__
    return compute


binary("add.Tensor", _add, inplace="add_.Tensor")
binary("sub.Tensor", _sub, check=_check_sub, inplace="sub_.Tensor")
binary("rsub.Tensor", lambda a, b, dt, alpha=1: _sub(b, a, dt, alpha), check=_check_sub)
binary("mul.Tensor", _mul, inplace="mul_.Tensor")
binary("div.Tensor_mode", _div, operands=_div_operands, check=_check_div, finish=_div_finish,
       inplace="div_.Tensor_mode")
binary("floor_divide", _floor_divide, check=_no_bool("div_floor_cpu"),
       inplace="floor_divide_.Tensor")
binary("remainder.Tensor", _remainder, check=_no_bool("remainder_cpu"),
       inplace="remainder_.Tensor")
binary("remainder.Scalar_Tensor", _remainder, check=_no_bool("remainder_cpu"))
binary("pow.Tensor_Tensor", _pow, check=_check_pow, inplace="pow_.Tensor")
binary("maximum", _typed_ufunc(np.maximum))
binary("minimum", _typed_ufunc(np.minimum))
for _name, _uf in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    binary(f"{_name}.Tensor", _ufunc(_uf), result=_bool_result)
for _name, _uf in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)):
    binary(_name, _ufunc(_uf), result=_bool_result)
for _name, _uf in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)):
    binary(f"{_name}.Tensor", _typed_ufunc(_uf), check=_integral_only(f"{_name}_cpu"))


# ---- where, clamp -----------------------------------------------------------------------
def _as_array(x, dt):
    """A NumPy array of dtype dt for a tensor or a Python scalar (no ufunc math involved)."""
    if isinstance(x, Tensor):
        return x._np if x.dtype is dt else x._np.astype(dt._np)
    return np.array(x).astype(dt._np)


@impl("where.self", "CPU")
def where(condition, self, other):
    dt = _binary_dtype(self, other)
    if condition.dtype is not D.bool and condition.dtype is not D.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_scalar_type_name(condition.dtype)}")
    try:
        return _wrap(as_result(np.where(condition._np, _as_array(self, dt), _as_array(other, dt)),
                               dt))
    except ValueError:
        raise RuntimeError(f"where: shapes {list(condition._size)}, {list(shape_of(self))} and "
                           f"{list(shape_of(other))} are not broadcastable") from None


@impl("where.self", "Meta")
def where_meta(condition, self, other):
    return _meta(broadcast_shape(condition._size, shape_of(self), shape_of(other)),
                 _binary_dtype(self, other), device=condition._device)


def _clamp_dtype(self, lo, hi, name):
    if lo is None and hi is None:
        raise RuntimeError(f"torch.{name}: At least one of 'min' or 'max' must not be None")
    return D.result_type_of([x for x in (self, lo, hi) if x is not None])


def _clamp_np(self, lo, hi, dt):
    """min(max(x, lo), hi): lo > hi gives hi; np.maximum/minimum propagate NaN as clamp does."""
    mdt = _OPMATH.get(dt, dt)
    a = _math_operand(self, dt)
    if lo is not None:
        a = np.maximum(a, _math_operand(lo, dt), dtype=mdt._np)
    if hi is not None:
        a = np.minimum(a, _math_operand(hi, dt), dtype=mdt._np)
    return a


def _clamp_kernels(name, kernels, bool_one_bound):
    """clamp with scalar bounds, or with tensor bounds (which broadcast; with one bound that
    is max/min, which bool supports). kernels: the names PyTorch reports for a refused dtype,
    with both bounds, only min, only max."""
    def dtype(self, lo, hi, name="clamp"):
        dt = _clamp_dtype(self, lo, hi, name)
        if dt is D.bool and not (bool_one_bound and (lo is None or hi is None)):
            both, only_min, only_max = kernels
            raise not_implemented(both if lo is not None and hi is not None else
                                  only_min if lo is not None else only_max, dt)
        return dt

    def cpu(self, min=None, max=None):
        dt = dtype(self, min, max)
        broadcast_shape(self._size, shape_of(min), shape_of(max))
        return _wrap(as_result(_clamp_np(self, min, max, dt), dt))

    def cpu_(self, min=None, max=None):
        dt = _clamp_dtype(self, min, max, "clamp_")
        check_inplace(self, dt, "clamp_")
        dtype(self, min, max, "clamp_")
        shape = broadcast_shape(self._size, shape_of(min), shape_of(max))
        if shape != self._size:
            raise RuntimeError(f"output with shape {list(self._size)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        np.copyto(self._np, _clamp_np(self, min, max, dt), casting="unsafe")
        return self

    def meta(self, min=None, max=None):
        return _meta(broadcast_shape(self._size, shape_of(min), shape_of(max)),
                     dtype(self, min, max), device=self._device)

    def meta_(self, min=None, max=None):
        check_inplace(self, _clamp_dtype(self, min, max, "clamp_"), "clamp_")
        dtype(self, min, max, "clamp_")
        return self
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    inplace = name.replace("clamp", "clamp_", 1)
    impl(inplace, "CPU")(cpu_)
    impl(inplace, "Meta")(meta_)


_clamp_kernels("clamp", ("clamp_scalar_cpu", "clamp_min_scalar_cpu", "clamp_max_scalar_cpu"),
               bool_one_bound=False)
_clamp_kernels("clamp.Tensor", ("clamp_cpu", "clamp_min_cpu", "clamp_max_cpu"),
               bool_one_bound=True)


# ---- unary kernels ----------------------------------------------------------------------------
def unary(name, compute, *, result=None, check=None, quiet=False, inplace=None):
    """Register CPU and Meta kernels of a unary op (and of its in-place form `inplace`).

    result(dt) is the dtype returned for an input of dtype dt, by default dt itself
    (`_float_result` for math functions, which turn integers into floats); compute(a, *extra)
    works on the input as a NumPy array of the result's math dtype; check(dt) raises for
    dtypes PyTorch refuses. quiet: the op can overflow or leave its domain (exp, log, ...),
    which PyTorch does silently, so NumPy's floating-point warnings are turned off around it
    (np.errstate costs more than a small op, so only where needed).
    """
    def result_dtype(dt):
        if check is not None:
            check(dt)
        return dt if result is None else result(dt)

    def run(self, dt, extra):
        a = self._np
        if dt in _OPMATH:
            a = a.astype(np.float32)
        elif self.dtype is not dt:
            a = a.astype(dt._np)
        if quiet:
            with np.errstate(all="ignore"):
                return compute(a, *extra)
        return compute(a, *extra)

    def cpu(self, *extra):
        dt = result_dtype(self.dtype)
        r = run(self, dt, extra)
        if type(r) is not np.ndarray or dt in _OPMATH:
            r = as_result(r, dt)
        return _wrap(r)

    def meta(self, *extra):
        return _meta(self._size, result_dtype(self.dtype), device=self._device)

    cpu.__qualname__ = cpu.__name__ = name
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    if inplace is None:
        return

    def cpu_(self, *extra):
        dt = result_dtype(self.dtype)
        check_inplace(self, dt, inplace)
        np.copyto(self._np, run(self, dt, extra), casting="unsafe")
        return self

    def meta_(self, *extra):
        check_inplace(self, result_dtype(self.dtype), inplace)
        return self
    cpu_.__qualname__ = cpu_.__name__ = inplace
    impl(inplace, "CPU")(cpu_)
    impl(inplace, "Meta")(meta_)


def _floating_only(kernel):
    def check(dt):
        if not (dt.is_floating_point or dt.is_complex):
            raise not_implemented(kernel, dt)
    return check


def _check_neg(dt):
    if dt is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _check_abs(dt):
    if dt is D.bool:
        raise not_implemented("abs_cpu", dt)


def _check_relu(dt):
    if dt is D.bool:
        raise RuntimeError("Boolean inputs not supported for relu")


def _check_bitwise_not(dt):
    if not _is_integral(dt):
        raise not_implemented("bitwise_not_cpu", dt)


def _sign(a):
    if a.dtype == np.bool_:
        return a.copy()
    # PyTorch's sign is (0 < x) - (x < 0): NaN has sign 0
    return np.subtract(a > 0, a < 0, dtype=a.dtype)


def _rsqrt(a):
    return np.reciprocal(np.sqrt(a))


def _sigmoid(a):
    # exp(-|x|) never overflows; the two branches are the same function
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


def _relu(a):
    return np.maximum(a, 0, dtype=a.dtype)


def _gelu(a, approximate="none"):
    if approximate == "tanh":
        inner = np.sqrt(2 / np.pi, dtype=a.dtype) * (a + a.dtype.type(0.044715) * a * a * a)
        return 0.5 * a * (1 + np.tanh(inner))
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    from ._special import erf
    return 0.5 * a * (1 + erf(a * a.dtype.type(1 / np.sqrt(2))))


def _silu(a):
    return a * _sigmoid(a)


def _softplus(a, beta=1, threshold=20):
    z = a * beta
    return np.where(z > threshold, a, np.log1p(np.exp(np.minimum(z, threshold))) / beta)


unary("neg", np.negative, check=_check_neg)
unary("abs", np.abs, check=_check_abs)
unary("sign", _sign)
for _name, _fn in (("exp", np.exp), ("log", np.log), ("log1p", np.log1p), ("expm1", np.expm1),
                   ("sqrt", np.sqrt), ("rsqrt", _rsqrt), ("sin", np.sin), ("cos", np.cos)):
    unary(_name, _fn, result=_float_result, quiet=True)
unary("tanh", np.tanh, result=_float_result)
unary("sigmoid", _sigmoid, result=_float_result)
unary("relu", _relu, check=_check_relu, inplace="relu_")
unary("gelu", _gelu, check=_floating_only("GeluKernelImpl"), quiet=True)
unary("silu", _silu, check=_floating_only("silu_cpu"))
unary("softplus", _softplus, check=_floating_only("softplus_cpu"), quiet=True)
unary("logical_not", np.logical_not, result=_bool_result)
unary("bitwise_not", np.invert, check=_check_bitwise_not)


# ---- backward helpers -------------------------------------------------------------------------
# Each computes in the math dtype of grad_output and rounds once, like the forward kernels.
def _backward_kernel(name, compute):
    def cpu(grad_output, *rest):
        dt = grad_output.dtype
        mdt = _OPMATH.get(dt, dt)
        arrays = [x._np.astype(mdt._np, copy=False) if isinstance(x, Tensor) else x
                  for x in (grad_output,) + rest]
        with np.errstate(all="ignore"):
            return _wrap(as_result(compute(*arrays), dt))
    cpu.__qualname__ = cpu.__name__ = name
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(lambda g, *rest: _meta(g._size, g.dtype, device=g._device))


def _threshold_backward(g, x, threshold):
    return np.where(x <= threshold, np.zeros((), g.dtype), g)


def _gelu_backward(g, x, approximate="none"):
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi, dtype=x.dtype)
        c = x.dtype.type(0.044715)
        t = np.tanh(k * (x + c * x * x * x))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))
    from ._special import erf
    cdf = 0.5 * (1 + erf(x * x.dtype.type(1 / np.sqrt(2))))
    pdf = np.exp(-0.5 * x * x) * x.dtype.type(1 / np.sqrt(2 * np.pi))
    return g * (cdf + x * pdf)


_backward_kernel("threshold_backward", _threshold_backward)
_backward_kernel("sigmoid_backward", lambda g, y: g * (1 - y) * y)
_backward_kernel("tanh_backward", lambda g, y: g * (1 - y * y))
_backward_kernel("gelu_backward", _gelu_backward)
