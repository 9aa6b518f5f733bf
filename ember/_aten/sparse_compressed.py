"""Sparse compressed kernels (the SparseCsrCPU dispatch key, serving CSR, CSC, BSR and BSC):
construction, conversion to and from dense and COO, the stored parts, products with dense
matrices (`mm`, `addmm`, `matmul`, `mv`, `sparse_sampled_addmm`: a GNN's `adj @ features`),
transposes, the elementwise ops that keep zeros at zero, and copies. An op without a kernel here
raises PyTorch's errors: an elementwise (TensorIterator) op refuses the layout ("unsupported
tensor layout: SparseCsr"), any other op has no kernel for the key ("Could not run ...").

The product of a compressed matrix with a dense one runs in SciPy's sparse matrix loops when
SciPy is installed (the `scipy` extra; the arrays are handed over without a copy). Without it,
NumPy: a CSR product reads each stored entry's dense row once, scales it, and sums each row's
run of entries with one `np.add.reduceat` (a row's entries are contiguous: that is what the
compressed layout is for); a CSC product scatters its entries' rows into the output
(`np.add.at`), and the block layouts do the same with a small matrix product per block.
"""
import numpy as np

from .._core import dtype as D
from .._core.layout import sparse_bsc, sparse_bsr, sparse_csr
from .._core.sparse import coalesce_arrays
from .._core.sparse_compressed import (
    BLOCKED, INDEX_NAMES, LAYOUTS, ROW_MAJOR, TRANSPOSED, block_coordinates, blocksize,
    compress, is_compressed, make_compressed, validate)
from .._core.tensor import Tensor, _wrap
from .._dispatch.dispatcher import impl, lookup, register_fallback
from .elementwise import TENSOR_ITERATOR_OPS, can_cast
from .sparse import (_as_tensor, _dense_array as _coo_dense, _from_arrays as _coo_from_arrays,
                     _result_np, _same_size, scipy_sparse, sum_values)

_NEW = ("_sparse_compressed_tensor_unsafe", "_to_sparse_csr", "_to_sparse_csc", "_to_sparse_bsr",
        "_to_sparse_bsc", "crow_indices", "col_indices", "ccol_indices", "row_indices", "values",
        "sparse_sampled_addmm")
KEY = "SparseCsrCPU"


def _parts(t):
    """(layout, compressed indices, plain indices, values) of a compressed tensor, as arrays."""
    p = t._sparse
    return p.layout, p.compressed_indices._np, p.plain_indices._np, p.values._np


def _from_arrays(layout, compressed, plain, values, size):
    return make_compressed(layout, _wrap(np.ascontiguousarray(compressed)),
                           _wrap(np.ascontiguousarray(plain)),
                           _wrap(np.ascontiguousarray(values)), size)


def _with_values(t, values):
    """t's indices with new values (an elementwise op that keeps zeros at zero)."""
    p = t._sparse
    return make_compressed(p.layout, p.compressed_indices, p.plain_indices, _wrap(values),
                           t._size)


