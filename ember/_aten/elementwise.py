"""Elementwise kernels (CPU and Meta): binary arithmetic with broadcasting, comparisons, logical
and bitwise ops and shifts, unary math (trigonometric, special functions through `_special`,
rounding, predicates), the ternary lerp/addcmul/addcdiv, and the activations.

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
  complex32 is computed in complex64 (NumPy has no complex32: ember/_core/complex32.py), for
  the few ops PyTorch has a ComplexHalf kernel of (`COMPLEX32_OPS`); the others raise its error.
"""
import functools
import math

import numpy as np

from .._core import dtype as D
from .._core.float8 import to_float8
from .._core import complex32 as _c32
from .._dispatch.dispatcher import impl
from .._core.tensor import Tensor, _wrap, _wrap_external, _meta, _wrap_dim
from .._core.memory_format import empty_like_array
from .tensor_iterator import laid_out, laid_out_as, meta_strides, preserve_strides, \
    wrap_laid_out
from .._core import caching_allocator
from . import _parallel
from ._parallel import parallel_for

_binary_dtype = D.binary_dtype
_OPMATH = {D.float16: D.float32, D.bfloat16: D.float32, D.complex32: D.complex64}
# the elementwise ops PyTorch's CPU build has a ComplexHalf kernel of; a kernel PyTorch
# names otherwise than "<op>_cpu" says its name
COMPLEX32_OPS = frozenset(("add", "sub", "rsub", "mul", "eq", "ne", "neg", "abs", "sgn",
                           "conj_physical", "isnan"))
_COMPLEX32_KERNELS = {"div": "div_cpu", "pow": "pow", "nan_to_num": "nan_to_num", "exp": "exp_vml_cpu",
                      "log": "log_vml_cpu", "sqrt": "sqrt_vml_cpu", "tanh": "tanh_vml_cpu",
                      **{n: n + "_vml_cpu" for n in ("sin", "cos", "tan", "asin", "acos", "atan",
                                                     "sinh", "cosh", "asinh", "acosh", "atanh",
                                                     "log10", "log2", "log1p", "expm1")}}


def check_complex32(name):
    """PyTorch's error for an elementwise op without a ComplexHalf kernel (called where a
    kernel has branched to its opmath dtypes already)."""
    if name not in COMPLEX32_OPS:
        raise not_implemented(_COMPLEX32_KERNELS.get(name, name + "_cpu"), D.complex32)


def operand(x, dt):
    """The NumPy value of an operand, as dtype `dt` (Python scalars are left weak)."""
    if isinstance(x, Tensor):
        a = x._np
        if x.dtype is dt:
            return a
        if x.dtype is D.complex32 or dt is D.complex32:  # (no NumPy casts to or from it)
            return _c32.astype(a, dt._np)
        return a.astype(dt._np)
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
    if r.dtype == dt._np:
        return r
    if dt._kind is None:
        return r.astype(dt._np)
    return _c32.narrow(r) if dt is D.complex32 else to_float8(r, dt)


def _reraise_unless_shape_error(a, b):
    """Inside `except ValueError`: re-raise it unless NumPy failed to broadcast the operands.
    Reading an UninitializedParameter's data raises ValueError as well, and that one must
    reach the user as it is."""
    if getattr(a, "_is_uninitialized", False) or getattr(b, "_is_uninitialized", False):
        raise


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
    for i in range(-1, -n - 1, -1):  # the last dim first, so a mismatch names the one PyTorch does
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
    return tuple(reversed(out))


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


_scalar_type_name = D.scalar_type_name

# the ops whose CPU kernels are TensorIterator loops (the helpers below add them): given a sparse
# compressed tensor, PyTorch's refuse it by its layout ("unsupported tensor layout: SparseCsr")
TENSOR_ITERATOR_OPS = set()


def not_implemented(kernel, dt):
    """PyTorch's error for a dtype a kernel was not compiled for (AT_DISPATCH's message)."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_type_name(dt)}'")


def _is_integral(dt):
    return not (dt.is_floating_point or dt.is_complex)


def _check_inplace_broadcast(self, *others):
    """The operands of an in-place op must broadcast to the shape of `self`, which it keeps."""
    shape = broadcast_shape(self._size, *(shape_of(o) for o in others))
    if shape != self._size:
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the "
                           f"broadcast shape {list(shape)}")


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


def _compute_scalar_other(compute, self, other, dt, rdt, extra, finish):
    """PyTorch's CPU mul and div kernels (div's floor and trunc modes too) on float16/bfloat16,
    when `other` is one value of another dtype (a Python number or a zero-dim tensor: a "CPU
    scalar"), read it at its own precision into float32 (TensorIterator's
    original_scalar_value) instead of rounding it to dt first, and finish the quotient in
    float32 before rounding: `half_x / 1e5` is not `half_x / inf`. None for any other operand."""
    if type(other) is Tensor:
        if other.ndim or other.dtype is dt:
            return None
        b = other._np
    elif type(other) in (int, float, bool):
        b = other
    else:
        return None
    mdt = _OPMATH[dt]
    r = np.asarray(compute(_reduced_operand(self, dt, mdt), np.array(b, dtype=mdt._np), mdt,
                           *extra))
    return as_result(r if finish is None else finish(r, *extra), rdt)


def _math_operand(x, dt):
    """An operand as a NumPy value of dt's math dtype (see _reduced_operand)."""
    mdt = _OPMATH.get(dt)
    return operand(x, dt) if mdt is None else _reduced_operand(x, dt, mdt)


def _reduced_operand(x, dt, mdt):
    """An operand of a float16/bfloat16 op: rounded to dt (the common dtype every operand is
    cast to, a float64 zero-dim tensor or a Python float too), then widened to float32."""
    if dt is D.complex32:   # (NumPy has no casts to or from it)
        return _c32.widen(_c32.narrow(x._np if isinstance(x, Tensor) else x))
    if isinstance(x, Tensor):
        a = x._np if x.dtype is dt else x._np.astype(dt._np)
    else:
        a = np.array(x, dtype=dt._np)
    return a.astype(mdt._np)


def binary(name, compute, *, operands=None, result=None, check=None, finish=None,
           inplace=None, ufunc=None, scalar_operand=True, scalar_other_at_opmath=False,
           alpha=False, with_dtype=False):
    """Register CPU and Meta kernels of a binary op (and of its in-place form `inplace`).

    operands(dt, *extra) is the dtype the operands are cast to, given their promoted dtype dt
    (true division casts integers to the default float), by default dt itself; result(dt) the
    dtype returned (comparisons return bool), by default the operands' dtype.
    compute(a, b, math_dtype, *extra) works on NumPy values and returns the result dtype (its
    ufuncs take dtype=math_dtype); check(self, other, dt, *extra) raises PyTorch's errors for
    inputs it refuses; finish(r, *extra) post-processes the result in the result dtype.
    ufunc (add, sub, mul) is the NumPy ufunc that computes the op when its extra argument is
    the default 1 and the dtype needs no math dtype: the result is then written straight into
    an allocator block (`out=`) instead of being copied there.
    scalar_operand: a Python number operand is one of PyTorch's TensorIterator (a wrapped
    number, which the output layout rule counts), not a Scalar argument of the op (see
    _scalar_arg_layout).
    scalar_other_at_opmath: a float16/bfloat16 op reads a scalar `other` in float32 (see
    _compute_scalar_other). alpha: the op's extra argument is add's `alpha`, which a
    float16/bfloat16 op reads in its own dtype (rounded, and refused if out of its range).
    with_dtype: compute also gets the operands' dtype, as `dtype=` (when it is not the math
    dtype, float16 and bfloat16 kernels may still differ in PyTorch).
    """
    op_name = name.split(".")[0]
    plain = compute
    plain_ufunc = ufunc is not None and operands is None and check is None and finish is None

    def dtypes(self, other, extra):
        dt = _binary_dtype(self, other)
        if operands is not None:
            dt = operands(dt, *extra)
        if check is not None:
            check(self, other, dt, *extra)
        return dt, (dt if result is None else result(dt))

    def cpu(self, other, *extra):
        # the hot path (a + b): no helper calls beyond what the common case needs
        if type(other) is Tensor and type(self) is Tensor and self.dtype is other.dtype:
            dt = self.dtype
            if plain_ufunc and len(shape := self._size) < 2 and shape == other._size and \
                    dt in _UFUNC_OUT and (not extra or extra[0].__class__ is int and
                                          extra[0] == 1) and caching_allocator.enabled:
                # two vectors alike (the loops of small steps): straight into a block, the
                # 1-d case of _into_block written out (through it, a + b took 25.1k
                # instructions against 20.8k: the call, NumPy's shape tuples, `out=`)
                n = shape[0] if shape else 1
                if 0 < n < _parallel.MIN_ELEMENTS:
                    out = caching_allocator.cpu_allocator.array(n * dt.itemsize, dt._np, shape)
                    ufunc(self._np, other._np, out)
                    return _wrap_external(out, dt, shape)
        else:
            dt = _binary_dtype(self, other)
        if operands is not None:
            dt = operands(dt, *extra)
        if check is not None:
            check(self, other, dt, *extra)
        if ufunc is not None and dt in _UFUNC_OUT and caching_allocator.enabled and (
                not extra or type(extra[0]) is int and extra[0] == 1):
            out = _into_block(ufunc, self, other, dt)
            if out is not None:
                return _wrap_external(out, dt)
        compute = plain if not with_dtype else functools.partial(plain, dtype=dt)
        try:
            if dt in _OPMATH:
                if dt is D.complex32:
                    check_complex32(op_name)
                if alpha and extra:
                    extra = (_alpha_in(dt, extra[0]),)
                rdt = dt if result is None else result(dt)
                r = None if not scalar_other_at_opmath else \
                    _compute_scalar_other(compute, self, other, dt, rdt, extra, finish)
                if r is None:
                    r = _compute(compute, self, other, dt, rdt, extra)
            else:
                r = compute(operand(self, dt), operand(other, dt), dt, *extra)
                if type(r) is not np.ndarray:
                    r = np.asarray(r)
        except ValueError:
            _reraise_unless_shape_error(self, other)
            raise broadcast_error(self, other) from None
        except OverflowError:  # a Python int outside dt's range: _compute wraps it around
            r = _compute(compute, self, other, dt, dt if result is None else result(dt), extra)
        if finish is not None:
            r = finish(r, *extra)
        if r.ndim > 1:  # the output's layout follows the operands' (tensor_iterator.py)
            if scalar_operand:
                return wrap_laid_out(r, self, other)
            r = _scalar_arg_layout(r, self, other)
        return _wrap(r)

    def meta(self, other, *extra):
        rdt = dtypes(self, other, extra)[1]
        shape = broadcast_shape(shape_of(self), shape_of(other))
        st = meta_strides(shape, self, other) if scalar_operand else \
            None if not isinstance(self, Tensor) else meta_strides(shape, *_operands(self, other))
        return _meta(shape, rdt, st, device=_dev(self, other))

    cpu.__qualname__ = cpu.__name__ = name.split(".")[0]
    impl(name, "CPU")(cpu)
    TENSOR_ITERATOR_OPS.add(name)
    impl(name, "Meta")(meta)
    if inplace is None:
        return

    def cpu_(self, other, *extra):
        dt, rdt = dtypes(self, other, extra)
        check_inplace(self, rdt, inplace)
        compute = plain if not with_dtype else functools.partial(plain, dtype=dt)
        try:
            if ufunc is not None and dt is self.dtype and dt in _UFUNC_OUT and (
                    not extra or type(extra[0]) is int and extra[0] == 1):
                # written straight into self (`p.grad += g`): no result array to copy back
                b = other._np if type(other) is Tensor and other.dtype is dt else \
                    operand(other, dt)
                try:
                    ufunc(self._np, b, out=self._np)
                    return self
                except (OverflowError, TypeError):  # a Python int outside dt's range
                    pass
            if dt in _OPMATH:
                if dt is D.complex32:
                    check_complex32(op_name)
                if alpha and extra:
                    extra = (_alpha_in(dt, extra[0]),)
            r = None if dt not in _OPMATH or not scalar_other_at_opmath else \
                _compute_scalar_other(compute, self, other, dt, rdt, extra, finish)
            if r is None:
                r = _compute(compute, self, other, dt, rdt, extra)
            _c32.copyto(self._np, r if finish is None else finish(r, *extra))
        except ValueError:
            _reraise_unless_shape_error(self, other)
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


