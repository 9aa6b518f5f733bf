"""Sparse COO tensors: PyTorch's `torch.sparse_coo` layout.

A sparse tensor is a Tensor without a data array whose `_sparse` holds `(indices, values,
coalesced)`: `indices` an int64 tensor of shape (sparse_dim, nnz) naming the coordinates of the
stored entries, `values` a dense tensor of shape (nnz, *dense_sizes) holding them, and whether the
indices are sorted and unique. Entries at repeated coordinates add up ("uncoalesced"); `coalesce()`
sorts them and sums the repeats. The dispatcher sends any op with a sparse argument to the
"SparseCPU" key: the ops written for sparse inputs live in `ember/_aten/sparse.py`, every other op
raises PyTorch's "Could not run ... with arguments from the 'SparseCPU' backend".

    dense                     indices          values
    [[0, 2, 0],               [[0, 1, 1],      [2, 3, 4]
     [3, 0, 4]]                [1, 0, 2]]

The tensor shares its storage (and so its version counter) with its values.
"""
import numpy as np

from . import dtype as D
from .tensor import Tensor, _new


def sparse_shell(values, size, parts):
    """A tensor with no data array of its own: `parts` (a sparse layout's `_sparse`) hold what
    it stores; it has its values' dtype, device and storage."""
    t = _new(Tensor)
    t._np = None
    t._size = tuple(size)
    t.dtype = values.dtype
    t._device = values._device
    t._storage = values._storage_()
    t._rg = False
    t.grad_fn = None
    t._output_nr = 0
    t._sparse = parts
    return t


def make_sparse(indices, values, size, coalesced):
    """The sparse COO tensor of `indices` (int64, (sparse_dim, nnz)) and `values` (nnz, ...)."""
    return sparse_shell(values, size, (indices, values, bool(coalesced)))


def linear_keys(idx, sizes):
    """Each column of an index array as one integer (row-major position in the sparse dims)."""
    keys = np.zeros(idx.shape[1], dtype=np.int64)
    for d, n in enumerate(sizes):
        keys = keys * n + idx[d]
    return keys


def coalesce_arrays(idx, vals, sizes):
    """Sorted unique coordinates and the summed values at each (NumPy arrays in and out)."""
    if idx.shape[1] == 0:
        return idx, vals
    keys = linear_keys(idx, sizes)
    order = np.argsort(keys, kind="stable")
    keys, idx, vals = keys[order], idx[:, order], vals[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    summed = np.add.reduceat(vals, starts, axis=0) if vals.dtype != np.bool_ else \
        np.logical_or.reduceat(vals, starts, axis=0)
    return idx[:, starts], summed.astype(vals.dtype, copy=False)


# torch.sparse.check_sparse_tensor_invariants' global switch: [enabled, chosen explicitly]
invariant_checks = [False, False]


def check_invariants(idx, size, sparse_dim, is_coalesced=None):
    """PyTorch's checks of a COO tensor's indices against its size (sparse_coo_tensor's, when
    the invariant checks are on): no negative index, none past its dim's size, and sorted
    unique indices when the caller says they are coalesced."""
    for d in range(sparse_dim):
        if idx.shape[1] and idx[d].min() < 0:
            raise RuntimeError(f"found negative index {int(idx[d].min())} for dim {d}")
        if idx.shape[1] and idx[d].max() >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {int(idx[d].max())}")
    if is_coalesced and idx.shape[1] > 1:
        keys = linear_keys(idx, size[:sparse_dim])
        if not np.all(keys[1:] > keys[:-1]):
            raise RuntimeError("cannot set is_coalesced to true if indices correspond to "
                               "uncoalesced COO tensor")


def int64(array):
    return np.ascontiguousarray(array, dtype=D.int64._np)