def _dense_array(t):
    """The dense NumPy array a compressed tensor stands for."""
    layout, c, p, v = _parts(t)
    rows, cols = block_coordinates(layout, c, p)
    if layout not in BLOCKED:
        out = np.zeros(t._size, dtype=v.dtype)
        out[rows, cols] = v
        return out
    bh, bw = v.shape[1:3]
    grid = np.zeros((t._size[0] // bh, t._size[1] // bw) + v.shape[1:], dtype=v.dtype)
    grid[rows, cols] = v
    return grid.swapaxes(1, 2).reshape(t._size)


def _layout_name(t):
    return t.layout.c10_name


# ---- construction -----------------------------------------------------------------------------
@impl("_sparse_compressed_tensor_unsafe", "CPU")
def sparse_compressed_tensor(compressed_indices, plain_indices, values, size, layout):
    layout = LAYOUTS[layout]
    parts = (compressed_indices, plain_indices, values)
    if any(part._sparse is not None for part in parts):
        raise RuntimeError(f"{INDEX_NAMES[layout][0]}, {INDEX_NAMES[layout][1]} and values must "
                           f"be strided tensors, got {[str(part.layout) for part in parts]}")
    validate(layout, compressed_indices._np, plain_indices._np, values._size, tuple(size))
    return make_compressed(layout, compressed_indices.detach(), plain_indices.detach(),
                           values.detach(), size)


# ---- conversions: dense, COO and compressed to compressed -------------------------------------
def _compress_coordinates(layout, rows, cols, values, n_major, index_dtype):
    """The compressed parts of unique entries at (rows, cols), in any order."""
    major, minor = (rows, cols) if layout in ROW_MAJOR else (cols, rows)
    order = np.lexsort((minor, major))
    return (compress(major[order], n_major, index_dtype), minor[order].astype(index_dtype),
            values[order])


def _dense_to_compressed(a, layout, bs, dense_dim, name):
    n_dense = dense_dim or 0
    if dense_dim is not None and not 0 <= n_dense <= a.ndim - 2:
        raise RuntimeError(f"{name}: dense_dim argument must be in [0,{a.ndim - 2}] range, but "
                           f"{dense_dim} is given")
    if a.ndim < 2:  # PyTorch's conversions index the second dim before checking
        raise IndexError(f"{name}: expected at least 2 dimensions for the conversion of a "
                         f"strided tensor to {layout}, got {a.ndim}")
    if a.ndim != 2 + n_dense:
        raise RuntimeError(f"{name}: batched sparse compressed tensors (a {a.ndim}-D input with "
                           f"dense_dim={dense_dim}) are not supported in ember")
    bh, bw = bs
    if a.shape[0] % bh or a.shape[1] % bw:
        raise RuntimeError(f"{name}: tensor sparse size ({a.shape[0]},{a.shape[1]}) must be "
                           f"divisible by given blocksize ({bh},{bw})")
    grid = _block_grid(a, bh, bw) if layout in BLOCKED else a
    if layout not in ROW_MAJOR:
        grid = grid.swapaxes(0, 1)
    flat = grid.reshape(grid.shape[:2] + (int(np.prod(grid.shape[2:])),))
    mask = (flat != 0).any(axis=-1)
    major, minor = np.nonzero(mask)
    return compress(major, mask.shape[0], np.int64), minor.astype(np.int64), grid[major, minor]


def _block_grid(a, bh, bw):
    """A dense matrix (n, m, ...) as (n // bh, m // bw, bh, bw, ...): its blocks by position."""
    return a.reshape((a.shape[0] // bh, bh, a.shape[1] // bw, bw) + a.shape[2:]).swapaxes(1, 2)


def _coo_to_compressed(t, layout, name):
    indices, values, _ = t._sparse
    if indices._size[0] != 2:
        raise RuntimeError(f"{name}: conversion from Sparse to {layout.c10_name} for input "
                           f"tensors with sparse_dim()!=2 is not supported")
    idx, vals = coalesce_arrays(indices._np, values._np, t._size[:2])
    n_major = t._size[0 if layout in ROW_MAJOR else 1]
    return _compress_coordinates(layout, idx[0], idx[1], vals, n_major, np.int64)


def _to_compressed(self, layout, bs, dense_dim, name):
    """self (strided, COO or compressed) in the compressed `layout` with blocks `bs`."""
    if self._sparse is None:
        parts = _dense_to_compressed(self._np, layout, bs, dense_dim, name)
    elif not is_compressed(self):
        if layout in BLOCKED:
            parts = _dense_to_compressed(_coo_dense(self), layout, bs, dense_dim, name)
        else:
            parts = _coo_to_compressed(self, layout, name)
    else:
        src, c, p, v = _parts(self)
        if dense_dim is not None:
            raise RuntimeError(f"to_sparse_{layout.name[7:]}: conversion from {src.c10_name} to "
                               f"{layout.c10_name} with dense_dim argument given is not "
                               f"supported")
        if (src in BLOCKED) != (layout in BLOCKED):
            if src in BLOCKED:
                raise RuntimeError(f"{name}: expected SparseCsr or SparseCsc layout but got "
                                   f"{src.c10_name}")
            parts = _dense_to_compressed(_dense_array(self), layout, bs, dense_dim, name)
        elif src in BLOCKED and tuple(bs) != blocksize(src, v.shape):
            raise RuntimeError(f"{name}: conversion from {src.c10_name} with blocksize "
                               f"{blocksize(src, v.shape)} to blocksize {tuple(bs)} is not "
                               f"supported")
        elif src is layout:
            return make_compressed(layout, self._sparse.compressed_indices,
                                   self._sparse.plain_indices, self._sparse.values.detach(),
                                   self._size)
        else:
            rows, cols = block_coordinates(src, c, p)
            axis = 0 if layout in ROW_MAJOR else 1
            parts = _compress_coordinates(layout, rows, cols, v, self._size[axis] // bs[axis],
                                          c.dtype)
    return _from_arrays(layout, *parts, self._size)


def _converter(layout, blocked):
    op_name = f"_to_sparse_{layout[7:]}"
    layout = LAYOUTS[layout]

    def name(self):  # how PyTorch's errors name the conversion
        source = "dense" if self._sparse is None else "coo" if self.is_sparse else \
            "sparse_compressed"
        return f"{source}_to_sparse_{layout.name[7:]}"
    if blocked:
        def convert(self, blocksize, dense_dim=None):
            return _to_compressed(self, layout, tuple(blocksize), dense_dim, name(self))
    else:
        def convert(self, dense_dim=None):
            return _to_compressed(self, layout, (1, 1), dense_dim, name(self))
    impl(op_name, ("CPU", "SparseCPU", KEY))(convert)


for _layout in ("sparse_csr", "sparse_csc"):
    _converter(_layout, False)
for _layout in ("sparse_bsr", "sparse_bsc"):
    _converter(_layout, True)


@impl("_to_dense", KEY)
def to_dense(self, dtype=None):
    if dtype is not None:
        raise RuntimeError(f"dtype argument is not supported by "
                           f"sparse_{self.layout.name[7:]}_to_dense")
    return _wrap(_dense_array(self))


@impl("_to_sparse.sparse_dim", KEY)
def to_sparse_coo(self, sparse_dim=None):
    """The COO tensor of the same entries (coalesced; a block's every element is an entry)."""
    if sparse_dim not in (None, 2):
        raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {_layout_name(self)} "
                           f"to Sparse with sparse_dim={sparse_dim} is not supported")
    layout, c, p, v = _parts(self)
    rows, cols = block_coordinates(layout, c, p)
    if layout in BLOCKED:
        bh, bw = v.shape[1:3]
        rows = (rows[:, None, None] * bh + np.arange(bh)[:, None]).repeat(bw, axis=2)
        cols = (cols[:, None, None] * bw + np.arange(bw)).repeat(bh, axis=1)
        v = v.reshape((-1,) + v.shape[3:])
    idx, vals = coalesce_arrays(np.stack([rows.reshape(-1), cols.reshape(-1)]).astype(np.int64),
                                v, self._size[:2])
    return _coo_from_arrays(idx, vals, self._size, True)


# ---- the stored parts ---------------------------------------------------------------------------
def _accessor(name, part, layouts, what):
    """crow_indices() and the others: an alias of the stored part, on the layouts that have it;
    any other layout (strided and COO too) is refused by name."""
    def kernel(self):
        if self.layout not in layouts:
            raise RuntimeError(f"{name} expected {what} tensor layout but got "
                               f"{self.layout.c10_name}")
        return getattr(self._sparse, part).detach()
    impl(name, ("CPU", "SparseCPU", KEY))(kernel)


_COLUMN_MAJOR = tuple(layout for layout in LAYOUTS.values() if layout not in ROW_MAJOR)
_accessor("crow_indices", "compressed_indices", ROW_MAJOR, "sparse row compressed")
_accessor("col_indices", "plain_indices", ROW_MAJOR, "sparse row compressed")
_accessor("ccol_indices", "compressed_indices", _COLUMN_MAJOR, "sparse column compressed")
_accessor("row_indices", "plain_indices", _COLUMN_MAJOR, "sparse column compressed")
_accessor("values", "values", tuple(LAYOUTS.values()), "sparse")


@impl("sparse_mask", KEY)
def sparse_mask(self, mask):
    """`self`'s entries at `mask`'s positions, in mask's compressed layout (self dense)."""
    if self._sparse is not None:
        self = _wrap(_dense_array(self) if is_compressed(self) else _coo_dense(self))
    if tuple(self._size) != tuple(mask._size):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self._size)} but mask has size {list(mask._size)}")
    layout, c, p, v = _parts(mask)
    rows, cols = block_coordinates(layout, c, p)
    a = _block_grid(self._np, *v.shape[1:3]) if layout in BLOCKED else self._np
    return _with_values(mask, np.ascontiguousarray(a[rows, cols]))


def _no_meta(*args, **kwargs):
    raise NotImplementedError("sparse compressed tensors on the meta device are not supported "
                              "in ember")


for _name in _NEW:
    impl(_name, "Meta")(_no_meta)


# ---- products with dense matrices ----------------------------------------------------------
def _check_product_dtypes(sparse, dense):
    if dense.dtype is not sparse.dtype:
        raise RuntimeError(f"expected scalar type {D.scalar_type_name(sparse.dtype)} but found "
                           f"{D.scalar_type_name(dense.dtype)}")
    if not (sparse.dtype.is_floating_point or sparse.dtype.is_complex):
        raise NotImplementedError(f"\"addmm_out_sparse_csr_impl_mkl\" not implemented for "
                                  f"'{D.scalar_type_name(sparse.dtype)}'")


def _times_dense(t, b):
    """t @ b for a 2-D compressed t and a dense NumPy b of shape (k,) or (k, m)."""
    layout, c, p, v = _parts(t)
    if v.ndim != (3 if layout in BLOCKED else 1):
        raise RuntimeError(f"products of {_layout_name(t)} tensors with dense dimensions are "
                           f"not supported")
    matrix = _scipy_matrix(layout, c, p, v, t._size)
    if matrix is not None:
        return np.asarray(matrix @ b)
    n, k = t._size
    bh, bw = blocksize(layout, v.shape)
    b2 = b.reshape(k // bw, bw, -1)
    rows, cols = block_coordinates(layout, c, p)
    if layout in BLOCKED:
        products = np.matmul(v, b2[cols])  # (nnz, bh, m)
    else:
        products = v[:, None, None] * b2[cols]  # (nnz, 1, m)
    out = np.zeros((n // bh, bh, b2.shape[-1]), dtype=np.result_type(v, b))
    if v.shape[0]:
        if layout in ROW_MAJOR:  # a row's entries are contiguous: one segmented sum
            filled = np.flatnonzero(np.diff(c))
            out[filled] = np.add.reduceat(products, c[filled], axis=0)
        else:
            np.add.at(out, rows, products)
    return out.reshape((n,) + b.shape[1:])


def _scipy_matrix(layout, c, p, v, size):
    """The same arrays as a SciPy sparse matrix (no copy) when SciPy can take them, else None
    (and the NumPy products above run)."""
    sp = scipy_sparse(v.dtype)
    kind = None if sp is None else {"sparse_csr": sp.csr_matrix, "sparse_csc": sp.csc_matrix,
                                    "sparse_bsr": sp.bsr_matrix}.get(layout.name)
    return None if kind is None else kind((v, p, c), shape=size)


def _transposed(t):
    """t.T: the same arrays read the other way round (CSR <-> CSC, blocks transposed)."""
    layout, _, _, v = _parts(t)
    values = t._sparse.values.detach()
    if layout in BLOCKED:
        values = _wrap(np.ascontiguousarray(v.swapaxes(1, 2)))
    size = (t._size[1], t._size[0]) + t._size[2:]
    return make_compressed(TRANSPOSED[layout], t._sparse.compressed_indices,
                           t._sparse.plain_indices, values, size)


def _mm_arrays(a, b):
    """a @ b as a NumPy array for 2-D a and b of which one or both are compressed."""
    for m, name in ((a, "mat1"), (b, "mat2")):
        if m.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.dim()}-D tensor")
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._size[0]}x"
                           f"{a._size[1]} and {b._size[0]}x{b._size[1]})")
    if a.layout is sparse_bsc:
        raise RuntimeError("addmm: computation on CPU is not implemented for Strided + "
                           "SparseBsc @ Strided")
    if b.layout is sparse_bsr and not is_compressed(a):
        raise RuntimeError("addmm: computation on CPU is not implemented for Strided + "
                           "Strided @ SparseBsr")
    if is_compressed(a):
        _check_product_dtypes(a, b)
        dense = b if b._sparse is None else _wrap(_any_dense(b))
        return _times_dense(a, dense._np)
    _check_product_dtypes(b, a)
    dense = a._np if a._sparse is None else _coo_dense(a)
    return _times_dense(_transposed(b), dense.T).T


def _any_dense(t):
    return _dense_array(t) if is_compressed(t) else _coo_dense(t)


@impl("mm", KEY)
def mm(self, mat2):
    out = _mm_arrays(self, mat2)
    if is_compressed(self) and is_compressed(mat2):  # sparse @ sparse stays sparse, as CSR
        return _from_arrays(sparse_csr, *_dense_to_compressed(out, sparse_csr, (1, 1), None,
                                                              "mm"), out.shape)
    return _wrap(np.ascontiguousarray(out))


@impl("mv", KEY)
def mv(self, vec):
    if vec.dim() != 1 or self.dim() != 2:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, "
                           f"{vec.dim()}")
    if not is_compressed(self) or self._size[1] != vec._size[0]:
        raise RuntimeError(f"size mismatch, got input ({self._size[0]}), mat "
                           f"({'x'.join(map(str, self._size))}), vec "
                           f"({'x'.join(map(str, vec._size))})")
    _check_product_dtypes(self, vec)
    return _wrap(_times_dense(self, vec._np))


