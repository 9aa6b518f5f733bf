"""torch.storage: UntypedStorage (the flat byte buffer of ember._core.storage) and TypedStorage,
PyTorch's older typed view of the same bytes that `Tensor.storage()` still returns, with its
deprecation warning. A TypedStorage reads and writes the untyped bytes as elements of its dtype."""
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


class TypedStorage:
    is_sparse = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        """TypedStorage(untyped, dtype) over existing bytes (also wrap_storage=untyped), or a new
        one: TypedStorage(dtype=..., device=...) empty, (size, ...) zeroed, (sequence, ...) of
        those values."""
        if not _internal:
            _warn_typed_storage_removal(stacklevel=3)
        if len(args) == 2 and isinstance(args[0], UntypedStorage):   # ember's internal form
            wrap_storage, dtype = args
            args = ()
        if wrap_storage is not None and dtype is None:
            raise RuntimeError("Argument 'dtype' must be specified")
        if dtype is None:
            from ._core.dtype import get_default_dtype
            dtype = get_default_dtype()
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage(): wrap_storage takes no other arguments than "
                                   "dtype")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected a torch.UntypedStorage as wrap_storage, but got "
                                f"{type(wrap_storage).__name__}")
            untyped = wrap_storage
        else:
            untyped = _new_untyped(args, dtype, device, "TypedStorage")
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
        return raw[:n * self.dtype.itemsize].view(self.dtype._np)

    @property
    def device(self):
        return self._untyped_storage.device

    def untyped(self):
        return self._untyped_storage

    def size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def nbytes(self):
        return self.size() * self.dtype.itemsize

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def _check_cpu(self, what):
        if self.device.type != "cpu":
            raise NotImplementedError(f"Not available for '{self.device.type}' device type")

    def _check_data(self):
        """Copying out of a storage needs its data; a meta storage has none."""
        if self.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __getitem__(self, i):
        self._check_cpu("__getitem__")
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        n = self.size()
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return self._elements()[i].item()

    def __setitem__(self, i, value):
        self._check_cpu("__setitem__")
        self._elements()[i] = value

    def tolist(self):
        self._check_cpu("tolist")
        return self._elements().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._check_cpu("fill_")
        self._elements()[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        if isinstance(source, TypedStorage):
            source._check_data()
        self._check_cpu("copy_")
        src = source._elements() if isinstance(source, TypedStorage) else np.asarray(source)
        self._elements()[...] = src
        return self

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._check_shareable("_share_fd_")
        self._untyped_storage.share_memory_()
        return self

    def _check_shareable(self, what):
        if self.device.type != "cpu":
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
            f.write(np.int64(self.size()).tobytes())
        f.write(self._elements().tobytes())

    def resize_(self, size):
        self._untyped_storage.resize_(int(size) * self.dtype.itemsize)
        return self

    def cpu(self):
        self._check_data()
        return self

    def __deepcopy__(self, memo):
        return TypedStorage(_deepcopy_untyped(self._untyped_storage, memo), self.dtype,
                            _internal=True)

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist()) if self.device.type == "cpu" else " ..."
        return (f"{body}\n[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
                f"of size {self.size()}]")


class _LegacyStorage(TypedStorage):
    """torch.FloatStorage and the other per-dtype storage classes: calling one makes a
    TypedStorage of its dtype from a size or a sequence of values (deprecated in PyTorch, with
    the same warning)."""
    dtype = None

    def __new__(cls, *args, device=None, **kwargs):
        _warn_typed_storage_removal(stacklevel=2)
        untyped = _new_untyped(args, cls.dtype, device, cls.__name__)
        return TypedStorage(untyped, cls.dtype, _internal=True)


def _deepcopy_untyped(storage, memo):
    """copy.deepcopy of an UntypedStorage: one copy per storage and memo, so tensors and
    storages that shared bytes before share the copied bytes after."""
    key = id(storage)
    if key not in memo:
        memo[key] = storage.clone()
        memo.setdefault(id(memo), []).append(storage)   # keeps the id from being reused
    return memo[key]


def _new_untyped(args, dtype, device, who):
    """The bytes of a new typed storage: none, `size` zeroed elements, or a sequence's values
    as `dtype`; on a meta device only the byte count."""
    from ._core.device import device as _device
    dev = _device("cpu" if device is None else device)
    if len(args) == 1 and isinstance(args[0], (int, np.integer)):   # np.int16(3) too
        count, data = int(args[0]), None
    elif len(args) == 1:
        data = np.asarray(list(args[0]), dtype=dtype._np)
        count = data.size
    elif not args:
        count, data = 0, None
    else:
        raise TypeError(f"{who}(): expected a size or a sequence, got {args!r}")
    if dev.type == "meta":
        return UntypedStorage._meta(count * dtype.itemsize, dev)
    if data is None:
        data = np.zeros(count, dtype=dtype._np)
    return UntypedStorage._adopt(data.view(np.uint8), dev)


def _make_legacy_storages():
    from ._core import dtype as D
    classes = {}
    for dtype, name in D.LEGACY_TYPE_NAMES.items():
        storage_name = name.replace("Tensor", "Storage")
        cls = type(storage_name, (_LegacyStorage,), {"dtype": dtype})
        cls.__module__ = "torch"
        classes[dtype] = cls
    return classes


_LEGACY_STORAGES = _make_legacy_storages()
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
