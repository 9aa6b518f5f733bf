"""torch.storage: UntypedStorage (the flat byte buffer of ember._core.storage) and TypedStorage,
PyTorch's older typed view of the same bytes that `Tensor.storage()` still returns, with its
deprecation warning. A TypedStorage reads and writes the untyped bytes as elements of its dtype."""
import builtins
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

from ._core.storage import UntypedStorage

__all__ = ["UntypedStorage", "TypedStorage"]

_DEPRECATED = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
               "will be the only storage class. This should only matter to you if you are using "
               "storages directly.  To access UntypedStorage directly, use "
               "tensor.untyped_storage() instead of tensor.storage()")


_warned = [False]
_always_warn = [False]


def _warn_typed_storage_removal(stacklevel=2):
    """PyTorch's deprecation warning: the first time only, unless always-warn is set."""
    if _always_warn[0] or not _warned[0]:
        warnings.warn(_DEPRECATED, UserWarning, stacklevel=_user_stacklevel())
        _warned[0] = True


def _set_always_warn_typed_storage_removal(always_warn):
    _always_warn[0] = bool(always_warn)


def _get_always_warn_typed_storage_removal():
    return _always_warn[0]


def _reset_warn_typed_storage_removal():
    """Let the next TypedStorage use warn again (the warning is once per process otherwise)."""
    _warned[0] = False


_ARG_ERROR = ("TypedStorage.__init__ received an invalid combination of arguments. Expected one "
              "of:\n * (*, torch.device device, torch.dtype dtype)\n * (int size, *, torch.device "
              "device, torch.dtype dtype)\n * (Sequence data, *, torch.device device, torch.dtype "
              "dtype)\n * (*, UntypedStorage wrap_storage, torch.dtype dtype)")

# A quantized storage holds its elements' integer representations.
_QUANTIZED = {"quint8": np.uint8, "quint4x2": np.uint8, "quint2x4": np.uint8,
              "qint32": np.int32, "qint8": np.int8}


def _np_dtype(dtype):
    """The NumPy dtype a storage of `dtype` reads its bytes as."""
    return _QUANTIZED.get(str(dtype).split(".")[-1]) or dtype._np


