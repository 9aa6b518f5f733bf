"""Advanced-indexing kernels (CPU and Meta): index (x[idx_tensors]), index_put_, masked_fill,
index_select, gather, scatter_add.

`indices` is PyTorch's list with one entry per leading dim: an integer or bool tensor, or None
for a dim taken whole (what `x[:, idx]` becomes). Bool tensors index like their nonzero().
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import Tensor, _wrap, _meta, _wrap_dim
from .elementwise import broadcast_shape, _scalar_type_name
from .factory import checked_scalar
from .shape import copy_preserving, _preserved_strides


def _np_index(self, indices):
    if len(indices) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got "
                         f"{len(indices)})")
    key = []
    for i, idx in enumerate(indices):
        if idx is None:
            key.append(slice(None))
            continue
        a = idx._np
        if idx.dtype is D.bool or idx.dtype is D.uint8:
            if idx.dtype is D.uint8:
                a = a.astype(bool)
            for k in range(a.ndim):
                if a.shape[k] != self._size[len(key) + k]:
                    raise IndexError(f"The shape of the mask {list(a.shape)} at index {k} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(self._size)} at index {len(key) + k}")
            key.extend(np.nonzero(a)) if a.ndim else key.append(a)
            continue
        if idx.dtype.is_floating_point or idx.dtype.is_complex:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        size = self._size[len(key)]
        if a.size and (a.max() >= size or a.min() < -size):
            bad = a[(a >= size) | (a < -size)].reshape(-1)[0]
            raise IndexError(f"index {bad} is out of bounds for dimension {len(key)} with size "
                             f"{size}")
        key.append(a)
    return tuple(key)


@impl("index.Tensor", "CPU")
def index(self, indices):
    return _wrap(np.asarray(self._np[_np_index(self, indices)]).copy())


@impl("index.Tensor", "Meta")
def index_meta(self, indices):
    if any(i is not None and i.dtype in (D.bool, D.uint8) for i in indices):
        raise NotImplementedError("boolean-mask indexing on the meta device has a data-dependent "
                                  "shape")
    fake = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), self._size, (0,) * self.dim())
    key = tuple(np.zeros(i._size, np.int64) if i is not None else slice(None) for i in indices)
    return _meta(fake[key].shape, self.dtype, device=self._device)


def _index_put(target, self, indices, values, accumulate):
    v = values._np if isinstance(values, Tensor) else values
    if isinstance(values, Tensor) and values.dtype is not self.dtype:
        # one value under one bool mask is PyTorch's masked_fill_ fast path, which casts
        if accumulate or values.numel() != 1 or \
                sum(i is not None for i in indices) != 1 or \
                not any(i is not None and i.dtype in (D.bool, D.uint8) for i in indices):
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {_scalar_type_name(self.dtype)} for the destination and "
                               f"{_scalar_type_name(values.dtype)} for the source.")
        v = v.astype(self.dtype._np)
    key = _np_index(self, indices)
    try:
        if accumulate:
            np.add.at(target, key, v)
        else:
            target[key] = v
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._size)} cannot "
                           f"be broadcast to indexing result of shape "
                           f"{list(self._np[key].shape)}") from None


@impl("index_put_", "CPU")
def index_put_(self, indices, values, accumulate=False):
    _index_put(self._np, self, indices, values, accumulate)
    return self


@impl("index_put", "CPU")
def index_put(self, indices, values, accumulate=False):
    out = copy_preserving(self._np)
    _index_put(out, self, indices, values, accumulate)
    return _wrap(out)


impl("index_put_", "Meta")(lambda self, indices, values, accumulate=False: self)
impl("index_put", "Meta")(lambda self, indices, values, accumulate=False:
                          _meta(self._size, self.dtype, _preserved_strides(self),
                                device=self._device))


def _mask_dtype(mask):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_scalar_type_name(mask.dtype)}")


def _mask(self, mask):
    _mask_dtype(mask)
    return mask._np


def _fill_value(self, value):
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
        value = value.item()
    return checked_scalar(value, self.dtype)


@impl("masked_fill.Scalar", "CPU")
def masked_fill(self, mask, value):
    m = _mask(self, mask)
    shape = broadcast_shape(self._size, mask._size)
    out = np.array(np.broadcast_to(self._np, shape))
    out[np.broadcast_to(m, shape)] = _fill_value(self, value)
    return _wrap(out)


@impl("masked_fill_.Scalar", "CPU")
def masked_fill_(self, mask, value):
    m = _mask(self, mask)
    _check_inplace_broadcast(self, mask)
    self._np[np.broadcast_to(m, self._size)] = _fill_value(self, value)
    return self


def _check_inplace_broadcast(self, other):
    shape = broadcast_shape(self._size, other._size)
    if shape != self._size:
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                           f"shape {list(shape)}")


@impl("masked_fill.Scalar", "Meta")
def masked_fill_meta(self, mask, value):
    _mask_dtype(mask)
    return _meta(broadcast_shape(self._size, mask._size), self.dtype, device=self._device)


@impl("masked_fill_.Scalar", "Meta")
def masked_fill_meta_(self, mask, value):
    _mask_dtype(mask)
    _check_inplace_broadcast(self, mask)
    return self


def _check_index(index, name):
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_range(idx, size, error):
    """Indices must lie in [0, size): these ops do not wrap negative indices."""
    if idx.size and (idx.max() >= size or idx.min() < 0):
        raise error


@impl("index_select", "CPU")
def index_select(self, dim, index):
    _check_index(index, "index_select")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, self.dim()) if self.dim() else 0
    idx = index._np.reshape(-1)
    _check_range(idx, self._size[d] if self.dim() else 1, IndexError("index out of range in self"))
    if not self.dim():
        return _wrap(self._np.copy())
    return _wrap(np.take(self._np, idx, axis=d))


@impl("index_select", "Meta")
def index_select_meta(self, dim, index):
    _check_index(index, "index_select")
    d = _wrap_dim(dim, self.dim()) if self.dim() else 0
    shape = list(self._size)
    if shape:
        shape[d] = index.numel()
    return _meta(shape, self.dtype, device=self._device)


def _gather_check(self, dim, index, name, src=None):
    """PyTorch's gather/scatter shape rules: same number of dims, and the index no larger
    than self in every dim but `dim` (and, for scatter, no larger than src anywhere)."""
    _check_index(index, name)
    d = _wrap_dim(dim, self.dim()) if self.dim() else 0
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and src.dim() != index.dim() and index.dim() > 1:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for k in range(index.dim()):
        too_big = k != d and index._size[k] > self._size[k]
        if src is not None and (too_big or index._size[k] > src._size[k]):
            raise RuntimeError(f"Expected index {list(index._size)} to be no larger than self "
                               f"{list(self._size)} apart from dimension {d} and to be no "
                               f"larger size than src {list(src._size)}")
        if too_big:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(index._size)} to be no larger than self "
                               f"{list(self._size)} apart from dimension {d}")
    return d


def _out_of_bounds(idx, d, size):
    bad = idx[(idx >= size) | (idx < 0)].reshape(-1)[0]
    return RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")


@impl("gather", "CPU")
def gather(self, dim, index, sparse_grad=False):
    d = _gather_check(self, dim, index, "gather")
    idx = index._np
    if self.dim() == 0:
        return _wrap(np.broadcast_to(self._np, idx.shape).copy())
    size = self._size[d]
    if idx.size and (idx.max() >= size or idx.min() < 0):
        raise _out_of_bounds(idx, d, size)
    src = self._np[tuple(slice(0, s) if k != d else slice(None) for k, s in
                         enumerate(idx.shape))]
    return _wrap(np.take_along_axis(src, idx, d))


@impl("gather", "Meta")
def gather_meta(self, dim, index, sparse_grad=False):
    _gather_check(self, dim, index, "gather")
    return _meta(index._size, self.dtype, device=self._device)


def _scatter(target, self, dim, index, src, name, accumulate=False):
    """target[..., index[i, j, ...], ...] = src[i, j, ...] along `dim` (or += for scatter_add):
    each element of `index` names the position along `dim`; its own position names the rest."""
    d = _gather_check(self, dim, index, name, src if isinstance(src, Tensor) else None)
    idx = index._np
    size = self._size[d] if self.dim() else 1
    if idx.size and (idx.max() >= size or idx.min() < 0):
        raise _out_of_bounds(idx, d, size)
    grids = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    if isinstance(src, Tensor):
        values = src._np[tuple(slice(0, k) for k in idx.shape)].astype(target.dtype, copy=False)
    else:
        values = checked_scalar(src, self.dtype)
    if accumulate:
        np.add.at(target, tuple(grids), values)
    else:
        target[tuple(grids)] = values
    return target


def _scatter_kernels(name, accumulate=False):
    """CPU and Meta kernels of `name` and of its in-place form `name_` (one overload)."""
    base, _, overload = name.partition(".")
    inplace = f"{base}_" + (f".{overload}" if overload else "")

    def cpu(self, dim, index, src):
        return _wrap(_scatter(self._np.copy(), self, dim, index, src, base, accumulate))

    def cpu_(self, dim, index, src):
        _scatter(self._np, self, dim, index, src, base, accumulate)
        return self

    def meta(self, dim, index, src):
        _gather_check(self, dim, index, base, src if isinstance(src, Tensor) else None)
        return _meta(self._size, self.dtype, device=self._device)

    def meta_(self, dim, index, src):
        meta(self, dim, index, src)
        return self
    impl(name, "CPU")(cpu)
    impl(inplace, "CPU")(cpu_)
    impl(name, "Meta")(meta)
    impl(inplace, "Meta")(meta_)


_scatter_kernels("scatter_add", accumulate=True)
_scatter_kernels("scatter.src")
_scatter_kernels("scatter.value")


# ---- index_add / index_fill / masked_select -----------------------------------------------
def _index_along(self, dim, index, name, dtypes=(D.int64, D.int32)):
    """(dim, key) for `self[..., index, ...]` along `dim`, with PyTorch's checks."""
    if index.dtype not in dtypes:
        if dtypes == (D.int64,):
            raise IndexError(f"{name}(): Expected dtype int64 for index.")
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{_scalar_type_name(index.dtype)}")
    if index.dim() > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    d = _wrap_dim(dim, self.dim()) if self.dim() else 0
    idx = index._np.reshape(-1)
    size = self._size[d] if self.dim() else 1
    return d, (slice(None),) * d + (idx,), idx, size


