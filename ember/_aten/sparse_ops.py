"""More SparseCPU kernels (sparse COO tensors): the elementwise functions with f(0) == 0, which
run on the stored values, `copy_` between sparse tensors, and the shape ops that move entries
around by index arithmetic (`select`, `index_select`, `unsqueeze`, `permute`, `narrow_copy`).

PyTorch computes an elementwise function of a COO tensor on its coalesced values (repeated
coordinates must be summed before a nonlinear function sees them), so the result is coalesced;
the in-place form refuses an uncoalesced tensor ("asin_ requires coalesced input") and writes
the values in place under the in-place casting rule; `out=` takes the coalesced result."""
import numpy as np

from .._core import dtype as D
from .._core.tensor import _wrap
from .._dispatch.dispatcher import impl, lookup
from .elementwise import can_cast, _scalar_type_name
from .sparse import _from_arrays, _parts, coalesce

KEY = "SparseCPU"

# PyTorch's sparse_unary_ufuncs (f(0) == 0 for each; neg keeps its own kernel in sparse.py,
# which keeps the entries as stored)
_ZERO_PRESERVING = ("abs", "asin", "asinh", "atan", "atanh", "ceil", "conj_physical", "frac",
                    "floor", "log1p", "relu", "round", "round.decimals", "sin", "sinh", "sign",
                    "sgn", "signbit", "tan", "tanh", "trunc", "expm1", "nan_to_num", "sqrt",
                    "isinf", "isposinf", "isneginf", "isnan", "erf", "erfinv")


def _on_values(name):
    """The kernel of op `name` on a COO tensor: the op's CPU kernel on the coalesced values."""
    op = lookup(name)

    def kernel(self, *args):
        c = coalesce(self)
        idx, _, _ = _parts(c)
        values = op.redispatch("CPU", (c._sparse[1], *args))
        return _from_arrays(idx, values._np, self._size, True)
    kernel.__name__ = f"{op.schema.name}_sparse"
    impl(op, KEY)(kernel)
    return kernel


def _in_place_on_values(name, functional):
    """`name_`: the values of a coalesced self replaced by the op's, cast to self's dtype."""
    base = name.split(".")[0]

    def kernel(self, *args):
        if not self._sparse[2]:
            raise RuntimeError(f"{base}_ requires coalesced input")
        result = functional(self, *args)
        if result.dtype is not self.dtype and not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_scalar_type_name(result.dtype)} can't be cast to "
                               f"the desired output type {_scalar_type_name(self.dtype)}")
        values = self._sparse[1]
        np.copyto(values._np, result._sparse[1]._np, casting="unsafe")
        return self
    kernel.__name__ = f"{base}_sparse_"
    op_name = base + "_" + name[len(base):]
    try:
        op = lookup(op_name)
    except RuntimeError:   # an op without an in-place twin (signbit, isnan, ...)
        return
    impl(op, KEY)(kernel)


for _name in _ZERO_PRESERVING:
    _in_place_on_values(_name, _on_values(_name))


# ---- copies -----------------------------------------------------------------------------------
@impl("copy_", KEY)
def copy_(self, src, non_blocking=False):
    """A sparse self takes a sparse src's entries (same size, self's dtype kept); a sparse and
    a dense tensor do not copy into each other."""
    if self._sparse is None or src._sparse is None:
        raise RuntimeError("copy_() between dense and sparse Tensors is not implemented! Found "
                           f"self type = {_type_string(self)} and src type = {_type_string(src)}")
    if tuple(self._size) != tuple(src._size):
        raise RuntimeError(f"copy_sparse_to_sparse_: sizes do not match, self has size "
                           f"{list(self._size)} but src has size {list(src._size)}")
    idx, vals, coalesced = _parts(src)
    new = _from_arrays(idx.copy(), vals.astype(self.dtype._np), self._size, coalesced)
    self._sparse = new._sparse
    return self


def _type_string(t):
    kind = "sparse." if t._sparse is not None else ""
    return f"torch.{kind}{D.scalar_type_name(t.dtype)}Tensor"


# ---- shape ops --------------------------------------------------------------------------------
def _wrap_dim(dim, ndim, name=None):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


@impl("select.int", KEY)
def select(self, dim, index):
    """Entries with `index` at `dim`: a sparse dim drops its index row (a dense result once no
    sparse dim is left: the entries' values summed), a dense dim selects in the values."""
    dim = _wrap_dim(dim, self.dim())
    size = self._size[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self._size)} at dimension {dim}")
    index %= size
    idx, vals, coalesced = _parts(self)
    sd = idx.shape[0]
    new_size = self._size[:dim] + self._size[dim + 1:]
    if dim >= sd:
        return _from_arrays(idx, np.take(vals, index, axis=dim - sd + 1), new_size, coalesced)
    keep = idx[dim] == index
    if sd == 1:
        total = vals[keep].sum(axis=0, dtype=vals.dtype)
        return _wrap(np.asarray(total, dtype=vals.dtype))
    return _from_arrays(np.delete(idx[:, keep], dim, axis=0), vals[keep], new_size, coalesced)


