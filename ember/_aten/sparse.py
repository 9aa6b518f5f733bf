"""Sparse COO kernels (the SparseCPU dispatch key): construction, coalescing, conversion to and
from dense, and the ops PyTorch's sparse users reach for — products with a dense matrix (`mm`,
`addmm`, `matmul`, `mv`: a graph convolution's `adj @ features`), elementwise `add`/`mul`/`div`,
`neg`, `sum`, transposes, copies. Any other op given a sparse tensor raises the dispatcher's
"Could not run ... with arguments from the 'SparseCPU' backend", as PyTorch does.

The products run in SciPy's sparse loops when the `scipy` extra is installed; without it they
gather the dense rows each stored entry needs, scale them by the entry's value and add them into
the output rows (`add_at`, a fast `np.add.at`): work proportional to nnz x columns either way,
never to the dense size of the sparse operand.
"""
import numpy as np

from .._core import dtype as D
from .._core.sparse import (make_sparse, coalesce_arrays, check_invariants, int64, linear_keys,
                            invariant_checks)
from .._core.tensor import Tensor, _wrap
from .._dispatch.dispatcher import impl, lookup
from .add_at import add_at
from .elementwise import can_cast, _scalar_type_name, _check_sub, _check_alpha

_NEW = ("_sparse_coo_tensor_with_dims_and_tensors", "_to_dense", "_to_sparse.sparse_dim",
        "_coalesce", "_values", "_indices", "sparse_mask", "hspmm", "sspaddmm", "resize_as_sparse_")


def _parts(t):
    """(indices array, values array, coalesced) of a sparse tensor."""
    indices, values, coalesced = t._sparse
    return indices._np, values._np, coalesced


def _sparse_dim(t):
    return t._sparse[0]._size[0]


def _from_arrays(idx, vals, size, coalesced):
    return make_sparse(_wrap(int64(idx)), _wrap(np.ascontiguousarray(vals)), size, coalesced)


def _dense_array(t):
    """The dense NumPy array a sparse tensor stands for."""
    idx, vals, _ = _parts(t)
    if idx.shape[0] == 0:  # no sparse dims: the values add up to the whole tensor
        return vals.sum(axis=0).astype(vals.dtype).reshape(t._size)
    out = np.zeros(t._size, dtype=vals.dtype)
    add_at(out, tuple(idx), vals)
    return out


# ---- construction and conversion ------------------------------------------------------------
@impl("_sparse_coo_tensor_with_dims_and_tensors", "CPU")
def sparse_coo_tensor_kernel(sparse_dim, dense_dim, size, indices, values, is_coalesced=None):
    if indices.dtype is not D.int64:
        raise RuntimeError(f"indices must be an int64 tensor, but got {indices.dtype}")
    if values.dim() != 1 + dense_dim:
        raise RuntimeError(f"values has incorrect number of dimensions: expected "
                           f"{1 + dense_dim}, got {values.dim()}")
    if indices.dim() != 2 or indices._size[1] != values._size[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices._size[-1] if indices.dim() else 0}, nnz from values: "
                           f"{values._size[0]}")
    if indices._size[0] != sparse_dim or len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({dense_dim}), but got {len(size)}")
    if tuple(values._size[1:]) != tuple(size[sparse_dim:]):
        expected = list(values._size[:1]) + list(size[sparse_dim:])
        raise RuntimeError(f"values has incorrect size, expected {expected}, got "
                           f"{list(values._size)}")
    if invariant_checks[0]:
        check_invariants(indices._np, size, sparse_dim, is_coalesced)
    nnz = values._size[0]
    return make_sparse(_wrap(int64(indices._np)), values.detach(), size,
                       nnz <= 1 if is_coalesced is None else is_coalesced)


@impl("_to_dense", "SparseCPU")
def to_dense(self, dtype=None):
    out = _dense_array(self)
    return _wrap(out if dtype is None else out.astype(dtype._np))