# the dtypes whose ufunc loops compute in the result dtype itself (see _OPMATH) and are not bool
_UFUNC_OUT = frozenset(d for d in D.all_dtypes
                       if d._np is not None and d is not D.bool and d not in _OPMATH)


def _into_block(ufunc, self, other, dt):
    """ufunc(self, other) written into a new allocator block, when the operands need no
    broadcasting and are laid out in C order (else None: the general path keeps the operands'
    layout, as PyTorch's TensorIterator does)."""
    if type(other) is Tensor and type(self) is Tensor and other._size == self._size and \
            self.dtype is dt and other.dtype is dt:  # two tensors alike: the commonest case
        shape = self._size
        a = self._np
        b = other._np
        if len(shape) > 1 and not (a.flags.c_contiguous and b.flags.c_contiguous):
            return None
    else:
        a = self._np if type(self) is Tensor and self.dtype is dt else operand(self, dt)
        b = other._np if type(other) is Tensor and other.dtype is dt else operand(other, dt)
        if type(a) is not np.ndarray:
            return None
        shape = a.shape
        if type(b) is np.ndarray:
            if b.shape != shape or len(shape) > 1 and not (a.flags.c_contiguous and
                                                           b.flags.c_contiguous):
                return None
        elif len(shape) > 1 and not a.flags.c_contiguous:
            return None
    nbytes = a.nbytes
    if not nbytes:
        return None
    out = caching_allocator.cpu_allocator.array(nbytes, a.dtype, shape)
    if len(shape) > 1 and (a.strides != out.strides or type(b) is np.ndarray and
                           b.strides != out.strides):
        return None  # C order, but odd strides on size-1 dims: the layout rule decides
    try:
        if a.size < _parallel.MIN_ELEMENTS:
            return ufunc(a, b, out=out)
        if type(b) is np.ndarray:   # big: shared over the intra-op threads
            parallel_for(lambda i: ufunc(a[i], b[i], out=out[i]), shape, a.size)
        else:
            parallel_for(lambda i: ufunc(a[i], b, out=out[i]), shape, a.size)
        return out
    except (OverflowError, TypeError):  # a Python int outside dt's range, or an odd scalar
        return None


def _scalar_arg_layout(r, self, other):
    """The layout of pow's result, whose Python-number operand is a Scalar argument: `x ** 2`
    is unary (the layout of x), `2 ** x` is written into an output first resized to a
    contiguous one."""
    if isinstance(self, Tensor):
        return laid_out(r, *_operands(self, other))
    return laid_out_as(r, None)


def _dev(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x._device
    from .._core.device import meta
    return meta


# -- the checks PyTorch makes before computing
def _check_alpha(dt, alpha):
    if isinstance(alpha, bool):
        if dt is not D.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, (float, complex)) and _is_integral(dt):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    elif isinstance(alpha, complex) and not dt.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")


def _alpha_in(dt, alpha):
    """add's alpha as a float16/bfloat16 kernel reads it: rounded to dt (c10's checked
    `alpha.to<scalar_t>()`, which refuses a value out of dt's range)."""
    if type(alpha) is bool or (type(alpha) is int and alpha == 1) or dt is D.complex32:
        return alpha
    from .factory import checked_scalar   # (factory imports this module)
    return float(np.asarray(checked_scalar(alpha, dt), dtype=dt._np))


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
    if alpha != 1 or type(alpha) is not int:   # (alpha=1.0 or True is checked too)
        _check_alpha(dt, alpha)
        b = np.logical_and(b, alpha) if dt is D.bool else np.multiply(b, alpha, dtype=dt._np)
    return np.logical_or(a, b) if dt is D.bool else np.add(a, b, dtype=dt._np)


def _sub(a, b, dt, alpha=1):
    if alpha != 1 or type(alpha) is not int:
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
_int_remainder = _division(np.remainder)


def _remainder(a, b, dt):
    """Python's modulus; for floats PyTorch's fmod-then-fix, so a zero result keeps the
    dividend's sign (NumPy's remainder gives it the divisor's)."""
    if _is_integral(dt):
        return _int_remainder(a, b, dt)
    with np.errstate(all="ignore"):
        r = np.asarray(np.remainder(a, b, dtype=dt._np))
        np.copysign(r, a, out=r, where=(r == 0))  # -3.0 % 3 is -0.0, 0.0 % -1 is 0.0
        return r


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


def _comparison(ufunc):
    """A comparison: a Python int operand is cast to the integral common dtype first, so one
    outside its range wraps around as in PyTorch (`uint8_tensor > -1` compares with 255)."""
    def compute(a, b, dt):  # (0..127 fits every integral dtype: the common case skips this)
        if type(b) is int and not 0 <= b <= 127 and _is_integral(dt):
            b = _wrapped_operand(b, dt)
        elif type(a) is int and not 0 <= a <= 127 and _is_integral(dt):
            a = _wrapped_operand(a, dt)
        return ufunc(a, b)
    compute.__name__ = ufunc.__name__
    return compute


def _typed_ufunc(ufunc):
    def compute(a, b, dt):
        return ufunc(a, b, dtype=dt._np)
    compute.__name__ = ufunc.__name__
    return compute


binary("add.Tensor", _add, inplace="add_.Tensor", ufunc=np.add, alpha=True)
binary("sub.Tensor", _sub, check=_check_sub, inplace="sub_.Tensor", ufunc=np.subtract, alpha=True)
binary("rsub.Tensor", lambda a, b, dt, alpha=1: _sub(b, a, dt, alpha), check=_check_sub,
       alpha=True)
binary("mul.Tensor", _mul, inplace="mul_.Tensor", ufunc=np.multiply,
       scalar_other_at_opmath=True)
binary("div.Tensor_mode", _div, operands=_div_operands, check=_check_div, finish=_div_finish,
       inplace="div_.Tensor_mode", scalar_other_at_opmath=True)
binary("floor_divide", _floor_divide, check=_no_bool("div_floor_cpu"),
       inplace="floor_divide_.Tensor", scalar_other_at_opmath=True)
binary("remainder.Tensor", _remainder, check=_no_bool("remainder_cpu"),
       inplace="remainder_.Tensor")
