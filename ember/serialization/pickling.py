"""The pickle inside a checkpoint (data.pkl): ember's objects written under PyTorch's names,
and the functions that rebuild them on load.

A tensor pickles as a call `torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)` (`_reduce_tensor`, which Tensor.__reduce_ex__ also uses), and `save`'s
`_Pickler` writes `storage` as a *persistent id* `('storage', torch.FloatStorage, '0', 'cpu',
numel)`: the pickle holds only metadata, the bytes are the archive's record data/0. Tensors that
view one storage name the same key, so the bytes are written once and the tensors share a
storage again after loading. On load, the unpickler -- by default the allow-list one of
`weights_only_unpickler` (`_make_unpickler`) -- calls the `_rebuild_*` functions here, and the
loader turns each persistent id into a storage that map_location places
(`_get_restore_location`).

`_TORCH_NAMES` pairs each dotted name a checkpoint can contain (`torch._utils._rebuild_tensor_v2`,
`torch.FloatStorage`, `torch.float32`, ...) with the ember object that plays its part. It is used
in both directions, and it is also the default allow-list of weights-only loading.
"""
import copyreg
import functools
import io
import pickle
import struct
import types
from collections import ChainMap, OrderedDict

import numpy as np
from .._core.float8 import as_strided

from .._core import dtype as D
from .._core.math_bits import math_bits, set_math_bits
from . import weights_only_unpickler as _weights_only_unpickler
from .._core.device import device, cpu as _CPU, meta as _META
from .._core.storage import UntypedStorage
from ..storage import TypedStorage
from .._core.tensor import Tensor, Size, _wrap_external, _meta, _alias
from ..nn.parameter import Parameter
from ..nested._nested_tensor import _rebuild_nested_tensor


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
    if t._lazy is not None:  # as PyTorch: a lazy tensor's values are not in a storage
        raise RuntimeError("Attempted to access the data pointer on an invalid python storage. "
                           "(a lazy tensor: save ember._lazy.to_cpu(obj), or use "
                           "ember._lazy.save)")
    if t._rg:
        from ..utils.hooks import warn_if_has_hooks
        warn_if_has_hooks(t)
    bits = math_bits(t)
    if t._sparse is not None and bits is None:  # its parts, as PyTorch's sparse tensors pickle
        if t.is_sparse:
            parts = (t._indices(), t._values(), t.shape, t.is_coalesced())
        else:
            p = t._sparse
            parts = (p.compressed_indices, p.plain_indices, p.values.detach(), t.shape)
        return (_rebuild_sparse_tensor, (t.layout, parts))
    if t._np is None:
        func, args = _rebuild_meta_tensor_no_storage, (t.dtype, tuple(t._size), t.stride(),
                                                        t._rg)
    elif t.dtype in D.v3_dtypes:  # no typed storage class: the dtype goes along
        func, args = _rebuild_tensor_v3, (t._storage_(), t.storage_offset(), tuple(t._size),
                                          t.stride(), t._rg, OrderedDict(), t.dtype)
    else:
        func, args = _rebuild_tensor_v2, (_TypedStorage(t._storage_(), t.dtype),
                                          t.storage_offset(), tuple(t._size), t.stride(), t._rg,
                                          OrderedDict())
    if bits is not None:  # the memory as it is, and the bits as PyTorch's metadata dict
        args += ({"conj": True} if bits.conj else {}) | ({"neg": True} if bits.neg else {}),
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
    from .._subclasses.fake_tensor import active_fake_mode
    if active_fake_mode() is not None:   # unpickled within a FakeTensorMode: no bytes kept
        return UntypedStorage._meta(len(data), _META)
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
    from .._subclasses.fake_tensor import active_fake_mode
    fake_mode = active_fake_mode()
    if fake_mode is not None:   # loaded within a FakeTensorMode: a fake of the storage's device
        meta_storage = storage if storage._array is None else \
            UntypedStorage._meta(storage.nbytes(), _META)
        meta = _meta(size, dtype, stride, offset, meta_storage, _META)
        return fake_mode.fake_tensor_converter.from_meta_and_device(fake_mode, meta,
                                                                    storage.device)
    if storage._array is None:
        return _meta(size, dtype, stride, offset, storage, storage.device)
    item = dtype.itemsize
    flat = storage._bytes()
    flat = flat[:len(flat) // item * item].view(D.np_dtype(dtype))
    arr = as_strided(flat[offset:], size, [s * item for s in stride])
    t = _wrap_external(arr)
    t.dtype = dtype
    t._storage = storage
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor_on_storage(storage._untyped_storage, storage.dtype, storage_offset, size,
                              stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    # backward hooks are never saved (PyTorch keeps the argument for files from 2017)
    t = _with_metadata(_rebuild_tensor(storage, storage_offset, size, stride), metadata)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    t = _tensor_on_storage(storage._untyped_storage, dtype, storage_offset, size, stride)
    t = _with_metadata(t, metadata)
    t.requires_grad = requires_grad
    return t


def _with_metadata(t, metadata):
    """`t` with the conjugate/negative bits a saved tensor's metadata names (PyTorch saves a
    lazy view's memory as it is, and {'conj': True} / {'neg': True})."""
    if metadata:
        unknown = set(metadata) - {"conj", "neg"}
        if unknown:
            raise RuntimeError(f"unknown tensor metadata {sorted(unknown)}")
        set_math_bits(t, bool(metadata.get("conj")), bool(metadata.get("neg")))
    return t


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
    from .._core import layout as L
    layouts = {repr(x): x for x in (L.strided, L.sparse_coo, L.sparse_csr, L.sparse_csc,
                                    L.sparse_bsr, L.sparse_bsc)}
    if name not in layouts:
        raise RuntimeError(f"ember has no layout {name}")
    return layouts[name]


def _rebuild_sparse_tensor(layout, data):
    """A sparse tensor from its pickled parts, its invariants checked (a file may hold any
    indices, as PyTorch's weights-only loading checks them too)."""
    from .._bindings.sparse import sparse_coo_tensor
    from .._bindings.sparse_compressed import sparse_compressed_tensor
    if layout.name == "sparse_coo":
        indices, values, size, *coalesced = data
        return sparse_coo_tensor(indices, values, size, check_invariants=True,
                                 is_coalesced=coalesced[0] if coalesced else None)
    compressed_indices, plain_indices, values, size = data
    return sparse_compressed_tensor(compressed_indices, plain_indices, values, size,
                                    layout=layout, check_invariants=True)


_TENSOR_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3,
                      _rebuild_meta_tensor_no_storage, _rebuild_parameter,
                      _rebuild_parameter_with_state, _rebuild_sparse_tensor)


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
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch._utils._rebuild_nested_tensor": _rebuild_nested_tensor,
        "torch.serialization._get_layout": _get_layout,
        "torch.Tensor": Tensor,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": Size,
        "torch.device": device,
        "torch.storage.UntypedStorage": UntypedStorage,
    }
    names.update({f"torch.{d.name}": d for d in D.all_dtypes + D.float8_dtypes + (D.complex32,)})
    names.update({f"torch.{st.name}": st for st in _STORAGE_TYPES.values()})
    save_names = {obj: name for name, obj in names.items()}
    # names that only ever need reading
    names["torch.UntypedStorage"] = UntypedStorage
    names.update({f"torch.cuda.{st.name}": st for st in _STORAGE_TYPES.values()})
    return names, save_names