@impl("_to_sparse.sparse_dim", "CPU")
def to_sparse(self, sparse_dim=None):
    a = self._np
    sd = a.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= a.ndim:
        raise RuntimeError(f"sparse_dim must be in [0, {a.ndim}], but got {sd}")
    lead = a.reshape(a.shape[:sd] + (-1,)) if sd < a.ndim else a[..., None]
    nonzero = (lead != 0).any(axis=-1) if lead.size else np.zeros(a.shape[:sd], dtype=bool)
    idx = np.stack(np.nonzero(nonzero)) if sd else np.zeros((0, int(nonzero.any())), np.int64)
    vals = a[tuple(idx)] if sd else a[None][:idx.shape[1]]
    return _from_arrays(idx.reshape(sd, -1) if sd else idx, vals, self._size, True)


@impl("_coalesce", "SparseCPU")
def coalesce(self):
    idx, vals, coalesced = _parts(self)
    if coalesced:
        return make_sparse(self._sparse[0], self._sparse[1].detach(), self._size, True)
    idx, vals = coalesce_arrays(idx, vals, self._size[:_sparse_dim(self)])
    return _from_arrays(idx, vals, self._size, True)


@impl("_values", "SparseCPU")
def values(self):
    return self._sparse[1].detach()


@impl("_indices", "SparseCPU")
def indices(self):
    return self._sparse[0].detach()


@impl("sparse_mask", "SparseCPU")
def sparse_mask(self, mask):
    """`self`'s entries at `mask`'s coordinates (self dense, mask sparse)."""
    if self._sparse is not None:
        self = _wrap(_dense_array(self))
    if tuple(self._size) != tuple(mask._size):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self._size)} but mask has size {list(mask._size)}")
    idx, _, coalesced = _parts(mask)
    return _from_arrays(idx, self._np[tuple(idx)], self._size, coalesced)


def _no_meta(*args, **kwargs):
    raise NotImplementedError("sparse tensors on the meta device are not supported in ember")


for _name in _NEW:
    impl(_name, "Meta")(_no_meta)


# ---- products with dense matrices -----------------------------------------------------------
def _spmm(sparse, dense):
    """sparse (n, m) @ dense (m, k) -> dense (n, k)."""
    if sparse.dim() != 2 or _sparse_dim(sparse) != 2:
        raise RuntimeError(f"mm: expected a 2-D sparse matrix with 2 sparse dims, got size "
                           f"{list(sparse._size)}")
    if dense._sparse is not None:
        dense = _wrap(_dense_array(dense))
    if dense.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if dense.dim() not in (1, 2) or sparse._size[1] != dense._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sparse._size[0]}x"
                           f"{sparse._size[1]} and {'x'.join(map(str, dense._size))})")
    idx, vals, _ = _parts(sparse)
    b = dense._np
    sp = scipy_sparse(vals.dtype) if b.dtype == vals.dtype else None
    if sp is not None:  # SciPy's compiled loop over the entries (repeats add up there too)
        return np.asarray(sp.coo_matrix((vals, (idx[0], idx[1])), shape=sparse._size) @ b)
    dtype = np.result_type(vals, b)
    out = np.zeros((sparse._size[0],) + b.shape[1:], dtype=dtype)
    rows = b[idx[1]] * (vals[:, None] if b.ndim == 2 else vals)
    add_at(out, (idx[0],), rows)
    return out


_SCIPY_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def scipy_sparse(dtype):
    """SciPy's sparse matrices, when the `scipy` extra is installed and `dtype` is one its
    compiled products take; else None, and the products run in NumPy. The sparse products
    (COO's here, the compressed layouts' in sparse_compressed.py) hand SciPy their arrays
    without a copy: its loops are what PyTorch's are, one pass over the entries."""
    if dtype not in _SCIPY_DTYPES:
        return None
    try:
        import scipy.sparse
    except ImportError:
        return None
    return scipy.sparse


def _dense_spmm(dense, sparse):
    """dense (n, m) @ sparse (m, k) -> dense (n, k): entry (i, j, v) adds v * dense[:, i] to
    column j."""
    if sparse.dim() != 2 or _sparse_dim(sparse) != 2 or dense.dim() != 2 or \
            dense._size[1] != sparse._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({'x'.join(map(str, dense._size))} and "
                           f"{'x'.join(map(str, sparse._size))})")
    idx, vals, _ = _parts(sparse)
    b = dense._np
    sp = scipy_sparse(vals.dtype) if b.dtype == vals.dtype else None
    if sp is not None:
        return np.asarray(b @ sp.coo_matrix((vals, (idx[0], idx[1])), shape=sparse._size))
    out = np.zeros((b.shape[0], sparse._size[1]), dtype=np.result_type(vals, b))
    add_at(out.T, (idx[1],), (b[:, idx[0]] * vals).T)
    return out


