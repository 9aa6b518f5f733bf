"""Advanced-indexing kernels (CPU and Meta): index (x[idx_tensors]), index_put_, masked_fill,
index_select, gather, scatter_add.

`indices` is PyTorch's list with one entry per leading dim: an integer or bool tensor, or None
for a dim taken whole (what `x[:, idx]` becomes). Bool tensors index like their nonzero().
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import Tensor, _wrap, _meta, _wrap_dim
from .elementwise import check_inplace


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
    key = _np_index(self, indices)
    v = values._np if isinstance(values, Tensor) else values
    if isinstance(values, Tensor) and values.dtype is not self.dtype:
        v = v.astype(self.dtype._np)
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
    out = self._np.copy()
    _index_put(out, self, indices, values, accumulate)
    return _wrap(out)


impl("index_put_", "Meta")(lambda self, indices, values, accumulate=False: self)
impl("index_put", "Meta")(lambda self, indices, values, accumulate=False:
                          _meta(self._size, self.dtype, device=self._device))


def _mask(self, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype}")
    return mask._np


def _fill_value(self, value):
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
        value = value.item()
    if isinstance(value, float) and not (self.dtype.is_floating_point or self.dtype.is_complex):
        if self.dtype is not D.bool:
            return int(value) if value == int(value) else value
    return value


@impl("masked_fill.Scalar", "CPU")
def masked_fill(self, mask, value):
    m = _mask(self, mask)
    out = np.array(np.broadcast_to(self._np, np.broadcast_shapes(self._np.shape, m.shape)))
    out[np.broadcast_to(m, out.shape)] = _fill_value(self, value)
    return _wrap(out)


@impl("masked_fill_.Scalar", "CPU")
def masked_fill_(self, mask, value):
    m = _mask(self, mask)
    try:
        self._np[np.broadcast_to(m, self._np.shape)] = _fill_value(self, value)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self._size[-1]}) must match the size of "
                           f"tensor b ({mask._size[-1]}) at non-singleton dimension "
                           f"{self.dim() - 1}") from None
    return self


impl("masked_fill.Scalar", "Meta")(lambda self, mask, value: _meta(
    np.broadcast_shapes(self._size, mask._size), self.dtype, device=self._device))
impl("masked_fill_.Scalar", "Meta")(lambda self, mask, value: self)


def _check_index(index, name):
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


@impl("index_select", "CPU")
def index_select(self, dim, index):
    _check_index(index, "index_select")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, self.dim()) if self.dim() else 0
    idx = index._np.reshape(-1)
    size = self._size[d] if self.dim() else 1
    if idx.size and (idx.max() >= size or idx.min() < -size):
        raise IndexError(f"index out of range in self")
    if not self.dim():
        return _wrap(self._np.copy())
    return _wrap(np.take(self._np, idx, axis=d))


@impl("index_select", "Meta")
def index_select_meta(self, dim, index):
    d = _wrap_dim(dim, self.dim()) if self.dim() else 0
    shape = list(self._size)
    if shape:
        shape[d] = index.numel()
    return _meta(shape, self.dtype, device=self._device)


def _gather_check(self, dim, index, name):
    if index.dtype is not D.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                           f"tensor")
    return _wrap_dim(dim, self.dim()) if self.dim() else 0


@impl("gather", "CPU")
def gather(self, dim, index, sparse_grad=False):
    d = _gather_check(self, dim, index, "gather")
    idx = index._np
    if self.dim() == 0:
        return _wrap(np.broadcast_to(self._np, idx.shape).copy())
    size = self._size[d]
    if idx.size and (idx.max() >= size or idx.min() < -size):
        raise RuntimeError(f"index {int(idx.max())} is out of bounds for dimension {d} with "
                           f"size {size}")
    for k in range(self.dim()):
        if k != d and idx.shape[k] > self._size[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be smaller than self {list(self._size)} "
                               f"apart from dimension {d}")
    src = self._np[tuple(slice(0, s) if k != d else slice(None) for k, s in
                         enumerate(idx.shape))]
    return _wrap(np.take_along_axis(src, idx, d))


@impl("gather", "Meta")
def gather_meta(self, dim, index, sparse_grad=False):
    _gather_check(self, dim, index, "gather")
    return _meta(index._size, self.dtype, device=self._device)


@impl("scatter_add", "CPU")
def scatter_add(self, dim, index, src):
    d = _gather_check(self, dim, index, "scatter_add")
    out = self._np.copy()
    idx = index._np
    grids = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    s = src._np[tuple(slice(0, k) for k in idx.shape)]
    np.add.at(out, tuple(grids), s.astype(out.dtype, copy=False))
    return _wrap(out)


@impl("scatter_add", "Meta")
def scatter_add_meta(self, dim, index, src):
    return _meta(self._size, self.dtype, device=self._device)
