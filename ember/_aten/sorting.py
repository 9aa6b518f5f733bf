"""Sorting and selection kernels (CPU and Meta): sort, topk, kthvalue, unique,
unique_consecutive, searchsorted/bucketize, histc, bincount.

PyTorch orders NaN above every number (first in a descending sort) and its CPU sort is stable
in both directions; the kernels here work from a stable NumPy sort (topk with a small k from a
partition first). Where PyTorch's own selection algorithm breaks ties another way (topk and
kthvalue use nth_element and quickselect), equal values may be reported at other indices; the
values are the same.
"""
import numpy as np

from .._core import dtype as D
from .._dispatch.dispatcher import impl
from .._core.tensor import Tensor, _wrap, _meta, _wrap_dim
from .._core.flags import warn_once
from .elementwise import not_implemented, _scalar_type_name
from .reduction import _sortable, reduced_shape
from .shape import _keep_empty_strides, _preserved_strides, _wrap_dim_no_scalar
from ._std_sort import std_sort
from .tensor_iterator import empty_strided, natural, preserve_strides


def _argsort_last(a, descending=False):
    """Stable argsort along the last axis, NaN greatest.

    Descending and still stable: sort the reversed row ascending (equal values then come
    latest-first), map the positions back and reverse the result (earliest-first again).
    """
    s = _sortable(a)
    if not descending:
        return np.argsort(s, axis=-1, kind="stable")
    n = a.shape[-1]
    order = np.argsort(np.flip(s, -1), axis=-1, kind="stable")
    return np.flip(n - 1 - order, -1)