class TypedStorage:
    """The elements of one dtype in an UntypedStorage. Its public methods warn that
    TypedStorage is deprecated, as PyTorch's do; the underscored twins (`_size`, `_setitem`,
    ...) are the same operations without the warning, for library code."""
    is_sparse = False

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if cls is _LegacyStorage:
            raise RuntimeError("Only child classes of _LegacyStorage can be instantiated")
        if cls is TypedStorage:
            return object.__new__(cls)
        return cls._new_legacy(args, wrap_storage, dtype, device)

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        """TypedStorage(dtype=..., device=...) empty, (size, ...) zeroed, (sequence, ...) of
        those values, or over existing bytes: (wrap_storage=untyped, dtype=...); ember also
        calls it as TypedStorage(untyped, dtype)."""
        if len(args) == 2 and isinstance(args[0], UntypedStorage):   # ember's internal form
            wrap_storage, dtype = args
            args = ()
        if wrap_storage is not None:
            if args:
                raise RuntimeError(_ARG_ERROR + "\nNo positional arguments should be given "
                                   "when using 'wrap_storage'")
            if dtype is None:
                raise RuntimeError(_ARG_ERROR + "\nArgument 'dtype' must be specified")
            if not isinstance(dtype, _dtype_cls()):
                raise TypeError(_ARG_ERROR + f"\nArgument 'dtype' must be torch.dtype, not "
                                f"{type(dtype)}")
            if device is not None:
                raise RuntimeError(_ARG_ERROR + "\nArgument 'device' should not be specified "
                                   "when 'wrap_storage' is given")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(_ARG_ERROR + f"\nArgument 'wrap_storage' must be "
                                f"UntypedStorage, but got {type(wrap_storage)}")
            untyped = wrap_storage
        else:
            if dtype is None:
                from ._core.dtype import get_default_dtype
                dtype = get_default_dtype()
            untyped = _new_untyped(args, dtype, device, _ARG_ERROR)
        self._untyped_storage = untyped
        self.dtype = dtype

    @property
    def _cdata(self):
        """The identity of the underlying storage (PyTorch: its StorageImpl's address): equal
        for TypedStorages over the same bytes."""
        return id(self._untyped_storage)

    def _elements(self):
        """The storage's bytes as a NumPy array of this dtype (a view: writes go through)."""
        raw = self._untyped_storage._bytes()
        n = raw.nbytes // self.dtype.itemsize
        return raw[:n * self.dtype.itemsize].view(_np_dtype(self.dtype))

    def _new_wrapped_storage(self, untyped):
        return TypedStorage(wrap_storage=untyped, dtype=self.dtype, _internal=True)

    # -- what a storage is: the public names warn, the underscored ones do not

    @property
    def device(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device.type == "cuda"

    def untyped(self):
        _warn_typed_storage_removal()
        return self._untyped_storage

    def _size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self):
        _warn_typed_storage_removal()
        return self._size()

    def __len__(self):
        _warn_typed_storage_removal()
        return self._size()

    def _nbytes(self):
        return self._untyped_storage.nbytes()

    def nbytes(self):
        _warn_typed_storage_removal()
        return self._nbytes()

    def _element_size(self):
        return self.dtype.itemsize

    def element_size(self):
        _warn_typed_storage_removal()
        return self._element_size()

    def _data_ptr(self):
        return self._untyped_storage.data_ptr()

    def data_ptr(self):
        _warn_typed_storage_removal()
        return self._data_ptr()

    def _pickle_storage_type(self):
        return _LEGACY_STORAGES[self.dtype].__name__

    def pickle_storage_type(self):
        _warn_typed_storage_removal()
        return self._pickle_storage_type()

    def type(self, dtype=None, non_blocking=False):
        """'torch.FloatStorage' (the legacy class of this dtype and device)."""
        _warn_typed_storage_removal()
        if dtype is not None:
            raise NotImplementedError("TypedStorage.type(dtype): use the cast methods "
                                      "(.float(), .int(), ...)")
        legacy = _legacy_class_for(self.dtype, self._untyped_storage.device.type)
        if legacy is None:
            return "torch.storage.TypedStorage"
        return f"{legacy.__module__}.{legacy.__name__}"

    def _check_cpu(self, what):
        if self._untyped_storage.device.type != "cpu":
            raise NotImplementedError(
                f"Not available for '{self._untyped_storage.device.type}' device type")

    def _check_data(self):
        """Copying out of a storage needs its data; a meta storage has none."""
        if self._untyped_storage.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    # -- elements

    def _getitem(self, i):
        self._check_cpu("__getitem__")
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        n = self._size()
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return self._elements()[i].item()

    def __getitem__(self, i):
        _warn_typed_storage_removal()
        return self._getitem(i)

    def _setitem(self, i, value):
        self._check_cpu("__setitem__")
        if not isinstance(i, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(i)}")
        if is_storage(value):
            raise RuntimeError(f"cannot set item with value type <class "
                               f"'torch.storage.{type(value).__name__}'>")
        self._elements()[i] = value

    def __setitem__(self, i, value):
        _warn_typed_storage_removal()
        self._setitem(i, value)

    def tolist(self):
        _warn_typed_storage_removal()
        self._check_cpu("tolist")
        return self._elements().tolist()

    def __iter__(self):
        _warn_typed_storage_removal()
        self._check_cpu("__iter__")
        return iter(self._elements().tolist())

    def fill_(self, value):
        _warn_typed_storage_removal()
        self._setitem(slice(0, self._size()), value)
        return self

    def copy_(self, source, non_blocking=None):
        _warn_typed_storage_removal()
        if isinstance(source, TypedStorage):
            source._check_data()
        self._check_cpu("copy_")
        src = source._elements() if isinstance(source, TypedStorage) else np.asarray(source)
        self._elements()[...] = src
        return self

    # -- sharing, resizing, copies

    def _is_shared(self):
        return self._untyped_storage.is_shared()

    def is_shared(self):
        _warn_typed_storage_removal()
        return self._is_shared()

    def _share_memory_(self):
        self._check_shareable("_share_fd_")
        self._untyped_storage.share_memory_()
        return self

    def share_memory_(self):
        _warn_typed_storage_removal()
        return self._share_memory_()

    def _check_shareable(self, what):
        if self._untyped_storage.device.type != "cpu":
            raise RuntimeError(f"{what}: only available on CPU")

    def _share_fd_cpu_(self, *args, **kwargs):
        self._check_shareable("_share_fd_")
        raise NotImplementedError("TypedStorage._share_fd_cpu_(): ember shares storages through "
                                  "share_memory_()")

    def _share_filename_cpu_(self, *args, **kwargs):
        self._check_shareable("_share_filename_")
        raise NotImplementedError("TypedStorage._share_filename_cpu_(): ember shares storages "
                                  "through share_memory_()")

    def _write_file(self, f, is_real_file, save_size, element_size):
        """The elements' bytes written to f, after their count when save_size (legacy format)."""
        self._check_data()
        if save_size:
            f.write(np.int64(self._size()).tobytes())
        f.write(self._elements().tobytes())

    def _resize_(self, size):
        self._untyped_storage.resize_(int(size) * self.dtype.itemsize)

    def resize_(self, size):
        _warn_typed_storage_removal()
        self._resize_(size)
        return self

    def cpu(self):
        _warn_typed_storage_removal()
        self._check_data()
        return self

    def clone(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def __copy__(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.__copy__())

    def _deepcopy(self, memo):
        return self._new_wrapped_storage(_deepcopy_untyped(self._untyped_storage, memo))

    def __deepcopy__(self, memo):
        _warn_typed_storage_removal()
        return self._deepcopy(memo)

    def __sizeof__(self):
        _warn_typed_storage_removal()
        return object.__sizeof__(self) + self._nbytes()

    # -- casts: a new storage of another dtype holding the same values

    def _to(self, dtype):
        if not isinstance(dtype, _dtype_cls()):
            raise TypeError(f"Argument 'dtype' must be torch.dtype, not {type(dtype)}")
        self._check_data()
        values = self._elements().astype(dtype._np)
        return TypedStorage(UntypedStorage._adopt(values.view(np.uint8),
                                                  self._untyped_storage.device),
                            dtype, _internal=True)

    def _cast(dtype_name):   # noqa: N805  (builds the methods below)
        def cast(self):
            _warn_typed_storage_removal()
            from ._core import dtype as D
            return self._to(getattr(D, dtype_name))
        cast.__name__ = cast.__qualname__ = {"float64": "double", "float32": "float",
                                             "float16": "half", "int64": "long", "int32": "int",
                                             "int16": "short", "int8": "char", "uint8": "byte",
                                             "complex128": "complex_double",
                                             "complex64": "complex_float"}.get(dtype_name,
                                                                               dtype_name)
        cast.__doc__ = f"Casts this storage to {dtype_name}."
        return cast

    double, float, half = _cast("float64"), _cast("float32"), _cast("float16")
    long, int, short, char = _cast("int64"), _cast("int32"), _cast("int16"), _cast("int8")
    byte, bool, bfloat16 = _cast("uint8"), _cast("bool"), _cast("bfloat16")
    complex_double, complex_float = _cast("complex128"), _cast("complex64")
    del _cast

    # -- storages made from outside memory

    @classmethod
    def _from_buffer(cls, *args, dtype=None, device=None, **kwargs):
        if cls is TypedStorage:
            from ._core.dtype import get_default_dtype
            dtype = get_default_dtype() if dtype is None else dtype
            if device is not None and str(device).split(":")[0] != "cpu":
                raise RuntimeError(f"TypedStorage.from_buffer: Not available for device "
                                   f"{device}")
        else:
            if dtype is not None or len(args) == 5:
                raise RuntimeError("from_buffer: 'dtype' can only be specified in "
                                   "UntypedStorage.from_buffer and TypedStorage.from_buffer")
            if device is not None:
                raise RuntimeError("from_buffer: 'device' can only be specified in "
                                   "UntypedStorage.from_buffer and TypedStorage.from_buffer")
            dtype = cls._dtype
        untyped = UntypedStorage.from_buffer(*args, dtype=dtype, **kwargs)
        return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)

    @classmethod
    def from_buffer(cls, *args, **kwargs):
        """A CPU storage of the elements a Python buffer holds (see
        UntypedStorage.from_buffer)."""
        _warn_typed_storage_removal()
        return cls._from_buffer(*args, **kwargs)

    @classmethod
    def from_file(cls, filename, shared, size):
        """A CPU storage of `size` elements mapped from a file (see UntypedStorage.from_file)."""
        _warn_typed_storage_removal()
        if cls is TypedStorage:
            raise RuntimeError("from_file can only be called on derived classes")
        untyped = UntypedStorage.from_file(filename, shared, int(size) * cls._dtype.itemsize)
        return TypedStorage(wrap_storage=untyped, dtype=cls._dtype, _internal=True)

    def __repr__(self):
        _warn_typed_storage_removal()
        dev = self._untyped_storage.device
        body = "\n".join(f" {v}" for v in self._elements().tolist()) if dev.type == "cpu" \
            else "..."
        return (f"{body}\n[torch.storage.TypedStorage(dtype={self.dtype}, device={dev}) "
                f"of size {self._size()}]")

    __str__ = __repr__