@impl("index_select", KEY)
def index_select(self, dim, index):
    """The entries whose coordinate at `dim` is picked by `index`, once per pick, renumbered
    to the pick's position (negative picks count from the end, as PyTorch's sparse kernel)."""
    dim = _wrap_dim(dim, self.dim())
    picks = index._np.reshape(-1).astype(np.int64)
    size = self._size[dim]
    if picks.size and (picks.min() < -size or picks.max() >= size):
        raise IndexError(f"index_select(): index out of range for tensor of size "
                         f"{list(self._size)} at dimension {dim}")
    picks = picks % size if size else picks
    idx, vals, _ = _parts(self)
    sd = idx.shape[0]
    new_size = self._size[:dim] + (picks.size,) + self._size[dim + 1:]
    if dim >= sd:
        return _from_arrays(idx, np.take(vals, picks, axis=dim - sd + 1), new_size,
                            self._sparse[2])
    position, entry = _matches(picks, idx[dim])
    new_idx = idx[:, entry].copy()
    new_idx[dim] = position
    return _from_arrays(new_idx, vals[entry], new_size, False)


def _matches(picks, coords):
    """Every (pick position, entry) pair whose coordinate equals the pick, ordered by position
    then entry, found by binary search in the sorted coordinates (memory ~ the result)."""
    order = np.argsort(coords, kind="stable")
    keys = coords[order]
    lo, hi = np.searchsorted(keys, picks, "left"), np.searchsorted(keys, picks, "right")
    counts = hi - lo
    position = np.repeat(np.arange(picks.size), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return position, order[np.repeat(lo, counts) + offsets]


@impl("unsqueeze", KEY)
def unsqueeze(self, dim):
    """A new size-1 dim: sparse (a row of zeros in the indices) if it comes at or before the
    last sparse dim, else dense."""
    ndim = self.dim() + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    dim %= ndim
    idx, vals, coalesced = _parts(self)
    sd = idx.shape[0]
    new_size = self._size[:dim] + (1,) + self._size[dim:]
    if dim <= sd:
        return _from_arrays(np.insert(idx, dim, 0, axis=0), vals, new_size, coalesced)
    return _from_arrays(idx, np.expand_dims(vals, dim - sd + 1), new_size, coalesced)


@impl("permute", KEY)
def permute(self, dims):
    """Sparse dims permute among themselves (the index rows), dense dims among themselves
    (the values' dims). PyTorch keeps the coalesced mark only if dims[0] is literally 0."""
    ndim = self.dim()
    if len(dims) != ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = [_wrap_dim(d, ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    idx, vals, coalesced = _parts(self)
    sd = idx.shape[0]
    if any(d >= sd for d in wrapped[:sd]):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                           "dimensions are not allowed.Only transpositions within sparse and "
                           "dense dimensions are supported.")
    new_size = tuple(self._size[d] for d in wrapped)
    new_vals = np.transpose(vals, [0] + [d - sd + 1 for d in wrapped[sd:]])
    return _from_arrays(idx[wrapped[:sd]], new_vals, new_size,
                        coalesced and len(dims) > 0 and dims[0] == 0)


def narrow_copy(self, dim, start, length):
    """A copy of the entries in [start, start + length) along dim (renumbered from 0)."""
    ndim = self.dim()
    if not 0 <= dim < ndim:
        raise RuntimeError(f"Dimension {dim} out of range. Expecting 0 <= dim < {ndim}.")
    size = self._size[dim]
    if not (0 <= start and length >= 0 and start + length <= size):
        raise RuntimeError(f"Invalid range to narrow. range(start, start+length) must be a "
                           f"subset of range(0, {size}).")
    idx, vals, coalesced = _parts(self)
    sd = idx.shape[0]
    new_size = self._size[:dim] + (length,) + self._size[dim + 1:]
    if dim >= sd:
        taken = np.take(vals, np.arange(start, start + length), axis=dim - sd + 1)
        return _from_arrays(idx.copy(), taken, new_size, coalesced)
    keep = (idx[dim] >= start) & (idx[dim] < start + length)
    new_idx = idx[:, keep].copy()
    new_idx[dim] -= start
    return _from_arrays(new_idx, vals[keep].copy(), new_size, coalesced)
