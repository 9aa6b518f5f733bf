"""torch.save / torch.load: PyTorch's checkpoint format, written and read in Python.

A checkpoint is a ZIP archive of uncompressed records, laid out as PyTorch's
PyTorchStreamWriter lays it out (`model.pt` -> records under `model/`):

    model/data.pkl                 the pickled object; tensors refer to storages by key
    model/.format_version          b"1"
    model/.storage_alignment       b"64": each record's bytes start at a multiple of 64
    model/byteorder                b"little"
    model/data/0, data/1, ...      one record per storage: its raw bytes
    model/version                  b"3\\n"
    model/.data/serialization_id

Inside data.pkl a tensor is a call `torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, hooks)`, and `storage` is a *persistent id*
`('storage', torch.FloatStorage, '0', 'cpu', numel)`: the pickle holds only metadata, the bytes
are record data/0. Tensors that view one storage name the same key, so the bytes are written
once and the tensors share a storage again after loading.

save: `_Pickler` pickles `obj`, turning storages into persistent ids and writing ember's
objects under PyTorch's names; `_ArchiveWriter` writes the records, into a temporary file that
replaces the target only when complete (`_atomic_open`).
load: `_ArchiveReader` finds the records and starts reading the storages on worker threads;
data.pkl is unpickled -- by default by the allow-list unpickler of
`ember.serialization.weights_only_unpickler` -- and each persistent id becomes a storage, read into memory
or (`mmap=True`) mapped from the file. Files in PyTorch's legacy (pre-1.6) format are read by
`_legacy_load`.

`_TORCH_NAMES` pairs each dotted name a checkpoint can contain (`torch._utils._rebuild_tensor_v2`,
`torch.FloatStorage`, `torch.float32`, ...) with the ember object that plays its part. It is used
in both directions, and it is also the default allow-list of weights-only loading.
"""
import concurrent.futures
import contextlib
import copyreg
import functools
import io
import mmap as _mmap
import os
import pickle
import pickletools
import secrets
import stat
import struct
import sys
import types
import zipfile
import zlib
from collections import ChainMap, OrderedDict

import numpy as np

from .._core import dtype as D
from . import weights_only_unpickler as _weights_only_unpickler
from .._core.device import device, cpu as _CPU, meta as _META
from .._core.storage import UntypedStorage
from .._core.tensor import Tensor, Size, _wrap, _meta, _alias
from .weights_only_unpickler import (add_safe_globals, get_safe_globals, clear_safe_globals,
                                     safe_globals)
from ..nn.parameter import Parameter

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "StorageType",
           "DEFAULT_PROTOCOL", "config"]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950a86a20f9469cfc6c  # the legacy format's first pickle
PROTOCOL_VERSION = 1001

_ALIGNMENT = 64
_ZIP64_LIMIT = 0xFFFFFFFF  # sizes and offsets from here on need ZIP64 fields

UNSAFE_MESSAGE = (
    "Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can "
    "result in arbitrary code execution. Do it only if you got the file from a trusted source.")


class config:
    """Serialization settings, as `torch.utils.serialization.config` has them."""

    class load:
        mmap = False  # the default of load(mmap=None)
        # ember's own: also check tensor records against their CRC-32. PyTorch never does; it
        # costs one more pass over every byte. data.pkl and metadata records are always checked.
        verify_crc32 = False


# ==== storages as a checkpoint names them ========================================================
class StorageType:
    """A legacy storage class named in a checkpoint (`torch.FloatStorage`): it only says which
    dtype a storage record holds."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    def __reduce__(self):
        return (_storage_type_named, (self.name,))  # `save` writes torch.<name> instead

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})"


_STORAGE_TYPES = {d: StorageType(f"{prefix}Storage", d) for prefix, d in [
    ("Bool", D.bool), ("Byte", D.uint8), ("Char", D.int8), ("Short", D.int16),
    ("Int", D.int32), ("Long", D.int64), ("Half", D.float16), ("BFloat16", D.bfloat16),
    ("Float", D.float32), ("Double", D.float64), ("ComplexFloat", D.complex64),
    ("ComplexDouble", D.complex128)]}


def _storage_type_named(name):
    return _STORAGE_TYPE_BY_NAME[name]


_STORAGE_TYPE_BY_NAME = {st.name: st for st in _STORAGE_TYPES.values()}


class _TypedStorage:
    """An untyped storage read as `dtype`: what a tensor hands to its rebuild function
    (PyTorch's TypedStorage, reduced to the two fields serialization needs)."""
    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, untyped_storage, dtype):
        self._untyped_storage = untyped_storage
        self.dtype = dtype

    def __reduce__(self):
        return (_TypedStorage, (self._untyped_storage, self.dtype))

    def __repr__(self):
        return f"TypedStorage(dtype={self.dtype}, nbytes={self._untyped_storage.nbytes()})"


# ==== how a tensor pickles =======================================================================
def _python_state(t):
    """The Python attributes a user set on `t` (ember's own per-tensor state is excluded: it
    lives in attributes that the Tensor class defines)."""
    cls = type(t)
    return {k: v for k, v in t.__dict__.items() if not hasattr(cls, k)}