class _LegacyStorageMeta(type):
    """The metaclass of torch.FloatStorage and the like: calling the class makes a
    TypedStorage, `isinstance(s, torch.FloatStorage)` asks whether a TypedStorage has that
    dtype and device, and the class's `dtype` warns as TypedStorage's API does."""
    _dtype = None

    @property
    def dtype(cls):
        _warn_typed_storage_removal()
        return cls._dtype

    def __instancecheck__(cls, instance):
        if type(instance) is TypedStorage:
            return (instance._untyped_storage.device.type == _device_of_module(cls.__module__)
                    and instance.dtype == cls._dtype)
        return type.__instancecheck__(cls, instance)


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """torch.FloatStorage and the other per-dtype storage classes: calling one makes a
    TypedStorage of its dtype on its module's device from nothing, a size, a sequence of
    values, or wrap_storage= (deprecated in PyTorch, with the same warning)."""

    @classmethod
    def _new_legacy(cls, args, wrap_storage, dtype, device):
        error = (f"{cls}.__new__ received an invalid combination of arguments. Expected one "
                 f"of:\n * no arguments\n * (int size)\n * (Sequence data)\n * (*, "
                 f"UntypedStorage wrap_storage)")
        if device is not None:
            raise RuntimeError(error + "\nKeyword argument 'device' cannot be specified")
        if dtype is not None:
            raise RuntimeError(error + "\nKeyword argument 'dtype' cannot be specified")
        cls_device = _device_of_module(cls.__module__)
        if wrap_storage is None:
            if len(args) > 1:
                raise RuntimeError(error + "\nToo many positional arguments")
            if len(args) == 1 and not _is_size_or_sequence(args[0]):
                raise TypeError(error + f"\nArgument type not recognized: {type(args[0])}")
            return TypedStorage(*args, dtype=cls._dtype, device=cls_device, _internal=True)
        if args:
            raise RuntimeError(error + "\nNo positional arguments should be given when using "
                               "'wrap_storage'")
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError(error + f"\nArgument 'wrap_storage' must be UntypedStorage, but got "
                            f"{type(wrap_storage)}")
        if wrap_storage.device.type != cls_device:
            raise RuntimeError(error + f"\nDevice of 'wrap_storage' must be {cls_device}, but "
                               f"got {wrap_storage.device.type}")
        return TypedStorage(wrap_storage=wrap_storage, dtype=cls._dtype, _internal=True)