@impl("matmul", KEY)
def matmul(self, other):
    if self.dim() == 2 and other.dim() == 2:
        return mm(self, other)
    if is_compressed(self) and self.dim() == 2 and other.dim() == 1:
        return mv(self, other)
    if is_compressed(other) and other.dim() == 2 and self.dim() == 1:
        return _wrap(_mm_arrays(_wrap(self._np[None]), other)[0])
    sparse = self if is_compressed(self) else other
    raise RuntimeError(f"expand is unsupported for {_layout_name(sparse)} tensors")


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(tuple(shape), target) == target
    except ValueError:
        return False


@impl("addmm", KEY)
def addmm(self, mat1, mat2, beta=1, alpha=1):
    if is_compressed(self):
        raise RuntimeError(f"addmm: computation on CPU is not implemented for "
                           f"{_layout_name(self)} + {_layout_name(mat1)} @ {_layout_name(mat2)}")
    product = _mm_arrays(mat1, mat2)
    if not _broadcasts_to(self._size, product.shape):
        raise RuntimeError(f"The expanded size of the tensor ({product.shape[-1]}) must match "
                           f"the existing size ({self._size[-1]}) at non-singleton dimension "
                           f"{self.dim() - 1}.  Target sizes: {list(product.shape)}.  Tensor "
                           f"sizes: {list(self._size)}")
    base = np.broadcast_to(self._np, product.shape)
    if beta == 0:
        base = np.zeros_like(base)
    out = (base * beta if beta != 1 else base) + (product * alpha if alpha != 1 else product)
    return _wrap(np.ascontiguousarray(out.astype(product.dtype, copy=False)))