@impl("mm", "SparseCPU")
def mm(self, mat2):
    if self._sparse is None:
        return _wrap(_dense_spmm(self, mat2))
    return _wrap(_spmm(self, mat2))


@impl("matmul", "SparseCPU")
def matmul(self, other):
    if self._sparse is not None and self.dim() == 2 and other.dim() == 1:
        return mv(self, other)
    if self._sparse is None or self.dim() != 2 or other.dim() not in (1, 2):
        raise RuntimeError("matmul with a sparse operand supports a 2-D sparse first operand "
                           f"and a 1-D or 2-D dense second one, got sizes {list(self._size)} "
                           f"and {list(other._size)}")
    return _wrap(_spmm(self, other))


@impl("mv", "SparseCPU")
def mv(self, vec):
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"mv: two tensor dim should be 2 and 1, but got SparseTensor Dim: "
                           f"{self.dim()}Tensor Dim: {vec.dim()}")
    if self._size[-1] != vec._size[-1]:
        raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
    return _wrap(_spmm(self, vec))


@impl("addmm", "SparseCPU")
def addmm(self, mat1, mat2, beta=1, alpha=1):
    if mat1._sparse is None or self._sparse is not None:
        raise RuntimeError("addmm with sparse operands supports a dense input, a sparse mat1 "
                           "and a dense mat2")
    product = _spmm(mat1, mat2)
    base = np.broadcast_to(self._np, product.shape)
    return _wrap((base * beta if beta != 1 else base) + (product * alpha if alpha != 1 else
                                                          product))


# ---- products that keep a sparse result: one stored row per nonzero row of mat1 ------------
def _row_products(name, mat1, mat2):
    """(rows, products): the distinct rows of the 2-D sparse mat1 that hold entries, ascending,
    and those rows of mat1 @ mat2 (dense, one per row)."""
    if mat1._sparse is None or mat1.dim() != 2 or _sparse_dim(mat1) != 2:
        raise RuntimeError(f"{name}: Argument #2 (mat1): expected a 2-D sparse matrix with 2 "
                           f"sparse dims, got size {list(mat1._size)}")
    if mat2.dim() != 2:
        raise RuntimeError(f"{name}: Argument #3: matrices expected, got {mat2.dim()}D tensor")
    if mat2._sparse is not None:
        raise RuntimeError(f"{name}: Argument #3 (mat2): expected a strided matrix, got a sparse "
                           f"one")
    if mat2._size[0] != mat1._size[1]:
        raise RuntimeError(f"{name}: Argument #3: Expected dim 0 size {mat1._size[1]}, got "
                           f"{mat2._size[0]}")
    idx, vals, _ = _parts(mat1)
    rows, slot = np.unique(idx[0], return_inverse=True)
    b = mat2._np
    products = np.zeros((rows.size, b.shape[1]), dtype=np.result_type(vals, b))
    add_at(products, (slot,), b[idx[1]] * vals[:, None])
    return rows, products


@impl("hspmm", "SparseCPU")
def hspmm(mat1, mat2):
    """A hybrid result (1 sparse dim, 1 dense dim): the nonzero rows of mat1 @ mat2."""
    rows, products = _row_products("hspmm", mat1, mat2)
    return _from_arrays(rows[None, :], products, (mat1._size[0], mat2._size[1]), False)