class _CudaLegacyStorage(_LegacyStorage):
    """torch.cuda.FloatStorage and the like: there is no CUDA, so making one fails as the
    device does, and the CPU-only class methods say they are not available."""

    @classmethod
    def from_buffer(cls, *args, **kwargs):
        _warn_typed_storage_removal()
        raise RuntimeError("from_buffer: Not available for CUDA storage")

    @classmethod
    def _new_with_weak_ptr(cls, *args, **kwargs):
        raise RuntimeError("_new_with_weak_ptr: Not available for CUDA storage")

    @classmethod
    def _new_shared_filename(cls, manager, obj, size, *, device=None, dtype=None):
        raise RuntimeError("_new_shared_filename: Not available for CUDA storage")


def _dtype_cls():
    from ._core.dtype import dtype
    return dtype


def _device_of_module(module):
    return "cuda" if module == "torch.cuda" else "cpu"


def _legacy_class_for(dtype, device_type):
    classes = _CUDA_LEGACY_STORAGES if device_type == "cuda" else _LEGACY_STORAGES
    return classes.get(dtype)


def _is_size_or_sequence(arg):
    import collections.abc
    return isinstance(arg, (builtins.int, np.integer, collections.abc.Sequence))


def _deepcopy_untyped(storage, memo):
    """copy.deepcopy of an UntypedStorage: one copy per storage and memo, so tensors and
    storages that shared bytes before share the copied bytes after."""
    key = id(storage)
    if key not in memo:
        memo[key] = storage.clone()
        memo.setdefault(id(memo), []).append(storage)   # keeps the id from being reused
    return memo[key]


