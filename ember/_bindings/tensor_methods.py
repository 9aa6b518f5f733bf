"""Hand-written Tensor methods that are Python protocol rather than one op: the operators
(`a + b`, `a @ b`, `-a`, `a & b`, the reflected and in-place forms, the shifts), conversions
(`to`, `type`, `float()`, `cpu()`, ...), `contiguous`, `repeat`, `expand_as`, `sum_to_size`,
`set_`, `resize_`, and the `T`/`mT`/`H`/`mH`/`real`/`imag` properties. The operators call the
ops directly: `a + b` is one call of `add.Tensor`, the hot path."""
import numbers
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from ember._core.flags import warn_once

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import _grad_state
from .._core.device import device as _device_cls
from .._core.tensor import Tensor, _FAST, _overridden, _handle, _wrap_external
from .._core.python_key import PYTHON_KEY
from .._core.mode_stack import torch_dispatch_modes as _torch_dispatch_modes
from .._core.memory_format import contiguous_format, preserve_format, suggest_memory_format
from .._core.layout import sparse_coo as _sparse_coo
from .._dispatch.dispatcher import lookup as _op, impl as _impl
from .._dispatch import dispatcher as _dispatcher
from . import indexing as _indexing
from .generated import bitwise_and, bitwise_or, bitwise_xor, logical_and, logical_or, logical_xor
from .factories import _size_args, _RUNS_ON, tensor
from .._core.device import no_backend
from .overloads import real, imag, remainder
from .codegen import _missing_size
from . import arg_parser as _ap

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
_permute = _op("permute")
_transpose = _op("transpose.int")
_expand = _op("expand")
_clone = _op("clone")
_to_copy = _op("_to_copy")


# ---- Tensor methods ---------------------------------------------------------------------------
def _bad_to(args, kwargs):
    """PyTorch's parser on a Tensor.to call no overload takes (its 'invalid combination')."""
    got = ["Tensor" if isinstance(a, Tensor) else "torch.dtype" if isinstance(a, D.dtype)
           else type(a).__name__ for a in args]
    got += [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(f"to() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected (device, dtype, non_blocking, copy), "
                     f"(dtype, non_blocking, copy) or (tensor, non_blocking, copy)")


def _to_args(args, kwargs):
    """Tensor.to(dtype) / to(device, dtype) / to(other) / to(dtype=..., device=...)."""
    given = {k: v for k, v in kwargs.items() if k != "dtype"}
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if dtype is not None and not isinstance(dtype, D.dtype):
        if not isinstance(dtype, type) or dtype not in D.PYTHON_TYPE_DTYPES:
            raise _bad_to(args, dict(given, dtype=dtype))
        dtype = D.PYTHON_TYPE_DTYPES[dtype]
    for i, a in enumerate(args):
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, type) and a in D.PYTHON_TYPE_DTYPES:  # to(float) is to(float64)
            dtype = D.PYTHON_TYPE_DTYPES[a]
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif i and isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            # a device only comes first
            raise _bad_to(args, given)
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            device = _device_cls(a) if not isinstance(a, int) else _device_cls("cuda", a)
        elif isinstance(a, bool):
            copy = a if dtype is not None or device is not None else copy
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    if device is not None:
        device = _device_cls(device)
        if device.type not in _RUNS_ON:
            raise no_backend(device, None)  # what a CPU build says
    return dtype, device, copy, memory_format


def _to(self, *args, **kwargs):
    if type(self) not in _FAST and _overridden(self, *args):
        return _handle(Tensor.to, (self, *args), kwargs)
    dtype, device, copy, memory_format = _to_args(args, dict(kwargs))
    same_dtype = dtype is None or dtype is self.dtype
    same_device = device is None or device.type == self._device.type
    if same_dtype and same_device and not copy and (
            memory_format is None or memory_format is preserve_format or
            suggest_memory_format(self) is memory_format):
        return self
    return _to_copy(self, dtype, None if same_device else device, memory_format)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        if self.dtype in D.v3_dtypes and self._device.type == "cpu":
            return f"torch.{D.scalar_type_name(self.dtype)}Tensor"   # no legacy class exists
        from ..autograd.graph import _type_name
        return _type_name(self)
    if isinstance(dtype, str):
        names = {"torch." + name: d for d, name in D.TENSOR_TYPE_NAMES.items()}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = names[dtype]
    elif dtype is Tensor:                 # torch.Tensor stands for the default tensor type
        dtype = D.get_default_dtype()
    elif not isinstance(dtype, D.dtype):  # a legacy type: torch.DoubleTensor
        if getattr(dtype, "is_cuda", False):
            raise RuntimeError("Torch not compiled with CUDA enabled")
        dtype = dtype.dtype
    return _to(self, dtype)


