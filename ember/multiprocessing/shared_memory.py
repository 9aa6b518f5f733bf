"""Shared memory for CPU storages: how a storage's bytes reach another process without a copy.

This is torch.multiprocessing's 'file_descriptor' sharing strategy. A shared storage lives in an
anonymous memory file made by `memfd_create`: its bytes are a MAP_SHARED mapping of that file,
and the file is what travels. Another process receives the file's descriptor (attached to a Unix
socket message, or inherited when it is spawned), maps the same pages and wraps them in a storage
of its own; a write on either side is seen on the other.

The file never has a name, so nothing can be left behind in /dev/shm (and /dev/shm's size limit,
64 MB in a default Docker container, does not apply): the kernel frees the pages when the last
mapping and the last descriptor close, even if every process that held them was killed.

A mapping keeps its descriptor open so that the storage can be sent on again, as in PyTorch; one
shared storage costs a descriptor per process that maps it (two before Python 3.13, whose mmap
keeps a private duplicate).
"""
import gc
import mmap
import os
import sys
import weakref

import numpy as np

from .._core import caching_allocator
from .._core.device import cpu
from .._core.storage import UntypedStorage
from .._core.tensor import Tensor, _wrap, _wrap_external

_MMAP_OPTIONS = {"trackfd": False} if sys.version_info >= (3, 13) else {}


class Segment(mmap.mmap):
    """A shared mapping of a memory file. `fd` is the file's descriptor, open while it lives."""


def _map(fd, nbytes):
    """Map the memory file `fd` (taking ownership of the descriptor)."""
    try:
        segment = Segment(fd, max(nbytes, 1), **_MMAP_OPTIONS)  # an empty mapping is an error
    except BaseException:
        os.close(fd)
        raise
    segment.fd = fd
    weakref.finalize(segment, os.close, fd)
    return segment


def new_segment(nbytes):
    """A fresh shared segment of `nbytes` zero bytes."""
    fd = os.memfd_create("ember-shared-storage")
    try:
        os.ftruncate(fd, max(nbytes, 1))
    except BaseException:
        os.close(fd)
        raise
    return _map(fd, nbytes)


def segment_of(storage):
    """The segment holding `storage`'s bytes, or None when they are private memory."""
    array = storage._array
    base = None if array is None else array.base
    return base if isinstance(base, Segment) else None


# A storage already in this process for a given memory file: receiving a storage that was sent
# out earlier, or the same one twice, gives back the same storage object, as PyTorch does.
_storages = weakref.WeakValueDictionary()


def _file_key(fd):
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _remember(storage):
    _storages[_file_key(segment_of(storage).fd)] = storage
    return storage


def new_shared_storage(nbytes):
    """UntypedStorage._new_shared: a storage whose bytes are born in shared memory."""
    segment = new_segment(nbytes)
    return _remember(UntypedStorage._adopt(np.ndarray(nbytes, np.uint8, buffer=segment), cpu))


def storage_from_fd(fd, nbytes):
    """The storage for a received memory file (taking ownership of the descriptor `fd`)."""
    storage = _storages.get(_file_key(fd))
    if storage is not None:
        os.close(fd)
        return storage
    segment = _map(fd, nbytes)
    return _remember(UntypedStorage._adopt(np.ndarray(nbytes, np.uint8, buffer=segment), cpu))


def tensor_over(storage, dtype, offset, size, stride):
    """A tensor viewing `storage` at (offset, size, stride), counted in elements of `dtype`."""
    itemsize = dtype.itemsize
    empty = 0 in size
    view = np.ndarray(size, dtype._np, buffer=storage._array,
                      offset=0 if empty else offset * itemsize,
                      strides=tuple(s * itemsize for s in stride))
    t = _wrap_external(view)
    t._storage = storage
    if empty:  # NumPy places an empty view anywhere; the tensor keeps its metadata itself
        t._stride_, t._offset_ = tuple(stride), offset
    return t