@impl("sparse_sampled_addmm", KEY)
def sparse_sampled_addmm(self, mat1, mat2, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2), computed only at self's stored entries (CSR)."""
    if self.layout is not sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected result to have sparse csr layout, but got "
                           f"{_layout_name(self)}")
    for m, name in ((mat1, "mat1"), (mat2, "mat2")):
        if m._sparse is not None:
            raise RuntimeError(f"sampled_addmm: Expected {name} to have strided layout, but got "
                               f"{_layout_name(m)}")
        if m.dim() != 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a matrix, got "
                               f"{m.dim()}-D tensor")
    if mat1._size[1] != mat2._size[0]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1._size[0]}x{mat1._size[1]} and {mat2._size[0]}x"
                           f"{mat2._size[1]})")
    if self._size[0] != mat1._size[0]:
        raise RuntimeError("sampled_addmm: self.shape[-2] must match mat1.shape[-2]")
    if self._size[1] != mat2._size[1]:
        raise RuntimeError("sampled_addmm: self.shape[-1] must match mat2.shape[-1]")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and mat2 to have the same dtype, but "
                           f"got {D.scalar_type_name(mat1.dtype)} and "
                           f"{D.scalar_type_name(mat2.dtype)}")
    if mat1.dtype is not self.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and self to have the same dtype, but "
                           f"got {D.scalar_type_name(mat1.dtype)} and "
                           f"{D.scalar_type_name(self.dtype)}")
    layout, c, p, v = _parts(self)
    rows, cols = block_coordinates(layout, c, p)
    sampled = np.einsum("ij,ij->i", mat1._np[rows], mat2._np.T[cols])
    out = (v * beta if beta != 1 else v) if beta != 0 else np.zeros_like(v)
    return _with_values(self, (out + (sampled * alpha if alpha != 1 else sampled)).astype(v.dtype))


