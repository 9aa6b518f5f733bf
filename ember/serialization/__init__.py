"""torch.serialization: torch.save and torch.load, PyTorch's checkpoint format written and read
in Python.

save pickles `obj`, with each storage replaced by a persistent id that names a record, and
writes the pickle and the storages' bytes as the records of a zip archive -- into a temporary
file that replaces the target only when complete. load opens the archive, starts reading the
storage records on worker threads and unpickles data.pkl -- by default with the allow-list
unpickler -- turning each persistent id into a storage read from its record, or mapped from the
file (mmap=True). The parts:

    archive.py                  the zip container: record layout, writer, reader, atomic save
    pickling.py                 data.pkl: persistent ids, reduce and rebuild functions, PyTorch's
                                names for ember's objects, map_location, the unpicklers
    legacy.py                   PyTorch's pre-1.6 format (read, and written on request)
    weights_only_unpickler.py   the allow-list unpickler behind weights_only=True

`.safetensors` files are read by `ember.utils.safetensors`.
"""
import io
import mmap as _mmap
import os
import re
import pickle
import pickletools
import sys
import warnings
from enum import Enum
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .._core import dtype as D
from . import weights_only_unpickler as _weights_only_unpickler
from .._core.device import cpu as _CPU, meta as _META
from .._core.storage import UntypedStorage
from .archive import _ArchiveReader, _archive_name, _atomic_open, _is_zipfile, _map_file, \
    _open_for_reading, _open_zipfile_reader, _open_zipfile_writer, _storage_records, \
    _write_archive  # noqa: F401  (the _open_zipfile_* pair: PyTorch's private API)
from .legacy import MAGIC_NUMBER, PROTOCOL_VERSION, _legacy_load, _legacy_save  # noqa: F401
from .pickling import StorageType, _WEIGHTS_ONLY_ALLOWED, _default_restore_location, \
    _get_restore_location, \
    _is_meta_location, _make_unpickler, _pickle_with_storages, _storage_pid, _storage_result
from .weights_only_unpickler import (add_safe_globals, get_safe_globals, clear_safe_globals,
                                     safe_globals)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "StorageType",
           "DEFAULT_PROTOCOL", "config", "LoadEndianness", "get_default_load_endianness",
           "set_default_load_endianness", "get_default_mmap_options", "set_default_mmap_options",
           "location_tag", "default_restore_location", "normalize_storage_type",
           "check_module_version_greater_or_equal", "SourceChangeWarning"]

DEFAULT_PROTOCOL = 2

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by "
                 "default with weights_only https://pytorch.org/docs/stable/generated/"
                 "torch.load.html.")


def _weights_only_failure(message):
    """PyTorch's text for a refused weights-only load, by what the unpickler refused: a global
    not allowed (two ways out), an import that must be done first, or anything else."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                "error message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + _DOCS_MESSAGE


class config:
    """Serialization settings, as `torch.utils.serialization.config` has them."""

    class load:
        mmap = False  # the default of load(mmap=None)
        # ember's own: also check tensor records against their CRC-32. PyTorch never does; it
        # costs one more pass over every byte. data.pkl and metadata records are always checked.
        verify_crc32 = False
        mmap_flags = _mmap.MAP_PRIVATE  # or MAP_SHARED: see set_default_mmap_options


MAP_PRIVATE, MAP_SHARED = _mmap.MAP_PRIVATE, _mmap.MAP_SHARED
STORAGE_KEY_SEPARATOR = ","


class SourceChangeWarning(Warning):
    """Warned when a module saved with its source differs from the module's source now."""


class LoadEndianness(Enum):
    """The byte order `load` assumes for a checkpoint without a `byteorder` record."""
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_default_load_endianness = None  # None: little, as PyTorch assumes since 2.1


def get_default_load_endianness():
    return _default_load_endianness


def set_default_load_endianness(endianness):
    global _default_load_endianness
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _default_load_endianness = endianness


def get_default_mmap_options():
    return config.load.mmap_flags