def _sorted_along(a, d, descending):
    """(values, indices) of a stable sort of `a` along dim d."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    order = np.moveaxis(_argsort_last(np.moveaxis(a, d, -1), descending), -1, d)
    return np.take_along_axis(a, order, d), order.astype(np.int64, copy=False)


def _pair_meta(self, shape, strides=None):
    return _meta(shape, self.dtype, strides, device=self._device), \
        _meta(shape, D.int64, strides, device=self._device)


# ---- sort ----------------------------------------------------------------------------------
# sort's values and indices are laid out like the input (its strides if it is dense, else dense
# ones in its strides' order: PyTorch's infer_dense_strides), whichever dim is sorted.
def _laid_out_like(self, a):
    strides = preserve_strides(self._size, self.stride())
    if strides is None and a.size and a.flags.c_contiguous and natural(a):   # (nothing to move)
        return _wrap(a)
    out = empty_strided(a.shape, strides, a.dtype)
    out[...] = a
    return _keep_empty_strides(_wrap(out), self)


@impl("sort.stable", "CPU")
def sort(self, stable=None, dim=-1, descending=False):
    values, indices = _sorted_along(self._np, _wrap_dim(dim, self.dim()), descending)
    return _laid_out_like(self, values), _laid_out_like(self, indices)


@impl("sort.stable", "Meta")
def sort_meta(self, stable=None, dim=-1, descending=False):
    _wrap_dim(dim, self.dim())
    return _pair_meta(self, self._size, _preserved_strides(self))   # (empty_like's layout)


# ---- topk, kthvalue ------------------------------------------------------------------------
def _check_not_barebones(self, kernel):
    """PyTorch sorts the barebones unsigned types but has no selection or search kernel for
    them (a 0-dim input returns before its kernel is looked up)."""
    if self.dtype in D.barebones_unsigned:
        raise not_implemented(kernel, self.dtype)


def _check_topk(self, k, dim, out_of_range="selected index k out of range"):
    """PyTorch's shape checks (its Meta kernel words the range error its own way); the dtype
    checks come after them, in the CPU kernel."""
    d = _wrap_dim(dim, self.dim())
    size = self._size[d] if self.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError(out_of_range)
    return d


@impl("topk", "CPU")
def topk(self, k, dim=-1, largest=True, sorted=True):
    """The k largest (smallest) along dim, in order: the head of a stable sort, or for a small
    k (as PyTorch switches to a partial sort) a partition that selects k candidates (NaN
    counts as largest there too), of which only those are sorted."""
    d = _check_topk(self, k, dim)
    if self.dtype is D.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if self.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")   # (sic)
    a = self._np
    if a.ndim == 0:
        return _wrap(a.copy()), _wrap(np.zeros((), np.int64))
    _check_not_barebones(self, "topk_cpu")
    n = a.shape[d]
    if not 0 < k * 8 <= n:
        values, indices = _sorted_along(a, d, descending=largest)
        head = (slice(None),) * d + (slice(0, k),)
        return _wrap(np.array(values[head], order="C")), _wrap(np.array(indices[head], order="C"))
    s = np.moveaxis(_sortable(a), d, -1)
    candidates = np.argpartition(s, n - k if largest else k - 1, axis=-1)
    candidates = candidates[..., n - k:] if largest else candidates[..., :k]
    order = _argsort_last(np.take_along_axis(s, candidates, -1), descending=largest)
    indices = np.moveaxis(np.take_along_axis(candidates, order, -1), -1, d)
    return _wrap(np.take_along_axis(a, indices, d)), _wrap(np.array(indices, np.int64, order="C"))


@impl("topk", "Meta")
def topk_meta(self, k, dim=-1, largest=True, sorted=True):
    d = _check_topk(self, k, dim, "k not in range for dimension")
    return _pair_meta(self, self._size[:d] + (k,) + self._size[d + 1:] if self.dim() else ())


def _check_kthvalue(self, k, dim):
    d = _wrap_dim(dim, self.dim())
    size = self._size[d] if self.dim() else 1
    if self.dim() and size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return d


@impl("kthvalue", "CPU")
def kthvalue(self, k, dim=-1, keepdim=False):
    """The k-th smallest along dim (1-based) and its index."""
    d = _check_kthvalue(self, k, dim)
    a = self._np
    if a.ndim == 0:
        return _wrap(a.copy()), _wrap(np.zeros((), np.int64))
    if self.dtype is D.bool or self.dtype.is_complex or self.dtype in D.barebones_unsigned:
        raise not_implemented("kthvalue_cpu", self.dtype)
    values, indices = _sorted_along(a, d, descending=False)
    pick = (slice(None),) * d + (slice(k - 1, k) if keepdim else k - 1,)
    return _wrap(np.array(values[pick], order="C")), _wrap(np.array(indices[pick], order="C"))


@impl("kthvalue", "Meta")
def kthvalue_meta(self, k, dim=-1, keepdim=False):
    d = _check_kthvalue(self, k, dim)
    return _pair_meta(self, reduced_shape(self._size, (d,) if self.dim() else (), keepdim))


# ---- unique, unique_consecutive ------------------------------------------------------------
# The outputs' sizes depend on the values, so these ops have no Meta kernel in PyTorch either;
# their Meta kernels say so.
def _data_dependent(name):
    def meta(self, *args):
        raise NotImplementedError(f"aten::{name}: the output shape depends on the input's values, "
                                  f"so it cannot be computed on the 'meta' device")
    return meta


def _runs(differs, n):
    """For a sequence whose neighbours differ where `differs` (length n - 1): which elements
    start a run, each element's run number, and each run's length."""
    starts = np.concatenate([[True], differs]) if n else np.zeros(0, bool)
    run = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    return starts, run, counts


def _unique_flat(a):
    """Sorted unique values of a 1-D array, the inverse mapping and the counts. NaNs are each
    their own value (NaN != NaN), as in PyTorch; -0.0 and 0.0 are one, the first in order."""
    order = np.argsort(_sortable(a), kind="stable")
    v = a[order]
    starts, run, counts = _runs(v[1:] != v[:-1], a.size)
    inverse = np.empty(a.size, np.int64)
    inverse[order] = run
    return v[starts], inverse, counts.astype(np.int64)


@impl("_unique2", "CPU")
def unique2(self, sorted=True, return_inverse=False, return_counts=False):
    """torch.unique without dim (always sorted on CPU, as PyTorch's is)."""
    values, inverse, counts = _unique_flat(self._np.reshape(-1))
    return _wrap(values), _wrap(inverse.reshape(self._size)), _wrap(counts)


def _rows_along(self, dim):
    """The tensor as a 2-D array of slices along dim (one row per index of dim), with the
    checks of PyTorch's unique_dim kernel (unique_consecutive's with a dim too)."""
    d = _wrap_dim_no_scalar(dim, self.dim())
    a = self._np
    zero_dims = a.shape.count(0)
    if a.ndim and a.shape[d] == 0 and zero_dims > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot "
                           "be applied ")
    if a.ndim and a.shape[d] != 0 and zero_dims:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    a = np.moveaxis(a, d, 0) if a.ndim else a.reshape(1)
    return d, a, a.reshape(a.shape[0], int(np.prod(a.shape[1:])))


def _back_along(rows, like, d):
    """Rows (slices along d) back into a tensor shaped like `like` along dim d: as PyTorch's
    kernel stacks them, a contiguous block of rows with dim d moved back into place."""
    block = empty_strided((rows.shape[0],) + like.shape[1:], None, rows.dtype)
    block[...] = rows.reshape(block.shape)   # (NumPy's own strides on size-1 dims may differ)
    return np.moveaxis(block, 0, d)