def _set_obj_state(obj, state):
    """Restore Python attributes saved by `_python_state` (or by PyTorch's _get_obj_state)."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if not part:
            continue
        if not isinstance(part, dict):
            raise RuntimeError(f"tensor state must be a dict, got {type(part).__name__}")
        for k, v in part.items():
            if type(k) is not str or k.startswith("__") or hasattr(type(obj), k):
                raise RuntimeError(f"refusing to set attribute {k!r} on a tensor while "
                                   "loading: it is not a plain Python attribute")
            setattr(obj, k, v)
    return obj


def _reduce_tensor(t):
    """Tensor.__reduce_ex__: a call of one of PyTorch's rebuild functions, as torch writes it.

    Plain `pickle` uses this too; there the storage pickles its bytes in-band
    (UntypedStorage.__reduce__), while `save` replaces it by a persistent id.
    """
    if t._np is None:
        func, args = _rebuild_meta_tensor_no_storage, (t.dtype, tuple(t._size), t.stride(),
                                                        t._rg)
    else:
        func, args = _rebuild_tensor_v2, (_TypedStorage(t._storage_(), t.dtype),
                                          t.storage_offset(), tuple(t._size), t.stride(), t._rg,
                                          OrderedDict())
    state = _python_state(t)
    if isinstance(t, Parameter):
        if state:
            return (_rebuild_parameter_with_state, (_alias(t), t._rg, OrderedDict(), state))
        return (_rebuild_parameter, (_alias(t), t._rg, OrderedDict()))
    if type(t) is Tensor and not state:
        return func, args
    return (_rebuild_from_type_v2, (func, type(t), args, state))


def _reduce_storage(storage):
    """UntypedStorage.__reduce__ for plain pickle: the bytes travel inside the pickle."""
    if storage._array is None:
        return (_rebuild_meta_storage, (storage.nbytes(),))
    return (_rebuild_storage, (storage._bytes(),))


def _rebuild_storage(data):
    data = np.asarray(data, dtype=np.uint8)
    return UntypedStorage._adopt(data if data.flags.writeable else data.copy(), _CPU)


def _rebuild_meta_storage(nbytes):
    return UntypedStorage._meta(nbytes, _META)


# ==== rebuild functions (PyTorch's torch._utils names them) ======================================
def _index(x, what):
    if isinstance(x, Tensor) or isinstance(x, float):
        raise TypeError(f"{what} must be an int, got {type(x).__name__}")
    return x.__index__()


def _check_geometry(storage_nbytes, itemsize, offset, size, stride):
    """Sizes, strides and offset as ints, checked to stay inside a storage of `storage_nbytes`.

    This is what keeps a hostile checkpoint from making a view that reads outside its buffer.
    """
    offset = _index(offset, "storage offset")
    size = tuple(_index(s, "size") for s in size)
    stride = tuple(_index(s, "stride") for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides "
                           f"for {len(size)} dimensions")
    if offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"negative size, stride or storage offset: size {list(size)}, "
                           f"stride {list(stride)}, offset {offset}")
    if all(size):
        needed = (offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))) * itemsize
        if needed > storage_nbytes:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {itemsize} requiring a storage size of {needed} are "
                f"out of bounds for storage of size {storage_nbytes}")
    return offset, size, stride


def _tensor_on_storage(storage, dtype, offset, size, stride):
    """A tensor viewing `storage` (which it keeps as its storage object) as `dtype`."""
    if not isinstance(storage, UntypedStorage) or not isinstance(dtype, D.dtype):
        raise TypeError(f"expected a storage and a dtype, got {type(storage).__name__} and "
                        f"{type(dtype).__name__}")
    offset, size, stride = _check_geometry(storage.nbytes(), dtype.itemsize, offset, size, stride)
    if storage._array is None:
        return _meta(size, dtype, stride, offset, storage, storage.device)
    item = dtype.itemsize
    flat = storage._bytes()
    flat = flat[:len(flat) // item * item].view(D.np_dtype(dtype))
    arr = np.lib.stride_tricks.as_strided(flat[offset:], size, [s * item for s in stride])
    t = _wrap(arr)
    t.dtype = dtype
    t._storage = storage
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor_on_storage(storage._untyped_storage, storage.dtype, storage_offset, size,
                              stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    # backward hooks are never saved (PyTorch keeps the argument for files from 2017)
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    _check_metadata(metadata)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    t = _tensor_on_storage(storage._untyped_storage, dtype, storage_offset, size, stride)
    _check_metadata(metadata)
    t.requires_grad = requires_grad
    return t


def _check_metadata(metadata):
    if metadata and any(metadata.values()):
        raise RuntimeError(f"ember tensors have no conjugate or negative bits: cannot load "
                           f"a tensor with metadata {metadata}")


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"expected a dtype, got {type(dtype).__name__}")
    _, size, stride = _check_geometry(0, 0, 0, size, stride)
    t = _meta(size, dtype, stride)
    t.requires_grad = requires_grad
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, Tensor):
        raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A Tensor subclass, or a tensor with Python attributes: rebuild, retype, set state."""
    if not any(func is f for f in _TENSOR_REBUILDERS) or not (
            isinstance(new_type, type) and issubclass(new_type, Tensor)):
        raise RuntimeError(f"_rebuild_from_type_v2 expects a tensor rebuild function and a "
                           f"Tensor subclass, got {func!r} and {new_type!r}")
    ret = func(*args)
    if type(ret) is not new_type:
        requires_grad = ret._rg
        ret = ret._as_subclass(new_type)
        ret._rg = requires_grad
    setstate = getattr(new_type, "__setstate__", None)
    if setstate is not None:
        ret.__setstate__(state)
        return ret
    return _set_obj_state(ret, state)