binary("remainder.Scalar_Tensor", _remainder, check=_no_bool("remainder_cpu"))
binary("pow.Tensor_Tensor", _pow, check=_check_pow, inplace="pow_.Tensor",
       scalar_operand=False)  # `x ** 2` is PyTorch's unary pow.Tensor_Scalar
binary("maximum", _typed_ufunc(np.maximum))
binary("minimum", _typed_ufunc(np.minimum))
for _name, _uf in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    binary(f"{_name}.Tensor", _comparison(_uf), result=_bool_result)
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
        return x._np if x.dtype is dt else _c32.astype(x._np, dt._np)
    from .factory import wrapped_scalar  # a number out of dt's range raises, as in PyTorch
    return wrapped_scalar(x, dt)


@impl("where.self", "CPU")
def where(condition, self, other):
    dt = _binary_dtype(self, other)
    if condition.dtype is not D.bool and condition.dtype is not D.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_scalar_type_name(condition.dtype)}")
    try:
        r = as_result(np.where(condition._np, _as_array(self, dt), _as_array(other, dt)), dt)
        return wrap_laid_out(r, condition, self, other)
    except ValueError:  # PyTorch's message, naming the dim where the shapes disagree
        broadcast_shape(condition._size, shape_of(self), shape_of(other))
        raise


@impl("where.self", "Meta")
def where_meta(condition, self, other):
    shape = broadcast_shape(condition._size, shape_of(self), shape_of(other))
    return _meta(shape, _binary_dtype(self, other), meta_strides(shape, condition, self, other),
                 device=condition._device)


def _clamp_dtype(self, lo, hi, name):
    if lo is None and hi is None:
        raise RuntimeError(f"torch.{name}: At least one of 'min' or 'max' must not be None")
    return D.result_type_of([x for x in (self, lo, hi) if x is not None])


# Note [Ties in clamp and relu]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# 0.0 and -0.0 compare equal, so which one clamp returns is the kernel's choice. PyTorch's
# clamp with number bounds (and relu, clamp_min(x, 0); hardtanh; relu6) keeps x: its scalar
# loop is `x < lo ? lo : x` and its vector loop _mm_max_ps(lo, x), which returns the second
# operand on a tie; so relu(-0.0) is -0.0. With tensor bounds (clamp.Tensor) its vector loop
# is maximum(x, lo), which returns the bound on a tie (its scalar loop, left for the last few
# elements of a contiguous run, x: ember follows the vector loop there). NumPy's float32 and
# float64 maximum and minimum also return their second operand on a tie (float16 arrays, whose
# loops return the first, never get here: they are computed in float32), and propagate NaN as
# clamp does, from x or from a bound. So `clip` puts a number bound first.
def clip(a, lo, hi, out=None, dtype=None):
    """min(max(x, lo), hi) with number bounds (either may be None): lo > hi gives hi, NaN
    anywhere NaN, and x where it equals a bound (Note [Ties in clamp and relu])."""
    if lo is not None:
        a = np.maximum(lo, a, out=out, dtype=dtype)
    if hi is not None:
        a = np.minimum(hi, a, out=out, dtype=dtype)
    return a


def _clamp_np(self, lo, hi, dt):
    """clamp in dt's math dtype; tensor bounds win ties (Note [Ties in clamp and relu])."""
    mdt = _OPMATH.get(dt, dt)
    a = _math_operand(self, dt)
    tensor_bounds = isinstance(lo, Tensor) or isinstance(hi, Tensor)
    lo, hi = (None if b is None else _math_operand(_clamp_bound(b, dt), dt) for b in (lo, hi))
    if tensor_bounds:
        if lo is not None:
            a = np.maximum(a, lo, dtype=mdt._np)
        return a if hi is None else np.minimum(a, hi, dtype=mdt._np)
    return clip(a, lo, hi, dtype=mdt._np)


def _clamp_bound(bound, dt):
    """A number bound as the kernel's scalar_t (c10's checked_convert): out of dt's range it
    raises, and a negative int wraps into uint8 (`clamp(uint8_t, -1, 0)` bounds by 255, 0)."""
    if isinstance(bound, Tensor):
        return bound
    from .factory import checked_scalar   # (factory imports this module)
    return checked_scalar(bound, dt)


def _operands(*xs):
    """The tensors among an op's arguments: TensorIterator's inputs when the others are Scalar
    arguments of the op (clamp's number bounds) rather than wrapped-number operands."""
    return [x for x in xs if isinstance(x, Tensor)]


def _clamp_kernels(name, kernels, bool_one_bound):
    """clamp with scalar bounds, or with tensor bounds (which broadcast; with one bound that
    is max/min, which bool supports). kernels: the names PyTorch reports for a refused dtype,
    with both bounds, only min, only max."""
    def dtype(self, lo, hi, name="clamp"):
        dt = _clamp_dtype(self, lo, hi, name)
        if dt.is_complex:   # a complex number bound (a complex tensor is refused in real_only)
            if any(type(b) is complex and b.imag for b in (lo, hi)):
                raise RuntimeError("value cannot be converted to type double without overflow")
            if type(lo) is complex:
                raise NotImplementedError("clamp is not supported for complex types")
        if dt is D.bool and not (bool_one_bound and (lo is None or hi is None)):
            both, only_min, only_max = kernels
            raise not_implemented(both if lo is not None and hi is not None else
                                  only_min if lo is not None else only_max, dt)
        return dt

    def cpu(self, min=None, max=None):
        dt = dtype(self, min, max)
        broadcast_shape(self._size, shape_of(min), shape_of(max))
        r = as_result(_clamp_np(self, min, max, dt), dt)
        return wrap_laid_out(r, *_operands(self, min, max))

    def cpu_(self, min=None, max=None):
        dt = _clamp_dtype(self, min, max, "clamp_")
        check_inplace(self, dt, "clamp_")
        dtype(self, min, max, "clamp_")
        _check_inplace_broadcast(self, min, max)
        if dt is self.dtype and dt in (D.float32, D.float64) and not isinstance(min, Tensor) \
                and not isinstance(max, Tensor):
            clip(self._np, min, max, out=self._np)  # number bounds: in place, no temporaries
            return self
        np.copyto(self._np, _clamp_np(self, min, max, dt), casting="unsafe")
        return self

    def meta(self, min=None, max=None):
        shape = broadcast_shape(self._size, shape_of(min), shape_of(max))
        return _meta(shape, dtype(self, min, max), meta_strides(shape, *_operands(self, min, max)),
                     device=self._device)

    def meta_(self, min=None, max=None):
        check_inplace(self, _clamp_dtype(self, min, max, "clamp_"), "clamp_")
        dtype(self, min, max, "clamp_")
        return self
    impl(name, "CPU")(cpu)
    TENSOR_ITERATOR_OPS.add(name)
    impl(name, "Meta")(meta)
    inplace = name.replace("clamp", "clamp_", 1)
    impl(inplace, "CPU")(cpu_)
    impl(inplace, "Meta")(meta_)


_clamp_kernels("clamp", ("clamp_scalar_cpu", "clamp_min_scalar_cpu", "clamp_max_scalar_cpu"),
               bool_one_bound=False)
_clamp_kernels("clamp.Tensor", ("clamp_cpu", "clamp_min_cpu", "clamp_max_cpu"),
               bool_one_bound=True)


# ---- unary kernels ----------------------------------------------------------------------------
def unary(name, compute, *, result=None, check=None, quiet=False, inplace=None,
          with_dtype=False, layout=None):
    """Register CPU and Meta kernels of a unary op (and of its in-place form `inplace`).

    result(dt) is the dtype returned for an input of dtype dt, by default dt itself
    (`_float_result` for math functions, which turn integers into floats); compute(a, *extra)
    works on the input as a NumPy array of the result's math dtype; check(dt, *extra)
    raises for inputs PyTorch refuses. with_dtype: compute is compute(a, result_dtype, *extra)
    (for ops whose math depends on the dtype's range or rounding). quiet: the op can overflow
    or leave its domain (exp, log, ...), which PyTorch does silently, so NumPy's
    floating-point warnings are turned off around it
    (np.errstate costs more than a small op, so only where needed).
    layout: the result's layout when PyTorch's kernel does not leave it to TensorIterator:
    "preserve" (it writes into empty_like(self)) or "contiguous" (into empty(self.shape)).
    """
    op_name = name.split(".")[0]

    def strides(self):
        if layout is None:
            return meta_strides(self._size, self, refs=True)
        if layout == "preserve":
            return preserve_strides(self._size, self.stride())
        return None

    def result_dtype(dt, extra):
        if check is not None:
            check(dt, *extra)
        return dt if result is None else result(dt)

    def run(self, dt, extra):
        a = self._np
        if dt in _OPMATH:
            if self.dtype is D.complex32:
                check_complex32(op_name)
                a = _c32.widen(a)
            else:
                a = a.astype(np.float32)
        elif self.dtype is not dt and not self.dtype.is_complex:  # abs: complex in, real out
            a = a.astype(dt._np)
        if with_dtype:
            extra = (dt,) + extra
        if quiet:
            with np.errstate(all="ignore"):
                return compute(a, *extra)
        return compute(a, *extra)

    # a NumPy ufunc computing in the input's own dtype writes straight into a block (no
    # result array of NumPy's to copy there), for C-ordered inputs, whose result is C-ordered
    to_block = isinstance(compute, np.ufunc) and compute.nin == 1 and not with_dtype

    def cpu(self, *extra):
        dt = result_dtype(self.dtype, extra)
        if to_block and dt is self.dtype and not extra and dt in _UFUNC_OUT and \
                caching_allocator.enabled:
            a = self._np
            if a.flags.c_contiguous and a.size:
                out = caching_allocator.cpu_allocator.array(a.nbytes, a.dtype, a.shape)
                if quiet:
                    with np.errstate(all="ignore"):
                        compute(a, out=out)
                else:
                    compute(a, out=out)
                return _wrap_external(out, dt)
        r = run(self, dt, extra)
        if type(r) is not np.ndarray or dt in _OPMATH:
            r = as_result(r, dt)
        if r.ndim > 1:
            if layout is None:
                r = laid_out(r, self)
            else:
                r = laid_out_as(r, strides(self))
        return _wrap(r)

    def meta(self, *extra):
        return _meta(self._size, result_dtype(self.dtype, extra), strides(self),
                     device=self._device)

    cpu.__qualname__ = cpu.__name__ = name
    impl(name, "CPU")(cpu)
    TENSOR_ITERATOR_OPS.add(name)
    impl(name, "Meta")(meta)
    if inplace is None:
        return

    def cpu_(self, *extra):
        dt = result_dtype(self.dtype, extra)
        check_inplace(self, dt, inplace)
        np.copyto(self._np, run(self, dt, extra), casting="unsafe")
        return self

    def meta_(self, *extra):
        check_inplace(self, result_dtype(self.dtype, extra), inplace)
        return self
    cpu_.__qualname__ = cpu_.__name__ = inplace
    impl(inplace, "CPU")(cpu_)
    impl(inplace, "Meta")(meta_)