_TORCH_NAMES, _SAVE_NAMES = _build_name_tables()

# what REDUCE may call in a weights-only load; classes not listed are values only
_WEIGHTS_ONLY_CALLABLES = _TENSOR_REBUILDERS + (
    _rebuild_from_type_v2, _rebuild_nested_tensor, _get_layout, Size, device,
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
        self.storages, self.storage_dtypes = [], []
        self._keys = {}  # id of the storage's memory -> (key, dtype)
        self.legacy = False  # the legacy format's ids carry a sixth field, the (unused) view

    def persistent_id(self, obj):
        t = type(obj)
        if t is _TypedStorage or t is TypedStorage:
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
            self.storage_dtypes.append(dtype)
        elif first_dtype is not dtype and storage.nbytes():  # no bytes: nothing to disagree on
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        pid = ("storage", storage_type, key, str(storage.device), numel)
        return pid + (None,) if self.legacy else pid

    def save_global(self, obj, name=None):
        try:
            torch_name = _SAVE_NAMES.get(obj)
        except TypeError:  # unhashable
            torch_name = None
        if torch_name is None:
            return self._save_other_global(obj, name)
        module, _, qualname = torch_name.rpartition(".")
        self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)

    def _save_other_global(self, obj, name):
        """pickle's Python save_global, failing with the C pickler's exception types (those
        torch.save raises): a local object is an AttributeError."""
        qualname = name or getattr(obj, "__qualname__", None)
        if isinstance(qualname, str) and "<locals>" in qualname.split("."):
            raise AttributeError(f"Can't pickle local object {qualname!r}")
        try:
            return super().save_global(obj, name)
        except pickle.PicklingError as exc:
            if "it's not found as" not in str(exc):
                raise
            module = getattr(obj, "__module__", None)
            raise pickle.PicklingError(f"Can't pickle {obj!r}: attribute lookup {qualname} on "
                                       f"{module} failed") from None

    def save_tensor(self, t):
        """A plain CPU tensor, written straight as the opcodes of its reduction,
        `_rebuild_tensor_v2(<storage persistent id>, offset, size, stride, requires_grad,
        OrderedDict())`: a state dict is mostly tensors, and pickle's generic path spends some
        25 Python calls on each."""
        if t._np is None or t._sparse is not None or _python_state(t) or t.dtype in D.v3_dtypes:
            return self.save_reduce(*_reduce_tensor(t), obj=t)
        if t._rg:
            from ..utils.hooks import warn_if_has_hooks
            warn_if_has_hooks(t)
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


