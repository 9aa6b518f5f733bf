"""Sparse compressed tensors: PyTorch's `sparse_csr`, `sparse_csc`, `sparse_bsr` and `sparse_bsc`
layouts (one dispatch key, "SparseCsrCPU", serves all four, as in PyTorch).

A compressed tensor keeps its entries sorted along one dimension, the compressed one, and stores
for it only where each row (CSR) or column (CSC) starts: `compressed_indices` has one more
element than there are rows, row i's entries are `compressed_indices[i]:compressed_indices[i+1]`,
`plain_indices` holds each entry's column, ascending within its row, and `values` its value.
The block layouts (BSR, BSC) do the same with blocks of shape `blocksize` for entries, so their
values are (nnz, bh, bw, *dense_sizes).

    dense           crow_indices   col_indices   values      (CSC of the same matrix:
    [[0, 2, 0],     [0, 1, 3]      [1, 0, 2]     [2, 3, 4]    ccol_indices [0, 1, 2, 3],
     [3, 0, 4]]                                               row_indices [1, 0, 1], values
                                                              [3, 2, 4])

Transposing swaps the two roles without moving anything: the CSR arrays of A are the CSC arrays
of A.T. The tensor's `_sparse` holds a `CompressedParts` (a COO tensor's holds a tuple), and it
shares its storage with its values, as a COO tensor does. Both index arrays have one dtype,
int64 or int32 (an int32 pair stays int32 through every op).
"""
import warnings

import numpy as np

from . import dtype as D
from ._warnings import user_stacklevel
from .layout import sparse_csr, sparse_csc, sparse_bsr, sparse_bsc
from .sparse import sparse_shell

ROW_MAJOR = (sparse_csr, sparse_bsr)
BLOCKED = (sparse_bsr, sparse_bsc)
LAYOUTS = {layout.name: layout for layout in (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)}
# the names of a layout's (compressed, plain) indices, as its accessors and its repr say them
INDEX_NAMES = {sparse_csr: ("crow_indices", "col_indices"),
               sparse_csc: ("ccol_indices", "row_indices"),
               sparse_bsr: ("crow_indices", "col_indices"),
               sparse_bsc: ("ccol_indices", "row_indices")}
# the same swapped: what a transpose turns each layout into
TRANSPOSED = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc,
              sparse_bsc: sparse_bsr}


class CompressedParts:
    """What a compressed tensor stores (its `_sparse`): the layout and three tensors."""
    __slots__ = ("layout", "compressed_indices", "plain_indices", "values")

    def __init__(self, layout, compressed_indices, plain_indices, values):
        self.layout = layout
        self.compressed_indices = compressed_indices
        self.plain_indices = plain_indices
        self.values = values


_warned_beta = [False]


def make_compressed(layout, compressed_indices, plain_indices, values, size):
    """The compressed tensor of the given parts (checked already: `validate`). The first one of
    a process warns that PyTorch calls the layouts beta, as PyTorch's does."""
    if not _warned_beta[0]:
        _warned_beta[0] = True
        warnings.warn("Sparse CSR tensor support is in beta state. If you miss a functionality "
                      "in the sparse tensor support, please submit a feature request to "
                      "https://github.com/pytorch/pytorch/issues.", UserWarning,
                      stacklevel=user_stacklevel())
    return sparse_shell(values, size,
                        CompressedParts(layout, compressed_indices, plain_indices, values))


def is_compressed(t):
    return type(t._sparse) is CompressedParts


def blocksize(layout, values_shape):
    return tuple(values_shape[1:3]) if layout in BLOCKED else (1, 1)