def _floating_only(kernel):
    def check(dt, *extra):
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
    if a.dtype.kind == "c":   # no branches to pick between: |x| would drop the phase
        return 1 / (1 + np.exp(-a))
    # exp(-|x|) never overflows; the two branches are the same function
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


# Note [relu against a block of zeros]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# NumPy's SIMD maximum loop runs only when both operands are arrays: against the number 0 (a
# stride-0 operand) it takes its scalar loop, 3-6 times slower (a (64, 6, 24, 24) float32 relu:
# 113-212 us against 33 beside an array of zeros; torch 25). So a contiguous floating relu
# reads a block of zeros beside each chunk of its input, the zeros made once per dtype and
# first, so that x wins a tie (Note [Ties in clamp and relu]).
_ZERO_CHUNK = 1 << 16
_zero_blocks = {}


def _relu(a):
    out = empty_like_array(a)
    if a.dtype.kind != "f" or not (a.flags.c_contiguous and out.flags.c_contiguous):
        # max(0, x), keeping x = -0.0 as PyTorch does (Note [Ties in clamp and relu])
        parallel_for(lambda i: np.maximum(0, a[i], out=out[i], dtype=a.dtype), a.shape, a.size)
        return out
    zeros = _zero_blocks.get(a.dtype)
    if zeros is None:
        zeros = _zero_blocks[a.dtype] = np.zeros(_ZERO_CHUNK, a.dtype)
    src, dst = a.reshape(-1), out.reshape(-1)
    n, chunk = src.size, zeros.size
    chunks = range(-(-n // chunk))

    def part(index):
        for c in chunks if index[0] is Ellipsis else chunks[index[0]]:
            start = c * chunk
            stop = min(n, start + chunk)
            np.maximum(zeros[:stop - start], src[start:stop], out=dst[start:stop])
    parallel_for(part, (len(chunks),), n)
    return out


def _gelu(a, approximate="none"):
    if approximate == "tanh":
        inner = np.sqrt(2 / np.pi, dtype=a.dtype) * (a + a.dtype.type(0.044715) * a * a * a)
        return 0.5 * a * (1 + np.tanh(inner))
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    from ._special import erf
    return 0.5 * a * (1 + erf(a * a.dtype.type(1 / np.sqrt(2))))


def _silu(a):
    return a * _sigmoid(a)


def _softplus(a, beta=1, threshold=20):
    z = a * beta
    return np.where(z > threshold, a, np.log1p(np.exp(np.minimum(z, threshold))) / beta)


unary("neg", np.negative, check=_check_neg, inplace="neg_")
unary("abs", np.abs, result=D.dtype.to_real, check=_check_abs, inplace="abs_")  # |z| is real
unary("sign", _sign, inplace="sign_")


def _sgn(a):
    """sign for real numbers; x / |x| (0 at 0) for complex ones, the point on the unit circle."""
    if a.dtype.kind != "c":
        return _sign(a)
    magnitude = np.abs(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(magnitude == 0, 0, a / magnitude).astype(a.dtype)


unary("sgn", _sgn)
def _log1p(a):
    """log1p; for complex z = x + iy PyTorch's form, exact for small |z| where NumPy's loses
    the real part: log|1 + z| = log1p(x (2 + x) + y^2) / 2 when |z| < 0.5 (x itself when that
    underflows), log(hypot(1 + x, y)) otherwise; the angle is atan2(y, 1 + x)."""
    if a.dtype.kind != "c":
        return np.log1p(a)
    x, y = a.real, a.imag
    theta = np.arctan2(y, x + 1)
    r = x * (2 + x) + y * y
    small = np.log1p(r) / 2
    real = np.where(np.abs(a) < 0.5, np.where(r == 0, x, small), np.log(np.hypot(x + 1, y)))
    return (real + 1j * theta).astype(a.dtype)


for _name, _fn in (("exp", np.exp), ("log", np.log), ("log1p", _log1p), ("expm1", np.expm1),
                   ("sqrt", np.sqrt), ("rsqrt", _rsqrt), ("sin", np.sin), ("cos", np.cos)):
    unary(_name, _fn, result=_float_result, quiet=True, inplace=f"{_name}_")
unary("tanh", np.tanh, result=_float_result, inplace="tanh_")
unary("sigmoid", _sigmoid, result=_float_result, inplace="sigmoid_")
unary("relu", _relu, check=_check_relu, inplace="relu_")
unary("gelu", _gelu, check=_floating_only("GeluKernelImpl"), quiet=True)
unary("silu", _silu, check=_floating_only("silu_cpu"))
unary("softplus", _softplus, check=_floating_only("softplus_cpu"), quiet=True)
unary("logical_not", np.logical_not, result=_bool_result, inplace="logical_not_")
unary("bitwise_not", np.invert, check=_check_bitwise_not, inplace="bitwise_not_")


# ---- backward helpers -------------------------------------------------------------------------
# Each computes in the math dtype of grad_output and rounds once, like the forward kernels.
def _backward_kernel(name, compute):
    def cpu(grad_output, *rest):
        dt = grad_output.dtype
        mdt = _OPMATH.get(dt, dt)
        arrays = [x._np.astype(mdt._np, copy=False) if isinstance(x, Tensor) else x
                  for x in (grad_output,) + rest]
        with np.errstate(all="ignore"):
            r = as_result(compute(*arrays), dt)
        return wrap_laid_out(r, grad_output, *_operands(*rest))

    def meta(grad_output, *rest):
        shape = broadcast_shape(grad_output._size, *(shape_of(x) for x in rest))
        return _meta(shape, grad_output.dtype, meta_strides(shape, grad_output, *_operands(*rest)),
                     device=grad_output._device)
    cpu.__qualname__ = cpu.__name__ = name
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    return cpu


def _threshold_backward(g, x, threshold):
    """`x <= threshold ? 0 : grad` (a NaN x keeps its gradient). The choice is made by masking
    grad's bits with 0 or all ones: np.where's select loop branches per element and is ten
    times slower on the random masks ReLU produces. The threshold is first cast to x's dtype,
    as the kernel's scalar is (so -1 is 255 for uint8)."""
    threshold = np.asarray(threshold).astype(x.dtype)
    if g.dtype.itemsize not in (1, 2, 4, 8):
        return np.where(x <= threshold, np.zeros((), g.dtype), g)
    bits = np.dtype(f"i{g.dtype.itemsize}")
    if g.shape != x.shape:
        g, x = np.broadcast_arrays(g, x)
    out = empty_like_array(g if all(g.strides) else x, g.dtype)

    def part(i):
        keep = (x[i] <= threshold).astype(bits)
        keep -= 1                                # 0 where x <= threshold, all ones elsewhere
        np.bitwise_and(g[i].view(bits), keep, out=out[i].view(bits))
    parallel_for(part, g.shape, g.size)
    return out


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
# of complex outputs: grad times the conjugate derivative, as every complex backward
_backward_kernel("sigmoid_backward", lambda g, y: g * np.conj((1 - y) * y) if y.dtype.kind == "c"
                 else g * (1 - y) * y)
_backward_kernel("tanh_backward", lambda g, y: g * np.conj(1 - y * y) if y.dtype.kind == "c"
                 else g * (1 - y * y))
_backward_kernel("gelu_backward", _gelu_backward)


# ---- the rest of the unary math ----------------------------------------------------------------
def _special_fn(name):
    """A function of ._special (SciPy's, or the NumPy fallback), looked up on first call."""
    def compute(a):
        from . import _special
        return getattr(_special, name)(a)
    compute.__name__ = name
    return compute


for _name, _fn in (("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                   ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                   ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                   ("log2", np.log2), ("log10", np.log10), ("exp2", np.exp2),
                   ("reciprocal", np.reciprocal), ("erf", _special_fn("erf")),
                   ("erfc", _special_fn("erfc")), ("erfinv", _special_fn("erfinv")),
                   ("lgamma", _special_fn("lgamma")), ("digamma", _special_fn("digamma"))):
    unary(_name, _fn, result=_float_result, quiet=True, inplace=f"{_name}_")


def _rounding(ufunc, kernel):
    """trunc/floor/ceil/round: integers are already whole (a copy); bool is refused."""
    def compute(a):
        return a.copy() if a.dtype.kind in "iu" else ufunc(a)

    def check(dt):
        if dt is D.bool:
            raise not_implemented(kernel, dt)
    return compute, check


for _name, _uf in (("trunc", np.trunc), ("floor", np.floor), ("ceil", np.ceil),
                   ("round", np.rint)):  # rint rounds half to even, as PyTorch's round does
    _fn, _check = _rounding(_uf, f"{_name}_vml_cpu")
    unary(_name, _fn, check=_check, inplace=f"{_name}_")


def _round_decimals(a, decimals):
    """PyTorch's round(x, decimals): rint(x * 10^d) / 10^d, or rint(x / 10^-d) * 10^-d for
    d < 0 (in the math dtype: float16/bfloat16 are rounded once, at the end)."""
    p = a.dtype.type(10.0 ** abs(decimals))
    return np.rint(a * p) / p if decimals > 0 else np.rint(a / p) * p


def _check_round_decimals(dt, decimals):
    """round(x, decimals=0) runs round's kernel, which (unlike round(x)'s integer shortcut)
    refuses integers; other decimals run round_cpu."""
    if not (dt.is_floating_point or dt.is_complex):
        raise not_implemented("round_vml_cpu" if decimals == 0 else "round_cpu", dt)


unary("round.decimals", _round_decimals, check=_check_round_decimals, quiet=True,
      inplace="round_.decimals")


def _frac(a):
    return a - np.trunc(a)


unary("frac", _frac, check=_floating_only("frac_cpu"), quiet=True, inplace="frac_")


def _bool_meta(self):
    return _meta(self._size, D.bool, meta_strides(self._size, self, refs=True),
                 device=self._device)


def _predicate(name, test):
    """isnan/isinf/isfinite: a bool tensor; integers are never NaN nor infinite."""
    def cpu(self):
        a = self._np
        if self.dtype.is_floating_point or self.dtype.is_complex:
            if self.dtype is D.complex32:
                a = _c32.widen(a)
            return _wrap(laid_out(np.asarray(test(a)), self))
        return _wrap(laid_out(np.full(a.shape, name == "isfinite"), self))
    impl(name, "CPU")(cpu)
    TENSOR_ITERATOR_OPS.add(name)
    impl(name, "Meta")(_bool_meta)


_predicate("isnan", np.isnan)
_predicate("isinf", np.isinf)
_predicate("isfinite", np.isfinite)


def float_limits(dt):
    """(lowest, highest) finite value of a floating dtype."""
    if dt is D.bfloat16:
        import ml_dtypes
        info = ml_dtypes.finfo(ml_dtypes.bfloat16)
    else:
        info = np.finfo(dt._np)
    return float(info.min), float(info.max)


def _nan_to_num(a, dt, nan=None, posinf=None, neginf=None):
    """NaN -> nan (0), +inf -> posinf, -inf -> neginf (by default the dtype's extremes); each
    replacement is cast to the dtype first (so posinf=1e10 is inf in float16); a complex
    number's real and imaginary parts are each replaced."""
    if dt.is_complex:
        real, r = dt.to_real(), np.empty(a.shape, a.dtype)
        r.real = _nan_to_num(a.real, real, nan, posinf, neginf)
        r.imag = _nan_to_num(a.imag, real, nan, posinf, neginf)
        return r
    if not dt.is_floating_point:
        return a.copy()
    lowest, highest = float_limits(dt)

    def value(v, default):
        return np.array(default if v is None else v, dtype=np.float64).astype(dt._np) \
            .astype(a.dtype)
    a = np.where(np.isnan(a), value(nan, 0.0), a)
    a = np.where(a == np.inf, value(posinf, highest), a)
    return np.where(a == -np.inf, value(neginf, lowest), a)


unary("nan_to_num", _nan_to_num, quiet=True, inplace="nan_to_num_", with_dtype=True,
      layout="preserve")


# ---- the rest of the binary math ---------------------------------------------------------------
def _floating_only_binary(kernel):
    def check(self, other, dt):
        if not (dt.is_floating_point or dt.is_complex):
            raise not_implemented(kernel, dt)
    return check


def _shift_check(kernel):
    def check(self, other, dt):
        if not _is_integral(dt) or dt is D.bool:
            raise not_implemented(kernel, dt)
    return check


def _left_shift(a, b, dt):
    """a << b; a shift by a negative amount or by the bit width or more gives 0 (PyTorch
    defines what C leaves undefined)."""
    bits = dt.itemsize * 8
    b = np.asarray(b)
    out_of_range = (b < 0) | (b >= bits)
    r = np.left_shift(a, np.where(out_of_range, 0, b).astype(dt._np), dtype=dt._np)
    return np.where(out_of_range, np.zeros((), dt._np), r)


def _right_shift(a, b, dt):
    """a >> b (arithmetic); out-of-range amounts fill with the sign bit: -1 or 0."""
    bits = dt.itemsize * 8
    b = np.asarray(b)
    out_of_range = (b < 0) | (b >= bits)
    r = np.right_shift(a, np.where(out_of_range, 0, b).astype(dt._np), dtype=dt._np)
    sign_fill = np.where(np.asarray(a) < 0, -1, 0).astype(dt._np)
    return np.where(out_of_range, sign_fill, r)


binary("fmod.Tensor", _division(np.fmod), check=_no_bool("fmod_cpu"), inplace="fmod_.Tensor")
binary("hypot", _typed_ufunc(np.hypot), check=_floating_only_binary("hypot_cpu"),
       inplace="hypot_")
binary("atan2", _typed_ufunc(np.arctan2), operands=_float_result, inplace="atan2_")
binary("copysign.Tensor", _typed_ufunc(np.copysign), operands=_float_result,
       inplace="copysign_.Tensor")
binary("bitwise_left_shift.Tensor", _left_shift, check=_shift_check("lshift_cpu"),
       inplace="bitwise_left_shift_.Tensor")
binary("bitwise_right_shift.Tensor", _right_shift, check=_shift_check("rshift_cpu"),
       inplace="bitwise_right_shift_.Tensor")


# ---- ternary: lerp, addcmul, addcdiv -----------------------------------------------------------
def _ternary(name, compute, dtype, inplace):
    """CPU and Meta kernels of an op of three broadcasting operands (and a trailing scalar):
    dtype(self, a, b, *extra) checks the operands and gives the result dtype; compute works
    on the three operands in its math dtype."""
    def run(self, a, b, extra):
        dt = dtype(self, a, b, *extra)
        broadcast_shape(shape_of(self), shape_of(a), shape_of(b))
        # a number third operand (lerp's Scalar weight) is read as the math dtype itself, not
        # rounded to a float16/bfloat16 dt first (`weight.to<opmath_t>()`)
        b = _math_operand(b, dt) if isinstance(b, Tensor) or dt not in _OPMATH else \
            np.array(b, dtype=_OPMATH[dt]._np)
        with np.errstate(all="ignore"):
            r = compute(_math_operand(self, dt), _math_operand(a, dt), b, *extra)
        return as_result(r, dt)

    def cpu(self, a, b, *extra):
        return wrap_laid_out(run(self, a, b, extra), *_operands(self, a, b))

    def meta(self, a, b, *extra):
        shape = broadcast_shape(shape_of(self), shape_of(a), shape_of(b))
        return _meta(shape, dtype(self, a, b, *extra), meta_strides(shape, *_operands(self, a, b)),
                     device=_dev(self, a, b))

    def cpu_(self, a, b, *extra):
        check_inplace(self, dtype(self, a, b, *extra), inplace)
        _check_inplace_broadcast(self, a, b)
        _c32.copyto(self._np, run(self, a, b, extra))
        return self

    def meta_(self, a, b, *extra):
        check_inplace(self, dtype(self, a, b, *extra), inplace)
        return self
    impl(name, "CPU")(cpu)
    TENSOR_ITERATOR_OPS.add(name)
    impl(name, "Meta")(meta)
    impl(inplace, "CPU")(cpu_)
    impl(inplace, "Meta")(meta_)


def _lerp_dtype(self, end, weight):
    dt = self.dtype
    for what, x in (("end", end), ("weight", weight)):
        if isinstance(x, Tensor) and x.dtype is not dt and (what == "end" or x.dim()):
            raise RuntimeError(f"expected dtype {D.c_type_name(dt)} for `{what}` but got dtype "
                               f"{D.c_type_name(x.dtype)}")
    if not (dt.is_floating_point or dt.is_complex) or dt is D.complex32:
        raise not_implemented("lerp_kernel_scalar" if not isinstance(weight, Tensor) else
                              "lerp_kernel_tensor", dt)
    if type(weight) is complex and not dt.is_complex:
        from .factory import checked_scalar   # (factory imports this module)
        checked_scalar(weight, D.float64 if dt is D.float64 else D.float32)   # as its opmath type
    return dt


def _lerp(a, end, weight):
    """a + w (end - a) for small |w|, end - (end - a)(1 - w) otherwise: each form is exact at
    its end (PyTorch's formula)."""
    diff = end - a
    return np.where(np.abs(weight) < 0.5, a + weight * diff, end - diff * (1 - weight))


def _addc_dtype(name):
    def dtype(self, tensor1, tensor2, value=1):
        dt = D.result_type_of((self, tensor1, tensor2))
        if dt is D.bool or dt is D.complex32 and name == "addcdiv":
            raise not_implemented(f"{name}_cpu_out", dt)
        if name == "addcdiv" and _is_integral(dt):
            raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                               "future  release addcdiv will perform a true division of tensor1 "
                               "and tensor2. The historic addcdiv behavior can be implemented "
                               "as (input + value * torch.trunc(tensor1 / tensor2)).to("
                               "input.dtype) for integer inputs and as (input + value * tensor1 "
                               "/ tensor2) for float inputs. The future addcdiv behavior is just "
                               "the latter implementation: (input + value * tensor1 / tensor2), "
                               "for all dtypes.")
        if type(value) is complex and not dt.is_complex:
            from .factory import checked_scalar   # (factory imports this module)
            checked_scalar(value, dt)   # c10 refuses to drop an imaginary part
        return dt
    return dtype


def _number_arg(value, name):
    """A Scalar argument given as a tensor: PyTorch's argument parser takes a zero-dim tensor
    that does not require grad as its number, and refuses any other tensor."""
    if not isinstance(value, Tensor):
        return value
    if value.dim() or value.requires_grad:
        raise TypeError(f"{name}(): argument 'value' must be Number, not Tensor")
    return value.item()


def _scalar_value(value, a):
    """The scalar multiplier in the operands' type: an integer op truncates a float value and
    wraps one its type cannot hold, as PyTorch's cast does."""
    if np.asarray(a).dtype.kind not in "iu":
        return value
    return np.array(int(value.real)).astype(np.asarray(a).dtype)   # (a complex one: 3+0j)


_ternary("lerp.Tensor", _lerp, _lerp_dtype, "lerp_.Tensor")
_ternary("addcmul", lambda a, t1, t2, value=1:
         a + _scalar_value(_number_arg(value, "addcmul"), a) * t1 * t2,
         _addc_dtype("addcmul"), "addcmul_")
_ternary("addcdiv", lambda a, t1, t2, value=1: a + _number_arg(value, "addcdiv") * (t1 / t2),
         _addc_dtype("addcdiv"), "addcdiv_")


# ---- activations -------------------------------------------------------------------------------
def _elu(a, alpha=1, scale=1, input_scale=1):
    return np.where(a > 0, a * scale, np.expm1(a * input_scale) * (alpha * scale))


def _leaky_relu(a, negative_slope=0.01):
    return np.where(a > 0, a, a * negative_slope)


def _hardtanh(a, min_val=-1, max_val=1):
    return clip(a, min_val, max_val).astype(a.dtype, copy=False)


def _check_hardtanh(dt, min_val=-1, max_val=1):
    if dt is D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt is D.uint8 and (int(min_val) < 0 or int(max_val) < 0):  # integer bounds truncate
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")


def _hardsigmoid(a):
    return np.minimum(np.maximum(a + 3, 0), 6) / 6


def _hardswish(a):
    return a * np.minimum(np.maximum(a + 3, 0), 6) / 6


def _mish(a):
    return a * np.tanh(np.log1p(np.exp(a)))


def _log_sigmoid(a):
    # log(1 / (1 + exp(-x))) = min(x, 0) - log1p(exp(-|x|)): exp never overflows
    return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))


def _threshold(a, threshold, value):
    return np.where(a <= threshold, np.array(value).astype(a.dtype), a)


def _check_threshold(dt, *extra):
    if dt is D.bool:
        raise not_implemented("threshold_cpu", dt)


for _name, _fn, _kernel in (("elu", _elu, "elu_cpu"), ("leaky_relu", _leaky_relu, "leaky_relu_cpu"),
                            ("hardsigmoid", _hardsigmoid, "hardsigmoid_cpu"),
                            ("hardswish", _hardswish, "hardswish_cpu"),
                            ("mish", _mish, "mish_cpu")):
    unary(_name, _fn, check=_floating_only(_kernel), quiet=True, inplace=f"{_name}_")
unary("log_sigmoid", _log_sigmoid, check=_floating_only("log_sigmoid_cpu"), quiet=True,
      layout="contiguous")


def _hardshrink(a, dt, lambd=0.5):
    """0 where -lambd <= x <= lambd, lambd taken in the tensor's dtype as PyTorch's kernel
    does (so a bfloat16 0.3 is inside hardshrink(0.3))."""
    lambd = np.array(lambd, dtype=dt._np).astype(a.dtype)
    return np.where((a >= -lambd) & (a <= lambd), np.zeros((), a.dtype), a)


def _softshrink(a, lambd=0.5):
    return np.where(a > lambd, a - lambd, np.where(a < -lambd, a + lambd, a * 0))


def _check_softshrink(dt, lambd=0.5):
    if not dt.is_floating_point:
        raise not_implemented("softshrink_check", dt)
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {float_limits(dt)[1]:g}] for input "
                           f"dtype {_scalar_type_name(dt)}, but found {lambd:g}")


