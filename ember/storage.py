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
        """PyTorch's forms: TypedStorage(wrap_storage=untyped, dtype=d) views the bytes of an
        UntypedStorage as elements of d; TypedStorage(size) or TypedStorage(sequence) (dtype
        and device keywords) makes new storage; ember's own code also passes (untyped, dtype)."""
        if not _internal:
            _warn_typed_storage_removal(stacklevel=3)
        if args and isinstance(args[0], UntypedStorage) and wrap_storage is None:
            wrap_storage, args = args[0], args[1:]
            if args and dtype is None:
                dtype, args = args[0], args[1:]
        if wrap_storage is not None:
            if args:
                raise RuntimeError("No positional arguments should be given when using "
                                   "'wrap_storage'")
            if dtype is None:
                raise RuntimeError("Argument 'dtype' must be specified")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"Argument 'wrap_storage' must be UntypedStorage, but got "
                                f"{type(wrap_storage)}")
            if device is not None and str(device) != str(wrap_storage.device):
                raise RuntimeError(f"Device of 'wrap_storage' must be {device}, but got "
                                   f"{wrap_storage.device}")
            self._untyped_storage = wrap_storage
            self.dtype = dtype
            return
        from ._core import dtype as D
        dtype = D.get_default_dtype() if dtype is None else dtype
        if len(args) > 1:
            raise RuntimeError(f"Too many positional arguments: TypedStorage takes a size or a "
                               f"sequence, got {len(args)} arguments")
        if args and isinstance(args[0], (int, np.integer)):
            data = np.zeros(int(args[0]), dtype=dtype._np)
        elif args:
            data = np.asarray(list(args[0]), dtype=dtype._np)
        else:
            data = np.zeros(0, dtype=dtype._np)
        self._untyped_storage = UntypedStorage._adopt(data.view(np.uint8), _cpu())
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
            raise NotImplementedError(f"TypedStorage.{what}() on the {self.device.type} device: "
                                      "its storage holds no data")

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
        self._check_cpu("copy_")
        src = source._elements() if isinstance(source, TypedStorage) else np.asarray(source)
        self._elements()[...] = src
        return self

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def cpu(self):
        return self

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
        if len(args) == 1 and isinstance(args[0], (int, np.integer)):   # np.int16(3) too
            data = np.zeros(int(args[0]), dtype=cls.dtype._np)
        elif len(args) == 1:
            data = np.asarray(list(args[0]), dtype=cls.dtype._np)
        elif not args:
            data = np.zeros(0, dtype=cls.dtype._np)
        else:
            raise TypeError(f"{cls.__name__}(): expected a size or a sequence, got {args!r}")
        untyped = UntypedStorage._adopt(data.view(np.uint8), _cpu())
        return TypedStorage(untyped, cls.dtype, _internal=True)


def _cpu():
    from ._core.device import device
    return device("cpu")


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


def _legacy_storage_type(dtype):
    """Tensor.storage_type(): the legacy storage class of a dtype (torch.FloatStorage)."""
    return _LEGACY_STORAGES[dtype]