def _get_layout(name):
    from .._core.layout import strided, sparse_coo
    layouts = {"torch.strided": strided, "torch.sparse_coo": sparse_coo}
    if name not in layouts:
        raise RuntimeError(f"ember has no layout {name}")
    return layouts[name]


_TENSOR_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3,
                      _rebuild_meta_tensor_no_storage, _rebuild_parameter,
                      _rebuild_parameter_with_state)


# ==== PyTorch's names for ember's objects ========================================================
def _build_name_tables():
    names = {
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.serialization._get_layout": _get_layout,
        "torch.Tensor": Tensor,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": Size,
        "torch.device": device,
        "torch.storage.UntypedStorage": UntypedStorage,
    }
    names.update({f"torch.{d.name}": d for d in D.all_dtypes})
    names.update({f"torch.{st.name}": st for st in _STORAGE_TYPES.values()})
    save_names = {obj: name for name, obj in names.items()}
    # names that only ever need reading
    names["torch.UntypedStorage"] = UntypedStorage
    names.update({f"torch.cuda.{st.name}": st for st in _STORAGE_TYPES.values()})
    return names, save_names


_TORCH_NAMES, _SAVE_NAMES = _build_name_tables()

# what REDUCE may call in a weights-only load; classes not listed are values only
_WEIGHTS_ONLY_CALLABLES = _TENSOR_REBUILDERS + (
    _rebuild_from_type_v2, _get_layout, Size, device,
    *_weights_only_unpickler.SAFE_BUILTINS.values())
_WEIGHTS_ONLY_ALLOWED = {**_TORCH_NAMES, **_weights_only_unpickler.SAFE_BUILTINS}


# ==== saving =====================================================================================
class _Pickler(pickle._Pickler):
    """pickle's Python Pickler, which lets a subclass decide how a global is written.

    Storages become persistent ids (collected in `self.storages`), and ember's rebuild functions,
    classes and dtypes are written under PyTorch's names, so `torch.load` reads the file. (The C
    pickler writes a global only under the module it can import it from.)
    """

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.dispatch_table = _save_reducers()
        self.storages = []
        self._keys = {}  # id of the storage's memory -> (key, dtype)

    def persistent_id(self, obj):
        t = type(obj)
        if t is _TypedStorage:
            storage, dtype = obj._untyped_storage, obj.dtype
            storage_type, numel = _STORAGE_TYPES[dtype], storage.nbytes() // dtype.itemsize
        elif t is UntypedStorage:
            storage, dtype = obj, D.uint8
            storage_type, numel = UntypedStorage, obj.nbytes()
        else:
            return None
        if storage._array is None:
            raise RuntimeError("Cannot save the data of a storage on the meta device")
        # Key by the memory, not the storage object: `t.data` and `t` are different storage
        # objects over the same array and must be written once.
        memory = id(storage._array)
        key, first_dtype = self._keys.get(memory, (None, dtype))
        if key is None:
            key = str(len(self.storages))
            self._keys[memory] = (key, dtype)
            self.storages.append(storage)
        elif first_dtype is not dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        return ("storage", storage_type, key, str(storage.device), numel)

    def save_global(self, obj, name=None):
        try:
            torch_name = _SAVE_NAMES.get(obj)
        except TypeError:  # unhashable
            torch_name = None
        if torch_name is None:
            return super().save_global(obj, name)
        module, _, qualname = torch_name.rpartition(".")
        self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)

    def save_tensor(self, t):
        """A plain CPU tensor, written straight as the opcodes of its reduction,
        `_rebuild_tensor_v2(<storage persistent id>, offset, size, stride, requires_grad,
        OrderedDict())`: a state dict is mostly tensors, and pickle's generic path spends some
        25 Python calls on each."""
        if t._np is None or _python_state(t):
            return self.save_reduce(*_reduce_tensor(t), obj=t)
        self.save(_rebuild_tensor_v2)
        self.write(pickle.MARK)
        self.save_pers(self.persistent_id(_TypedStorage(t._storage_(), t.dtype)))
        self.write(_int_opcode(t.storage_offset()) + _tuple_opcodes(t._size)
                   + _tuple_opcodes(t.stride()) + (pickle.NEWTRUE if t._rg else pickle.NEWFALSE))
        self.save(OrderedDict)  # a new empty OrderedDict for each tensor's hooks, as torch writes
        self.write(pickle.EMPTY_TUPLE + pickle.REDUCE + pickle.TUPLE + pickle.REDUCE)
        self.memoize(t)

    dispatch = pickle._Pickler.dispatch.copy()  # its entry for functions names the base method
    dispatch[types.FunctionType] = save_global
    dispatch[Tensor] = save_tensor