def _dtype_name(d):
    return d.name


@functools.cache
def _save_reducers():
    """How `_Pickler` reduces ember's types, ahead of copyreg's table. A str means "the global
    of this name", which `_Pickler.save_global` writes under PyTorch's name."""
    from .._core.layout import strided
    return ChainMap({**_TENSOR_REDUCERS, D.dtype: _dtype_name, D._Float8Dtype: _dtype_name,
                     StorageType: lambda st: st.name, type(strided): _reduce_layout},
                    copyreg.dispatch_table)



def _pickle_with_storages(obj, pickle_module, protocol, legacy=False):
    """(the pickled bytes, [storage, ...], [dtype each storage is saved as, ...])"""
    buf = io.BytesIO()
    if pickle_module is pickle:
        pickler = _Pickler(buf, protocol)
    else:  # e.g. dill: its Pickler writes ember's names, so only ember reads the file
        class ModulePickler(pickle_module.Pickler):
            persistent_id = _Pickler.persistent_id

        pickler = ModulePickler(buf, protocol=protocol)
        pickler.dispatch_table = ChainMap(_TENSOR_REDUCERS, copyreg.dispatch_table)
        pickler.storages, pickler.storage_dtypes, pickler._keys = [], [], {}
    pickler.legacy = legacy
    pickler.dump(obj)
    return buf.getvalue(), pickler.storages, pickler.storage_dtypes


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
    if isinstance(key, bytes):  # a Python 2 checkpoint loaded with encoding="bytes"
        key = key.decode("ascii")
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
    """What a storage id loads as: a TypedStorage, as in PyTorch, even for a saved UntypedStorage
    (whose dtype is then uint8). A rebuild function reads its two fields; a storage saved on its
    own comes back as this object."""
    return TypedStorage(storage, dtype, _internal=True)


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