# ---- layout, copies, reductions -----------------------------------------------------------
@impl("transpose.int", KEY)
def transpose(self, dim0, dim1):
    n = self.dim()
    d0, d1 = sorted((dim0 % n, dim1 % n))
    if self.dense_dim():
        raise RuntimeError("transpose(): hybrid sparse compressed tensors with dense dimensions "
                           "are not supported")
    if d0 == d1:
        return _with_values(self, self._sparse.values._np)
    if (d0, d1) != (0, 1):
        raise RuntimeError(f"transpose(): swapping dims {dim0} and {dim1} of a "
                           f"{_layout_name(self)} tensor is not supported (only its two sparse "
                           f"dims)")
    return _transposed(self)


@impl("t", KEY)
def t(self):
    if self.dim() != 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    return _transposed(self)


@impl("clone", KEY)
def clone(self, memory_format=None):
    layout, c, p, v = _parts(self)
    return _from_arrays(layout, c.copy(), p.copy(), v.copy(), self._size)


@impl("_to_copy", KEY)
def to_copy(self, dtype=None, device=None, memory_format=None):
    if device is not None and device.type != "cpu":
        raise RuntimeError(f"sparse compressed tensors cannot be moved to the {device.type} "
                           f"device in ember")
    layout, c, p, v = _parts(self)
    return _from_arrays(layout, c.copy(), p.copy(),
                        v.astype(v.dtype if dtype is None else dtype._np), self._size)


