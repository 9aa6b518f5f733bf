"""Collectives on picklable Python objects (PyTorch's broadcast_object_list,
all_gather_object, ...): each object is pickled into a uint8 tensor, the sizes travel first,
then the bytes, through the tensor collectives. Like PyTorch's, these unpickle what other
ranks send: use them only between ranks you trust."""
import io
import pickle

import numpy as np

import ember
from . import collectives as C
from .process_group import get_rank, get_world_size, resolve, warn_not_in_group

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list", "send_object_list", "recv_object_list"]


def _to_tensor(obj):
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    return ember.from_numpy(np.frombuffer(buf.getbuffer(), dtype=np.uint8).copy())


def _from_tensor(t):
    return pickle.loads(t.numpy().tobytes())


def _sizes(tensors):
    return ember.tensor([t.numel() for t in tensors], dtype=ember.int64)


def _split(flat, sizes):
    out, offset = [], 0
    for n in sizes.tolist():
        out.append(flat[offset:offset + n])
        offset += n
    return out


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace `object_list`'s entries on every rank with rank `src`'s entries."""
    if src is None and group_src is None:
        src = 0
    if get_rank(group) == -1:
        warn_not_in_group("broadcast_object_list")
        return
    mine = (get_rank() == src) if group_src is None else (get_rank(group) == group_src)
    if mine:
        tensors = [_to_tensor(obj) for obj in object_list]
        sizes = _sizes(tensors)
    else:
        sizes = ember.empty(len(object_list), dtype=ember.int64)
    C.broadcast(sizes, src, group, group_src=group_src)
    flat = (ember.cat(tensors) if mine and tensors
            else ember.empty(int(sizes.sum()), dtype=ember.uint8))
    C.broadcast(flat, src, group, group_src=group_src)
    if not mine:
        for i, piece in enumerate(_split(flat, sizes)):
            object_list[i] = _from_tensor(piece)


def all_gather_object(object_list, obj, group=None):
    """`object_list[i]` receives rank i's `obj` (the list must have world_size entries)."""
    n = get_world_size(group)
    if n == -1:
        warn_not_in_group("all_gather_object")
        return
    mine = _to_tensor(obj)
    sizes = [ember.empty(1, dtype=ember.int64) for _ in range(n)]
    C.all_gather(sizes, ember.tensor([mine.numel()], dtype=ember.int64), group)
    pieces = [ember.empty(int(s), dtype=ember.uint8) for s in sizes]
    C.all_gather(pieces, mine, group)
    for i, piece in enumerate(pieces):
        object_list[i] = _from_tensor(piece)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank `dst` receives every rank's `obj` in `object_gather_list`."""
    if dst is None and group_dst is None:
        dst = 0
    n = get_world_size(group)
    if n == -1:
        warn_not_in_group("gather_object")
        return
    me = get_rank(group)
    root = group_dst if group_dst is not None else C._group_rank(
        resolve(group), dst, None, "dst", "gather_object")
    mine = _to_tensor(obj)
    size = ember.tensor([mine.numel()], dtype=ember.int64)
    is_root = me == root
    if is_root and object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                         "rank.")
    sizes = [ember.empty(1, dtype=ember.int64) for _ in range(n)] if is_root else None
    C.gather(size, sizes, group=group, group_dst=root)
    pieces = [ember.empty(int(s), dtype=ember.uint8) for s in sizes] if is_root else None
    C.gather(mine, pieces, group=group, group_dst=root)
    if is_root:
        for i, piece in enumerate(pieces):
            object_gather_list[i] = _from_tensor(piece)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Rank i receives `scatter_object_input_list[i]` (of rank `src`) as
    `scatter_object_output_list[0]`."""
    if src is None and group_src is None:
        src = 0
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    n = get_world_size(group)
    if n == -1:
        warn_not_in_group("scatter_object_list")
        return
    me = get_rank(group)
    root = group_src if group_src is not None else C._group_rank(
        resolve(group), src, None, "src", "scatter_object_list")
    if me == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != n:
            raise ValueError("scatter_object_list: scatter_object_input_list must hold one "
                             f"object per rank ({n}) on the source rank")
        tensors = [_to_tensor(obj) for obj in scatter_object_input_list]
        sizes = [ember.tensor([t.numel()], dtype=ember.int64) for t in tensors]
    else:
        tensors = sizes = None
    size = ember.empty(1, dtype=ember.int64)
    C.scatter(size, sizes, group=group, group_src=root)
    piece = ember.empty(int(size), dtype=ember.uint8)
    C.scatter(piece, tensors, group=group, group_src=root)
    scatter_object_output_list[0] = _from_tensor(piece)


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None,
                     use_batch=False):
    """Send the objects of `object_list` to rank `dst` (paired with recv_object_list)."""
    tensors = [_to_tensor(obj) for obj in object_list]
    C.send(_sizes(tensors), dst, group, group_dst=group_dst)
    flat = ember.cat(tensors) if tensors else ember.empty(0, dtype=ember.uint8)
    C.send(flat, dst, group, group_dst=group_dst)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None,
                     use_batch=False):
    """Fill `object_list` with the objects rank `src` sent; returns the sender's rank."""
    sizes = ember.empty(len(object_list), dtype=ember.int64)
    sender = C.recv(sizes, src, group, group_src=group_src)
    flat = ember.empty(int(sizes.sum()), dtype=ember.uint8)
    C.recv(flat, sender, group)
    for i, piece in enumerate(_split(flat, sizes)):
        object_list[i] = _from_tensor(piece)
    return sender