unary("hardshrink", _hardshrink, check=_floating_only("hardshrink_cpu"), with_dtype=True)
unary("softshrink", _softshrink, check=_check_softshrink)
unary("threshold", _threshold, check=_check_threshold, inplace="threshold_")
unary("hardtanh", _hardtanh, check=_check_hardtanh, inplace="hardtanh_", layout="preserve")


# the activations' backward ops (torch.ops.aten.silu_backward, ...): grad_output times the
# derivative at self, each boundary point on the side PyTorch's CPU kernel puts it
def _silu_backward(g, x):
    s = _sigmoid(x)
    return g * s * (1 + x * (1 - s))


def _softplus_backward(g, x, beta, threshold):
    z = np.exp(x * beta)
    return np.where(x * beta > threshold, g, g * z / (z + 1))


def _mish_backward(g, x):
    t = np.tanh(np.log1p(np.exp(x)))
    return g * (t + x * _sigmoid(x) * (1 - t * t))


def _hardswish_backward(g, x):
    zero = np.zeros((), g.dtype)
    return np.where(x <= -3, zero, np.where(x < 3, g * (x / 3 + 0.5), g))


def _hardsigmoid_backward(g, x):
    # PyTorch multiplies by its one_sixth constant, 1.0f / 6.0f: a float32 even for doubles
    one_sixth = g.dtype.type(np.float32(1 / 6))
    return np.where((x > -3) & (x < 3), g * one_sixth, np.zeros((), g.dtype))