def _index_add(target, self, dim, index, source, alpha):
    d, key, idx, size = _index_along(self, dim, index, "index_add_")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_add_(): self ({_scalar_type_name(self.dtype)}) and source "
                           f"({_scalar_type_name(source.dtype)}) must have the same scalar type")
    if idx.size != (source._size[d] if source.dim() else 1):
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({source._size[d] if source.dim() else 1}), for "
                           f"dim: {d}")
    if source.dim() != self.dim() or any(a != b for k, (a, b) in
                                         enumerate(zip(self._size, source._size)) if k != d):
        if source.dim() or self.dim():
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding "
                               f"the specified dimension. Got self.shape = {list(self._size)} "
                               f"source.shape = {list(source._size)}")
    if idx.size and (idx.max() >= size or idx.min() < 0):
        raise _out_of_bounds(idx, d, size)
    values = source._np if alpha == 1 else source._np * alpha
    np.add.at(target, key, values.astype(target.dtype, copy=False))
    return target


@impl("index_add", "CPU")
def index_add(self, dim, index, source, alpha=1):
    return _wrap(_index_add(self._np.copy(), self, dim, index, source, alpha))


@impl("index_add_", "CPU")
def index_add_(self, dim, index, source, alpha=1):
    _index_add(self._np, self, dim, index, source, alpha)
    return self