def _nan_row_order(keys):
    """The order PyTorch's std::sort leaves rows holding NaNs in. Its comparator is `<` on the
    first position where neither row is NaN and they differ, so a NaN position decides nothing
    and the order is not a strict weak one: replay libstdc++'s moves to land where it lands."""
    rows = keys.tolist()

    def less(a, b):
        for x, y in zip(rows[a], rows[b]):
            if x < y:
                return True
            if x > y:
                return False
        return False

    return std_sort(list(range(len(rows))), less)


@impl("unique_dim", "CPU")
def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """Unique slices along dim, in lexicographic order."""
    d, moved, rows = _rows_along(self, dim)
    keys = _sortable(rows)
    if keys.dtype.kind == "f" and np.isnan(keys).any():
        order = np.array(_nan_row_order(keys), np.int64)
    else:
        order = np.lexsort(keys.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    sorted_rows = rows[order]
    starts, run, counts = _runs((sorted_rows[1:] != sorted_rows[:-1]).any(1), rows.shape[0])
    inverse = np.empty(rows.shape[0], np.int64)
    inverse[order] = run
    return (_wrap(_back_along(sorted_rows[starts], moved, d)), _wrap(inverse),
            _wrap(counts.astype(np.int64)))


@impl("unique_consecutive", "CPU")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """One element (or slice along dim) per run of equal neighbours."""
    if dim is None:
        a = self._np.reshape(-1)
        starts, run, counts = _runs(a[1:] != a[:-1], a.size)
        return _wrap(a[starts]), _wrap(run.reshape(self._size)), _wrap(counts.astype(np.int64))
    d, moved, rows = _rows_along(self, dim)
    starts, run, counts = _runs((rows[1:] != rows[:-1]).any(1), rows.shape[0])
    return (_wrap(_back_along(rows[starts], moved, d)), _wrap(run),
            _wrap(counts.astype(np.int64)))


for _name in ("_unique2", "unique_dim", "unique_consecutive"):
    impl(_name, "Meta")(_data_dependent(_name))


# ---- searchsorted, bucketize ---------------------------------------------------------------
def _searchsorted_args(sorted_sequence, self, right, side, sorter):
    """PyTorch's checks; whether to search to the right of equal values."""
    if sorted_sequence.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    values_shape = getattr(self, "_size", ())
    if sorted_sequence.dim() > 1:
        if not values_shape:
            raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                               f"boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({sorted_sequence.dim()}) and input value's dim(0) numel(1)")
        if sorted_sequence._size[:-1] != values_shape[:-1]:
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                               f"the first N-1 dimensions of boundaries tensor and input value "
                               f"tensor must match, but we got boundaries tensor "
                               f"{list(sorted_sequence._size)} and input value tensor "
                               f"{list(values_shape)}")
    if sorter is not None and sorter._size != sorted_sequence._size:
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, "
                           f"but got boundary tensor {list(sorted_sequence._size)}and got "
                           f"sorter tensor {list(sorter._size)}")
    if sorter is not None and sorter.dtype is not D.int64:
        raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got "
                           f"dtype {_scalar_type_name(sorter.dtype)}")
    return right


def _search(boundaries, values, right):
    """For every value, the number of boundaries (in its row) below it -- or not above it if
    `right` -- by a binary search run on all values at once (PyTorch's lower/upper bound:
    a NaN value lands after every number)."""
    n = boundaries.shape[-1]
    lo = np.zeros(values.shape, np.int64)
    hi = np.full(values.shape, n, np.int64)
    with np.errstate(invalid="ignore"):
        for _ in range(int(n).bit_length()):
            mid = (lo + hi) // 2
            x = np.take_along_axis(boundaries, np.minimum(mid, n - 1), -1) if n else values
            after = ~(x > values) if right else ~(x >= values)
            active = lo < hi
            lo = np.where(active & after, mid + 1, lo)
            hi = np.where(active & ~after, mid, hi)
    return lo


def _warn_non_contiguous(sorted_sequence, self, sorter):
    """PyTorch's once-per-process notes that a non-contiguous argument is copied first."""
    for t, what in ((self, "input value"), (sorted_sequence, "boundary"), (sorter, "sorter")):
        if isinstance(t, Tensor) and not t.is_contiguous():
            warn_once(f"torch.searchsorted(): {what} tensor is non-contiguous, this will lower "
                      "the performance due to extra data copy when converting non-contiguous "
                      f"tensor to contiguous, please use contiguous {what} tensor if possible. "
                      "This message will only appear once per program.")


