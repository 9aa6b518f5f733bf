"""Reading PyTorch's legacy checkpoint format: what torch.save wrote before PyTorch 1.6 (and
still writes with `_use_new_zipfile_serialization=False`), a row of pickles followed by the
storages' raw bytes. ember reads it and writes it when asked the same way; the .tar format of
PyTorch < 0.4 is recognized and refused.
"""
import os
import struct
import sys


from .._core import dtype as D
from .._core.device import cpu as _CPU
from .._core.storage import UntypedStorage
from .pickling import _get_restore_location, _index, _make_unpickler, _pickle_with_storages, \
    _storage_pid, _storage_result

MAGIC_NUMBER = 0x1950a86a20f9469cfc6c  # the legacy format's first pickle
PROTOCOL_VERSION = 1001


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
            view_key = _key_str(view_key)
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
        if _key_str(key) not in storages:
            raise RuntimeError(f"corrupt legacy checkpoint: storage {key!r} is not used")
        storage, dtype, _ = storages[_key_str(key)]
        header = file.read(8)
        if len(header) != 8:
            raise RuntimeError(f"legacy checkpoint truncated before storage {key}")
        numel = struct.unpack("<q", header)[0]
        if numel * dtype.itemsize != storage.nbytes():
            raise RuntimeError(f"storage {key} holds {numel} elements but was declared with "
                               f"{storage.nbytes() // dtype.itemsize}")
        target = storage._bytes()
        if _read_into(file, memoryview(target)) != target.nbytes:
            raise RuntimeError(f"legacy checkpoint truncated inside storage {key}")
        if little != (sys.byteorder == "little") and dtype.itemsize > 1:
            target.view(D.np_dtype(dtype)).byteswap(inplace=True)
    for key, (storage, dtype, location) in storages.items():
        restored = restore(storage, location)
        if restored is not storage:
            raise RuntimeError("map_location can only keep legacy-format storages on the CPU")
    return result


def _read_into(file, view):
    """Fill `view` from the file (readinto when it has one, as PyTorch's reader uses); the
    number of bytes read."""
    done, size = 0, view.nbytes
    readinto = getattr(file, "readinto", None)
    while done < size:
        if readinto is not None:
            n = readinto(view[done:])
        else:
            chunk = file.read(size - done)
            n = len(chunk)
            view[done:done + n] = chunk
        if not n:
            break
        done += n
    return done


def _key_str(key):
    """A storage key as the persistent ids name it (bytes under encoding="bytes")."""
    return key.decode("ascii") if isinstance(key, bytes) else str(key)


def _legacy_save(obj, f, pickle_module, protocol):
    """Write the layout `_legacy_load` reads: the three small pickles, `obj` with storages as
    6-field persistent ids, the sorted storage keys, then each storage as its element count
    (int64) and its bytes, in this machine's byte order (which sys_info records)."""
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle_module.dump(header, f, protocol=protocol)
    data_pkl, storages, dtypes = _pickle_with_storages(obj, pickle_module, protocol, legacy=True)
    f.write(data_pkl)
    keys = sorted(str(i) for i in range(len(storages)))
    pickle_module.dump(keys, f, protocol=protocol)
    for key in keys:
        storage, dtype = storages[int(key)], dtypes[int(key)]
        f.write(struct.pack("=q", storage.nbytes() // dtype.itemsize))
        f.write(storage._bytes().tobytes())


def _looks_like_tar(file):
    start = file.tell()
    file.seek(start + 257)
    magic = file.read(5)
    file.seek(start)
    return magic == b"ustar"