def _index_fill(target, self, dim, index, value):
    d, key, idx, size = _index_along(self, dim, index, "index_fill_", (D.int64,))
    if idx.size and (idx.max() >= size or idx.min() < -size):
        bad = idx[(idx >= size) | (idx < -size)][0]
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    target[key] = _fill_value(self, value)
    return target


@impl("index_fill.int_Scalar", "CPU")
def index_fill(self, dim, index, value):
    return _wrap(_index_fill(copy_preserving(self._np), self, dim, index, value))


@impl("index_fill_.int_Scalar", "CPU")
def index_fill_(self, dim, index, value):
    _index_fill(self._np, self, dim, index, value)
    return self


impl("index_add", "Meta")(lambda self, dim, index, source, alpha=1:
                          _meta(self._size, self.dtype, device=self._device))
impl("index_add_", "Meta")(lambda self, dim, index, source, alpha=1: self)
impl("index_fill.int_Scalar", "Meta")(lambda self, dim, index, value:
                                      _meta(self._size, self.dtype, _preserved_strides(self),
                                            device=self._device))
impl("index_fill_.int_Scalar", "Meta")(lambda self, dim, index, value: self)


@impl("masked_select", "CPU")
def masked_select(self, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shape(self._size, mask._size)
    return _wrap(np.broadcast_to(self._np, shape)[np.broadcast_to(mask._np, shape)])


@impl("masked_select", "Meta")
def masked_select_meta(self, mask):
    raise NotImplementedError("masked_select on the meta device has a data-dependent shape")