@impl("searchsorted.Tensor", "CPU")
def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    right = _searchsorted_args(sorted_sequence, self, right, side, sorter)
    _warn_non_contiguous(sorted_sequence, self, sorter)
    boundaries = sorted_sequence._np
    if sorter is not None:
        if sorter._np.size and (sorter._np.min() < 0 or sorter._np.max() >= sorter._size[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        boundaries = np.take_along_axis(boundaries, sorter._np, -1)
    values = self._np if hasattr(self, "_np") else np.asarray(self)
    dt = D.result_type_of((sorted_sequence, self))
    if (dt is D.bool or dt in D.barebones_unsigned) and (not hasattr(self, "_np") or
                                                          self._np.size):
        raise not_implemented("searchsorted_out_cpu", dt)   # (no values: returns before it)
    boundaries, values = _sortable(boundaries.astype(dt._np)), _sortable(values.astype(dt._np))
    if boundaries.ndim == 1 and not (boundaries.dtype.kind == "f" and
                                     np.isnan(boundaries).any()):
        # NumPy's search agrees with PyTorch's unless the boundaries hold a NaN
        r = np.searchsorted(boundaries, values, side="right" if right else "left")
    elif boundaries.ndim == 1:
        shape = values.shape
        r = _search(boundaries.reshape(1, -1), values.reshape(1, -1), right).reshape(shape)
    else:
        r = _search(boundaries, values, right)
    return _wrap(r.astype(np.int32 if out_int32 else np.int64))


@impl("searchsorted.Tensor", "Meta")
def searchsorted_meta(sorted_sequence, self, out_int32=False, right=False, side=None,
                      sorter=None):
    _searchsorted_args(sorted_sequence, self, right, side, sorter)
    return _meta(getattr(self, "_size", ()), D.int32 if out_int32 else D.int64,
                 device=sorted_sequence._device)


def _check_bucketize(boundaries):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")


@impl("bucketize.Tensor", "CPU")
def bucketize(self, boundaries, out_int32=False, right=False):
    _check_bucketize(boundaries)
    return searchsorted(boundaries, self, out_int32, right, None, None)


@impl("bucketize.Tensor", "Meta")
def bucketize_meta(self, boundaries, out_int32=False, right=False):
    _check_bucketize(boundaries)
    return searchsorted_meta(boundaries, self, out_int32, right)


# ---- histc, bincount -----------------------------------------------------------------------
def _check_histc(self, bins, min, max):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    dt = self.dtype
    if not dt.is_floating_point:
        # the first kernel PyTorch lacks for the dtype, in its order: the data's range
        # (aminmax, when min == max), the bin edges (linspace in the input's dtype), the counts
        if min == max and self.numel() and (dt.is_complex or dt in D.barebones_unsigned):
            raise not_implemented("aminmax_cpu", dt)
        if dt is D.bool or dt in D.barebones_unsigned:
            raise not_implemented("linspace_cpu", dt)
        raise not_implemented("histogram_cpu", dt)


@impl("histc", "CPU")
def histc(self, bins=100, min=0, max=0):
    """Counts in `bins` equal bins over [min, max] (the data's range when both are 0); values
    outside are left out, the last bin includes its right edge. A value's bin is
    (x - min) * bins / (max - min), truncated, computed in the input's dtype step by step as
    PyTorch's kernel computes it (so values near an edge fall on the same side)."""
    _check_histc(self, bins, min, max)
    dt = self.dtype._np
    a = self._np.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    lo_t, hi_t = np.array(lo).astype(dt), np.array(hi).astype(dt)
    inside = a[(a >= lo_t) & (a <= hi_t)]
    with np.errstate(all="ignore"):
        offset = (inside - lo_t).astype(dt)
        pos = ((offset * np.array(bins).astype(dt)).astype(dt) / (hi_t - lo_t)).astype(dt)
    pos = np.minimum(pos.astype(np.int64), bins - 1)
    return _wrap(np.bincount(pos, minlength=bins).astype(dt))


@impl("histc", "Meta")
def histc_meta(self, bins=100, min=0, max=0):
    _check_histc(self, bins, min, max)
    return _meta((bins,), self.dtype, device=self._device)


@impl("bincount", "CPU")
def bincount(self, weights=None, minlength=0):
    """How often each non-negative integer occurs (or the sum of its weights)."""
    if self.dtype is D.bool or self.dtype.is_floating_point or self.dtype in D.barebones_unsigned:
        raise not_implemented("bincount_cpu", self.dtype)
    a = self._np
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _wrap(np.bincount(a, minlength=minlength).astype(np.int64))
    if weights.dim() != 1 or weights._size[0] != a.size:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if not a.size:  # PyTorch's early return for no input: int64 zeros, whatever the weights
        return _wrap(np.zeros(minlength, np.int64))
    out = np.float32 if weights.dtype is D.float32 else np.float64
    return _wrap(np.bincount(a, weights._np.astype(np.float64), minlength).astype(out))


impl("bincount", "Meta")(_data_dependent("bincount"))