def _int_opcode(n):
    """An int as pickle protocol 2 writes it."""
    if 0 <= n < 0x100:
        return pickle.BININT1 + bytes((n,))
    if 0 <= n < 0x10000:
        return pickle.BININT2 + struct.pack("<H", n)
    if -0x80000000 <= n < 0x80000000:
        return pickle.BININT + struct.pack("<i", n)
    encoded = pickle.encode_long(n)
    return pickle.LONG1 + bytes((len(encoded),)) + encoded


def _tuple_opcodes(ints):
    return pickle.MARK + b"".join(_int_opcode(n) for n in ints) + pickle.TUPLE


def _reduce_layout(layout):
    return (_get_layout, (repr(layout),))


_TENSOR_REDUCERS = {Tensor: _reduce_tensor, Parameter: _reduce_tensor}  # Parameter's own
# __reduce_ex__ is for plain pickle


@functools.cache
def _save_reducers():
    """How `_Pickler` reduces ember's types, ahead of copyreg's table. A str means "the global
    of this name", which `_Pickler.save_global` writes under PyTorch's name."""
    from .._core.layout import strided
    return ChainMap({**_TENSOR_REDUCERS, D.dtype: lambda d: d.name,
                     StorageType: lambda st: st.name, type(strided): _reduce_layout},
                    copyreg.dispatch_table)


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save `obj` to `f` (a path, a `pathlib.Path` or a writable binary file object) in
    PyTorch's zip checkpoint format; `torch.load(f, weights_only=True)` reads it back.

    Saving to a path is atomic: the archive is written to a temporary file beside the target and
    renamed over it, so an error or a crash mid-save leaves a previous file untouched. (Durability
    against power loss would also need an fsync, which this does not pay for.)
    """
    if not _use_new_zipfile_serialization:
        raise RuntimeError("ember writes only the zip checkpoint format "
                           "(_use_new_zipfile_serialization=True); it can read the legacy one")
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
    elif hasattr(f, "write"):
        path = None
    else:
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'write' attribute, got {type(f).__name__}")
    data_pkl, storages = _pickle_with_storages(obj, pickle_module, pickle_protocol)
    if path is None:
        _write_archive(f, "archive", data_pkl, storages, not _disable_byteorder_record)
        return
    with _atomic_open(path) as out:
        _write_archive(out, _archive_name(path), data_pkl, storages,
                       not _disable_byteorder_record)


def _pickle_with_storages(obj, pickle_module, protocol):
    buf = io.BytesIO()
    if pickle_module is pickle:
        pickler = _Pickler(buf, protocol)
    else:  # e.g. dill: its Pickler writes ember's names, so only ember reads the file
        class ModulePickler(pickle_module.Pickler):
            persistent_id = _Pickler.persistent_id

        pickler = ModulePickler(buf, protocol=protocol)
        pickler.dispatch_table = ChainMap(_TENSOR_REDUCERS, copyreg.dispatch_table)
        pickler.storages, pickler._keys = [], {}
    pickler.dump(obj)
    return buf.getvalue(), pickler.storages


def _archive_name(path):
    """The records' folder, as PyTorch names it: the file name without its extension."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem if stem and stem.isascii() and stem.isprintable() else "archive"


def _write_archive(out, archive_name, data_pkl, storages, byteorder_record):
    writer = _ArchiveWriter(out, archive_name)
    try:
        writer.write_record("data.pkl", data_pkl)
        writer.write_record(".format_version", b"1")
        writer.write_record(".storage_alignment", str(_ALIGNMENT).encode())
        if byteorder_record:
            writer.write_record("byteorder", sys.byteorder.encode())
        for key, storage in enumerate(storages):
            writer.write_record(f"data/{key}", storage._bytes())
        writer.write_record("version", b"3\n")
        writer.write_record(".data/serialization_id",
                            str(secrets.randbits(128)).zfill(40).encode())
        writer.finish()
    finally:
        writer.close()


def _worker_pool(workers):
    """Threads for one save or load. (Not a process-wide pool: a forked DataLoader worker would
    inherit the pool without its threads, and its first job would wait forever.)"""
    return concurrent.futures.ThreadPoolExecutor(workers, "ember-serialization")


_THREADED_CRC_BYTES = 1 << 20