def _hardtanh_backward(g, x, min_val, max_val):
    return np.where((x <= min_val) | (x >= max_val), np.zeros((), g.dtype), g)


def _leaky_relu_backward(g, x, negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative "
                           "slope which is not supported. This is caused by calling in-place "
                           "forward function with a negative slope, please call out-of-place "
                           "version instead. File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting "
                           "in-place leakRelu backward calculation with negative slope")
    return np.where(x > 0, g, g * negative_slope)


def _elu_backward(g, alpha, scale, input_scale, is_result, x):
    """From the input, or (is_result, after the in-place elu_) from the output y, whose sign is
    the input's only for alpha >= 0: there alpha * scale * exp(x * input_scale) is
    y + alpha * scale."""
    if is_result:
        if alpha < 0:
            raise RuntimeError("In-place elu backward calculation is triggered with a negative "
                               "slope which is not supported. This is caused by calling "
                               "in-place forward function with a negative slope, please call "
                               "out-of-place version instead.")
        negative = g * input_scale * (x + alpha * scale)
    else:
        negative = g * (input_scale * alpha * scale) * np.exp(x * input_scale)
    return np.where(x <= 0, negative, g * scale)


def _logit_backward(g, x, bounds):
    """g / (x (1 - x)); outside bounds = (eps, 1 - eps) 0 (the forward clamped x), or without
    them NaN outside [0, 1]."""
    (lo, hi), outside = ((0, 1), np.nan) if bounds is None else (bounds, 0)
    return np.where((x < lo) | (x > hi), np.array(outside, g.dtype), g / (x * (1 - x)))


def _shrink_backward(g, x, lambd):
    return np.where((x >= -lambd) & (x <= lambd), np.zeros((), g.dtype), g)


for _name, _fn in (("silu_backward", _silu_backward), ("softplus_backward", _softplus_backward),
                   ("mish_backward", _mish_backward),
                   ("hardswish_backward", _hardswish_backward),
                   ("hardsigmoid_backward", _hardsigmoid_backward),
                   ("hardtanh_backward", _hardtanh_backward),
                   ("leaky_relu_backward", _leaky_relu_backward),
                   ("hardshrink_backward", _shrink_backward),
                   ("softshrink_backward", _shrink_backward),
                   ("elu_backward", _elu_backward)):
    _backward_kernel(_name, _fn)