@impl("sspaddmm", "SparseCPU")
def sspaddmm(self, mat1, mat2, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2), sparse: self's entries as stored, then every
    column of each nonzero row of the product (uncoalesced where they meet, as PyTorch's)."""
    if self._sparse is None:
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    rows, products = _row_products("sspaddmm", mat1, mat2)
    size = (mat1._size[0], mat2._size[1])
    if tuple(self._size) != size:
        raise RuntimeError(f"sspaddmm: Argument #1 (t): Expected dim 0 size {size[0]} and dim 1 "
                           f"size {size[1]}, got size {list(self._size)}")
    idx, vals, _ = _parts(self)
    cols = np.arange(size[1])
    product_idx = np.stack([np.repeat(rows, size[1]), np.tile(cols, rows.size)])
    dtype = np.result_type(vals, products)
    values = np.concatenate([(vals * beta).astype(dtype),
                             (products.reshape(-1) * alpha).astype(dtype)])
    return _from_arrays(np.concatenate([idx, product_idx], 1), values, size, False)


@impl("sspaddmm", "CPU")
def sspaddmm_dense(self, mat1, mat2, beta=1, alpha=1):
    raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


# ---- resizing in place ------------------------------------------------------------------------
_RESIZE_ADVICE = ("\nYou could try the following options:\n1. If you need an empty sparse tensor "
                  "of this size, call `x = torch.sparse_coo_tensor(size)`.\n2. If you need to "
                  "resize this tensor, you have the following options:\n    1. For both sparse "
                  "and dense dimensions, keep the number of them constant and the size of them "
                  "non-shrinking, and then try the same call again.\n    2. Or, create a new "
                  "sparse tensor with the correct indices and values from this sparse tensor.")


@impl("resize_as_sparse_", "SparseCPU")
def resize_as_sparse_(self, the_template):
    """self takes the template's size and sparse/dense split. An empty self may change
    anything; one holding entries keeps its numbers of sparse and dense dims and may only grow
    its sparse sizes (its entries stay where they are)."""
    if self._sparse is None:
        raise RuntimeError("resize_as_sparse_: self must be a sparse tensor")
    size = tuple(the_template._size)
    sparse_dim = _sparse_dim(the_template) if the_template._sparse is not None else 0
    dense_dim = len(size) - sparse_dim
    idx, vals, coalesced = _parts(self)
    old_sparse, old_dense = idx.shape[0], vals.ndim - 1
    if vals.shape[0] == 0:
        _set_sparse(self, np.zeros((sparse_dim, 0), np.int64),
                    np.zeros((0,) + size[sparse_dim:], vals.dtype), size, True)
        return self
    for what, old, new in (("sparse", old_sparse, sparse_dim), ("dense", old_dense, dense_dim)):
        if old != new:
            raise RuntimeError(f"changing the number of {what} dimensions (from {old} to {new}) "
                               f"on a non-empty sparse tensor is not supported." + _RESIZE_ADVICE)
    old_sizes, new_sizes = list(self._size[:sparse_dim]), list(size[:sparse_dim])
    if any(n < o for o, n in zip(old_sizes, new_sizes)):
        raise RuntimeError(f"shrinking the size of sparse dimensions (from {old_sizes} to "
                           f"{new_sizes}) on a non-empty sparse tensor is not supported."
                           + _RESIZE_ADVICE)
    if tuple(self._size[sparse_dim:]) != size[sparse_dim:]:
        raise RuntimeError(f"shrinking the size of dense dimensions (from "
                           f"{list(self._size[sparse_dim:])} to {list(size[sparse_dim:])}) on a "
                           f"non-empty sparse tensor is not supported." + _RESIZE_ADVICE)
    _set_sparse(self, idx, vals, size, coalesced)
    return self


def _set_sparse(t, idx, vals, size, coalesced):
    """Give the sparse tensor t new parts in place (its identity, and so its autograd and
    version history, stay)."""
    new = _from_arrays(idx, vals, size, coalesced)
    t._size, t._sparse = new._size, new._sparse


# ---- elementwise ------------------------------------------------------------------------------
def _same_size(a, b, name):
    if tuple(a._size) != tuple(b._size):
        raise RuntimeError(f"{name}: expected sizes to match, but got {list(a._size)} and "
                           f"{list(b._size)}")


def _scalar_of(t):
    return t._np.reshape(()).item() if isinstance(t, Tensor) else t


def _as_tensor(x):
    """A Python number argument (`s * 2`) as the 0-d tensor the kernels read."""
    return x if isinstance(x, Tensor) else _wrap(np.asarray(x))


# Note [Adding two sparse tensors]
# PyTorch adds two sparse COO tensors by walking both entry lists at once, as a merge of two
# sorted lists: at each step the smaller coordinate (compared dim by dim) is taken, and equal
# coordinates are taken together with their values added. It does this whether or not the
# operands are coalesced, so on uncoalesced operands the result is that same walk over the
# entries in their stored order: neither a concatenation nor a coalesced sum (a = [3, 1, 3],
# b = [1, 3, 0] give [1, 3, 0, 1, 3]). The result is marked coalesced only when both operands
# are. When either operand's values tensor is not contiguous PyTorch concatenates the entries
# instead (self's, then other's), and coalesces the result once it holds more entries than
# the tensor has elements. An operand without entries gives a copy of the other (times alpha).
@impl("add.Tensor", "SparseCPU")
def add(self, other, alpha=1):
    self, other = _as_tensor(self), _as_tensor(other)
    _check_alpha(D.result_type_of((self, other)), alpha)
    if self._sparse is not None and other._sparse is not None:
        return _add_sparse(self, other, alpha)
    if other._sparse is None:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    _check_dense_sparse_sizes(self, other)
    out = np.array(self._np, dtype=_result_np(self, other))
    return _wrap(_add_entries(out, other, alpha))


@impl("add_.Tensor", "SparseCPU")
def add_(self, other, alpha=1):
    """self += alpha * other in place. A dense self (an SGD step with a sparse gradient) gets
    the sparse entries added at their coordinates and nothing else is touched; a sparse self
    takes the entries of the sum."""
    other = _as_tensor(other)
    result = D.from_numpy_dtype(_result_np(self, other))
    if not can_cast(result, self.dtype):
        raise RuntimeError(f"Can't convert result type {_scalar_type_name(result)} to output "
                           f"{_scalar_type_name(self.dtype)} in add operation")
    if self._sparse is not None:
        idx, vals, coalesced = _parts(add(self, other, alpha))
        new = _from_arrays(idx, vals.astype(self.dtype._np, copy=False), self._size, coalesced)
        self._sparse = new._sparse
        return self
    if other._sparse is None:
        raise RuntimeError("add_: expected a sparse operand")
    _check_dense_sparse_sizes(self, other)
    _add_entries(self._np, other, alpha)
    return self


@impl("sub.Tensor", "SparseCPU")
def sub(self, other, alpha=1):
    """self - alpha * other: PyTorch's sparse sub is add with -alpha (so its errors are add's,
    after sub's own refusal of bool operands)."""
    _check_sub(self, other, None)
    return add(self, other, -alpha)


@impl("sub_.Tensor", "SparseCPU")
def sub_(self, other, alpha=1):
    _check_sub(self, other, None)
    return add_(self, other, -alpha)


def _check_dense_sparse_sizes(dense, sparse):
    if tuple(dense._size) != tuple(sparse._size):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(dense._size)} while other has size "
                           f"{list(sparse._size)} (FYI: dense-sparse addition does not currently "
                           f"support broadcasting)")