class _ArchiveWriter:
    """PyTorch's PyTorchStreamWriter (miniz underneath): a ZIP archive of stored (uncompressed)
    records whose data starts on a 64-byte boundary, so a mapped file can be viewed as any dtype
    in place.

    A record is laid out byte for byte as miniz lays it out:

        local header (30 bytes, CRC and sizes zero: flag bit 3 says they follow the data)
        name, extra field b"FB" + length + b"Z" padding up to the alignment
        the bytes
        data descriptor b"PK\\x07\\x08", CRC-32, sizes (omitted for an empty record)

    so that PyTorch's optional offset arithmetic (`calculate_storage_offsets`) also holds. The
    central directory at the end lists every record with its CRC, sizes and offset; values past
    4 GiB use ZIP64 fields. The stream is written strictly forward: `out` need not be seekable.
    """

    def __init__(self, out, archive_name):
        self.out = out
        self.prefix = archive_name + "/"
        self.offset = 0
        self.entries = []
        self.pool = None  # computes a large record's CRC-32 while the bytes are being written

    def _write(self, data):
        self.out.write(data)
        self.offset += memoryview(data).nbytes

    def write_record(self, name, data):
        data = memoryview(data)
        size = data.nbytes
        if size >= _THREADED_CRC_BYTES:  # zlib.crc32 releases the GIL: it overlaps the write
            self.pool = self.pool or _worker_pool(1)
            crc = self.pool.submit(zlib.crc32, data).result
        else:
            crc = functools.partial(zlib.crc32, data)
        fname = (self.prefix + name).encode("utf-8")
        flags = 0x808 if size else 0x800  # bit 3: CRC and sizes follow; bit 11: UTF-8 name
        header_offset = self.offset
        extra = struct.pack("<HHQQ", 1, 16, size, size) if size >= _ZIP64_LIMIT else b""
        pad = -(header_offset + 30 + len(fname) + len(extra) + 4) % _ALIGNMENT
        extra += struct.pack("<2sH", b"FB", pad) + b"Z" * pad
        self._write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, 0, 0, 0x21, 0, 0, 0,
                                len(fname), len(extra)) + fname + extra)
        self._write(data)
        crc = crc()
        if size:
            zip64 = size >= _ZIP64_LIMIT or header_offset >= _ZIP64_LIMIT
            self._write(struct.pack("<4sLQQ" if zip64 else "<4sLLL", b"PK\x07\x08", crc, size,
                                    size))
        self.entries.append((fname, flags, crc, size, header_offset))

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def finish(self):
        cd_start = self.offset
        for fname, flags, crc, size, header_offset in self.entries:
            fields = [size, size] if size >= _ZIP64_LIMIT else []
            if header_offset >= _ZIP64_LIMIT:
                fields.append(header_offset)
            extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) \
                if fields else b""
            version = 45 if fields else 20
            size32 = size if size < _ZIP64_LIMIT else 0xFFFFFFFF
            offset32 = header_offset if header_offset < _ZIP64_LIMIT else 0xFFFFFFFF
            self._write(struct.pack("<4s6H3L5HLL", b"PK\x01\x02", version, version, flags, 0,
                                    0, 0x21, crc, size32, size32, len(fname), len(extra), 0, 0,
                                    0, 0, offset32) + fname + extra)
        cd_size = self.offset - cd_start
        count = len(self.entries)
        if count >= 0xFFFF or cd_start >= _ZIP64_LIMIT or cd_size >= _ZIP64_LIMIT:
            eocd64 = self.offset
            self._write(struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count,
                                    count, cd_size, cd_start))
            self._write(struct.pack("<4sLQL", b"PK\x06\x07", 0, eocd64, 1))
            count, cd_size, cd_start = (min(count, 0xFFFF), min(cd_size, 0xFFFFFFFF),
                                        min(cd_start, 0xFFFFFFFF))
        self._write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, cd_size,
                                cd_start, 0))
        self.out.flush()