_NO_OTHER = object()


def copy_(self, other=_NO_OTHER, non_blocking=False, **kwargs):
    """Tensor.copy_(other): PyTorch binds it by hand as `copy_(Tensor other, bool non_blocking)`
    and, like its other Tensor parameters, takes a Python number for `other` (a 0-dim tensor of
    the number's own dtype, then cast to self's: `x.copy_(3.0)` fills x with 3)."""
    if isinstance(other, Tensor) and type(self) in _FAST and type(other) in _FAST and not kwargs:
        return _copy_(self, other, non_blocking)
    if other is _NO_OTHER:
        if kwargs:
            raise TypeError('copy_() missing 1 required positional arguments: "other"')
        raise TypeError("copy_() received an invalid combination of arguments - got (), but "
                        "expected (Tensor other, bool non_blocking = False)")
    if kwargs:
        raise TypeError(f"copy_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if isinstance(other, (bool, int, float, complex)):
        other = tensor(other, dtype=D.bool if isinstance(other, bool) else D.int64
                       if isinstance(other, int) else D.float64 if isinstance(other, float)
                       else D.complex128)
    elif not isinstance(other, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    if _overridden(self, other):
        return _handle(Tensor.copy_, (self, other) if non_blocking is False else
                       (self, other, non_blocking))
    return _copy_(self, other, non_blocking)


def _contiguous(self, memory_format=None):
    if type(self) not in _FAST and _overridden(self):
        return _handle(Tensor.contiguous, (self,), {} if memory_format is None else {'memory_format': memory_format})
    if _dispatcher._modes:   # a capture records aten.contiguous whole, as torch.export does
        return _contiguous_op(self, memory_format=None if memory_format is contiguous_format
                              else memory_format)
    return _contiguous_composite(self, memory_format)


def _contiguous_composite(self, memory_format):
    if memory_format is None or memory_format is contiguous_format:
        return self if self.is_contiguous() else _clone(self, contiguous_format)
    if self.is_contiguous(memory_format):
        return self
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return _clone(self, memory_format)


_contiguous_op = _op("contiguous")
_impl(_contiguous_op, "CompositeImplicitAutograd")(_contiguous_composite)


def _sum_to_size(self, *size, **keyword):
    if keyword:   # x.sum_to_size(size=(1, 3))
        size = _ap.varargs_keyword("sum_to_size", "size", size, keyword)
    if type(self) not in _FAST and _overridden(self):
        return _handle(Tensor.sum_to_size, (self, *size))
    if not size:
        _missing_size("sum_to_size", "size")
    size = tuple(_ap.int_list_arg("sum_to_size", "size", 1, size, 0, True))
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


_repeat_op = _op("repeat")


def _repeat(self, *sizes, **keyword):
    if keyword:   # x.repeat(repeats=(1, 2))
        sizes = _ap.varargs_keyword("repeat", "repeats", sizes, keyword)
    if not sizes:
        _missing_size("repeat", "repeats")
    return _repeat_op(self, list(_ap.int_list_arg("repeat", "repeats", 1, sizes, 0, True)))


def _set_(self, source=None, storage_offset=None, size=None, stride=None):
    """set_(), set_(Tensor), set_(Storage) and set_(source, storage_offset, size, stride=None):
    make self view source's memory (a storage's, or a tensor's storage) with that geometry."""
    if source is None:   # set_(): an empty tensor, on a fresh storage
        source = self.new_empty((0,))
    overload_tensor = storage_offset is None and isinstance(source, Tensor)
    if not overload_tensor:
        source = _on_storage(self, source, storage_offset, size, stride)
    if source.dtype is not self.dtype:
        raise RuntimeError(f"Could not set tensor of type {D.c_type_name(source.dtype)} to a "
                           f"tensor of type {D.c_type_name(self.dtype)}")
    if overload_tensor and (self._sparse is PYTHON_KEY or _torch_dispatch_modes):
        # (ember declares set_.source_Tensor only; the storage overloads apply directly)
        # the op a `__torch_dispatch__` handler (a subclass's, a mode's) sees, as in PyTorch
        return _set_source_tensor(self, source)
    _set_to(self, source)
    self._bump_version()
    return self


@_impl("set_.source_Tensor", ("CPU", "Meta"))
def _set_to(self, source):
    """set_'s kernel: self views source's memory with source's geometry (the dispatcher counts
    the in-place write on self's version)."""
    self._np, self._size, self.dtype = source._np, source._size, source.dtype
    self._storage = source._storage_()
    if source._stride_ is not None:   # an empty view keeps its geometry explicitly
        self._stride_, self._offset_ = source._stride_, source._offset_
    else:
        self.__dict__.pop("_stride_", None)
        self.__dict__.pop("_offset_", None)
    if self._grad_acc is not None:
        from ..autograd.graph import reset_grad_accumulator
        reset_grad_accumulator(self)
    return self


_set_source_tensor = _op("set_.source_Tensor")


def _on_storage(self, source, storage_offset, size, stride):
    """The tensor of self's dtype that set_(source, storage_offset, size, stride) makes: over
    a storage (the whole of it, without a geometry) or over a tensor's storage."""
    from .._core.storage import UntypedStorage
    if isinstance(source, Tensor):
        storage = source._storage_()
    elif isinstance(source, UntypedStorage):
        storage = source
    elif isinstance(getattr(source, "_untyped_storage", None), UntypedStorage):  # TypedStorage
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {D.c_type_name(self.dtype)} or an "
                               f"UntypedStorage, but got type {_legacy_name(source.dtype)} for "
                               f"argument 1 'storage'")
        storage = source._untyped_storage
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                        f"{type(source).__name__}")
    if getattr(self, "fake_mode", None) is not None and storage._array is not None:
        raise RuntimeError(f'Attempted to set the storage of a tensor on device "meta" to a '
                           f'storage on different device "{storage.device}".  This is no '
                           f'longer allowed; the devices must match.')
    item = self.dtype.itemsize
    if storage_offset is None:
        storage_offset, size = 0, (storage.nbytes() // item,)
    elif size is None:
        raise TypeError("set_() missing the size of the (source, storage_offset, size, stride) "
                        "overload")
    size = tuple(size)
    if stride is None:
        stride = tuple(int(np.prod(size[i + 1:])) for i in range(len(size)))
    if storage._array is None:   # a meta storage: the geometry alone, over no bytes
        from .._core.tensor import _meta
        return _meta(size, self.dtype, tuple(stride), int(storage_offset), storage,
                     storage.device)
    flat = storage._bytes()
    whole = _wrap_external(flat[:len(flat) // item * item].view(self.dtype._np))
    whole.dtype, whole._storage = self.dtype, storage
    return _as_strided(whole, size, tuple(stride), storage_offset)


def _legacy_name(dtype):
    """The scalar type's name in PyTorch's messages (Float, Long, ...)."""
    return D.LEGACY_TYPE_NAMES[dtype][:-len("Tensor")]


# ---- operands the operators take --------------------------------------------------------------
# PyTorch's operators turn the TypeError of an operand their argument parser rejects (a NumPy
# array, a list, a string, None) into NotImplemented, so Python asks the other operand: a NumPy
# array then computes `tensor + array` itself, with NumPy's promotion, and __array_wrap__ below
# hands the result back as a tensor; for anything else Python raises its own TypeError
# ("unsupported operand type(s)"), and == / != fall back to identity.
_OPERAND_TYPES = (Tensor, int, float, complex, np.number, np.bool_)


def _is_operand(x):
    return isinstance(x, _OPERAND_TYPES) or hasattr(type(x), "__torch_function__")


def _operand_method(method):
    """method(self, other), or NotImplemented when PyTorch's parser would reject `other`."""
    def checked(self, other):
        if not _is_operand(other):
            return NotImplemented
        return method(self, other)
    checked.__name__ = checked.__qualname__ = method.__name__
    checked.__doc__ = method.__doc__
    return checked


def _array_wrap(self, array, context=None, return_scalar=False):
    """NumPy's hook for a ufunc that ran on a tensor (np.sin(t), array + t): its result as a
    tensor sharing the array's memory; a bool result comes back as uint8, as PyTorch's does."""
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    from .factories import from_numpy
    return from_numpy(np.asarray(array))


def _eq_method(self, other):
    if isinstance(other, np.ndarray):  # __eq__ alone takes an array (as a tensor) in PyTorch
        from .factories import from_numpy
        other = from_numpy(other)
    elif not _is_operand(other):
        return NotImplemented
    return _eq(self, other)


def _ne_method(self, other):
    if not _is_operand(other):
        return NotImplemented
    return _ne(self, other)


def _type_error_to_not_implemented(fn):
    """A binary operator that answers NotImplemented where its op refuses the other operand's
    type (a TypeError), so Python tries the other operand's reflected method, as PyTorch's
    Tensor operators do."""
    def operator(self, other):
        try:
            return fn(self, other)
        except TypeError:
            return NotImplemented
    operator.__name__ = operator.__qualname__ = getattr(fn, "__name__", "operator")
    return operator


def _tensor_only(fn):
    """@ and its reflection: a non-tensor operand gives NotImplemented."""
    return lambda self, other: fn(self, other) if isinstance(other, Tensor) else NotImplemented


def _rdiv(self, other):
    """other / self as PyTorch's __rtruediv__ computes it: reciprocal(self) * other (so the
    node is MulBackward0); 1/0 * 0 is NaN silently. An operand the parser rejects meets the
    `*` operator's own protocol (a NumPy array multiplies, as NumPy does)."""
    with np.errstate(all="ignore"):
        if not _is_operand(other):
            try:
                return _op("reciprocal")(self) * other
            except TypeError:
                return NotImplemented
        return _mul(_op("reciprocal")(self), other)


@_operand_method
def _rfloordiv(self, other):
    return _floor_divide(other, self)


@_operand_method
def _mod(self, other):
    return remainder(self, other)


@_operand_method
def _rmod(self, other):
    return remainder(other, self)


@_operand_method
def _rpow(self, other):
    return _pow(other, self)


@_operand_method
def _rmatmul(self, other):
    return _matmul(other, self)


@_operand_method
def _ifloordiv(self, other):
    return self.floor_divide_(other)


@_operand_method
def _imod(self, other):
    return self.remainder_(other)


@_operand_method
def _and(self, other):
    return bitwise_and(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_and(self, other)


@_operand_method
def _or(self, other):
    return bitwise_or(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_or(self, other)


@_operand_method
def _xor(self, other):
    return bitwise_xor(self, other) if self.dtype is not D.bool or not isinstance(
        other, Tensor) or other.dtype is not D.bool else logical_xor(self, other)


def _invert(self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _op("bitwise_not")(self)


def _mT(self, name="mT"):
    if type(self) not in _FAST and _overridden(self):
        return _handle(getattr(Tensor, name).__get__, (self,))
    if self.dim() == 0:   # deprecated: the tensor itself
        warn_once(f"Tensor.{name} is deprecated on 0-D tensors. " + (
            "This function is the identity in these cases." if name == "mT" else
            "Consider using x.conj()."))
        return self
    if self.dim() < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return _transpose(self, -2, -1)


def _mH(self):
    return _conj(_mT(self, "mH"))


def _H(self):
    if type(self) not in _FAST and _overridden(self):
        return _handle(Tensor.H.__get__, (self,))
    n = self.dim()
    if n == 0:
        warn_once("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
        return _conj(self)
    if n != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D "
                           f"tensor." + (" For batches of matrices, consider using tensor.mH"
                                         if n > 2 else ""))
    return _conj(_transpose(self, 0, 1))


def _T(self):
    if type(self) not in _FAST and _overridden(self):
        return _handle(Tensor.T.__get__, (self,))
    if self.dim() == 0:  # these warnings are PyTorch's TORCH_WARN_ONCE
        warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                  "these cases.")
    elif self.dim() != 2:
        warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                  "shape is deprecated and it will throw an error in a future release. "
                  "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                  "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    return _permute(self, tuple(reversed(range(self.dim()))))


def _conj(self):
    """A complex tensor's lazy conjugate: a view with the conjugate bit flipped (the `_conj`
    op, ember/_dispatch/math_bits.py); a real tensor itself, as in PyTorch. A sparse COO tensor
    has no conjugate bit: its values are conjugated (`conj_physical`)."""
    if not self.dtype.is_complex:
        return self
    if self.layout is _sparse_coo:
        return _op("conj_physical")(self)
    return _op("_conj")(self)


def _shift_operator(opname, reflected=False, inplace=False):
    op = _op(opname)
    if reflected:
        return _operand_method(lambda self, other: op(other, self))
    if inplace:
        inplace_op = _op(opname.replace(".", "_.", 1))
        return _operand_method(lambda self, other: inplace_op(self, other))
    return _operand_method(lambda self, other: op(self, other))


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
    results = [callable(v) for v in flat]
    for r in results:
        _check_scalar_result(r, self.dtype)
    values = tensor(results, dtype=self.dtype).reshape(self.shape)
    with _no_grad_guard():
        self.copy_(values)
    return self


def _check_resizable(self):
    # checked whatever the grad mode, as PyTorch does (inference mode skips autograd's checks)
    if self.requires_grad and not _grad_state.inference:
        raise RuntimeError("cannot resize variables that require grad")


def _resize_(self, *sizes, memory_format=None, **keyword):
    if keyword:   # x.resize_(size=(2, 3))
        sizes = _ap.varargs_keyword("resize_", "size", sizes, keyword)
    _check_resizable(self)
    return _op("resize_")(self, _size_args(sizes, name="resize_"), memory_format)


def _resize_as_(self, the_template, *, memory_format=None):
    _check_resizable(self)
    return _op("resize_as_")(self, the_template, memory_format)


def resize_as_(input, the_template, *, memory_format=None):
    """torch.resize_as_, with the method's check."""
    return _resize_as_(input, the_template, memory_format=memory_format)


def _resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=_user_stacklevel())
    from ..autograd._functions import Resize
    return Resize.apply(self, _size_args(sizes, name="resize") if sizes else ())


def _resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=_user_stacklevel())
    from ..autograd._functions import Resize
    return Resize.apply(self, tuple(tensor.size()))


def _check_scalar_result(value, dtype):
    """A Python function's result stored into a tensor element must be a number, with the
    TypeError Python's int() / float() conversion gives otherwise."""
    if isinstance(value, (numbers.Number, np.generic)):
        return
    kind = type(value).__name__
    if dtype.is_floating_point or dtype.is_complex:
        raise TypeError(f"must be real number, not {kind}")
    raise TypeError(f"'{kind}' object cannot be interpreted as an integer")


def _map_n(name, self, others, callable):
    """map_/map2_: callable(self's element, the others' elements) into self, elementwise over
    the others broadcast to self's shape (CPU only, like apply_)."""
    if self.requires_grad or any(o.requires_grad for o in others):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    for other in others:
        if other.dtype is not self.dtype:
            raise TypeError(f"{name}: expected {self.type()} for 'other' (got {other.type()})")
    columns = [self.detach().reshape(-1).tolist()] + \
        [o.detach().expand(self.shape).reshape(-1).tolist() for o in others]
    results = [callable(*items) for items in zip(*columns)]
    for r in results:
        _check_scalar_result(r, self.dtype)
    values = tensor(results, dtype=self.dtype)
    with _no_grad_guard():
        self.copy_(values.reshape(self.shape))
    return self


def _map_(self, tensor, callable):
    return _map_n("map_", self, (tensor,), callable)


def _map2_(self, x, y, callable):
    return _map_n("map2_", self, (x, y), callable)


def _fix_weakref(self):
    """PyTorch repairs the link from its C++ tensor to a Python object revived through a weak
    reference; an ember tensor is its Python object, so there is nothing to repair."""


def _record_stream(self, stream):
    """The op, which a dispatch mode or a subclass's handler sees; a CPU tensor has no stream to
    record, and PyTorch's CPU backend no kernel for it."""
    from .._core.stream import Stream
    if not isinstance(stream, Stream):
        raise RuntimeError("unknown parameter type")
    return _op("record_stream")(self, stream)


def _module_load(self, other, assign=False):
    """How load_state_dict maps a state-dict value onto this parameter or buffer when it swaps
    them (torch.__future__.get_swap_module_params_on_conversion())."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def _no_device(message, error=AssertionError):
    """Tensor.xpu(), .ipu(), .mtia(): moves to devices this build has no support for."""
    def move(self, *args, **kwargs):
        raise error(message)
    return move


def _volatile_get(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=_user_stacklevel())
    return False


def _volatile_set(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=_user_stacklevel())


def _complex_method(dtype):
    return lambda self, memory_format=None: self.to(dtype)


def _to_dtype(dtype):
    return lambda self, memory_format=preserve_format: _to(self, dtype, memory_format=memory_format)


def _view_as(self, other):
    if (type(self) not in _FAST or type(other) not in _FAST) and _overridden(self, other):
        return _handle(Tensor.view_as, (self, other))
    return _view(self, other._size)


def _reshape_as(self, other):
    if (type(self) not in _FAST or type(other) not in _FAST) and _overridden(self, other):
        return _handle(Tensor.reshape_as, (self, other))
    return self.reshape(other._size)


def _expand_as(self, other):
    if (type(self) not in _FAST or type(other) not in _FAST) and _overridden(self, other):
        return _handle(Tensor.expand_as, (self, other))
    return _expand(self, other._size, False)


def _reversed(self):
    """The tensor flipped along dim 0 (a 0-d tensor is its own reverse)."""
    return self if self.dim() == 0 else self.flip(0)


def _contains(self, element):
    """`element in tensor`: whether some entry equals `element` (a number or a tensor)."""
    if isinstance(element, (Tensor, int, float, bool, complex)):
        return bool((element == self).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                       f"a {type(element)}.")


# ---- __torch_function__ ----------------------------------------------------------------------
def _as_subclass(self, cls):
    """A `cls` instance over the same data, attached to the autograd graph through an alias
    (AliasBackward0), as PyTorch's as_subclass."""
    if not isinstance(cls, type) or not issubclass(cls, Tensor):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of torch.Tensor, not "
                        f"{cls!r}")
    result = _alias(self)
    return result if type(result) is cls else _retype(result, cls)


_TENSOR_SLOTS = tuple(n for n in Tensor.__slots__ if n not in ("__dict__", "__weakref__"))


def _retype(t, cls):
    """A fresh tensor `t` as a `cls` instance: its class changed in place, or, for a subclass
    whose own __slots__ give it another object layout (which __class__ assignment refuses), a
    new `cls` object holding t's state. A `t` that a `__torch_dispatch__` handler returned is
    already its class's Python object, which PyTorch neither re-classes nor copies."""
    if t._sparse is PYTHON_KEY:
        check_unowned(t, cls)
        return t
    try:
        t.__class__ = cls
        return t
    except TypeError:
        new = object.__new__(cls)
        for name in _TENSOR_SLOTS:  # through the slots themselves: a Python-key class's mark
            slot = Tensor.__dict__[name]  # shadows `_sparse`'s
            try:
                slot.__set__(new, slot.__get__(t))
            except AttributeError:
                pass
        new.__dict__.update(t.__dict__)
        return new


def check_unowned(t, cls):
    """PyTorch's refusal to give `cls` a tensor already bound to a Python object of a class that
    is not `cls` or one of its subclasses (the result of a `__torch_dispatch__` handler)."""
    if not isinstance(t, cls):
        raise RuntimeError(f"Creating a new Tensor subclass {cls.__name__} but the raw Tensor "
                           f"object is already associated to a python object of type "
                           f"{type(t).__name__} which is not a subclass of the requested type")


def _make_subclass(cls, data, require_grad=False, **kwargs):
    """`cls` over data's storage, detached, requiring grad as asked (Tensor._make_subclass)."""
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not "
                        f"{type(data).__name__}")
    t = _retype(data.detach(), cls)   # a fresh alias of the storage: its class may change
    if kwargs.get("dispatch_sizes_strides_policy") in ("strides", "sizes") and \
            t._sparse is PYTHON_KEY:
        t._dispatch_strides = True   # metadata queries ask the handler (_aten/tensor_metadata.py)
    if require_grad:
        t.requires_grad = True   # Parameter(...) works inside transforms
    return t


_alias = _op("alias")
_neg, _abs = _op("neg"), _op("abs")
_as_strided = _op("as_strided")
_lt, _le, _gt, _ge = (_op(f"{n}.Tensor") for n in ("lt", "le", "gt", "ge"))

# The hottest operators check their arguments inline (Note [The one check on the hot path] in
# ember/_core/torch_function.py); ember.overrides.install gives the other methods a wrapper.
_OPERATORS = {   # name: (its body, the method PyTorch's __torch_function__ receives)
    "__add__": ("_add(self, other, 1)", "add"), "__radd__": ("_add(self, other, 1)", "add"),
    "__iadd__": ("_add_(self, other, 1)", "add_"), "__sub__": ("_sub(self, other, 1)", "sub"),
    "__rsub__": ("_rsub(self, other, 1)", "__rsub__"),
    "__isub__": ("_sub_(self, other, 1)", "sub_"), "__mul__": ("_mul(self, other)", "mul"),
    "__rmul__": ("_mul(self, other)", "mul"), "__imul__": ("_mul_(self, other)", "mul_"),
    "__truediv__": ("_div(self, other, None)", "div"),
    "__itruediv__": ("_div_(self, other, None)", "div_"),
    "__matmul__": ("_matmul(self, other) if isinstance(other, Tensor) else NotImplemented",
                   "matmul"), "__pow__": ("_pow(self, other)", "pow"),
    "__floordiv__": ("_floor_divide(self, other)", "__floordiv__"),
    "__lt__": ("_lt(self, other)", "lt"), "__le__": ("_le(self, other)", "le"),
    "__gt__": ("_gt(self, other)", "gt"), "__ge__": ("_ge(self, other)", "ge"),
    "__eq__": ("_eq_method(self, other)", "__eq__"), "__ne__": ("_ne_method(self, other)", "ne"),
    "__neg__": ("_neg(self)", "neg"), "__abs__": ("_abs(self)", "abs"),
}


# the arithmetic operators call their op's dispatch directly when no mode is on: the hottest
# calls of all skip call_positional's frame (0.5k of a + b's 20.8k instructions)
_DISPATCH = {name: globals()[name].__self__._dispatch for name in (  # (bound call_positional)
    "_add", "_add_", "_sub", "_sub_", "_rsub", "_mul", "_mul_", "_div", "_div_")}


def _direct(body):
    """`_add(self, other, 1)` as `_add_dispatch((self, other, 1)) if not _modes else ...`."""
    name, _, rest = body.partition("(")
    if name not in _DISPATCH:
        return body
    return f"{body} if _modes else {name}_dispatch(({rest[:-1]},))"


def _operators():
    from .._core import torch_function as tf
    env = dict(globals(), _FAST=tf.FAST_TYPES, _dispatch=tf.torch_function_dispatch,
               _NOT_HANDLED=tf.NOT_HANDLED, _NUMPY_SCALARS=(np.number, np.bool_),
               _numpy_scalar=_ap.numpy_scalar, _modes=_dispatcher._modes,
               **{f"{name}_dispatch": fn for name, fn in _DISPATCH.items()})
    chunks = []
    for name, (body, public) in _OPERATORS.items():
        params = "self, other" if "other" in body else "self"
        func = name if public == name else f"Tensor.{public}"
        chunks.append(f"def {name}({params}):\n"
                      f"    if {' or '.join(f'type({p}) not in _FAST' for p in params.split(', '))}"
                      f"{' or other is None' if 'other' in params and not name.startswith(('__eq', '__ne')) else ''}:\n"
                      f"{'        if not _is_operand(other): return NotImplemented' + chr(10) if 'other' in params and not name.startswith(('__eq', '__ne')) else ''}"
                      f"        result = _dispatch({func}, ({params},), ({params},), {{}}, Tensor, True)\n"
                      f"        if result is not _NOT_HANDLED:\n"
                      f"            return result\n"
                      + ("        if isinstance(other, _NUMPY_SCALARS):\n"
                         "            other = _numpy_scalar(other)\n" if "other" in params else "")
                      + (f"    return {body}\n" if params == "self" else
                         # a refused operand type: NotImplemented, so Python tries the other's
                         f"    try:\n        return {_direct(body)}\n"
                         f"    except TypeError:\n        return NotImplemented\n"))
    exec(compile("\n".join(chunks), "<ember tensor operators>", "exec"), env)
    out = {}
    for name in _OPERATORS:
        fn = env[name]
        fn.__qualname__ = f"Tensor.{name}"
        fn.__ember_torch_function__ = True
        out[name] = fn
    return out


_BINARY_OPERATORS = dict(
    __rtruediv__=_rdiv, __rdiv__=_rdiv,
    # Python 2's names, which PyTorch's Tensor still has
    __div__=_operand_method(lambda s, o: _div(s, o, None)),
    __idiv__=_operand_method(lambda s, o: _div_(s, o, None)),
    __rfloordiv__=_rfloordiv, __ifloordiv__=_ifloordiv,
    __mod__=_mod, __rmod__=_rmod, __imod__=_imod,
    __rpow__=_rpow, __ipow__=lambda s, o: _pow_(s, o),
    __and__=_and, __rand__=_and, __or__=_or, __ror__=_or, __xor__=_xor, __rxor__=_xor,
    __iand__=_operand_method(lambda s, o: s.copy_(_and(s, o))),
    __ior__=_operand_method(lambda s, o: s.copy_(_or(s, o))),
    __ixor__=_operand_method(lambda s, o: s.copy_(_xor(s, o))),
    __lshift__=_shift_operator("bitwise_left_shift.Tensor"),
    __rlshift__=_shift_operator("bitwise_left_shift.Tensor", reflected=True),
    __ilshift__=_shift_operator("bitwise_left_shift.Tensor", inplace=True),
    __rshift__=_shift_operator("bitwise_right_shift.Tensor"),
    __rrshift__=_shift_operator("bitwise_right_shift.Tensor", reflected=True),
    __irshift__=_shift_operator("bitwise_right_shift.Tensor", inplace=True),
)

METHODS = dict(
    __getitem__=_indexing.getitem, __setitem__=_indexing.setitem,
    __delitem__=_indexing.delitem,
    __nonzero__=lambda s: s.__bool__(), __long__=lambda s: s.__int__(),
    __reversed__=_reversed, __contains__=_contains,
    __rmatmul__=_tensor_only(_rmatmul),
    __pos__=lambda s: s, __invert__=_invert, __array_wrap__=_array_wrap,
    **{name: _type_error_to_not_implemented(fn) for name, fn in _BINARY_OPERATORS.items()},
    to=_to, type=_type, type_as=lambda s, o: _to(s, o.dtype), copy_=copy_,
    cpu=lambda s, memory_format=None: _to(s, "cpu"),
    float=_to_dtype(D.float32), double=_to_dtype(D.float64), half=_to_dtype(D.float16),
    bfloat16=_to_dtype(D.bfloat16), long=_to_dtype(D.int64), int=_to_dtype(D.int32),
    short=_to_dtype(D.int16), char=_to_dtype(D.int8), byte=_to_dtype(D.uint8),
    bool=_to_dtype(D.bool), cfloat=_complex_method(D.complex64),
    cdouble=_complex_method(D.complex128), chalf=_complex_method(D.complex32),
    contiguous=_contiguous, view_as=_view_as, reshape_as=_reshape_as, expand_as=_expand_as,
    repeat=_repeat, sum_to_size=_sum_to_size, set_=_set_,
    resize_=_resize_, resize_as_=_resize_as_, resize=_resize, resize_as=_resize_as,
    map_=_map_, map2_=_map2_, record_stream=_record_stream, module_load=_module_load,
    conj=_conj,
    fill_diagonal_=_fill_diagonal_, apply_=_apply_,
    is_distributed=lambda s: False, _fix_weakref=_fix_weakref,
    xpu=_no_device("Torch not compiled with XPU enabled"),
    ipu=_no_device("PyTorch is not linked with support for ipu devices", RuntimeError),
    mtia=_no_device("Torch not compiled with MTIA enabled. Ensure you have `import "
                    "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and "
                    "include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target "
                    "dependency!"),
    as_subclass=_as_subclass, _make_subclass=staticmethod(_make_subclass),
    **_operators(),
)
# these check inline (the ops' own code calls them on plain tensors)
for _checked in (_to, _contiguous, _sum_to_size, _mT, _T, _view_as, _reshape_as, _expand_as):
    _checked.__ember_torch_function__ = True
PROPERTIES = dict(
    mT=property(_mT), T=property(_T), H=property(_H), mH=property(_mH),
    volatile=property(_volatile_get, _volatile_set),
    real=property(real, lambda self, value: real(self).copy_(value)),
    imag=property(imag, lambda self, value: imag(self).copy_(value)),
)