def _add_entries(out, sparse, alpha):
    """out (a dense array of sparse's size) += alpha * sparse, entry by entry in order. (PyTorch
    fuses each multiply-add into one rounding; this rounds alpha * entry first: the last-ulp
    difference ember's dense optimizer updates accept too, see Note [rounding] in
    ember/optim/_foreach.py.)"""
    idx, vals, _ = _parts(sparse)
    vals = _times_alpha(vals, alpha, out.dtype)
    if idx.shape[0] == 0:  # no sparse dims: every entry covers the whole tensor
        out += vals.sum(axis=0).astype(out.dtype, copy=False)
        return out
    return add_at(out, tuple(idx), vals.astype(out.dtype, copy=False))


def _times_alpha(vals, alpha, dtype):
    """alpha * vals in dtype; an integer alpha outside an integer dtype's range wraps as a C
    cast does (uint8 - uint8 is add with alpha -1, i.e. 255)."""
    vals = vals.astype(dtype, copy=False)
    if type(alpha) is int and alpha == 1:
        return vals
    if np.issubdtype(dtype, np.integer):
        return vals * np.array(alpha).astype(dtype)
    return (vals * alpha).astype(dtype, copy=False)


def _add_sparse(self, other, alpha):
    """self + alpha * other, both sparse: see Note [Adding two sparse tensors]."""
    if tuple(self._size) != tuple(other._size):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f"{list(self._size)} != {list(other._size)}")
    dtype = _result_np(self, other)
    if dtype == np.bool_:
        raise NotImplementedError('"cadd_sparse" not implemented for \'Bool\'')
    i1, v1, c1 = _parts(self)
    i2, v2, c2 = _parts(other)
    v1 = v1.astype(dtype, copy=False)
    v2 = _times_alpha(v2, alpha, dtype)
    if v2.shape[0] == 0:
        return _from_arrays(i1, v1, self._size, c1)
    if v1.shape[0] == 0:
        return _from_arrays(i2, v2, self._size, c2)
    if i1.shape[0] != i2.shape[0]:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same density, but 'self' "
                           f"has {i1.shape[0]} sparse dimensions while 'other' has "
                           f"{i2.shape[0]} sparse dimensions")
    if not (self._sparse[1].is_contiguous() and other._sparse[1].is_contiguous()):
        idx, vals = np.concatenate([i1, i2], axis=1), np.concatenate([v1, v2])
        if vals.shape[0] > int(np.prod(self._size)):  # sorted and summed, but not marked so
            idx, vals = coalesce_arrays(idx, vals, self._size[:i1.shape[0]])
        return _from_arrays(idx, vals, self._size, False)
    from_self, from_other = _merge_walk(i1, i2, self._size[:i1.shape[0]], c1 and c2)
    idx = np.where(from_self >= 0, i1[:, from_self], i2[:, from_other])
    vals = np.zeros((from_self.size,) + v1.shape[1:], dtype)
    vals[from_self >= 0] += v1[from_self[from_self >= 0]]
    vals[from_other >= 0] += v2[from_other[from_other >= 0]]
    return _from_arrays(idx, vals, self._size, c1 and c2)