@contextlib.contextmanager
def _atomic_open(path):
    """A new file beside `path` that replaces `path` in one rename once the block succeeds."""
    path = os.path.realpath(path)  # through a symlink, replace its target, not the link
    directory, base = os.path.split(path)
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with open(fd, "wb") as out:
            yield out
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ==== reading the archive ========================================================================
class _ArchiveReader:
    """PyTorch's PyTorchStreamReader: the records of a checkpoint archive, by name.

    The central directory is parsed by `zipfile`. A record's bytes are read straight from the
    file into a fresh array, or viewed in a memory map of the file (`map_record`). Like
    PyTorch's reader, which splits big records among extra readers, this one can `prefetch`
    the tensor records on worker threads (`os.preadv` releases the GIL, so two cores copy from
    the page cache at once) while the main thread unpickles.

    data.pkl and the small metadata records are checked against their CRC-32; tensor records
    are checked only if `config.load.verify_crc32` is set: PyTorch never checks them, and it
    costs one more pass over every byte.
    """

    def __init__(self, file):
        self.file = file
        try:
            self.size = file.seek(0, os.SEEK_END)
            infos = zipfile.ZipFile(file).infolist()
        except Exception as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}. The file "
                               "is truncated or corrupted, or is not a checkpoint.") from e
        first = infos[0].filename if infos else ""
        if "/" not in first:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the records are "
                               "not inside an archive folder (not a checkpoint)")
        self.prefix = first[:first.index("/") + 1]
        self.records = {i.filename[len(self.prefix):]: i for i in infos
                        if i.filename.startswith(self.prefix)}
        self.fd = _fileno(file) if hasattr(os, "preadv") else None
        self.pool = None
        self.prefetched = {}  # record name -> future of its array

    def has_record(self, name):
        return name in self.records

    def locate(self, name):
        """(data offset, size, crc) of a record, checked to lie inside the file."""
        info = self.records.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        if info.compress_type != zipfile.ZIP_STORED:
            raise RuntimeError(f"record {name} is compressed; checkpoint records are stored "
                               "uncompressed")
        if not 0 <= info.header_offset <= self.size - 30:
            raise RuntimeError(f"PytorchStreamReader failed reading record {name}: its header "
                               f"offset {info.header_offset} is outside the file (corrupted)")
        self.file.seek(info.header_offset)
        header = self.file.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading record {name}: bad local "
                               "header (the file is corrupted)")
        name_len, extra_len = struct.unpack_from("<HH", header, 26)
        start = info.header_offset + 30 + name_len + extra_len
        if start + info.file_size > self.size:
            raise RuntimeError(f"record {name} ends at byte {start + info.file_size} but the "
                               f"file has {self.size} bytes (truncated?)")
        return start, info.file_size, info.CRC

    def prefetch(self, names, verify):
        """Start reading these records on worker threads, in this order (small ones are read
        when asked for: a thread's round trip would cost more than the read)."""
        if self.fd is None:
            return
        located = [(name, *self.locate(name)) for name in names  # file.seek: this thread only
                   if self.records[name].file_size >= _PREFETCH_BYTES]
        if not located:
            return
        self.pool = _worker_pool(min(len(located), _READERS))
        for name, start, size, crc in located:
            # Allocated here, not by the worker: memory from this thread's malloc arena comes
            # back on the next load without page faults; a worker's arena gives it to the OS.
            out = np.empty(size, dtype=np.uint8)
            self.prefetched[name] = self.pool.submit(self._read, name, start, size, crc, verify,
                                                     out)

    def read_record(self, name, nbytes=None, verify=True):
        """The record's bytes in a new uint8 array."""
        future = self.prefetched.pop(name, None)
        data = future.result() if future is not None else self._read(name, *self.locate(name),
                                                                        verify)
        if nbytes is not None and data.nbytes != nbytes:
            raise RuntimeError(f"record {name} holds {data.nbytes} bytes but the checkpoint "
                               f"declares {nbytes}")
        return data

    def _read(self, name, start, size, crc, verify, out=None):
        out = np.empty(size, dtype=np.uint8) if out is None else out
        view, done = memoryview(out), 0
        if self.fd is None:
            self.file.seek(start)
        while done < size:
            if self.fd is not None:  # positioned read: safe from several threads at once
                n = os.preadv(self.fd, [view[done:]], start + done)
            else:
                n = self.file.readinto(view[done:])
            if not n:
                raise RuntimeError(f"record {name} is truncated")
            done += n
        if verify and zlib.crc32(out) != crc:
            raise RuntimeError(f"PytorchStreamReader failed reading record {name}: CRC-32 "
                               "mismatch (the file is corrupted)")
        return out

    def map_record(self, name, nbytes, mapped):
        """The record's bytes as a view into the memory map of the whole file: no copy."""
        start, size, _ = self.locate(name)
        if size != nbytes:
            raise RuntimeError(f"record {name} holds {size} bytes but the checkpoint declares "
                               f"{nbytes}")
        return np.frombuffer(mapped, dtype=np.uint8, count=size, offset=start)

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


_READERS = min(4, os.cpu_count() or 1)
_PREFETCH_BYTES = 1 << 18


def _fileno(file):
    """The descriptor of a plain file object, else None (a GzipFile has a fileno, but of its
    compressed bytes)."""
    if isinstance(file, (io.FileIO, io.BufferedReader, io.BufferedRandom)):
        try:
            return file.fileno()
        except (OSError, io.UnsupportedOperation):
            return None
    return None


# ==== loading ====================================================================================
def _default_restore_location(storage, location):
    dev = device(location)
    if dev.type == "cpu":
        return storage
    if dev.type == "meta":
        return UntypedStorage._meta(storage.nbytes(), dev)
    raise RuntimeError(f"Attempting to deserialize object on a {dev.type.upper()} device but "
                       f"ember has no {dev.type} backend. If you are running on a CPU-only "
                       "machine, please use torch.load with map_location=torch.device('cpu') to "
                       "map your storages to the CPU.")


def _get_restore_location(map_location):
    """map_location (None, str, device, dict or callable) as `restore(storage, location)`."""
    if map_location is None:
        return _default_restore_location
    if isinstance(map_location, dict):
        return lambda s, loc: _default_restore_location(s, map_location.get(loc, loc))
    if isinstance(map_location, (str, bytes, device)):
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return lambda s, loc: _default_restore_location(s, target)

    def restore(storage, location):
        result = map_location(storage, location)
        return _default_restore_location(storage, location) if result is None else result
    return restore


def _is_meta_location(map_location):
    return isinstance(map_location, (str, device)) and device(str(map_location)).type == "meta"


def _storage_pid(pid):
    """(storage type, key, location, numel) of a storage persistent id, type-checked."""
    if type(pid) is not tuple or len(pid) not in (5, 6):
        raise pickle.UnpicklingError(f"malformed storage persistent id {pid!r:.100}")
    _, storage_type, key, location, numel = pid[:5]
    if isinstance(location, bytes):
        location = location.decode("ascii")
    if storage_type is UntypedStorage:
        dtype = D.uint8
    elif isinstance(storage_type, StorageType):
        dtype = storage_type.dtype
    else:
        raise pickle.UnpicklingError(f"unknown storage type {storage_type!r:.100}")
    if type(key) not in (str, int) or type(location) is not str or type(numel) is not int \
            or numel < 0:
        raise pickle.UnpicklingError(f"malformed storage persistent id {pid!r:.100}")
    return storage_type, dtype, str(key), location, numel


def _storage_result(storage_type, storage, dtype):
    return storage if storage_type is UntypedStorage else _TypedStorage(storage, dtype)