def _new_untyped(args, dtype, device, error):
    """The bytes of a new typed storage: none, `size` zeroed elements, or a sequence's values
    as `dtype`; on a meta device only the byte count."""
    from ._core.device import device as _device
    kind = "cpu" if device is None else str(device).split(":")[0]
    if kind not in ("cpu", "cuda", "meta"):
        raise RuntimeError(f"torch.UntypedStorage(): Storage device not recognized: {kind}")
    dev = _device("cpu" if device is None else device)
    if str(dtype).split(".")[-1] in _QUANTIZED and dev.type == "cuda":
        raise RuntimeError("Cannot create CUDA storage with quantized dtype")
    if len(args) > 1:
        raise RuntimeError(error + "\nToo many positional arguments")
    if len(args) == 1 and not _is_size_or_sequence(args[0]):
        raise TypeError(error + f"\nArgument type not recognized: {type(args[0])}")
    if dev.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if len(args) == 1 and isinstance(args[0], (builtins.int, np.integer)):   # np.int16(3) too
        count, data = builtins.int(args[0]), None
    elif len(args) == 1:
        if isinstance(args[0], (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")
        data = np.asarray(list(args[0]), dtype=_np_dtype(dtype))
        count = data.size
    else:
        count, data = 0, None
    if dev.type == "meta":
        return UntypedStorage._meta(count * dtype.itemsize, dev)
    if data is None:
        return UntypedStorage(count * dtype.itemsize, device=dev).fill_(0)
    return UntypedStorage._adopt(data.view(np.uint8), dev)


_QUANTIZED_STORAGE_NAMES = {"qint8": "QInt8Storage", "quint8": "QUInt8Storage",
                            "qint32": "QInt32Storage", "quint4x2": "QUInt4x2Storage",
                            "quint2x4": "QUInt2x4Storage"}


def _make_legacy_storages(base, module, with_quantized):
    from ._core import dtype as D
    names = {dtype: name.replace("Tensor", "Storage")
             for dtype, name in D.LEGACY_TYPE_NAMES.items()}
    if with_quantized:
        names.update({getattr(D, q): name for q, name in _QUANTIZED_STORAGE_NAMES.items()})
    classes = {}
    for dtype, name in names.items():
        cls = _LegacyStorageMeta(name, (base,), {"_dtype": dtype, "__module__": module})
        classes[dtype] = cls
    return classes


_LEGACY_STORAGES = _make_legacy_storages(_LegacyStorage, "torch", with_quantized=True)
_CUDA_LEGACY_STORAGES = _make_legacy_storages(_CudaLegacyStorage, "torch.cuda",
                                              with_quantized=False)
globals().update({cls.__name__: cls for cls in _LEGACY_STORAGES.values()})


def is_storage(obj):
    """torch.is_storage: whether obj is a storage (typed or untyped)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))


def _dtype_to_storage_type_map():
    """Each dtype with a legacy storage class, to that class's name ('FloatStorage')."""
    return {dtype: cls.__name__ for dtype, cls in _LEGACY_STORAGES.items()}


def _storage_type_to_dtype_map():
    return {name: dtype for dtype, name in _dtype_to_storage_type_map().items()}


def _legacy_storage_type(dtype):
    """Tensor.storage_type(): the legacy storage class of a dtype (torch.FloatStorage)."""
    return _LEGACY_STORAGES[dtype]
