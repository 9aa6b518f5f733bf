"""Tensor: a strided view of an UntypedStorage (PyTorch's TensorImpl) plus autograd metadata.

A CPU tensor keeps `_np`, the NumPy array that *is* its view of the storage's bytes (same
memory, same offset/strides), so kernels use it directly and no op rebuilds views with
`as_strided`. A meta tensor has `_np = None` and keeps its size/stride/offset explicitly.

Hot attributes are slots. Rarely set ones (`_grad`, `_base`, hooks, ...) are class-level
defaults that an instance overrides in its `__dict__` only when it needs to, so creating a
tensor costs a handful of attribute writes.

Most methods (`add`, `sum`, `view`, ...) are attached by `ember._bindings` (generated from the
schema lines) and `ember._refs`, the layers that turn PyTorch's Python signatures into op calls.
"""
import ctypes
import operator
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from ember._core.flags import warn_once

import numpy as np
from .float8 import as_strided

from . import dtype as D
from . import complex32 as _c32
from .device import cpu as _CPU, meta as _META
from .layout import strided, sparse_coo, sparse_csr
from .memory_format import contiguous_format
from .storage import UntypedStorage, _root_array
from .resizable import mark_not_resizable
from . import caching_allocator as _allocator
from .grad_mode import _grad_state
from . import torch_function as _torch_function
from .mode_stack import torch_dispatch_modes as _torch_dispatch_modes
from .python_key import PYTHON_KEY, _disabled_torch_dispatch_impl, mark_subclass, sparse_in_slot
from .math_bits import MathBits, resolved_values, set_math_bits


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""
    __module__ = "ember"  # printed as <class 'torch.Size'> is

    def __new__(cls, sizes=()):
        """Ints, or objects with __index__ (a 0-d integer tensor); anything else is a TypeError.
        Tensor.shape builds its Size with tuple.__new__ and skips this check."""
        self = tuple.__new__(cls, sizes)
        for item in self:
            if item.__class__ is not int:
                return tuple.__new__(cls, [_size_item(x, i) for i, x in enumerate(self)])
        return self

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __mul__(self, n):
        return _new_size(Size, tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


def _size_item(x, i):
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                        f"'{type(x).__name__}')") from None


_new_size = tuple.__new__


def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _warn_scalar_of_grad_tensor():
    """float()/complex() of a tensor that requires grad, in grad mode: PyTorch warns, once per
    process (not under no_grad, e.g. LBFGS's float(closure()) inside its no_grad step)."""
    if not _grad_state.enabled:
        return
    warn_once("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
              "behavior.\nConsider using tensor.detach() first.")


OWN_DTYPE = object()  # Tensor.grad_dtype's default: whatever the tensor's dtype is


# PyTorch's refusal of requires_grad_ / retain_grad while a functorch transform runs the function
_INSIDE_TRANSFORM = ("You are attempting to call Tensor.{} inside of a function being transformed "
                     "by a functorch transform. This is unsupported, please attempt to use the "
                     "functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call {} "
                     "outside of a function being transformed instead.")


def _require_grad(t, flag=True):
    """`t.requires_grad_(flag)` for ember's own code: the method is refused while a functorch
    transform runs the user's function, the attribute (as PyTorch's internals set it) is not."""
    t.requires_grad = flag
    return t