_logit_backward_kernel = _backward_kernel("logit_backward", _logit_backward)


@impl("logit_backward", "CPU")
def _logit_backward_cpu(grad_output, self, eps=None):
    """PyTorch's kernel takes eps and 1 - eps in the input's dtype (so 0.8 in bfloat16, which
    is 0.80078125, is inside [0.2, 0.8])."""
    if eps is None:
        return _logit_backward_kernel(grad_output, self, None)
    lo = np.array(eps).astype(self.dtype._np)
    return _logit_backward_kernel(grad_output, self,
                                  (float(lo), float(np.array(1, lo.dtype) - lo)))


def _glu_dim(self, dim):
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, self.dim())
    if self._size[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{self._size[d]}")
    if not self.dtype.is_floating_point:
        raise not_implemented("glu_cpu", self.dtype)
    return d


@impl("glu", "CPU")
def glu(self, dim=-1):
    """The first half along `dim`, gated by the sigmoid of the second: a * sigmoid(b)."""
    d = _glu_dim(self, dim)
    a, b = np.split(_math_operand(self, self.dtype), 2, axis=d)
    with np.errstate(all="ignore"):
        return _wrap(as_result(a * _sigmoid(b), self.dtype))


@impl("glu", "Meta")
def glu_meta(self, dim=-1):
    d = _glu_dim(self, dim)
    return _meta(self._size[:d] + (self._size[d] // 2,) + self._size[d + 1:], self.dtype,
                 device=self._device)


binary("_prelu_kernel", lambda a, w, dt: np.where(a > 0, a, w * a),
       check=_floating_only_binary("prelu_cpu"))


@impl("_add_relu.Tensor", ("CPU", "Meta"))
def _add_relu(self, other, alpha=1):
    """relu(self + alpha * other): PyTorch's fused kernel (torch._VF._add_relu), which has no
    derivative, and its kernel only the signed integer types, float and double."""
    from .._dispatch.dispatcher import lookup
    dt = _binary_dtype(self, other)
    if dt not in _ADD_RELU_DTYPES:
        raise RuntimeError(f"Unsupported datatype for add_relu:{D.c_type_name(dt)}")
    r = lookup("add.Tensor")(self, other, alpha=alpha)
    if dt.is_floating_point:  # the kernel clamps to [0, the dtype's max]: inf -> max (NaN
        # stays NaN, as in its vectorized loop; its scalar tail loop turns NaN into 0)
        r = lookup("clamp")(r, None, float(np.finfo(D.np_dtype(dt)).max))
    return lookup("relu")(r)


_ADD_RELU_DTYPES = (D.int8, D.int16, D.int32, D.int64, D.float32, D.float64)


def _polygamma_values(self, n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if self.dtype.is_complex:  # PyTorch's kernels for n = 0, 1 and above are real-only
        raise not_implemented("digamma" if n == 0 else "trigamma" if n == 1 else "polygamma",
                              self.dtype)
    from . import _special
    dt = _float_result(self.dtype)
    with np.errstate(all="ignore"):
        return dt, as_result(_special.polygamma(n, _math_operand(self, dt)), dt)


@impl("polygamma", "CPU")
def polygamma(n, self):
    return _wrap(laid_out(_polygamma_values(self, n)[1], self))


@impl("polygamma", "Meta")
def polygamma_meta(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _meta(self._size, _float_result(self.dtype), meta_strides(self._size, self, refs=True),
                 device=self._device)


@impl("polygamma_", "CPU")
def polygamma_(self, n):
    dt, r = _polygamma_values(self, n)
    check_inplace(self, dt, "polygamma_")
    np.copyto(self._np, r, casting="unsafe")
    return self


@impl("polygamma_", "Meta")
def polygamma_meta_(self, n):
    check_inplace(self, polygamma_meta(n, self).dtype, "polygamma_")
    return self


# ---- more elementwise math (torch's remaining public elementwise callables) ---------------------
def _quiet_ufunc(ufunc):
    """A ufunc of two float operands that may meet NaN or infinities (silently, as PyTorch)."""
    def compute(a, b, dt):
        with np.errstate(all="ignore"):
            return ufunc(a, b, dtype=dt._np)
    compute.__name__ = ufunc.__name__
    return compute


def complex_logaddexp(a, b):
    """log(exp(a) + exp(b)) of complex arrays as PyTorch computes it (NumPy's logaddexp is
    real-only): max + log1p(exp(min - max)) with min, max the operands ordered by real part,
    so the imaginary part is max's plus a small angle, not wrapped into (-pi, pi]; a NaN
    anywhere gives NaN; two equal infinite real parts give min (-inf) or log(e^min + e^max)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    with np.errstate(all="ignore"):
        b_larger = a.real < b.real
        lo, hi = np.where(b_larger, a, b), np.where(b_larger, b, a)
        r = np.log1p(np.exp(lo - hi)) + hi
        both_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
        r = np.where(both_inf & (lo.real < 0), lo, r)
        r = np.where(both_inf & (lo.real > 0), np.log(np.exp(lo) + np.exp(hi)), r)
        nan = np.isnan(a) | np.isnan(b)
        return np.where(nan, complex(math.nan, math.nan), r)


def _logaddexp(a, b, dt):
    if dt.is_complex:
        return complex_logaddexp(a, b).astype(dt._np)
    with np.errstate(all="ignore"):
        return np.logaddexp(a, b, dtype=dt._np)


binary("logaddexp", _logaddexp, check=_floating_only_binary("logaddexp_cpu"))
binary("logaddexp2", _quiet_ufunc(np.logaddexp2), check=_floating_only_binary("logaddexp2_cpu"))
def _fmax_fmin(prefer):
    """fmax/fmin: the other operand where one is NaN. On a tie (0.0 against -0.0) PyTorch's
    kernel, std::fmax, returns the first operand, and for bfloat16 the second; NumPy's fmax
    returns either, depending on where the element falls in its vector loop."""
    def compute(a, b, mdt, dtype):
        first, second = (b, a) if dtype is D.bfloat16 else (a, b)
        return np.where(prefer(second, first) | np.isnan(first), second, first).astype(mdt._np)
    return compute


binary("fmax", _fmax_fmin(np.greater), with_dtype=True)
binary("fmin", _fmax_fmin(np.less), with_dtype=True)
binary("gcd", _typed_ufunc(np.gcd), check=_shift_check("gcd_cpu"), inplace="gcd_")
binary("lcm", _typed_ufunc(np.lcm), check=_shift_check("lcm_cpu"), inplace="lcm_")


def _check_heaviside(self, values, dt):
    if isinstance(values, Tensor) and isinstance(self, Tensor) and values.dtype is not self.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def _heaviside(a, b, dt):
    """`a == 0 ? b : a > 0` (so NaN gives 0, as PyTorch's kernel does; np.heaviside gives NaN)."""
    return np.where(np.asarray(a) == 0, b, np.asarray(a) > 0).astype(dt._np, copy=False)


binary("heaviside", _heaviside, check=_check_heaviside, inplace="heaviside_")


def _xlogy(x, y, dt):
    """x * log(y), 0 where x == 0 unless y is NaN (PyTorch's convention, also SciPy's)."""
    with np.errstate(all="ignore"):
        r = np.multiply(x, np.log(y, dtype=dt._np), dtype=dt._np)
    return np.where((np.asarray(x) == 0) & ~np.isnan(y), np.zeros((), dt._np), r)


binary("xlogy.Tensor", _xlogy, operands=_float_result, inplace="xlogy_.Tensor")


def _scipy_special(name):
    """scipy.special.<name>, imported on first use (ember does not require SciPy)."""
    try:
        import scipy.special
    except ImportError:
        raise RuntimeError(f"ember's {name} kernel needs SciPy (pip install scipy)") from None
    return getattr(scipy.special, name)


def _incomplete_gamma(scipy_name):
    """SciPy's regularized incomplete gamma, with PyTorch's values at the edges (checked in
    this order): NaN for a < 0 or x < 0; for a == 0, the limit if x > 0 else NaN; the limit
    at x == 0 and at infinite a (NaN if x is infinite too), then at infinite x (these also
    decide some NaN a or x, which SciPy leaves NaN)."""
    upper = scipy_name == "gammaincc"

    def compute(a, x, dt):
        a, x = np.broadcast_arrays(np.asarray(a), np.asarray(x))
        with np.errstate(all="ignore"):
            r = _scipy_special(scipy_name)(a, x)
        low, high = (1.0, 0.0) if upper else (0.0, 1.0)   # the values at x = 0 and x = inf
        edges = ((a < 0) | (x < 0), np.nan), ((a == 0) & (x > 0), high), (a == 0, np.nan), \
            (x == 0, low), (np.isinf(a) & np.isinf(x), np.nan), (np.isinf(a), low), \
            (np.isinf(x), high)
        for where, value in reversed(edges):
            r = np.where(where, value, r)
        return r.astype(dt._np, copy=False)
    compute.__name__ = scipy_name
    return compute


binary("igamma", _incomplete_gamma("gammainc"), check=_floating_only_binary("igamma_cpu"),
       inplace="igamma_")
binary("igammac", _incomplete_gamma("gammaincc"), check=_floating_only_binary("igammac_cpu"),
       inplace="igammac_")


def _sinc(a):
    """sin(pi x) / (pi x), 1 at 0."""
    pi_a = a * a.dtype.type(np.pi)
    return np.where(a == 0, a.dtype.type(1), np.sin(pi_a) / pi_a)


def _i0(a):
    return _scipy_special("i0")(a).astype(a.dtype, copy=False)


def _i1(a):
    return _scipy_special("i1")(a).astype(a.dtype, copy=False)


def _logit(a, dt, eps=None):
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given (both bounds
    rounded to the tensor's dtype, as PyTorch's kernel holds them: 1 - 1e-6 is 1 in float16)."""
    if eps is not None:
        lo, hi = (a.dtype.type(np.array(v).astype(dt._np)) for v in (eps, 1 - eps))
        a = np.clip(a, lo, hi)
    return np.log(a / (1 - a))


unary("sinc", _sinc, result=_float_result, quiet=True, inplace="sinc_")


# x * (pi / 180) as PyTorch's mul by a wrapped double: the factor rounded to the math dtype
_PI_180, _180_PI = 0.017453292519943295769236907684886127134428718885417, \
    57.295779513082320876798154814105170332405472466564
unary("deg2rad", lambda a: a * a.dtype.type(_PI_180), result=_float_result,
      inplace="deg2rad_")   # (complex inputs refused in real_only.py)
unary("rad2deg", lambda a: a * a.dtype.type(_180_PI), result=_float_result,
      inplace="rad2deg_")
unary("i0", _i0, result=_float_result, inplace="i0_")
unary("special_i1", _i1, result=_float_result)
unary("logit", _logit, result=_float_result, quiet=True, inplace="logit_", with_dtype=True)


def _bool_predicate(name, test):
    """A predicate of each element (signbit, isposinf, isneginf, isreal): a bool tensor, the
    input read as it is (float16 included: no math is done)."""
    def cpu(self):
        a = self._np
        if self.dtype is D.bfloat16:
            a = a.astype(np.float32)  # exact (NaN's sign too); ml_dtypes has few ufunc loops
        elif self.dtype is D.complex32:
            a = _c32.widen(a)
        return _wrap(laid_out(as_result(test(a), D.bool), self))
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(_bool_meta)


def _signbit(a):
    """The sign bit itself, so that -0.0 and a negative NaN count as negative."""
    if a.dtype.kind != "f":
        return a < 0
    bits = a.view(f"u{a.dtype.itemsize}")
    return (bits >> (8 * a.dtype.itemsize - 1)).astype(bool)


_bool_predicate("signbit", _signbit)
_bool_predicate("isposinf", lambda a: np.isposinf(a) if a.dtype.kind == "f" else a != a)
_bool_predicate("isneginf", lambda a: np.isneginf(a) if a.dtype.kind == "f" else a != a)
_bool_predicate("isreal", np.isreal)


def _check_nextafter(self, other):
    dt = _binary_dtype(self, other)
    if not dt.is_floating_point:
        raise not_implemented("nextafter_cpu", dt)
    return dt


def _nextafter_bits(a, b, dt):
    """The float after a in the direction of b, found on the bit pattern (which works for
    bfloat16 too, where NumPy has no nextafter): one step away from zero or towards it."""
    bits = np.dtype(f"u{dt.itemsize}")
    a, b = np.broadcast_arrays(np.asarray(a, dt._np), np.asarray(b, dt._np))
    ua = a.view(bits).astype(np.int64)
    away = (a < b) == (a > 0)                    # moving away from zero
    step = np.where(away, ua + 1, ua - 1)
    tiny = np.where(b > 0, 1, 1 | (1 << (8 * dt.itemsize - 1)))  # smallest subnormal, b's sign
    r = np.where(a == 0, tiny, step).astype(bits).view(dt._np)
    r = np.where(a == b, b, r)
    return np.where(np.isnan(a.astype(np.float32)) | np.isnan(b.astype(np.float32)),
                    np.array(np.nan, dt._np), r)


def _nextafter_values(self, other):
    dt = _check_nextafter(self, other)
    try:
        return dt, _nextafter_bits(_as_array(self, dt), _as_array(other, dt), dt)
    except ValueError:
        raise broadcast_error(self, other) from None


@impl("nextafter", "CPU")
def nextafter(self, other):
    return _wrap(laid_out(_nextafter_values(self, other)[1], self, other))


@impl("nextafter", "Meta")
def nextafter_meta(self, other):
    shape = broadcast_shape(shape_of(self), shape_of(other))
    return _meta(shape, _check_nextafter(self, other), meta_strides(shape, self, other),
                 device=_dev(self, other))


@impl("nextafter_", "CPU")
def nextafter_(self, other):
    dt, r = _nextafter_values(self, other)
    check_inplace(self, dt, "nextafter_")
    _check_inplace_broadcast(self, other)
    np.copyto(self._np, r, casting="unsafe")
    return self


@impl("nextafter_", "Meta")
def nextafter_meta_(self, other):
    check_inplace(self, _check_nextafter(self, other), "nextafter_")
    return self


def _check_frexp(self):
    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")


@impl("frexp.Tensor", "CPU")
def frexp(self):
    """x = mantissa * 2 ** exponent with |mantissa| in [0.5, 1); exponent is int32."""
    _check_frexp(self)
    m, e = np.frexp(_math_operand(self, self.dtype))
    return _wrap(laid_out(as_result(m, self.dtype), self)), \
        _wrap(laid_out(as_result(e, D.int32), self))


@impl("frexp.Tensor", "Meta")
def frexp_meta(self):
    _check_frexp(self)
    st = meta_strides(self._size, self, refs=True)
    return (_meta(self._size, self.dtype, st, device=self._device),
            _meta(self._size, D.int32, st, device=self._device))


def _check_angle(dt):
    if dt.is_complex:  # the bindings compute it as atan2(imag, real)
        raise RuntimeError("ember's angle kernel takes real tensors only")


def _angle(a):
    """The argument of a real number: pi for negative ones, 0 otherwise (NaN stays NaN)."""
    return np.where(a < 0, a.dtype.type(np.pi), np.where(np.isnan(a), a, a.dtype.type(0)))


unary("angle", _angle, result=_float_result, check=_check_angle)
unary("conj_physical", lambda a: np.conj(a) if a.dtype.kind == "c" else a.copy(),
      inplace="conj_physical_")


def _ldexp(a, b, dt):
    """a * 2 ** b, in the floating dtype of the two operands (integers give the default)."""
    with np.errstate(all="ignore"):
        return np.multiply(a, np.exp2(b, dtype=dt._np), dtype=dt._np)


def _check_ldexp(self, other, dt):
    """PyTorch's ldexp is mul(self, pow(2, other)): for a floating self that pow runs in
    self's dtype, whose exp2 kernel has no bool exponent."""
    if getattr(other, "dtype", None) is D.bool and getattr(self, "dtype", D.bool).is_floating_point:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    if getattr(other, "dtype", None) is D.float16 and getattr(self, "dtype", D.bool).is_complex:
        # (pow(2, other) then runs in complex32, which has no pow kernel)
        raise NotImplementedError("\"pow\" not implemented for 'ComplexHalf'")


binary("ldexp.Tensor", _ldexp, operands=_float_result, check=_check_ldexp,
       inplace="ldexp_.Tensor")


def _modulus(a):
    """|a|, a complex one as hypot(re, im): correctly rounded, as PyTorch's (NumPy's complex
    absolute can be an ulp off, which tips comparisons on the boundary)."""
    return np.hypot(a.real, a.imag) if a.dtype.kind == "c" else np.abs(a)


@impl("isclose", ("CPU", "Meta"))
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Equal elements (and, with equal_nan, two NaNs) are close; so are those with
    |self - other| <= atol + |rtol * other|, computed as PyTorch does: in the operands' dtype
    (complex differences by their modulus), integers and booleans in the default float dtype.
    Zero tolerances leave the exact comparison alone, so integers past 2**24 stay apart."""
    if isinstance(other, Tensor) and self.dtype is not other.dtype:
        raise RuntimeError(f"{_scalar_type_name(self.dtype)} did not match "
                           f"{_scalar_type_name(other.dtype)}")
    for tol, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{tol} must be greater than or equal to zero, but got {value:g}")
    shape = broadcast_shape(self._size, shape_of(other))   # PyTorch's message on a mismatch
    if self._np is None:
        return _meta(shape, D.bool, meta_strides(shape, self, other), device=self._device)
    a = _c32.values(self._np)   # complex32 compares as complex64 (its float16 parts exactly)
    b = _c32.values(other._np) if isinstance(other, Tensor) else np.asarray(other, a.dtype)
    close = np.asarray(a == b)
    floating = self.dtype.is_floating_point or self.dtype.is_complex   # (bfloat16's kind is "V")
    if equal_nan and floating:
        close |= np.isnan(a) & np.isnan(b)
    if rtol != 0 or atol != 0:
        if not floating:
            a, b = (x.astype(D.get_default_dtype()._np) for x in (a, b))
        with np.errstate(all="ignore"):
            allowed = _modulus(b * a.dtype.type(rtol)) + np.abs(a.dtype.type(atol))
            actual = _modulus(a - b)
            close |= np.isfinite(actual) & (actual <= allowed)
    return wrap_laid_out(close, self, other)