def _merge_walk(i1, i2, sizes, sorted_unique):
    """The steps of the merge walk over two entry lists (index arrays (sparse_dim, n)): for
    each result entry, the entry of the first list it takes, and of the second (-1: none)."""
    k1, k2 = linear_keys(i1, sizes), linear_keys(i2, sizes)  # row-major: compares dim by dim
    if sorted_unique:  # the walk of two sorted lists is their sorted union
        keys = np.union1d(k1, k2)
        pos1, pos2 = np.searchsorted(k1, keys), np.searchsorted(k2, keys)
        hit1 = k1[np.minimum(pos1, k1.size - 1)] == keys
        hit2 = k2[np.minimum(pos2, k2.size - 1)] == keys
        return np.where(hit1, pos1, -1), np.where(hit2, pos2, -1)
    k1, k2 = k1.tolist(), k2.tolist()
    n1, n2 = len(k1), len(k2)
    a = b = 0
    from_self, from_other = [], []
    while a < n1 or b < n2:
        if b >= n2 or (a < n1 and k1[a] < k2[b]):
            from_self.append(a)
            from_other.append(-1)
            a += 1
        elif a >= n1 or k2[b] < k1[a]:
            from_self.append(-1)
            from_other.append(b)
            b += 1
        else:
            from_self.append(a)
            from_other.append(b)
            a += 1
            b += 1
    return np.array(from_self, np.int64), np.array(from_other, np.int64)


def _result_np(*operands, true_div=False):
    """The NumPy dtype of an elementwise result, by PyTorch's promotion (a Python number or a
    0-d tensor does not widen a tensor of its own category)."""
    dt = D.result_type_of(operands)
    if true_div and not (dt.is_floating_point or dt.is_complex):
        dt = D.get_default_dtype()
    return dt._np