class Tensor:
    __module__ = "ember"  # printed as <class 'torch.Tensor'> is
    # `_sparse` is a slot, not a class default like the cold state below, because the dispatcher
    # reads it for every tensor argument of every call: Python 3.11 specializes a slot's read
    # (9 ns) and not a class attribute's (37 ns). A subclass with __torch_dispatch__ shadows it
    # with its class's Python-key mark (python_key.py).
    __slots__ = ("_np", "_size", "dtype", "_device", "_storage", "_rg", "grad_fn", "_output_nr",
                 "_sparse", "__dict__", "__weakref__")

    # cold state: class-level defaults, overridden per instance only when set
    _stride_ = None
    _offset_ = None
    _grad = None
    _grad_dtype = OWN_DTYPE  # Tensor.grad_dtype: the tensor's own until set
    _base = None
    _nograd_view = False  # a view of a tensor requiring grad, made with grad mode off (views.py)
    _creation_meta = None  # how a view was made, when in-place writes to it must be refused
    _multi_output_view = False  # a view of an output of a multi-view op: no in-place writes
    _view_fn = None  # how autograd remakes a dtype-changing view from its base (_aten/shape.py)
    _grad_acc = None
    _acc_keepalive = None  # a leaf's AccumulateGrad while hooks sit on it (autograd.graph)
    _retains_grad = False
    _post_acc_hooks = None
    _backward_hooks = None
    _inference = False
    _is_param = False
    _is_uninitialized = False  # nn's UninitializedParameter/Buffer: no data to read yet
    _lazy = None  # on the lazy device: its LazyTensor (an IR value or device data, ember/_lazy)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # repr names a subclass (`Sub([1.])`), as PyTorch's does; nn.Parameter sets it back
        cls._is_subclass_to_print = True
        mark_subclass(cls, Tensor)

    _is_subclass_to_print = False

    # __new__, the legacy constructor `torch.Tensor(2, 3)`, is installed by ember/_bindings
    # (legacy_tensor_types.tensor_new), as the other Python bindings are
    def __init__(self, *args, **kwargs):
        pass

    # ---- __torch_function__ ---------------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default: run func with subclasses' overrides off and give tensor results the
        subclass (`_convert`), so subclass instances survive ops; NotImplemented when another
        type in `types` is not a superclass of cls."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with _torch_function.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in _torch_function.default_nowrap_functions():
                return ret
            return _convert(ret, cls)

    # a subclass that overrides it gets the Python dispatch key (ember/_core/python_key.py)
    __torch_dispatch__ = _disabled_torch_dispatch_impl

    # ---- construction -------------------------------------------------------------------
    def _as_subclass(self, cls):
        t = object.__new__(cls)
        t._np, t._size, t.dtype, t._device = self._np, self._size, self.dtype, self._device
        t._storage = self._storage_()
        t._rg, t.grad_fn, t._output_nr = False, None, 0
        if self._sparse is not None and self._sparse is not PYTHON_KEY:
            t._sparse = self._sparse  # a conjugate/negative view, a sparse tensor stay so
        elif sparse_in_slot(cls):
            t._sparse = None
        if self._stride_ is not None:  # meta tensors and empty views keep these explicitly
            t._stride_, t._offset_ = self._stride_, self._offset_
            if self._lazy is not None:
                t._lazy = self._lazy
        return t

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None,
                               dtype=None, layout=strided, device=None, pin_memory=False,
                               requires_grad=False, dispatch_sizes_strides_policy=None,
                               dispatch_device=False, dispatch_layout=False,
                               _extra_dispatch_keys=None, storage_size=None):
        """A `cls` instance with sizes, strides, dtype and device but no data (PyTorch's wrapper
        subclass): every op on it goes to `cls.__torch_dispatch__`, which computes with the
        tensors the instance wraps."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"cls must be a subclass of torch.Tensor, not {cls!r}")
        if cls._sparse is not PYTHON_KEY:
            raise TypeError(f"{cls.__name__} must define __torch_dispatch__")
        if layout is not strided:
            raise NotImplementedError(f"_make_wrapper_subclass: layout {layout} (ember's "
                                      "wrapper subclasses are strided)")
        size = tuple(int(s) for s in size)
        strides = _contiguous_strides(size) if strides is None else tuple(int(s) for s in strides)
        if len(strides) != len(size):
            raise RuntimeError(f"_make_wrapper_subclass: {len(size)} sizes but {len(strides)} "
                               "strides")
        from .device import device as _device_cls
        t = object.__new__(cls)
        if dispatch_sizes_strides_policy in ("strides", "sizes"):
            t._dispatch_strides = True   # metadata queries ask the handler (tensor_metadata.py)
        t._np = None
        t._size = size
        t.dtype = D.get_default_dtype() if dtype is None else dtype
        t._device = _CPU if device is None else _device_cls(device)
        t._stride_ = strides
        t._offset_ = 0 if storage_offset is None else int(storage_offset)
        if storage_size is None:
            storage_size = 0 if 0 in size else 1 + t._offset_ + sum(
                (n - 1) * s for n, s in zip(size, strides))
        t._storage = UntypedStorage._meta(storage_size * t.dtype.itemsize, t._device)
        t._rg = False
        t.grad_fn = None
        t._output_nr = 0
        if requires_grad:
            t.requires_grad = True
        return t

    # ---- metadata -----------------------------------------------------------------------
    @property
    def shape(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.shape.__get__, (self,))
        return _new_size(Size, self._size)

    def size(self, dim=None):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.size, (self,), {} if dim is None else {'dim': dim})
        if dim is None:
            return _new_size(Size, self._size)
        if dim.__class__ is not int:    # NumPy ints pass, bool and float are PyTorch's TypeError
            from .._bindings.arg_parser import int_arg
            dim = int_arg("size", "dim", 1, dim)
        return self._size[_wrap_dim(dim, len(self._size))]

    @property
    def ndim(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.ndim.__get__, (self,))
        return len(self._size)

    def dim(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.dim, (self,))
        return len(self._size)

    ndimension = dim

    def numel(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.numel, (self,))
        n = 1
        for s in self._size:
            n *= s
        return n

    nelement = numel

    @property
    def device(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.device.__get__, (self,))
        return self._device

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_meta(self):
        return self._device.type == "meta"

    @property
    def is_sparse(self):
        return type(self._sparse) is tuple

    @property
    def is_quantized(self):
        return False

    @property
    def layout(self):
        sparse = self._sparse
        if sparse is None:
            return strided
        return sparse_coo if type(sparse) is tuple else sparse.layout

    def get_device(self):
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    def is_floating_point(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.is_floating_point, (self,))
        return self.dtype.is_floating_point

    def is_complex(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.is_complex, (self,))
        return self.dtype.is_complex

    def is_signed(self):
        return self.dtype.is_signed

    def is_nonzero(self):
        """The truth of a one-element tensor (what `bool(t)` asks)."""
        return self.__bool__()

    def is_same_size(self, other):
        return self._size == other._size

    def is_conj(self):
        """Whether this is a lazy conjugate view (ember/_dispatch/math_bits.py)."""
        return type(self._sparse) is MathBits and self._sparse.conj

    def is_neg(self):
        """Whether this is a lazy negative view (ember/_dispatch/math_bits.py)."""
        return type(self._sparse) is MathBits and self._sparse.neg

    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        raise AssertionError("Torch not compiled with CUDA enabled")

    def dim_order(self, *, ambiguity_check=False):
        """The dims from outermost to innermost in memory (contiguous: 0, 1, ..., n-1)."""
        strides = self.stride()
        return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))

    def storage_type(self):
        from ..storage import _legacy_storage_type
        return _legacy_storage_type(self.dtype)

    def const_data_ptr(self):
        return self.data_ptr()

    def mutable_data_ptr(self):
        return self.data_ptr()

    def reinforce(self, reward):
        raise RuntimeError("reinforce() was removed.\nUse torch.distributions instead.\n"
                           "See https://pytorch.org/docs/main/distributions.html")

    is_mps = is_xpu = is_mtia = is_ipu = is_xla = is_maia = is_vulkan = is_mkldnn = property(
        lambda self: False)
    is_nested = property(lambda self: False)
    is_sparse_csr = property(lambda self: self.layout is sparse_csr)

    def stride(self, dim=None):
        if self._sparse is not None:
            if self.layout is not strided:  # PyTorch's for sparse
                if type(self._sparse) is not tuple:
                    raise RuntimeError("Sparse CSR tensors do not have strides")
                st = (0,) * len(self._size)
                return st if dim is None else st[_wrap_dim(dim, len(self._size))]
            if "_dispatch_strides" in self.__dict__:   # its handler's (_aten/tensor_metadata.py)
                from .._aten.tensor_metadata import sym_stride
                st = tuple(sym_stride(self))
                return st if dim is None else st[_wrap_dim(dim, len(self._size))]
        st = self._stride_
        if st is None:
            a = self._np
            # an empty kernel result is contiguous in PyTorch; NumPy's strides for it are
            # arbitrary (empty views set `_stride_` explicitly)
            st = tuple(s // a.itemsize for s in a.strides) if a.size else \
                _contiguous_strides(self._size)
        if dim is None:
            return st
        return st[_wrap_dim(dim, len(self._size))]

    def storage_offset(self):
        if self._offset_ is not None:
            return self._offset_
        if self._np is None:
            return 0
        base = self._storage_().data_ptr()
        return (self._np.__array_interface__["data"][0] - base) // self.dtype.itemsize

    def is_contiguous(self, memory_format=None):
        if type(self) not in _FAST:
            if _overridden(self):
                return _handle(Tensor.is_contiguous, (self,), {} if memory_format is None else {'memory_format': memory_format})
            if "_dispatch_strides" in self.__dict__:   # its handler's (_aten/tensor_metadata.py)
                from .._aten import tensor_metadata as md
                return md.is_contiguous(self) if memory_format is None else \
                    md.is_contiguous_memory_format(self, memory_format)
        if memory_format is not None and memory_format is not _contiguous_format():
            from .memory_format import is_contiguous_as
            return is_contiguous_as(self, memory_format)
        if self._np is not None:
            return self._np.flags.c_contiguous
        expected = 1
        for size, st in zip(reversed(self._size), reversed(self.stride())):
            if size == 1:
                continue
            if size == 0:
                return True
            if st != expected:
                return False
            expected *= size
        return True

    def is_set_to(self, other):
        return self._storage_() is other._storage_() and self._size == other._size and \
            self.stride() == other.stride() and self.storage_offset() == other.storage_offset()

    def _storage_(self):
        """This tensor's storage object, created on first use for kernel results."""
        s = self._storage
        if s is None:
            if self._np is None:
                s = UntypedStorage._meta(self.numel() * self.dtype.itemsize, self._device)
            else:
                s = UntypedStorage._adopt(_root_array(self._np), self._device)
            self._storage = s
        return s

    def untyped_storage(self):
        return self._storage_()

    def storage(self):
        from ..storage import TypedStorage
        return TypedStorage(self._storage_(), self.dtype)

    def _typed_storage(self):
        """Tensor.storage() without TypedStorage's deprecation warning (for library code)."""
        from ..storage import TypedStorage
        return TypedStorage(self._storage_(), self.dtype, _internal=True)

    def data_ptr(self):
        if self._np is None or self._np.size == 0:  # PyTorch: no data for zero elements
            return 0
        return self._np.__array_interface__["data"][0]

    def share_memory_(self):
        """Move the storage into shared memory (no-op if it is there), so it can cross processes."""
        from ..multiprocessing.shared_memory import share_tensor_storage
        return share_tensor_storage(self)

    def is_shared(self):
        return self._storage_().is_shared()

    @property
    def _version(self):
        return self._storage_()._version

    def _bump_version(self):
        self._storage_()._version += 1

    # ---- autograd metadata --------------------------------------------------------------
    @property
    def requires_grad(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.requires_grad.__get__, (self,))
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if value and self._inference and not _grad_state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        if self._nograd_view:  # its own flag, not its base's (Note [Views made in no_grad mode])
            self.__dict__["_own_rg"] = bool(value)
        self._rg = bool(value)

    def requires_grad_(self, requires_grad=True):
        if type(requires_grad) is not bool:  # PyTorch's parser takes only a bool
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {_type_name_of(requires_grad)}")
        if _grad_state.transforms:   # ember's own code sets `.requires_grad` instead
            raise RuntimeError(_INSIDE_TRANSFORM.format(
                "requires_grad_() (or perhaps using torch.autograd.functional.* APIs)",
                "requires_grad_()"))
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.is_leaf.__get__, (self,))
        return self.grad_fn is None

    @property
    def grad(self):
        if type(self) not in _FAST and _overridden(self):
            return _handle(Tensor.grad.__get__, (self,))
        if self.grad_fn is not None and not self._retains_grad and self._grad is None and \
                _warn_non_leaf_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more information.", UserWarning,
                stacklevel=_user_stacklevel())
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            allowed = self.dtype if self._grad_dtype is OWN_DTYPE else self._grad_dtype
            if value.dtype is not allowed and allowed is not None:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{D.c_type_name(value.dtype)}' "
                    f"to a tensor with grad_dtype '{D.scalar_type_name(allowed)}'. The gradient "
                    "must match the tensor's grad_dtype (defaults to the tensor's dtype). You "
                    "can set the tensor's grad_dtype attribute with a specific dtype, or None to "
                    "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
                    "tensor and its gradient may break downstream systems that assume they match.")
            if value._size != self._size:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._size)}' "
                                   f"to a tensor of size '{list(self._size)}'. Please ensure that "
                                   "the gradient and the tensor are the same size")
            if value._device != self._device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def grad_dtype(self):
        """The dtype `.grad` must have (the tensor's own unless set; None allows any): the
        autograd engine casts incoming gradients to it. Leaf tensors only."""
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.dtype if self._grad_dtype is OWN_DTYPE else self._grad_dtype

    @grad_dtype.setter
    def grad_dtype(self, value):
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, D.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                               f"{type(value).__name__}")
        grad = self._grad
        if grad is not None and value is not None and grad.dtype is not value:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{D.scalar_type_name(value)}' because there is already "
                f"a gradient with dtype '{D.c_type_name(grad.dtype)}'. Please clear the gradient "
                "(.grad = None) before changing grad_dtype, or ensure the new grad_dtype matches "
                "the existing gradient's dtype.")
        self._grad_dtype = value

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def data(self):
        """The same data as a new leaf that autograd does not track (and a separate version).
        A Python-key tensor's is what its handler makes of `aten.detach`, as in PyTorch."""
        if self._sparse is PYTHON_KEY:
            t = self.detach()
            if isinstance(t, Tensor) and t is not self:
                t._storage = _same_bytes(t._storage_(), t._device, 0)
            return t
        t = _alias_with_bits(self)
        t._storage = _same_bytes(self._storage_(), self._device, 0)
        return t

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(other).__name__}")
        if other.layout != self.layout:
            raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and "
                               "`tensor` have incompatible tensor type.")
        if self._rg and not (other.dtype.is_floating_point or other.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        # PyTorch's set_data: the new data under this tensor's own version counter
        version = self._storage_()._version
        self._np, self._size, self.dtype, self._device = \
            other._np, other._size, other.dtype, other._device
        self._storage = _same_bytes(other._storage_(), other._device, version)
        if other._stride_ is not None:
            self._stride_, self._offset_ = other._stride_, other._offset_
        else:
            self.__dict__.pop("_stride_", None)
            self.__dict__.pop("_offset_", None)
        if other._lazy is not None or self._lazy is not None:
            self._lazy = other._lazy

    def detach(self):
        """A new tensor sharing storage (and version counter), cut from the graph."""
        if _torch_dispatch_modes or self._sparse is PYTHON_KEY:  # a handler sees aten.detach
            from .._dispatch.dispatcher import cached_lookup
            return cached_lookup("detach")(self)
        return _alias_with_bits(self)  # (PyTorch's detach keeps the bits)

    def detach_(self):
        if self._base is not None and self._base._rg:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        if self._rg:   # a graph that saved it can no longer give it its place (SavedTensor)
            self.__dict__["_detached_inplace"] = True
        self.grad_fn = None
        self._rg = False
        self.__dict__.pop("_fw_grad", None)  # forward AD's tangent goes too
        return self

    def is_inference(self):
        return self._inference

    def _is_view(self):
        return self._base is not None

    def retain_grad(self):
        if _grad_state.transforms:
            raise RuntimeError(_INSIDE_TRANSFORM.format("retain_grad()", "retain_grad()"))
        from ..autograd.graph import retain_grad
        retain_grad(self)

    def register_hook(self, hook):
        from ..autograd.graph import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        from ..autograd.graph import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from ..autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- conversion to Python / NumPy ---------------------------------------------------
    def numpy(self, *, force=False):
        if force:  # PyTorch's force: detached, on the CPU, the conjugate/negative bits applied
            return resolved_values(self.detach().cpu()).numpy()
        bits = self._sparse if type(self._sparse) is MathBits else None
        if self._sparse is PYTHON_KEY:
            raise RuntimeError(".numpy() is not supported for tensor subclasses.")
        if self._sparse is not None and bits is None:
            raise TypeError(f"can't convert {self.layout.c10_name} layout tensor to numpy. Use "
                            "Tensor.to_dense() first.")
        if self._np is None:
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if self._rg and _grad_state.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if bits is not None:  # the array would hold the memory, not the values
            bit, short = ("conjugate", "conj") if bits.conj else ("negative", "neg")
            raise RuntimeError(f"Can't call numpy() on Tensor that has {bit} bit set. Use "
                               f"tensor.resolve_{short}().numpy() instead.")
        if self.dtype in D.numpyless_dtypes:  # NumPy has no such type (see their twins)
            raise TypeError(f"Got unsupported ScalarType {D.scalar_type_name(self.dtype)}")
        mark_not_resizable(self._storage_())   # the array shares its memory: it may not grow
        # a view, as each of PyTorch's numpy() calls makes a new array: its flags are the
        # caller's, the tensor's own array stays writeable (Note [Held arrays])
        return self._np.view()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def tolist(self):
        if type(self._sparse) is MathBits:
            return self.resolve_conj().resolve_neg().tolist()
        if self._sparse is PYTHON_KEY:
            raise RuntimeError(f".tolist() is not supported for tensor subclasses, got "
                               f"{type(self).__name__}")
        if self._sparse is not None:
            raise RuntimeError("tolist() is not supported for sparse tensors: to_dense() first")
        if self._np is None:
            if self._lazy is not None:  # reading a lazy tensor's values runs its pending graph
                return self.detach().to("cpu").tolist()
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        a = self._np
        if self.dtype in D.numpyless_dtypes:
            a = _widen(a)
        return a.tolist()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               "Scalar")
        if self._np is None:
            if self._sparse is PYTHON_KEY:  # a wrapper subclass: its handler gives the value
                from .._dispatch.dispatcher import cached_lookup
                return cached_lookup("_local_scalar_dense")(self)
            if self._lazy is not None:
                return self.detach().to("cpu").item()
            if self._sparse is not None and not self.is_sparse:  # no compressed kernel
                raise NotImplementedError("Could not run 'aten::_local_scalar_dense' with "
                                          "arguments from the 'SparseCsrCPU' backend.")
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if type(self._sparse) is MathBits:
            return self.resolve_conj().resolve_neg().item()
        a = self._np
        if self.dtype in D.numpyless_dtypes:
            a = _widen(a)
        return a.reshape(()).item()

    def __float__(self):
        if self.requires_grad:
            _warn_scalar_of_grad_tensor()
        return float(self._real_scalar("double"))

    def __int__(self):
        return int(self._real_scalar("int64_t"))

    def _real_scalar(self, c_type):
        """The value for float()/int(): a complex one only with a zero imaginary part (c10's
        checked conversion)."""
        value = self._python_scalar()
        if isinstance(value, complex):
            if value.imag != 0:
                raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
            value = value.real
        return value

    def __complex__(self):
        if self.requires_grad:
            _warn_scalar_of_grad_tensor()
        return complex(self._python_scalar())

    def _python_scalar(self):
        if self.numel() != 1:  # ValueError here, where item() raises RuntimeError
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                               if self.numel() else
                               "Boolean value of Tensor with no values is ambiguous")
        return bool(self.item())

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def __iter__(self):
        if not self._size:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        from .tensor_str import tensor_repr
        return tensor_repr(self, tensor_contents=tensor_contents)

    def __format__(self, spec):
        if self.dim() == 0 and (self._np is not None or self._lazy is not None):
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        from ..serialization.pickling import _reduce_tensor
        return _reduce_tensor(self)

    def __deepcopy__(self, memo):
        if _torch_function.is_torch_function_mode_enabled():  # FakeCopyMode copies into fakes
            return _torch_function.handle_torch_function(Tensor.__deepcopy__, (self,), self, memo)
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        from .grad_mode import no_grad
        import copy
        bits = self._sparse if type(self._sparse) is MathBits else None
        with no_grad():
            if self._np is not None and self.layout is strided and self._lazy is None:
                # a copy of the storage, shared by every tensor and storage copied with this memo
                from ..storage import _deepcopy_untyped
                storage = _deepcopy_untyped(self._storage_(), memo)
                new = _deepcopy_shell(self, "new_empty", "non-wrapper subclasses",
                                      "implement new_empty() and for which that function",
                                      "new_empty() to return")
                new = new.set_(storage, self.storage_offset(), self.size(), self.stride())
                if bits is not None:  # PyTorch's copy of a conjugate/negative view: its values
                    new = resolved_values(set_math_bits(new, bits.conj, bits.neg))
            else:
                new = _deepcopy_shell(self, "clone", "wrapper subclasses",
                                      "implement clone() and for which cloning",
                                      "clone() to return")
        new._rg = self._rg
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        for k, v in self.__dict__.items():
            if k not in ("_grad", "_base", "_grad_acc", "_stride_", "_offset_", "_lazy",
                         "_nograd_view", "_multi_output_view", "_creation_meta", "_view_fn") and \
                    v is not bits:
                setattr(new, k, copy.deepcopy(v, memo))
        if type(self) is not Tensor:  # a subclass's own __slots__ (PyTorch copies them too)
            import copyreg
            for slot in copyreg._slotnames(type(self)):
                if slot not in Tensor.__slots__ and hasattr(self, slot):
                    setattr(new, slot, copy.deepcopy(getattr(self, slot), memo))
        memo[id(self)] = new
        return new

    # ---- DLPack ---------------------------------------------------------------------------
    def __dlpack__(self, *, stream=None, **kwargs):
        if self._rg:
            raise BufferError("Can't export tensors that require gradient, use "
                              "tensor.detach()")
        if self._np is None:
            raise BufferError("Cannot pack tensors on meta")
        if self.dtype is D.bfloat16:
            capsule = self._np.view(np.uint16).__dlpack__(stream=stream, **kwargs)
            _dltensor(capsule).code = _DL_BFLOAT
            return capsule
        return self._np.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)

    __array_priority__ = 1000