@impl("sum.dim_IntList", KEY)
def sum_(self, dim=None, keepdim=False, dtype=None):
    """The sum of every entry (dense), or over some of the two dims with keepdim=True: a CSR
    tensor holding one entry per row (column) that has entries."""
    if dim in (None, [], ()):
        return sum_values(self._sparse.values._np, dtype)
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is "
                           "unsupported")
    if self.layout is not sparse_csr:
        raise RuntimeError(f"Currently the only compressed sparse format supported for "
                           f"sum.dim_IntList is CSR, but got layout {_layout_name(self)}")
    dims = {d % self.dim() for d in dim}
    if not dims <= {0, 1} or self.dense_dim():
        raise RuntimeError(f"sum: reducing a CSR tensor over dims {sorted(dims)} with dense "
                           f"dims {self.dense_dim()} is not supported in ember")
    layout, c, p, v = _parts(self)
    rows, cols = block_coordinates(layout, c, p)
    kept = np.stack([rows * (0 not in dims), cols * (1 not in dims)]).astype(np.int64)
    size = tuple(1 if d in dims else n for d, n in enumerate(self._size))
    result_dtype = sum_values(v[:0], dtype)._np.dtype  # sum's: integers add up as int64
    idx, sums = coalesce_arrays(kept, v.astype(result_dtype), size)
    return _from_arrays(layout, *_compress_coordinates(layout, idx[0], idx[1], sums, size[0],
                                                       c.dtype), size)