def validate(layout, compressed, plain, values_shape, size):
    """PyTorch's checks of a compressed tensor's parts (`_validate_sparse_compressed_tensor_args`),
    on the index arrays, the values' shape and the size; the messages are PyTorch's."""
    cname, pname = INDEX_NAMES[layout]
    names = [D.scalar_type_name(D.from_numpy_dtype(a.dtype)) for a in (compressed, plain)]
    for name in names:
        if name not in ("Int", "Long"):
            raise RuntimeError(f"{cname} and {pname} dtype must be Int or Long, but got {name}")
    if names[0] != names[1]:
        raise RuntimeError(f"{cname} and {pname} must have the same dtype, bot got {names[0]} "
                           f"and {names[1]}, respectively")
    if compressed.ndim != plain.ndim:
        raise RuntimeError(f"{cname} and {pname} dimensionalities must be equal but got "
                           f"{compressed.ndim} and {plain.ndim}, respectively")
    batch = compressed.ndim - 1
    block = 2 if layout in BLOCKED else 0
    dense = len(values_shape) - 1 - batch - block
    if len(size) != batch + 2 + dense or dense < 0:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense "
                           f"dimensionalities (={batch} + 2 + {dense}) but got {len(size)}")
    if batch:
        raise RuntimeError(f"batched sparse compressed tensors (batch dims {list(size[:batch])}) "
                           f"are not supported in ember")
    bs = blocksize(layout, values_shape)
    if 0 in bs:
        raise RuntimeError(f"values of {layout} must hold blocks of a nonzero size, got "
                           f"values of shape {tuple(values_shape)}")
    for d in (0, 1):
        if size[d] % bs[d]:
            raise RuntimeError(f"tensor shape[{d}] (={size[d]}) must be divisible with "
                               f"blocksize[{d}] (={bs[d]}) as defined by values shape")
    major = 0 if layout in ROW_MAJOR else 1
    n_major, n_minor = size[major] // bs[major], size[1 - major] // bs[1 - major]
    what = ("rows" if major == 0 else "columns") if not block else \
        ("row blocks" if major == 0 else "column blocks")
    if compressed.shape[-1] != n_major + 1:
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {what} + 1 "
                           f"(={n_major + 1}), but got {compressed.shape[-1]}")
    nnz = values_shape[0]
    if plain.shape[-1] != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by "
                           f"values.shape[0], but got {plain.shape[-1]}")
    _check_index_contents(cname, pname, compressed, plain, nnz, n_minor, what)


def _check_index_contents(cname, pname, compressed, plain, nnz, n_minor, what):
    """The invariants PyTorch checks with check_invariants=True (ember checks them always: a
    kernel reading past them would index out of range or sum in the wrong place)."""
    if compressed[0] != 0:
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if compressed[-1] != nnz:
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    counts = np.diff(compressed)
    if counts.size and (counts.min() < 0 or counts.max() > n_minor):
        limit = "ncols" if what.startswith("row") else "nrows"
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {limit}` is not "
                           f"satisfied.")
    if plain.size and (plain.min() < 0 or plain.max() >= n_minor):
        limit = "ncols" if what.startswith("row") else "nrows"
        raise RuntimeError(f"`0 <= {pname} < {limit}` is not satisfied.")
    if plain.size > 1:
        step = np.diff(plain)
        row_starts = compressed[1:-1]
        step[row_starts[(row_starts > 0) & (row_starts < nnz)] - 1] = 1  # across a row boundary
        if step.min() <= 0:
            n = "nrows" if what.startswith("row") else "ncols"
            raise RuntimeError(f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i "
                               f"= 1, ..., {n} are sorted and distinct along the last dimension "
                               f"values` is not satisfied.")


def major_of_entries(compressed):
    """The row (CSR) or column (CSC) of each stored entry: its compressed index expanded."""
    return np.repeat(np.arange(compressed.shape[0] - 1, dtype=compressed.dtype),
                     np.diff(compressed))


def compress(major, n_major, dtype):
    """The compressed index array of entries sorted by `major` (one count per row, summed)."""
    out = np.zeros(n_major + 1, dtype=dtype)
    np.cumsum(np.bincount(major, minlength=n_major), out=out[1:])
    return out


def block_coordinates(layout, compressed, plain):
    """(block row, block column) of each stored entry (elements for CSR and CSC)."""
    major = major_of_entries(compressed)
    return (major, plain) if layout in ROW_MAJOR else (plain, major)