# Note [Moving a storage into shared memory in place]
#
# `share_memory_()` moves a storage's bytes into a new segment, and every tensor over that storage
# must follow: PyTorch swaps the storage's data pointer and all its views see the new memory. An
# ember CPU tensor instead keeps `_np`, a NumPy view of the bytes, so each tensor over the storage
# needs a new view of the segment at the same byte offset and strides, or it would quietly go on
# reading private memory. Finding them is the hard part: storages do not list their tensors.
#
# The general way asks the garbage collector for the objects that refer to the old array (the
# storage objects over it) and then for those that refer to the storages (the tensors). It is
# exact, but it walks every tracked object: tens of milliseconds in a large process. Fine for
# `model.share_memory()`; too slow for a worker that shares every batch it sends.
#
# The common case has a cheap proof. A fresh batch tensor is the only object reaching its memory,
# and then reference counts say so: the storage is referenced only by the tensor, the old array
# only by the storage (and by the tensor's view, or it is the view), and the view only by the
# tensor. `_sole_user` compares those counts with the counts of tensors made fresh the usual ways
# (a kernel's result, a view of one, from_numpy), measured through the same function, so that the
# interpreter's own references cancel out. Any other reference (another tensor, a NumPy array the
# user kept, a second storage object over the same bytes) raises a count: the general way, then.

def _reference_counts(tensor):
    # the allocator's own hold on the newest arrays is not a user (Note [Held arrays])
    caching_allocator.cpu_allocator.lease_held()
    storage, view = tensor._storage, tensor._np
    array = storage._array
    return (sys.getrefcount(storage), sys.getrefcount(array),
            None if view is array else sys.getrefcount(view))


def _sole_user_counts():
    """The counts of tensors certainly alone with their memory, made the three usual ways."""
    from .. import from_numpy
    owner = _wrap(np.zeros(2))        # a kernel's result: `_np` is the storage's array
    viewer = _wrap(np.zeros(2)[1:])   # `_np` is a view of the storage's array
    adopted = from_numpy(np.zeros(2))
    probes = (owner, viewer, adopted)
    for probe in probes:
        probe._storage_()
    return {_reference_counts(probe) for probe in probes}


_SOLE_USER_COUNTS = None  # measured on first use, once ember is fully imported


def _sole_user(tensor):
    global _SOLE_USER_COUNTS
    if _SOLE_USER_COUNTS is None:
        _SOLE_USER_COUNTS = _sole_user_counts()
    return _reference_counts(tensor) in _SOLE_USER_COUNTS


def _users(array):
    """Every storage object over `array`, and every tensor over those storages (via the gc)."""
    storages = [o for o in gc.get_referrers(array)
                if isinstance(o, UntypedStorage) and o._array is array]
    tensors = [o for o in gc.get_referrers(*storages)
               if isinstance(o, Tensor) and any(o._storage is s for s in storages)]
    return storages, tensors


def _rebased(view, old, new):
    """`view` of the array `old`, remade over `new` at the same byte offset and strides."""
    offset = view.__array_interface__["data"][0] - old.__array_interface__["data"][0]
    offset = min(max(offset, 0), new.nbytes) if view.size == 0 else offset
    return np.ndarray(view.shape, view.dtype, buffer=new, offset=offset, strides=view.strides)


def share_storage(storage, tensors=None):
    """Move `storage` into shared memory in place. `tensors`: every tensor over it, if known."""
    if storage.device.type != "cpu":
        raise RuntimeError("_share_fd_: only available on CPU")
    if segment_of(storage) is not None:
        return storage
    old = storage._array
    new = np.ndarray(old.shape, old.dtype, buffer=new_segment(old.nbytes), strides=old.strides)
    np.copyto(new, old)
    storages, tensors = ([storage], tensors) if tensors is not None else _users(old)
    for s in storages:
        s._array = new
    for t in tensors:
        t._np = _rebased(t._np, old, new)
    return _remember(storage)


def share_tensor_storage(tensor):
    """Tensor.share_memory_: move the tensor's storage (and all its views) into shared memory."""
    tensor._storage_()  # created now, so that `_sole_user` counts it
    if segment_of(tensor._storage) is None:
        sole = _sole_user(tensor)  # before anything here holds the storage
        share_storage(tensor._storage, [tensor] if sole else None)
    return tensor