@impl("select.int", KEY)
def select(self, dim, index):
    """One row (dim 0) or column (dim 1): a 1-D COO tensor of its entries, as PyTorch's."""
    n = self.dim()
    dim %= n
    size = self._size[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self._size)} at dimension {dim}")
    if dim > 1 or self.layout in BLOCKED:
        raise RuntimeError(f"select(): selecting along dim {dim} of a {_layout_name(self)} "
                           f"tensor is not supported in ember")
    layout, c, p, v = _parts(self)
    rows, cols = block_coordinates(layout, c, p)
    along, other = (rows, cols) if dim == 0 else (cols, rows)
    keep = np.flatnonzero(along == index % size)
    order = np.argsort(other[keep], kind="stable")
    return _coo_from_arrays(other[keep][order][None].astype(np.int64), v[keep][order],
                            (self._size[1 - dim],) + self._size[2:], True)


# ---- elementwise ----------------------------------------------------------------------------
def _zero_preserving(name):
    """An op with f(0) == 0 runs on the stored values only (its CPU kernel, on them)."""
    op = lookup(name)

    def kernel(self):
        return _with_values(self, op.redispatch("CPU", (self._sparse.values,))._np)
    impl(name, KEY)(kernel)
    return kernel


_ZERO_PRESERVING = ("neg", "abs", "sgn", "sign", "sin", "sinh", "tan", "tanh", "asin", "asinh",
                    "atan", "atanh", "sqrt", "relu", "ceil", "floor", "round", "trunc", "expm1",
                    "log1p", "erf", "erfinv", "frac", "signbit")
_ZERO_PRESERVING_KERNELS = {name: _zero_preserving(name) for name in _ZERO_PRESERVING}


def _element_keys(t):
    """Each stored entry's row-major position (non-blocked layouts)."""
    layout, c, p, _ = _parts(t)
    rows, cols = block_coordinates(layout, c, p)
    return rows.astype(np.int64) * t._size[1] + cols


def _check_unblocked(*ts):
    for t in ts:
        if t.layout in BLOCKED:
            raise RuntimeError(f"unsupported tensor layout: {_layout_name(t)}")


@impl("mul.Tensor", KEY)
def mul(self, other):
    if not isinstance(self, Tensor) or not is_compressed(self):
        self, other = other, self
    out_np = _result_np(self, other)
    other = _as_tensor(other)
    _, _, _, v = _parts(self)
    if other._sparse is None and other.dim() == 0:
        return _with_values(self, (v * other._np).astype(out_np))
    _same_size(self, other, "mul")
    _check_unblocked(self)
    if other._sparse is None:  # the dense values at the stored entries
        layout, c, p, _ = _parts(self)
        rows, cols = block_coordinates(layout, c, p)
        return _with_values(self, (v * other._np[rows, cols]).astype(out_np))
    if not is_compressed(other) or other.layout is not self.layout:
        raise RuntimeError(f"mul: a {_layout_name(self)} tensor times a {_layout_name(other)} "
                           f"one is not supported in ember")
    _, pa, pb = np.intersect1d(_element_keys(self), _element_keys(other), assume_unique=True,
                               return_indices=True)
    layout, c, p, _ = _parts(self)
    rows, cols = block_coordinates(layout, c, p)
    n_major = self._size[0 if layout in ROW_MAJOR else 1]
    parts = _compress_coordinates(layout, rows[pa], cols[pa],
                                  (v[pa] * other._sparse.values._np[pb]).astype(out_np), n_major,
                                  np.int64)
    return _from_arrays(layout, *parts, self._size)