def _unrestricted_unpickler(pickle_module):
    """The Unpickler of weights_only=False: any global, with PyTorch's names mapped to ember."""

    class Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            obj = _TORCH_NAMES.get(f"{module}.{name}")
            if obj is not None:
                return obj
            if module == "torch" or module.startswith("torch."):  # torch.nn.modules.linear...
                module = "ember" + module[len("torch"):]
            return super().find_class(module, name)
    return Unpickler


def _make_unpickler(file, weights_only, pickle_module, persistent_load, pickle_load_args):
    if weights_only:
        return _weights_only_unpickler.Unpickler(
            file, allowed=_WEIGHTS_ONLY_ALLOWED, callables=_WEIGHTS_ONLY_CALLABLES,
            constructors=(Parameter,), tensor_type=Tensor, set_state=_set_obj_state,
            persistent_load=persistent_load,
            encoding=pickle_load_args.get("encoding", "utf-8"))
    unpickler = _unrestricted_unpickler(pickle_module)(file, **pickle_load_args)
    if persistent_load is not None:
        unpickler.persistent_load = persistent_load
    return unpickler


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved by `torch.save` or `ember.save` from `f` (a path, a
    `pathlib.Path` or a readable binary file object).

    weights_only=True (the default) unpickles only tensors, storages, Parameters, primitive
    containers, OrderedDict and a few safe globals -- extend the list with `add_safe_globals` or
    `safe_globals` -- and refuses anything else without running it. weights_only=False runs
    arbitrary pickled code: use it only on files you trust.

    map_location: where storages go -- a device string, a `device`, a dict mapping saved
    locations to new ones, or a callable `(storage, location) -> storage or None`.
    mmap=True maps the file instead of reading it: storages view the mapping (copy-on-write),
    so loading costs no copy and pages are read when touched.

    Like PyTorch, this trusts the bytes of tensor records; set
    `ember.serialization.config.load.verify_crc32 = True` to check them against their CRC-32.
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if mmap is None:
        mmap = config.load.mmap
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    pickle_module = pickle if pickle_module is None else pickle_module
    pickle_load_args.setdefault("encoding", "utf-8")
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        from ..utils.safetensors import load_file
        return load_file(f, device=str(map_location) if map_location is not None else "cpu")
    with _open_for_reading(f) as file:
        try:
            if _is_zipfile(file):
                reader = _ArchiveReader(file)
                mapped = _map_file(file) if mmap else None
                return _load_archive(reader, mapped, map_location, weights_only, pickle_module,
                                     pickle_load_args)
            if mmap:
                raise RuntimeError("mmap can only be used with files saved with "
                                   "`torch.save(_use_new_zipfile_serialization=True)`, please "
                                   "torch.save your checkpoint with this option in order to use "
                                   "mmap.")
            return _legacy_load(file, map_location, weights_only, pickle_module,
                                pickle_load_args)
        except pickle.UnpicklingError as e:
            if not weights_only:
                raise
            raise pickle.UnpicklingError(f"Weights only load failed. {UNSAFE_MESSAGE}\n\n"
                                         f"WeightsUnpickler error: {e}") from None


def get_unsafe_globals_in_checkpoint(f):
    """The GLOBALs in a checkpoint's data.pkl that weights-only loading would refuse, as dotted
    names (what to review before `add_safe_globals`). Read statically: nothing is unpickled."""
    allowed = {**_WEIGHTS_ONLY_ALLOWED, **_weights_only_unpickler._user_allowed_globals()}
    with _open_for_reading(f) as file:
        if not _is_zipfile(file):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        data_pkl = _ArchiveReader(file).read_record("data.pkl").tobytes()
    found = set()
    for op, arg, _ in pickletools.genops(data_pkl):
        if op.name == "GLOBAL":
            found.add(arg.replace(" ", "."))
    return sorted(found - set(allowed))


