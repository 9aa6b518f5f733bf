"""Hand-written Tensor methods that are Python protocol rather than one op: the operators
(`a + b`, `a @ b`, `-a`, `a & b`, the reflected and in-place forms, the shifts), conversions
(`to`, `type`, `float()`, `cpu()`, ...), `contiguous`, `repeat`, `expand_as`, `sum_to_size`,
`set_`, `resize_`, and the `T`/`mT`/`H`/`mH`/`real`/`imag` properties. The operators call the
ops directly: `a + b` is one call of `add.Tensor`, the hot path."""
import warnings

import numpy as np

from .._core import dtype as D
from .._core.device import device as _device_cls
from .._core.tensor import Tensor, Size
from .._core.memory_format import contiguous_format, preserve_format, suggest_memory_format
from .._dispatch.dispatcher import lookup as _op
from . import indexing as _indexing
from .generated import bitwise_and, bitwise_or, bitwise_xor, logical_and, logical_or, logical_xor
from .factories import _size_args, _dev, tensor
from .overloads import real, imag, remainder

# ---- elementwise ------------------------------------------------------------------------------
# the arithmetic operators pass every argument of their op, so they take its positional call
_add = _op("add.Tensor").call_positional
_add_ = _op("add_.Tensor").call_positional
_sub = _op("sub.Tensor").call_positional
_sub_ = _op("sub_.Tensor").call_positional
_rsub = _op("rsub.Tensor").call_positional
_mul = _op("mul.Tensor").call_positional
_mul_ = _op("mul_.Tensor").call_positional
_div = _op("div.Tensor_mode").call_positional
_div_ = _op("div_.Tensor_mode").call_positional
_floor_divide = _op("floor_divide")
_pow = _op("pow.Tensor_Tensor")
_pow_ = _op("pow_.Tensor")
_eq, _ne, _lt, _le, _gt, _ge = (_op(f"{n}.Tensor") for n in ("eq", "ne", "lt", "le", "gt", "ge"))
_copy_ = _op("copy_")


# ---- reductions -------------------------------------------------------------------------------
_sum = _op("sum.dim_IntList")
_matmul = _op("matmul")


# ---- shape ------------------------------------------------------------------------------------
_view = _op("view")
_unsafe_view = _op("_unsafe_view")
_permute = _op("permute")
_transpose = _op("transpose.int")
_expand = _op("expand")
_clone = _op("clone")
_to_copy = _op("_to_copy")


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        return tuple(int(s) for s in shape[0])
    return tuple(int(s) for s in shape)