@impl("add.Tensor", KEY)
def add(self, other, alpha=1):
    self, other = _as_tensor(self), _as_tensor(other)
    if is_compressed(self) and is_compressed(other):
        _same_size(self, other, "add")
        _check_unblocked(self, other)
        if self.layout is not other.layout:
            raise RuntimeError(f"add: expected both operands in one layout, got "
                               f"{_layout_name(self)} and {_layout_name(other)}")
        layout, c, p, v1 = _parts(self)
        v2 = other._sparse.values._np
        v2 = v2 * alpha if alpha != 1 else v2
        dtype = np.result_type(v1, v2)
        coords = [block_coordinates(layout, *_parts(t)[1:3]) for t in (self, other)]
        idx = np.concatenate([np.stack(rc).astype(np.int64) for rc in coords], axis=1)
        idx, vals = coalesce_arrays(idx, np.concatenate([v1.astype(dtype), v2.astype(dtype)]),
                                    self._size[:2])
        n_major = self._size[0 if layout in ROW_MAJOR else 1]
        return _from_arrays(layout, *_compress_coordinates(layout, idx[0], idx[1], vals, n_major,
                                                           c.dtype), self._size)
    for t in (self, other):
        if t._sparse is not None and not is_compressed(t):
            raise RuntimeError(f"add: a {_layout_name(self)} tensor with a {_layout_name(other)} "
                               f"one is not supported in ember")
    a = _dense_array(self) if is_compressed(self) else self._np
    b = _dense_array(other) if is_compressed(other) else other._np
    return _wrap(np.add(a, b * alpha if alpha != 1 else b))


# ---- in place: the result's parts become self's ------------------------------------------------
def _assign(self, result, name):
    """Make self hold result's entries (cast to self's dtype), writing into self's values where
    the indices are the same objects, so that aliases of values() see the change."""
    if not can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {D.scalar_type_name(result.dtype)} can't be cast to the "
                           f"desired output type {D.scalar_type_name(self.dtype)}")
    p, r = self._sparse, result._sparse
    values = r.values._np.astype(self.dtype._np, copy=False)
    if r.compressed_indices is p.compressed_indices and r.plain_indices is p.plain_indices:
        p.values._np[...] = values
    else:
        self._sparse = type(p)(r.layout, r.compressed_indices, r.plain_indices,
                               _wrap(np.array(values)))
    return self


def _in_place(name, functional):
    def kernel(self, *args):
        if not is_compressed(self):
            raise RuntimeError(f"{name}: a {_layout_name(self)} tensor cannot be written in place "
                               f"with a sparse compressed operand in ember")
        return _assign(self, functional(self, *args), name)
    impl(name, KEY)(kernel)


def _has_op(name):
    try:
        lookup(name)
    except RuntimeError:
        return False
    return True


_in_place("mul_.Tensor", mul)
for _name, _kernel in _ZERO_PRESERVING_KERNELS.items():
    if _has_op(_name + "_"):
        _in_place(_name + "_", _kernel)


@impl("zero_", KEY)
def zero_(self):
    """No entries left (PyTorch's zero_ of a compressed tensor drops them all)."""
    layout, c, p, v = _parts(self)
    self._sparse = type(self._sparse)(
        layout, _wrap(np.zeros_like(c)), _wrap(p[:0].copy()), _wrap(v[:0].copy()))
    return self


@impl("copy_", KEY)
def copy_(self, src, non_blocking=False):
    if not (is_compressed(self) and is_compressed(src)) or self.layout is not src.layout:
        raise RuntimeError(f"copy_: copying a {_layout_name(src)} tensor into a "
                           f"{_layout_name(self)} one is not supported in ember")
    _same_size(self, src, "copy_")
    layout, c, p, v = _parts(src)
    self._sparse = type(self._sparse)(layout, _wrap(c.copy()), _wrap(p.copy()),
                                      _wrap(v.astype(self.dtype._np)))
    return self


# ---- every other op -----------------------------------------------------------------------
def _no_kernel(op, key, args):
    """PyTorch's refusals: a TensorIterator op names the layout, any other the missing key."""
    if op.short_name in TENSOR_ITERATOR_OPS:
        tensors = [a for a in args if isinstance(a, Tensor)]
        for a in args:
            if isinstance(a, (list, tuple)):
                tensors.extend(x for x in a if isinstance(x, Tensor))
        layout = next(t.layout for t in tensors if is_compressed(t))
        raise RuntimeError(f"unsupported tensor layout: {layout.c10_name}")
    raise op.no_kernel_error(key)


register_fallback(KEY, _no_kernel)