_warn_non_leaf_grad = True


def _deepcopy_shell(t, method, kind, contract, intent):
    """The tensor __deepcopy__ fills: `t.new_empty([])` (later set_ to the copied storage) for a
    tensor with data, `t.clone()` for one without (a wrapper subclass, a meta or sparse
    tensor). A subclass's own method runs, with __torch_function__ overrides off as in PyTorch
    (where __deepcopy__ runs inside Tensor.__torch_function__), and must keep its type."""
    if type(t) is Tensor:
        return Tensor.new_empty(t, (0,)) if method == "new_empty" else t.clone()
    with _torch_function.DisableTorchFunctionSubclass():
        new = t.new_empty([]) if method == "new_empty" else t.clone()
    if type(new) is not type(t):
        raise RuntimeError(
            f"The default implementation of __deepcopy__() for {kind} only works for subclass "
            f"types that {contract} returns another instance of the same subclass. You should "
            f"either properly implement {method}() for your subclass or override "
            f"__deepcopy__() if it is intended behavior for {intent} an instance of a "
            "different type.")
    return new


# ---- DLPack capsules ---------------------------------------------------------------------------
# A DLPack capsule holds a DLTensor: data pointer, device, shape, strides and a type code. NumPy
# makes and reads the capsules, but its DLPack has no bfloat16; a bfloat16 tensor therefore
# travels as uint16 bits, and only the DLTensor's type code is rewritten (kDLBfloat <-> kDLUInt)
# on the way out and in.
_DL_UINT, _DL_BFLOAT = 1, 4


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dltensor(capsule):
    """The DLTensor inside a capsule. A versioned capsule (DLPack >= 1.0) puts a version, the
    manager context, the deleter and flags (8 bytes each) before it."""
    name = _capsule_name(capsule)
    address = _capsule_pointer(capsule, name)
    if name == b"dltensor_versioned":
        address += 32
    return _DLTensor.from_address(address)


