"""Collation: turning a list of samples into a batch.

`default_collate` walks the structure of the first sample and batches each leaf: tensors are
stacked along a new first dimension, NumPy arrays and Python numbers become tensors, strings stay
lists; mappings, namedtuples and sequences keep their shape (tuples become lists, as in PyTorch).
`collate_fn_map` maps a leaf type to its batching function, so `default_collate` can be extended
by adding entries. `default_convert` is the same walk without batching (for `batch_size=None`).
"""
import collections
import copy
import math
import re

import numpy as np

from .... import as_tensor, float64, stack, strided, tensor, Tensor
from ....multiprocessing.shared_memory import new_shared_storage, tensor_over
from ...._core.tensor import _contiguous_strides
from .worker import get_worker_info

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _rebuild_like(data, fn):
    """`data` (a mapping or sequence) with `fn` applied to each of its values, as the same type
    if possible: a copy updated in place for mutable containers (which may carry attributes),
    the type called on the new values otherwise, or a plain dict or list when neither works."""
    mapping = isinstance(data, collections.abc.Mapping)
    keys = list(data) if mapping else range(len(data))
    values = {key: fn(key) for key in keys}
    try:
        if isinstance(data, (collections.abc.MutableMapping, collections.abc.MutableSequence)):
            clone = copy.copy(data)
            for key, value in values.items():
                clone[key] = value
            return clone
        return type(data)(values if mapping else list(values.values()))
    except TypeError:
        return values if mapping else list(values.values())


def default_convert(data):
    """Turn each NumPy array (and NumPy scalar) inside `data` into a tensor, keeping the rest."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_like(data, lambda key: default_convert(data[key]))
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_like(data, lambda i: default_convert(data[i]))
    return data


def collate(batch, *, collate_fn_map=None):
    """Batch a list of samples, leaves by `collate_fn_map` (exact type first, then isinstance
    in insertion order), containers by recursing into them."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_like(elem, lambda key: collate([d[key] for d in batch],
                                                       collate_fn_map=collate_fn_map))
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        return _rebuild_like(elem, lambda i: collate(transposed[i], collate_fn_map=collate_fn_map))
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if elem.is_nested:
        raise RuntimeError("Batches of nested tensors are not currently supported by the default "
                           "collate_fn; please provide a custom collate_fn to handle them "
                           "appropriately.")
    if elem.layout is not strided:
        raise RuntimeError("Batches of sparse tensors are not currently supported by the default "
                           "collate_fn; please provide a custom collate_fn to handle them "
                           "appropriately.")
    out = _batch_out(len(batch), elem.shape, elem.dtype) if elem.device.type == "cpu" else None
    return stack(batch, 0, out=out)


def _batch_out(n, sample_shape, dtype):
    """Where to put a batch of n samples: in a worker, a contiguous tensor in shared memory, so
    that the batch leaves for the main process as it is, with no move into shared memory on
    the way out; in the main process None (a fresh tensor)."""
    if get_worker_info() is None:
        return None
    size = (n,) + tuple(sample_shape)
    storage = new_shared_storage(math.prod(size) * dtype.itemsize)
    return tensor_over(storage, dtype, 0, size, _contiguous_strides(size))


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Batch a list of samples: tensors are stacked, numbers and NumPy arrays become tensors,
    strings stay lists, and mappings, namedtuples and sequences are batched field by field.

        >>> default_collate([(0, "a"), (1, "b")])
        [tensor([0, 1]), ['a', 'b']]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