@impl("mul.Tensor", "SparseCPU")
def mul(self, other):
    if not isinstance(self, Tensor) or self._sparse is None:
        self, other = other, self
    other = _as_tensor(other)
    if self.dim() == 0 and other._sparse is not None and \
            (other.dim() > 0 or self._sparse[1]._size[0] < other._sparse[1]._size[0]):
        self, other = other, self   # the 0-d operand (of two, the one with fewer entries)
    if other._sparse is not None and other.dim() == 0:  # a 0-d sparse scalar: its values' sum
        other = _wrap(np.asarray(_dense_array(other)))
    out_np = _result_np(self, other)
    idx, vals, coalesced = _parts(self)
    if other._sparse is None and other.dim() == 0:  # computed in the result's dtype, as PyTorch
        scalar = other._np.astype(out_np)
        return _from_arrays(idx, vals.astype(out_np, copy=False) * scalar, self._size, coalesced)
    size = _broadcast_sizes(self, other)
    if other._sparse is None:  # sparse * dense: the dense values at the stored coordinates
        idx, vals, coalesced = _broadcast_entries(idx, vals, coalesced, self._size, size)
        dense = np.broadcast_to(other._np, size)
        return _from_arrays(idx, (vals * dense[tuple(idx)]).astype(out_np), size, coalesced)
    # sparse * sparse (broadcasting in dense dims only): where both store a value
    if _sparse_dim(self) != _sparse_dim(other) or \
            tuple(self._size[:_sparse_dim(self)]) != tuple(other._size[:_sparse_dim(other)]):
        raise RuntimeError(f"mul(sparse, sparse): expected equal sparse dims, but got sizes "
                           f"{list(self._size)} and {list(other._size)}")
    (ia, va, _), (ib, vb, _) = _parts(coalesce(self)), _parts(coalesce(other))
    sizes = self._size[:_sparse_dim(self)]
    common, pa, pb = np.intersect1d(linear_keys(ia, sizes), linear_keys(ib, sizes),
                                    return_indices=True)
    # the entries are the coalesced ones, but marked so only when both operands were
    return _from_arrays(ia[:, pa], (va[pa] * vb[pb]).astype(out_np), size,
                        self._sparse[2] and other._sparse[2])


def _broadcast_sizes(a, b):
    try:
        return tuple(np.broadcast_shapes(tuple(a._size), tuple(b._size)))
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({list(a._size)}) must match the size of "
                           f"tensor b ({list(b._size)}) at a non-singleton dimension") from None


def _broadcast_entries(idx, vals, coalesced, size, new_size):
    """A COO tensor's entries broadcast to `new_size` (PyTorch's _sparse_broadcast_to): new
    leading dims become sparse dims, and each sparse dim of size 1 that grows repeats every
    entry at each coordinate along it; dense dims broadcast in the values."""
    lead = len(new_size) - len(size)
    sd = idx.shape[0]
    new_sd = lead + sd
    idx = np.concatenate([np.zeros((lead, idx.shape[1]), np.int64), idx])
    old = (1,) * lead + tuple(size[:sd])
    for d in range(new_sd):
        n = new_size[d]
        if old[d] == n:
            continue
        count = idx.shape[1]
        idx = np.repeat(idx, n, axis=1)
        idx[d] = np.tile(np.arange(n), count)
        vals = np.repeat(vals, n, axis=0)
        coalesced = False   # the copies follow their entry, not the coordinate order
    vals = np.broadcast_to(vals, (vals.shape[0],) + tuple(new_size[new_sd:]))
    return idx, np.ascontiguousarray(vals), coalesced


def _check_divisor(self, other, what):
    """PyTorch divides a sparse tensor by a scalar or a 0-d dense tensor only."""
    if not isinstance(self, Tensor) or self._sparse is None:   # the divisor is the sparse one
        raise RuntimeError(f"Sparse {what} requires a scalar or zero-dim dense tensor divisor "
                           f"(got a sparse divisor)")
    if isinstance(other, Tensor) and (other._sparse is not None or other.dim() != 0):
        got = "a sparse divisor" if other._sparse is not None else \
            f"shape {list(other._size)} for divisor"
        raise RuntimeError(f"Sparse {what} requires a scalar or zero-dim dense tensor divisor "
                           f"(got {got})")


@impl("floor_divide", "SparseCPU")
def floor_divide(self, other):
    """The coalesced values floor-divided by a scalar (coalesced first: floor is not linear)."""
    _check_divisor(self, other, "floor division")
    out_np = _result_np(self, other)
    idx, vals, _ = _parts(coalesce(self))
    q = np.floor_divide(vals.astype(out_np, copy=False), _as_tensor(other)._np.astype(out_np))
    return _from_arrays(idx, q, self._size, True)


@impl("floor_divide_.Tensor", "SparseCPU")
def floor_divide_(self, other):
    result = floor_divide(self, other)
    if not can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {_scalar_type_name(result.dtype)} can't be cast to the "
                           f"desired output type {_scalar_type_name(self.dtype)}")
    _set_sparse(self, *_parts(result)[:2], self._size, True)
    self._sparse = (self._sparse[0], _wrap(self._sparse[1]._np.astype(self.dtype._np)), True)
    return self