class _Capsule:
    """Hands an existing capsule to np.from_dlpack, which wants an object with __dlpack__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


class _WritableView:
    """An array interface over the same memory marked writable. A pre-1.0 capsule has no
    read-only flag, so its memory is writable, but NumPy imports it read-only."""

    def __init__(self, arr):
        self.__array_interface__ = dict(arr.__array_interface__,
                                        data=(arr.__array_interface__["data"][0], False))
        self.owner = arr  # keeps the capsule's memory alive


def array_from_dlpack(obj):
    """A NumPy array sharing the memory of a DLPack producer (or of a raw capsule)."""
    capsule = obj
    if hasattr(obj, "__dlpack__"):
        try:
            capsule = obj.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer older than DLPack 1.0
            capsule = obj.__dlpack__()
    name = _capsule_name(capsule)
    if name not in (b"dltensor", b"dltensor_versioned"):  # "used_dltensor": consumed before
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor "
                           "capsules can be consumed only once, so you might have already "
                           "constructed a tensor from it once.")
    legacy = name == b"dltensor"
    dl = _dltensor(capsule)
    bfloat16 = dl.code == _DL_BFLOAT and dl.bits == 16
    if bfloat16:
        dl.code = _DL_UINT
    strides = [dl.strides[i] for i in range(dl.ndim)] if dl.strides else None
    arr = np.from_dlpack(_Capsule(capsule))
    if not arr.size and strides is not None:  # NumPy drops an empty array's strides
        arr = as_strided(arr, arr.shape, [s * arr.itemsize for s in strides])
    if legacy and not arr.flags.writeable:
        arr = np.asarray(_WritableView(arr))
    if bfloat16:  # after the array interface, which has no name for bfloat16
        arr = arr.view(D.bfloat16._np)
    return arr


def _contiguous_format():
    return contiguous_format


def _widen(a):
    """An array of a dtype NumPy has no type of, exactly as one of a type it has (to read its
    values: ml_dtypes' have few NumPy loops)."""
    return _c32.widen(a) if a.dtype == _c32.NP_COMPLEX32 else a.astype(np.float32)


def _wrap_dim(dim, ndim):
    n = ndim if ndim else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


_from_np = D._from_np
_new = object.__new__


def _wrap(arr):
    """A fresh CPU tensor for a NumPy array that no other tensor uses (a kernel's result). Its
    bytes move into a caching-allocator block unless they are in one already."""
    if _allocator.enabled:
        arr = _allocator.into_block(arr)
    return _wrap_external(arr)


def _wrap_external(arr, dtype=None, size=None):
    """A CPU tensor over memory the allocator does not own (from_numpy, shared memory, mmap),
    or over a block a kernel wrote into (then the caller knows the `dtype`, and may know the
    `size`: arr.shape, as a tuple the caller has already)."""
    t = _new(Tensor)
    t._np = arr
    t._size = arr.shape if size is None else size
    t.dtype = _from_np[arr.dtype] if dtype is None else dtype
    t._device = _CPU
    t._storage = None
    t._rg = False
    t.grad_fn = None
    t._output_nr = 0
    t._sparse = None
    return t


def _wrap_any(x):
    """_wrap for kernels whose NumPy call may return a NumPy scalar instead of a 0-d array."""
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    return _wrap(x)


def _view_of(arr, src):
    """A tensor for `arr`, a NumPy view into `src`'s memory: it shares `src`'s storage."""
    t = _new(Tensor)
    t._np = arr
    t._size = arr.shape
    t.dtype = _from_np[arr.dtype]
    t._device = src._device
    t._storage = src._storage_()
    t._rg = False
    t.grad_fn = None
    t._output_nr = 0
    t._sparse = None
    return t


def _meta(shape, dtype, stride=None, offset=0, storage=None, device=_META):
    """A tensor without data (a meta kernel's result). Kernels pass their first input's device;
    when that is a 0-dim CPU tensor riding along with meta ones, the result is still meta."""
    t = _new(Tensor)
    t._np = None
    t._size = tuple(shape)
    t.dtype = dtype
    t._device = _META if device.type == "cpu" else device
    t._storage = storage
    t._rg = False
    t.grad_fn = None
    t._output_nr = 0
    t._sparse = None
    t._stride_ = tuple(stride) if stride is not None else _contiguous_strides(t._size)
    t._offset_ = offset
    return t


def _meta_view(shape, src, stride, offset):
    return _meta(shape, src.dtype, stride, offset, src._storage_(), src._device)


def _same_bytes(storage, device, version):
    """A storage over `storage`'s bytes with a version counter of its own, at `version`
    (`.data` and `.data =`: the same memory, but writes through one are not the other's)."""
    s = UntypedStorage._adopt(storage._array, device) if storage._array is not None else \
        UntypedStorage._meta(storage._nbytes, device)
    s._version = version
    return s


def _alias_with_bits(src):
    """An alias of `src` that stands for the same values: a conjugate/negative view's alias
    carries its bits (`_alias` gives the memory as it is)."""
    t = _alias(src)
    if type(src._sparse) is MathBits:
        t._sparse = src._sparse
    return t


def _alias(src):
    """Same storage, same view, no autograd history (detach)."""
    if src._np is None:
        alias = getattr(src, "_functorch_alias", None)  # a vmap BatchedTensor wraps its batch
        if alias is not None:
            return alias()
        if src._sparse is PYTHON_KEY:  # a wrapper subclass: its handler makes the alias
            return src.detach()
        if type(src._sparse) is tuple:  # the same indices, an alias of the values
            from .sparse import make_sparse
            indices, values, coalesced = src._sparse
            return make_sparse(indices, _alias(values), src._size, coalesced)
        if src._sparse is not None and type(src._sparse) is not MathBits:
            from .sparse_compressed import make_compressed
            parts = src._sparse
            return make_compressed(parts.layout, parts.compressed_indices, parts.plain_indices,
                                   _alias(parts.values), src._size)
        t = _meta_view(src._size, src, src.stride(), src.storage_offset())
        if src._lazy is not None:  # the same lazy tensor: one IR value for both
            t._lazy = src._lazy
        return t
    t = _view_of(src._np, src)
    t.dtype = src.dtype
    if src._stride_ is not None:  # an empty CPU view keeps its metadata explicitly
        t._stride_, t._offset_ = src._stride_, src._offset_
    return t


_FAST = _torch_function.FAST_TYPES


def _type_name_of(value):
    """A value's type as PyTorch's argument parser names it (`int`, `numpy.bool`)."""
    t = type(value)
    if isinstance(value, Tensor):
        return "Tensor"
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _overridden(*args):
    return _torch_function.has_torch_function(args, skip_exact=Tensor)


def _handle(public, args, kwargs=None):
    """A hand-written method's call handed to __torch_function__ (Note [The one check on the hot
    path] in torch_function.py: the methods the ops themselves call check inline)."""
    return _torch_function.handle_torch_function(public, args, *args, c_level=True,
                                                 **(kwargs or {}))


def _convert(ret, cls):
    """ret with its tensors (also inside a tuple or list) viewed as cls (`as_subclass`)."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


# the hot path's one check (Note [The one check on the hot path] in torch_function.py)
_torch_function.never_dispatches(Tensor)
for _checked in ("shape", "size", "ndim", "dim", "numel", "device", "is_floating_point",
                 "is_complex", "is_contiguous", "requires_grad", "is_leaf", "grad"):
    _attr = Tensor.__dict__[_checked]
    (_attr.fget if isinstance(_attr, property) else _attr).__ember_torch_function__ = True
_torch_function.never_dispatches(Size, D.dtype, type(_CPU), type(strided), type(contiguous_format),
                                 argument_only=True)