@contextlib.contextmanager
def _open_for_reading(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb", buffering=0) as file:
            yield file
        return
    if not hasattr(f, "read"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'read' attribute, got {type(f).__name__}")
    seekable = getattr(f, "seekable", None)
    yield f if seekable is not None and seekable() else io.BytesIO(f.read())


def _is_zipfile(file):
    start = file.tell()
    magic = file.read(4)
    file.seek(start)
    return magic == b"PK\x03\x04"


def _map_file(file):
    fd = _fileno(file)
    if fd is None:
        raise ValueError("f must be a file path in order to use the mmap argument")
    # ACCESS_COPY is MAP_PRIVATE, PyTorch's default: writes to the tensors stay in memory
    return _mmap.mmap(fd, 0, access=_mmap.ACCESS_COPY)


def _storage_records(reader):
    """The data/<key> records, in key order: the order the pickle first asks for them."""
    names = [name for name in reader.records if name.startswith("data/")]
    return sorted(names, key=lambda name: (len(name), name))  # data/2 before data/10


def _load_archive(reader, mapped, map_location, weights_only, pickle_module, pickle_load_args):
    byteorder = reader.read_record("byteorder").tobytes().decode("ascii", "replace") \
        if reader.has_record("byteorder") else "little"
    if byteorder not in ("little", "big"):
        raise ValueError(f"Unknown endianness type: {byteorder}")
    swap = byteorder != sys.byteorder
    restore = _get_restore_location(map_location)
    to_meta = _is_meta_location(map_location)
    verify = config.load.verify_crc32
    loaded = {}

    def load_storage(key, nbytes, dtype, location):
        name = f"data/{key}"
        if to_meta:
            reader.locate(name)
            return UntypedStorage._meta(nbytes, _META)
        if mapped is not None:
            data = reader.map_record(name, nbytes, mapped)
        else:
            data = reader.read_record(name, nbytes, verify)
        if swap and dtype.itemsize > 1:
            data.view(D.np_dtype(dtype)).byteswap(inplace=True)
        return restore(UntypedStorage._adopt(data, _CPU), location)

    def persistent_load(pid):
        storage_type, dtype, key, location, numel = _storage_pid(pid)
        storage = loaded.get(key)
        if storage is None:
            storage = loaded[key] = load_storage(key, numel * dtype.itemsize, dtype, location)
        return _storage_result(storage_type, storage, dtype)

    data_pkl = io.BytesIO(reader.read_record("data.pkl").tobytes())
    try:
        if mapped is None and not to_meta:
            reader.prefetch(_storage_records(reader), verify)
        return _make_unpickler(data_pkl, weights_only, pickle_module, persistent_load,
                               pickle_load_args).load()
    finally:
        reader.close()


def _legacy_load(file, map_location, weights_only, pickle_module, pickle_load_args):
    """PyTorch's pre-1.6 format: five pickles in a row, then the storages' bytes.

        MAGIC_NUMBER, PROTOCOL_VERSION, sys_info     three small pickles
        obj                                          storages as ('storage', type, key, location,
                                                     numel, view) persistent ids
        [key, ...]                                   the order of the storages that follow
        per key: int64 numel, then numel elements    the data
    """
    start = file.tell()
    file.seek(0, os.SEEK_END)
    remaining = file.tell() - start
    file.seek(start)
    if remaining >= 262 and _looks_like_tar(file):
        raise RuntimeError("this is a .tar checkpoint from PyTorch < 0.4, which ember cannot "
                           "read; re-save it with a newer PyTorch")
    restore = _get_restore_location(map_location)
    storages = {}  # key -> (storage, dtype, location)

    def persistent_load(pid):
        if isinstance(pid, tuple) and pid and pid[0] == "module" and not weights_only:
            return pid[1]  # a Module class saved with its source (the source check is skipped)
        storage_type, dtype, key, location, numel = _storage_pid(pid)
        if key not in storages:
            nbytes = numel * dtype.itemsize
            if nbytes > remaining:
                raise RuntimeError(f"storage {key} declares {nbytes} bytes but the file has "
                                   f"only {remaining}")
            storages[key] = (UntypedStorage(nbytes), dtype, location)
        storage, root_dtype, _ = storages[key]
        view = pid[5] if len(pid) == 6 else None
        if view is not None:
            view_key, offset, size = view
            view_key = str(view_key)
            if view_key not in storages:
                item = root_dtype.itemsize
                lo, hi = _index(offset, "offset") * item, (_index(offset, "offset") + _index(
                    size, "size")) * item
                if not 0 <= lo <= hi <= storage.nbytes():
                    raise RuntimeError(f"storage view {view_key} lies outside storage {key}")
                storages[view_key] = (UntypedStorage._adopt(storage._bytes()[lo:hi], _CPU),
                                      root_dtype, location)
            storage = storages[view_key][0]
        return _storage_result(storage_type, storage, dtype)

    def unpickle(load_storage=None):
        return _make_unpickler(file, weights_only, pickle_module, load_storage,
                               pickle_load_args).load()

    if unpickle() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = unpickle()
    if protocol_version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    sys_info = unpickle()
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    result = unpickle(persistent_load)
    keys = unpickle()
    if not isinstance(keys, list):
        raise RuntimeError("corrupt legacy checkpoint: the storage key list is missing")
    for key in keys:
        if str(key) not in storages:
            raise RuntimeError(f"corrupt legacy checkpoint: storage {key!r} is not used")
        storage, dtype, _ = storages[str(key)]
        header = file.read(8)
        if len(header) != 8:
            raise RuntimeError(f"legacy checkpoint truncated before storage {key}")
        numel = struct.unpack("<q", header)[0]
        if numel * dtype.itemsize != storage.nbytes():
            raise RuntimeError(f"storage {key} holds {numel} elements but was declared with "
                               f"{storage.nbytes() // dtype.itemsize}")
        data = file.read(storage.nbytes())
        if len(data) != storage.nbytes():
            raise RuntimeError(f"legacy checkpoint truncated inside storage {key}")
        target = storage._bytes()
        target[:] = np.frombuffer(data, dtype=np.uint8)
        if little != (sys.byteorder == "little") and dtype.itemsize > 1:
            target.view(D.np_dtype(dtype)).byteswap(inplace=True)
    for key, (storage, dtype, location) in storages.items():
        restored = restore(storage, location)
        if restored is not storage:
            raise RuntimeError("map_location can only keep legacy-format storages on the CPU")
    return result


def _looks_like_tar(file):
    start = file.tell()
    file.seek(start + 257)
    magic = file.read(5)
    file.seek(start)
    return magic == b"ustar"