@impl("any.dims", "SparseCPU")
def any_(self, dim=None, keepdim=False):
    """Whether any stored value is nonzero (a full reduction only)."""
    if dim not in (None, [], ()):
        raise RuntimeError("any of a sparse tensor over some dims is not supported")
    return _wrap(np.asarray(bool(self._sparse[1]._np.any())))


@impl("div.Tensor_mode", "SparseCPU")
def div(self, other, rounding_mode=None):
    _check_divisor(self, other, "division")
    out_np = _result_np(self, other, true_div=rounding_mode is None)
    idx, vals, coalesced = _parts(self)
    if rounding_mode is None:  # computed in the result's dtype, as PyTorch
        q = vals.astype(out_np, copy=False) / _as_tensor(other)._np.astype(out_np)
    else:
        q = vals / _as_tensor(other)._np
    if rounding_mode == "floor":
        q = np.floor(q)
    elif rounding_mode == "trunc":
        q = np.trunc(q)
    return _from_arrays(idx, q.astype(out_np), self._size, coalesced)


@impl("neg", "SparseCPU")
def neg(self):
    idx, vals, coalesced = _parts(self)
    return _from_arrays(idx, -vals, self._size, coalesced)


@impl("conj_physical", "SparseCPU")
def conj_physical(self):
    idx, vals, coalesced = _parts(self)
    return _from_arrays(idx, np.conj(vals), self._size, coalesced)


# ---- reductions, layout, copies ---------------------------------------------------------------
@impl("sum.dim_IntList", "SparseCPU")
def sum_(self, dim=None, keepdim=False, dtype=None):
    if dim not in (None, [], ()):
        raise RuntimeError("sum of a sparse tensor over some dims: use torch.sparse.sum(input, "
                           "dim)")
    return sum_values(self._sparse[1]._np, dtype)


def sum_values(vals, dtype):
    """The sum of a sparse tensor's stored values, in sum's result dtype (integers and bools
    add up as int64 unless a dtype is given)."""
    acc = vals.dtype if dtype is None else dtype._np
    if np.issubdtype(acc, np.integer) or acc == np.bool_:
        acc = np.int64 if dtype is None else acc
    return _wrap(np.asarray(vals.sum(dtype=acc)))


@impl("transpose.int", "SparseCPU")
def transpose(self, dim0, dim1):
    n = self.dim()
    d0, d1 = dim0 % n if n else 0, dim1 % n if n else 0
    sd = _sparse_dim(self)
    if (d0 < sd) != (d1 < sd):
        raise RuntimeError("transpose: cannot swap a sparse dim with a dense dim")
    idx, vals, _ = _parts(self)
    size = list(self._size)
    size[d0], size[d1] = size[d1], size[d0]
    if d0 < sd:
        idx = idx.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
    else:
        vals = np.swapaxes(vals, d0 - sd + 1, d1 - sd + 1)
    return _from_arrays(idx, vals, size, d0 == d1 and self._sparse[2])


@impl("t", "SparseCPU")
def t(self):
    sparse_dim = _sparse_dim(self)
    if sparse_dim > 2 or self.dim() > sparse_dim:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"got {sparse_dim} sparse and {self.dim() - sparse_dim} dense "
                           "dimensions")
    return transpose(self, 0, 1) if self.dim() == 2 else self.detach()


@impl("clone", "SparseCPU")
def clone(self, memory_format=None):
    idx, vals, coalesced = _parts(self)
    return _from_arrays(idx.copy(), vals.copy(), self._size, coalesced)


@impl("_to_copy", "SparseCPU")
def to_copy(self, dtype=None, device=None, memory_format=None):
    if device is not None and device.type != "cpu":
        raise RuntimeError(f"sparse tensors cannot be moved to the {device.type} device here")
    idx, vals, coalesced = _parts(self)
    return _from_arrays(idx.copy(), vals.astype(vals.dtype if dtype is None else dtype._np),
                        self._size, coalesced)


_sparse_coo = lookup("_sparse_coo_tensor_with_dims_and_tensors")


@impl("zero_", "SparseCPU")
def zero_(self):
    """No entries left, the size and the sparse/dense split kept (PyTorch's zero_ of a sparse
    tensor): what an optimizer's zero_grad does to a sparse gradient."""
    idx, vals, _ = _parts(self)
    _set_sparse(self, idx[:, :0].copy(), vals[:0].copy(), tuple(self._size), True)
    return self