# ---- Tensor methods ---------------------------------------------------------------------------
def _to_args(args, kwargs):
    """Tensor.to(dtype) / to(device, dtype) / to(other) / to(dtype=..., device=...)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            device = _device_cls(a) if not isinstance(a, int) else _device_cls("cuda", a)
        elif isinstance(a, bool):
            copy = a if dtype is not None or device is not None else copy
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return dtype, _dev(device), copy, memory_format


def _to(self, *args, **kwargs):
    dtype, device, copy, memory_format = _to_args(args, dict(kwargs))
    same_dtype = dtype is None or dtype is self.dtype
    same_device = device is None or device.type == self._device.type
    if same_dtype and same_device and not copy and (
            memory_format is None or memory_format is preserve_format or
            suggest_memory_format(self) is memory_format):
        return self
    return _to_copy(self, dtype, device, memory_format)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        from ..autograd.graph import _type_name
        return _type_name(self)
    if isinstance(dtype, str):
        names = {"torch.FloatTensor": D.float32, "torch.DoubleTensor": D.float64,
                 "torch.HalfTensor": D.float16, "torch.LongTensor": D.int64,
                 "torch.IntTensor": D.int32, "torch.ShortTensor": D.int16,
                 "torch.CharTensor": D.int8, "torch.ByteTensor": D.uint8,
                 "torch.BoolTensor": D.bool, "torch.BFloat16Tensor": D.bfloat16}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = names[dtype]
    return _to(self, dtype)


def _contiguous(self, memory_format=None):
    if memory_format is None or memory_format is contiguous_format:
        return self if self.is_contiguous() else _clone(self, contiguous_format)
    return self if self.is_contiguous(memory_format) else _clone(self, memory_format)


def _sum_to_size(self, *size):
    size = _shape_args(size)
    if self._size == size:
        return self
    lead = len(self._size) - len(size)
    if lead < 0:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(self._size)}}}.")
    dims = list(range(lead))
    for i, s in enumerate(size):
        if s == 1 and self._size[lead + i] != 1:
            dims.append(lead + i)
        elif s != self._size[lead + i]:
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                               f"{{{list(self._size)}}}.")
    r = _sum(self, dims, True, None) if dims else self
    return _view(r, size) if lead or r._size != size else r


def _repeat(self, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    x = self.reshape((1,) * (len(sizes) - self.dim()) + self._size)
    expanded = []
    for r, s in zip(sizes, x._size):
        expanded += [r, s]
    y = _expand(x.reshape(tuple(v for s in x._size for v in (1, s))), tuple(expanded), False)
    # always a fresh tensor, even where a view could express the result
    return _unsafe_view(_clone(y, contiguous_format), tuple(r * s for r, s in zip(sizes, x._size)))


def _set_(self, source):
    self._np, self._size, self.dtype = source._np, source._size, source.dtype
    self._storage = source._storage_()
    self._bump_version()
    return self


def _eq_method(self, other):
    if not isinstance(other, (Tensor, int, float, bool, complex, np.number, np.ndarray)):
        return False
    return _eq(self, other)


def _ne_method(self, other):
    if not isinstance(other, (Tensor, int, float, bool, complex, np.number, np.ndarray)):
        return True
    return _ne(self, other)


def _rdiv(self, other):
    """other / self as PyTorch's __rtruediv__ computes it: reciprocal(self) * other (so the
    node is MulBackward0); 1/0 * 0 is NaN silently."""
    with np.errstate(all="ignore"):
        return _mul(_op("reciprocal")(self), other)


def _rfloordiv(self, other):
    return _floor_divide(other, self)


def _rmod(self, other):
    return remainder(other, self)


def _rpow(self, other):
    return _pow(other, self)


def _rmatmul(self, other):
    return _matmul(other, self)


def _ifloordiv(self, other):
    return self.copy_(_floor_divide(self, other))


def _imod(self, other):
    return self.copy_(remainder(self, other))


def _and(self, other):
    return bitwise_and(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_and(self, other)


def _or(self, other):
    return bitwise_or(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_or(self, other)


def _xor(self, other):
    return bitwise_xor(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_xor(self, other)


def _invert(self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _op("bitwise_not")(self)


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return _transpose(self, -2, -1)


def _T(self):
    if self.dim() not in (0, 2):
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                      "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=2)
    return _permute(self, tuple(reversed(range(self.dim()))))


def _conj(self):
    """ember has no lazy conjugate bit: conj of a complex tensor is the conj_physical op (so
    autograd and the meta device see it), of a real one the tensor itself, as in PyTorch."""
    return _op("conj_physical")(self) if self.dtype.is_complex else self


def _shift_operator(opname, reflected=False, inplace=False):
    op = _op(opname)
    if reflected:
        return lambda self, other: op(other, self)
    if inplace:
        inplace_op = _op(opname.replace(".", "_.", 1))
        return lambda self, other: inplace_op(self, other)
    return lambda self, other: op(self, other)


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all dims equal); a tall matrix with wrap=True restarts the
    diagonal every n + 1 rows, as NumPy's fill_diagonal does."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    with _no_grad_guard():
        arr = np.zeros(self.shape, dtype=bool)
        np.fill_diagonal(arr, True, wrap=wrap)
        mask = tensor(arr, device=self.device)
    return self.masked_fill_(mask, fill_value)


def _no_grad_guard():
    from .._core.grad_mode import no_grad
    return no_grad()


def _apply_(self, callable):
    """Call a Python function on every element, in place (CPU only, like PyTorch)."""
    flat = self.detach().reshape(-1).tolist()
    values = tensor([callable(v) for v in flat], dtype=self.dtype).reshape(self.shape)
    with _no_grad_guard():
        self.copy_(values)
    return self


def _check_resizable(self):
    # checked whatever the grad mode, as PyTorch does
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def _resize_(self, *sizes, memory_format=None):
    _check_resizable(self)
    return _op("resize_")(self, _size_args(sizes), memory_format)


def _resize_as_(self, the_template, *, memory_format=None):
    _check_resizable(self)
    return _op("resize_as_")(self, the_template, memory_format)


def _complex_method(dtype):
    return lambda self, memory_format=None: self.to(dtype)


def _chalf(self, memory_format=None):
    raise RuntimeError("ember has no complex32 (ComplexHalf) dtype: Tensor.chalf() is not "
                       "supported")


def _to_dtype(dtype):
    return lambda self, memory_format=None: _to(self, dtype)


def _reversed(self):
    """The tensor flipped along dim 0 (a 0-d tensor is its own reverse)."""
    return self if self.dim() == 0 else self.flip(0)


def _contains(self, element):
    """`element in tensor`: whether some entry equals `element` (a number or a tensor)."""
    if isinstance(element, (Tensor, int, float, bool, complex)):
        return bool((element == self).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                       f"a {type(element)}.")


METHODS = dict(
    __getitem__=_indexing.getitem, __setitem__=_indexing.setitem,
    __add__=lambda s, o: _add(s, o, 1), __radd__=lambda s, o: _add(s, o, 1),
    __iadd__=lambda s, o: _add_(s, o, 1),
    __sub__=lambda s, o: _sub(s, o, 1), __rsub__=lambda s, o: _rsub(s, o, 1),
    __isub__=lambda s, o: _sub_(s, o, 1),
    __mul__=lambda s, o: _mul(s, o), __rmul__=lambda s, o: _mul(s, o),
    __imul__=lambda s, o: _mul_(s, o),
    __truediv__=lambda s, o: _div(s, o, None), __rtruediv__=_rdiv,
    __itruediv__=lambda s, o: _div_(s, o, None),
    # Python 2's names, which PyTorch's Tensor still has
    __div__=lambda s, o: _div(s, o, None), __rdiv__=_rdiv,
    __idiv__=lambda s, o: _div_(s, o, None),
    __nonzero__=lambda s: s.__bool__(), __long__=lambda s: s.__int__(),
    __reversed__=_reversed, __contains__=_contains,
    __floordiv__=_floor_divide, __rfloordiv__=_rfloordiv, __ifloordiv__=_ifloordiv,
    __mod__=remainder, __rmod__=_rmod, __imod__=_imod,
    __pow__=_pow, __rpow__=_rpow, __ipow__=_pow_,
    __matmul__=_matmul, __rmatmul__=_rmatmul,
    __neg__=_op("neg"), __pos__=lambda s: s, __abs__=_op("abs"), __invert__=_invert,
    __eq__=_eq_method, __ne__=_ne_method, __lt__=_op("lt.Tensor"), __le__=_op("le.Tensor"),
    __gt__=_op("gt.Tensor"), __ge__=_op("ge.Tensor"),
    __and__=_and, __rand__=_and, __or__=_or, __ror__=_or, __xor__=_xor, __rxor__=_xor,
    __iand__=lambda s, o: s.copy_(_and(s, o)), __ior__=lambda s, o: s.copy_(_or(s, o)),
    __ixor__=lambda s, o: s.copy_(_xor(s, o)),
    __lshift__=_shift_operator("bitwise_left_shift.Tensor"),
    __rlshift__=_shift_operator("bitwise_left_shift.Tensor", reflected=True),
    __ilshift__=_shift_operator("bitwise_left_shift.Tensor", inplace=True),
    __rshift__=_shift_operator("bitwise_right_shift.Tensor"),
    __rrshift__=_shift_operator("bitwise_right_shift.Tensor", reflected=True),
    __irshift__=_shift_operator("bitwise_right_shift.Tensor", inplace=True),
    to=_to, type=_type, type_as=lambda s, o: _to(s, o.dtype),
    cpu=lambda s, memory_format=None: _to(s, "cpu"),
    float=_to_dtype(D.float32), double=_to_dtype(D.float64), half=_to_dtype(D.float16),
    bfloat16=_to_dtype(D.bfloat16), long=_to_dtype(D.int64), int=_to_dtype(D.int32),
    short=_to_dtype(D.int16), char=_to_dtype(D.int8), byte=_to_dtype(D.uint8),
    bool=_to_dtype(D.bool), cfloat=_complex_method(D.complex64),
    cdouble=_complex_method(D.complex128), chalf=_chalf,
    contiguous=_contiguous, view_as=lambda s, o: _view(s, o._size),
    reshape_as=lambda s, o: s.reshape(o._size),
    expand_as=lambda s, o: _expand(s, o._size, False),
    repeat=_repeat, sum_to_size=_sum_to_size, set_=_set_,
    resize_=_resize_, resize_as_=_resize_as_,
    conj=_conj, resolve_conj=lambda s: s, resolve_neg=lambda s: s,
    fill_diagonal_=_fill_diagonal_, apply_=_apply_,
)
PROPERTIES = dict(
    mT=property(_mT), T=property(_T), H=property(lambda s: _conj(_T(s))),
    mH=property(lambda s: _conj(_mT(s))),
    real=property(real, lambda self, value: real(self).copy_(value)),
    imag=property(imag, lambda self, value: imag(self).copy_(value)),
)