class set_default_mmap_options:
    """Set `load(mmap=True)`'s mapping to MAP_PRIVATE (the default: writes to the loaded tensors
    stay in memory) or MAP_SHARED (they go to the file); also a context manager that restores
    the previous setting."""

    def __init__(self, flags):
        if flags != MAP_PRIVATE and flags != MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = config.load.mmap_flags
        config.load.mmap_flags = flags

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        config.load.mmap_flags = self.prev


def location_tag(storage):
    """The location string a storage is saved under ('cpu', 'meta', ...)."""
    device = getattr(storage, "device", None)
    if device is None:
        raise RuntimeError(f"don't know how to determine data location of "
                           f"{type(storage).__name__}")
    return str(device)


def default_restore_location(storage, location):
    """`storage` restored to `location`, as load does without a map_location."""
    return _default_restore_location(storage, location)


def normalize_storage_type(storage_type):
    import ember
    return getattr(ember, storage_type.__name__)


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether module.__version__ is at least req_version_tuple, compared field by field in
    the tuple's types; a malformed version raises (or warns and counts as met)."""
    try:
        fields = module.__version__.split(".")
        version = tuple(type(req)(fields[i]) for i, req in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple "
                   f"{str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met",
                      stacklevel=2)
        return True


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save `obj` to `f` (a path, a `pathlib.Path` or a writable binary file object) in
    PyTorch's zip checkpoint format; `torch.load(f, weights_only=True)` reads it back.

    Saving to a path is atomic: the archive is written to a temporary file beside the target and
    renamed over it, so an error or a crash mid-save leaves a previous file untouched. (Durability
    against power loss would also need an fsync, which this does not pay for.)
    """
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
    elif hasattr(f, "write"):
        path = None
    else:
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'write' attribute, got {type(f).__name__}")
    if not _use_new_zipfile_serialization:
        if path is None:
            _legacy_save(obj, f, pickle_module, pickle_protocol)
            if callable(getattr(f, "flush", None)):  # as PyTorch's buffer writer on exit
                f.flush()
            return
        with _atomic_open(path) as out:
            _legacy_save(obj, out, pickle_module, pickle_protocol)
        return
    if path is not None and os.path.isdir(path):  # PyTorch's archive writer fails to open it
        raise RuntimeError(f"open file failed with strerror: Is a directory: {path}")
    data_pkl, storages, _ = _pickle_with_storages(obj, pickle_module, pickle_protocol)
    if path is None:
        _write_archive(f, "archive", data_pkl, storages, not _disable_byteorder_record)
        return
    with _atomic_open(path) as out:
        _write_archive(out, _archive_name(path), data_pkl, storages,
                       not _disable_byteorder_record)


_TRUE_VALUES = ("1", "y", "yes", "true")


def _resolve_weights_only(weights_only, pickle_module):
    """weights_only as torch.load settles it: the argument, else True unless a pickle_module is
    given; then the environment. TORCH_FORCE_WEIGHTS_ONLY_LOAD forces True even over an explicit
    weights_only=False; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD forces False only when the caller did
    not pass weights_only (with a warning); both set is an error."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_no and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                      "the`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=_user_stacklevel())
        return False
    return weights_only


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
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if mmap is None:
        mmap = config.load.mmap
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if weights_only and pickle_load_args:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    pickle_module = pickle if pickle_module is None else pickle_module
    pickle_load_args.setdefault("encoding", "utf-8")
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        from ..utils.safetensors import load_file
        return load_file(f, device=str(map_location) if map_location is not None else "cpu")
    with _open_for_reading(f) as file:
        try:
            if _is_zipfile(file):
                reader = _ArchiveReader(file)
                mapped = _map_file(file, config.load.mmap_flags == MAP_SHARED) if mmap else None
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
            raise pickle.UnpicklingError(_weights_only_failure(str(e))) from None


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


def _load_archive(reader, mapped, map_location, weights_only, pickle_module, pickle_load_args):
    if reader.has_record("byteorder"):
        byteorder = reader.read_record("byteorder").tobytes().decode("ascii", "replace")
    else:
        byteorder = {LoadEndianness.BIG: "big", LoadEndianness.NATIVE: sys.byteorder}.get(
            _default_load_endianness, "little")
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
