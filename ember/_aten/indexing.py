"""Advanced-indexing kernels (CPU and Meta): index (x[idx_tensors]), index_put_, masked_fill,
index_select, gather, scatter_add.

`indices` is PyTorch's list with one entry per leading dim: an integer or bool tensor, or None
for a dim taken whole (what `x[:, idx]` becomes). Bool tensors index like their nonzero().
"""
import warnings

import numpy as np
from .._core.float8 import as_strided
from .._core._warnings import user_stacklevel as _user_stacklevel

from .._core import dtype as D
from .._core import complex32 as _c32
from .._dispatch.dispatcher import impl, lookup as _op
from .._core.tensor import Size, Tensor, _wrap, _meta, _wrap_dim
from .add_at import add_at
from .elementwise import broadcast_shape, not_implemented, _scalar_type_name
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
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                              "dtype torch.bool instead.", UserWarning, stacklevel=_user_stacklevel())
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
        if a.size and not size:
            raise IndexError("index is out of bounds for dimension with size 0")
        if a.size and (a.max() >= size or a.min() < -size):
            bad = a[(a >= size) | (a < -size)].reshape(-1)[0]
            raise IndexError(f"index {bad} is out of bounds for dimension {len(key)} with size "
                             f"{size}")
        key.append(a)
    arrays = [k for k in key if type(k) is np.ndarray]
    if len(arrays) > 1:
        try:
            np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            shapes = ", ".join(str(list(a.shape)) for a in arrays)
            raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                             f"with shapes {shapes}") from None
    return tuple(key)


def _copy_and_inplace_kernels(name, inplace_name, write, keep_strides=False, check=None):
    """The CPU and Meta kernels of an op and of its in-place form, from one worker
    `write(target, self, *args)` that writes into the NumPy array `target` and returns it.

    The op writes into a copy of self (laid out like self when keep_strides, else row-major),
    the in-place form into self's own array. The Meta kernels run `check(self, *args)` (the
    worker's checks that need no data, if any) and return a tensor like that copy, and self."""
    def cpu(self, *args):
        target = copy_preserving(self._np) if keep_strides else self._np.copy()
        return _wrap(write(target, self, *args))

    def cpu_(self, *args):
        write(self._np, self, *args)
        return self

    def meta(self, *args):
        if check is not None:
            check(self, *args)
        strides = _preserved_strides(self) if keep_strides else None
        return _meta(self._size, self.dtype, strides, device=self._device)

    def meta_(self, *args):
        if check is not None:
            check(self, *args)
        return self
    impl(name, "CPU")(cpu)
    impl(inplace_name, "CPU")(cpu_)
    impl(name, "Meta")(meta)
    impl(inplace_name, "Meta")(meta_)


@impl("index.Tensor", "CPU")
def index(self, indices):
    return _wrap(np.asarray(self._np[_np_index(self, indices)]).copy())


@impl("index.Tensor", "Meta")
def index_meta(self, indices):
    if any(i is not None and i.dtype in (D.bool, D.uint8) and i._np is None for i in indices):
        raise NotImplementedError("boolean-mask indexing on the meta device has a data-dependent "
                                  "shape")
    dim = 0
    for i in indices:   # a mask on the CPU has its data: its True elements give the rows
        if i is not None and i.dtype in (D.bool, D.uint8):
            for k, n in enumerate(i._size):
                if dim + k < self.dim() and n != self._size[dim + k]:
                    raise IndexError(f"The shape of the mask {Size(i._size)} at index {k} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{Size(self._size)} at index {dim + k}")
        dim += 1 if i is None or i.dtype not in (D.bool, D.uint8) else i.dim()
    fake = as_strided(np.zeros(1, np.int8), self._size, (0,) * self.dim())
    key = tuple(slice(None) if i is None else i._np.astype(bool)
                if i.dtype in (D.bool, D.uint8) else np.zeros(i._size, np.int64)
                for i in indices)
    return _meta(fake[key].shape, self.dtype, device=self._device)


def _check_put_shape(self, indices, values):
    got = self._np[_np_index(self, indices)].shape
    try:
        np.broadcast_shapes(values._size, got)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._size)} cannot "
                           f"be broadcast to indexing result of shape {list(got)}") from None


def _index_put(target, self, indices, values, accumulate):
    v = values._np if isinstance(values, Tensor) else values
    if not accumulate and (not isinstance(values, Tensor) or values.numel() == 1):
        given = [i for i in indices if i is not None]
        if len(given) == 1 and given[0].dtype is D.uint8:
            # PyTorch sends one value under one mask to masked_fill_, which takes bool only
            _mask_dtype(given[0])
    if isinstance(values, Tensor) and values.dtype is not self.dtype:
        # one value under one bool mask is PyTorch's masked_fill_ fast path, which casts
        if accumulate or values.numel() != 1 or \
                sum(i is not None for i in indices) != 1 or \
                not any(i is not None and i.dtype in (D.bool, D.uint8) for i in indices):
            _check_put_shape(self, indices, values)   # PyTorch names a shape mismatch first
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {_scalar_type_name(self.dtype)} for the destination and "
                               f"{_scalar_type_name(values.dtype)} for the source.")
        v = _c32.astype(v, self.dtype._np)
    key = _np_index(self, indices)
    try:
        if accumulate and self.dtype is D.complex32:  # (NumPy adds no complex32: in complex64)
            wide = _c32.widen(target)
            np.add.at(wide, key, _c32.values(np.asarray(v)))
            target[...] = _c32.narrow(wide)
        elif accumulate:
            np.add.at(target, key, v)
        else:
            target[key] = v if self.dtype is not D.complex32 else _c32.narrow(v)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._size)} cannot "
                           f"be broadcast to indexing result of shape "
                           f"{list(self._np[key].shape)}") from None
    return target


_copy_and_inplace_kernels("index_put", "index_put_", _index_put, keep_strides=True)


def _mask_dtype(mask):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{D.c_type_name(mask.dtype)}")


def _mask(self, mask):
    _mask_dtype(mask)
    return mask._np


def _fill_value(self, value, op="masked_fill_"):
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"{op} only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
        value = value.item()
    return checked_scalar(value, self.dtype)


@impl("masked_fill.Tensor", "CPU")
@impl("masked_fill.Scalar", "CPU")
def masked_fill(self, mask, value):
    m = _mask(self, mask)
    shape = broadcast_shape(self._size, mask._size)
    # contiguous whatever the input's layout: PyTorch's masked_fill fills a contiguous clone
    out = np.array(np.broadcast_to(self._np, shape), order="C")
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


@impl("masked_fill.Tensor", "Meta")
@impl("masked_fill.Scalar", "Meta")
def masked_fill_meta(self, mask, value):
    _mask_dtype(mask)
    return _meta(broadcast_shape(self._size, mask._size), self.dtype, device=self._device)


@impl("masked_fill_.Scalar", "Meta")
def masked_fill_meta_(self, mask, value):
    _mask_dtype(mask)
    _check_inplace_broadcast(self, mask)
    return self


def _check_index(index, name, expected="int32/int64", got=False):
    """The index dtype check, each op's message as PyTorch words it."""
    if index.dtype not in (D.int64, D.int32):
        tail = f" but got: {_scalar_type_name(index.dtype)}" if got else ""
        raise RuntimeError(f"{name}(): Expected dtype {expected} for index{tail}")


def _check_range(idx, size, error):
    """Indices must lie in [0, size): these ops do not wrap negative indices."""
    if idx.size and (idx.max() >= size or idx.min() < 0):
        raise error


@impl("index_select", "CPU")
def index_select(self, dim, index):
    _check_index(index, "index_select", "int32 or int64")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, self.dim())
    idx = index._np.reshape(-1)
    if not self.dim() and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    if self.dim() > 1 and idx.size:   # PyTorch's CPU kernel: its checks for these cases
        if self._size[d] == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if d == 1:   # the dim-1 fast path checks each index itself
            bad = idx[(idx < 0) | (idx >= self._size[1])]
            if bad.size:
                raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad[0]} "
                                   f"axis_dim={self._size[1]}")
    _check_range(idx, self._size[d] if self.dim() else 1, IndexError("index out of range in self"))
    if not self.dim():
        return _wrap(self._np.copy())
    return _wrap(np.take(self._np, idx, axis=d))


@impl("index_select", "Meta")
def index_select_meta(self, dim, index):
    _check_index(index, "index_select", "int32 or int64")
    d = _wrap_dim(dim, self.dim())
    shape = list(self._size)
    if shape:
        shape[d] = index.numel()
    return _meta(shape, self.dtype, device=self._device)


def _gather_check(self, dim, index, name, src=None):
    """PyTorch's gather/scatter shape rules: same number of dims, and the index no larger
    than self in every dim but `dim` (and, for scatter, no larger than src anywhere). An
    empty index is not checked (it addresses nothing), but for `dim`."""
    d = _wrap_dim(dim, self.dim())
    if not index.numel():
        return d
    _check_index(index, name)
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        what = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           f"tensor")
    if src is not None and src.dim() != index.dim() and index.dim() > 1:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    def size(t, k):  # PyTorch's ensure_nonempty_size: a 0-d tensor counts as size 1
        return t._size[k] if t.dim() else 1
    for k in range(index.dim() if index.numel() else 0):
        too_big = k != d and index._size[k] > size(self, k)
        if src is not None and (too_big or index._size[k] > size(src, k)):
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
    if not idx.size:
        return _wrap(np.empty(idx.shape, self._np.dtype))
    _check_scatter_gather_dtype(self, "scatter_gather_tensor_cpu")
    if self.dim() == 0:
        return _wrap(np.broadcast_to(self._np, idx.shape).copy())
    size = self._size[d]
    if idx.size and (idx.max() >= size or idx.min() < 0):
        raise _out_of_bounds(idx, d, size)
    if not idx.ndim:  # a 0-dim index of a 1-dim self picks one element
        return _wrap(self._np[idx].copy())
    src = self._np[tuple(slice(0, s) if k != d else slice(None) for k, s in
                         enumerate(idx.shape))]
    return _wrap(np.take_along_axis(src, idx, d))


@impl("gather", "Meta")
def gather_meta(self, dim, index, sparse_grad=False):
    _gather_check(self, dim, index, "gather")
    return _meta(index._size, self.dtype, device=self._device)


def _check_scatter_gather_dtype(self, kernel):
    """The barebones unsigned types have no gather/scatter kernels: PyTorch's error, raised
    after the shape checks and an empty index's early return, before the bounds check."""
    if self.dtype in D.barebones_unsigned:
        raise not_implemented(kernel, self.dtype)


def _scatter_key(self, dim, index, src, name, kernel=None):
    """(index arrays, values) that address target[..., index, ...] along `dim` as scatter does;
    a 0-dim self is addressed as its one-element view `target.reshape(1)`; (None, None) for an
    empty index, which writes nothing. `kernel` names PyTorch's kernel in a dtype error (by
    default its plain scatter kernel for a tensor or a scalar src)."""
    d = _gather_check(self, dim, index, name, src if isinstance(src, Tensor) else None)
    if not index.numel():
        return None, None
    _check_scatter_gather_dtype(self, kernel or ("scatter_gather_tensor_cpu" if
                                                 isinstance(src, Tensor) else
                                                 "scatter_gather_scalar_cpu"))
    idx = index._np
    size = self._size[d] if self.dim() else 1
    if idx.size and (idx.max() >= size or idx.min() < 0):
        raise _out_of_bounds(idx, d, size)
    if not self.dim() or not idx.ndim:  # a 0-dim self or index addresses one element
        values = src._np.reshape(-1)[:idx.size] if isinstance(src, Tensor) else src
        return (idx.reshape(-1),), values
    grids = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    values = src._np[tuple(slice(0, k) for k in idx.shape)] if isinstance(src, Tensor) else src
    return tuple(grids), values


def _scatter(target, self, dim, index, src, name, accumulate=False):
    """target[..., index[i, j, ...], ...] = src[i, j, ...] along `dim` (or += for scatter_add):
    each element of `index` names the position along `dim`; its own position names the rest."""
    key, values = _scatter_key(self, dim, index, src, name)
    if key is None:
        return target
    if isinstance(src, Tensor):
        values = values.astype(target.dtype, copy=False)
    else:
        values = checked_scalar(src, self.dtype)
    view = target.reshape(1) if not self.dim() else target
    if accumulate:
        np.add.at(view, key, values)
    else:
        view[key] = values
    return target


def _scatter_kernels(name, accumulate=False):
    """CPU and Meta kernels of `name` and of its in-place form `name_` (one overload)."""
    base, _, overload = name.partition(".")
    inplace = f"{base}_" + (f".{overload}" if overload else "")

    def write(target, self, dim, index, src):
        _check_src_dtype(self, src)
        return _scatter(target, self, dim, index, src, base, accumulate)

    def check(self, dim, index, src):
        _check_src_dtype(self, src)
        _gather_check(self, dim, index, base, src if isinstance(src, Tensor) else None)
    _copy_and_inplace_kernels(name, inplace, write, check=check)


def _check_src_dtype(self, src):
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


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
    d = _wrap_dim(dim, self.dim())
    idx = index._np.reshape(-1)
    size = self._size[d] if self.dim() else 1
    return d, (slice(None),) * d + (idx,), idx, size


def _check_scalar_source(name, self, d, n, source):
    """index_add_/index_reduce_ with a 0-d source and an n-d self: PyTorch checks `dim`
    against the source, then reads source.size(dim) for more than one index."""
    if source.dim() == 0 and self.dim() > 0:
        if d != 0:
            raise RuntimeError(f"{name}(): Indexing dim {d} is out of bounds of the source "
                               f"tensor with dim 0")
        if n != 1:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")


def _index_add(target, self, dim, index, source, alpha):
    d, key, idx, size = _index_along(self, dim, index, "index_add_")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_add_(): self ({_scalar_type_name(self.dtype)}) and source "
                           f"({_scalar_type_name(source.dtype)}) must have the same scalar type")
    _check_scalar_source("index_add_", self, d, idx.size, source)
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
        raise _out_of_bounds(idx, d, size) if self.dim() else IndexError("index out of range in "
                                                                          "self")
    if alpha != 1:   # alpha in self's dtype: -1 wraps to 255 for uint8, 300 overflows
        alpha = checked_scalar(alpha, self.dtype)
    if self.dtype is D.complex32:  # (NumPy adds no complex32: in complex64, rounded back)
        wide = _c32.widen(target)
        values = _c32.values(source._np) * _c32.values(np.asarray(alpha))
        _add_into(wide, d, key, idx, values, self.dim())
        target[...] = _c32.narrow(wide)
        return target
    values = (source._np if alpha == 1 else source._np * alpha).astype(target.dtype, copy=False)
    return _add_into(target, d, key, idx, values, self.dim())


def _add_into(target, d, key, idx, values, ndim):
    """target[key] += values along dim d, rows repeated in `idx` added once each."""
    if not ndim:  # a 0-d self reads as a 1-d one of its single element
        np.add.at(target.reshape(1), key, values.reshape(1))
        return target
    if _distinct(idx):
        target[key] += values  # no row twice: one fancy-indexed add, ~10x np.add.at's speed
    else:  # repeated rows: added in order, in passes (Note [Scatter-add in passes])
        add_at(np.moveaxis(target, d, 0), (idx.reshape(-1),), np.moveaxis(values, d, 0))
    return target


def _distinct(idx):
    ordered = np.sort(idx)
    return not (ordered[1:] == ordered[:-1]).any()


_copy_and_inplace_kernels("index_add", "index_add_", _index_add)


def _index_fill(target, self, dim, index, value):
    d, key, idx, size = _index_along(self, dim, index, "index_fill_", (D.int64,))
    if not self.dtype.is_complex and (isinstance(value, complex) or (
            isinstance(value, Tensor) and value.dtype.is_complex)):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is "
                           "not supported")
    if idx.size and (idx.max() >= size or idx.min() < -size):
        bad = idx[(idx >= size) | (idx < -size)][0]
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    (target if self.dim() else target.reshape(1))[key] = _fill_value(self, value, "index_fill_")
    return target


_copy_and_inplace_kernels("index_fill.int_Scalar", "index_fill_.int_Scalar", _index_fill,
                          keep_strides=True)
_copy_and_inplace_kernels("index_fill.int_Tensor", "index_fill_.int_Tensor", _index_fill,
                          keep_strides=True)


@impl("masked_select", "CPU")
def masked_select(self, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shape(self._size, mask._size)
    return _wrap(np.broadcast_to(self._np, shape)[np.broadcast_to(mask._np, shape)])


@impl("nonzero", "CPU")
def nonzero(self):
    if not self._size:  # NumPy refuses a 0-d array; PyTorch gives (1, 0) or (0, 0)
        return _wrap(np.zeros((int(bool(self._np)), 0), np.int64))
    return _wrap(np.stack(np.nonzero(self._np), axis=1).astype(np.int64))


@impl("nonzero.as_tuple", "CPU")
def nonzero_as_tuple(self):
    if not self._size:  # a 0-d tensor reads as a 1-d one of its single element
        return [_wrap(np.zeros(int(bool(self._np)), np.int64))]
    return [_wrap(np.asarray(i, dtype=np.int64)) for i in np.nonzero(self._np)]


def _data_dependent(name):
    def meta(*args):
        raise NotImplementedError(f"{name} on the meta device: the output shape depends on the "
                                  "data")
    return meta


for _name in ("masked_select", "nonzero", "nonzero.as_tuple"):
    impl(_name, "Meta")(_data_dependent(_name.split(".")[0]))


# ---- scatter_reduce / scatter(reduce=) / index_reduce ------------------------------------------
# Each reduction is a NumPy ufunc applied with `.at` (unbuffered, so repeated indices all count)
# and the value it starts from where include_self=False drops self's own entry.
_REDUCE_UFUNCS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
                  "amin": np.minimum, "max": np.maximum, "min": np.minimum}  # (undocumented)
_REDUCE_ERROR = "reduce argument must be either sum, prod, mean, amax or amin, got {}"
_LEGACY_ERROR = "reduce argument must be either add or multiply."


def _reduce_identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if reduce in ("amax", "max") else info.max
    if dtype == np.bool_:
        return reduce in ("amin", "min")
    return -np.inf if reduce in ("amax", "max") else np.inf


def _reduce_into(target, key, values, reduce, include_self):
    """target[key] <reduce>= values, for a `key` of index arrays that may repeat positions.
    A number is first made a value of target's dtype, as PyTorch's kernels take it."""
    values = np.asarray(values, dtype=target.dtype)
    if not include_self:
        target[key] = _reduce_identity(reduce, target.dtype)
    _REDUCE_UFUNCS[reduce].at(target, key, values)
    if reduce == "mean":
        count = np.ones(target.shape, np.int64) if include_self else \
            np.zeros(target.shape, np.int64)
        np.add.at(count, key, 1)
        count[count == 0] = 1
        if np.issubdtype(target.dtype, np.integer):
            target[...] = np.floor_divide(target, count)
        else:  # (divided by the count in target's dtype, as PyTorch's div_ does)
            target[...] = target / count.astype(target.dtype)
    return target


def _check_reduce(reduce, allowed, message):
    if reduce not in allowed:
        raise RuntimeError(message.format(reduce))


def _scatter_reduce_two(target, self, dim, index, src, reduce, include_self):
    _check_reduce(reduce, _REDUCE_UFUNCS, _REDUCE_ERROR)
    if src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if reduce == "mean" and self.dtype is D.bool:
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented "
                                  "for 'Bool'")
    kernel = ("scatter_reduce_exclude_input_init" if not include_self else
              "scatter_gather_tensor_cpu" if reduce in ("sum", "prod") else
              f"scatter_gather_tensor_cpu_reduce_{reduce}")
    key, values = _scatter_key(self, dim, index, src, "scatter_reduce", kernel)
    if key is None:
        return target
    _reduce_into(target.reshape(1) if not self.dim() else target, key, values, reduce,
                 include_self)
    return target


def _scatter_reduce_check(self, dim, index, src, reduce, include_self):
    _check_reduce(reduce, _REDUCE_UFUNCS, _REDUCE_ERROR)
    if src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _gather_check(self, dim, index, "scatter_reduce", src)


_copy_and_inplace_kernels("scatter_reduce.two", "scatter_reduce_.two", _scatter_reduce_two,
                          check=_scatter_reduce_check)


# scatter(..., reduce="add" | "multiply"): the older spelling of scatter_reduce's sum and prod
_LEGACY_REDUCE = {"add": "sum", "multiply": "prod"}


def _scatter_legacy(target, self, dim, index, src, reduce):
    _check_reduce(reduce, _LEGACY_REDUCE, _LEGACY_ERROR)
    if isinstance(src, Tensor):
        if src.dtype is not self.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    else:
        src = checked_scalar(src, self.dtype)
    key, values = _scatter_key(self, dim, index, src, "scatter")
    if key is None:
        return target
    _reduce_into(target.reshape(1) if not self.dim() else target, key, values,
                 _LEGACY_REDUCE[reduce], True)
    return target


def _scatter_legacy_check(self, dim, index, src, reduce):
    _check_reduce(reduce, _LEGACY_REDUCE, _LEGACY_ERROR)
    _gather_check(self, dim, index, "scatter", src if isinstance(src, Tensor) else None)


for _overload in ("reduce", "value_reduce"):
    _copy_and_inplace_kernels(f"scatter.{_overload}", f"scatter_.{_overload}", _scatter_legacy,
                              check=_scatter_legacy_check)


# ---- index_copy / put / masked_scatter -------------------------------------------------------
def _index_copy(target, self, dim, index, source):
    if index.dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_scalar_type_name(index.dtype)}")
    if index.dim() > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.dim()})")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_scalar_type_name(self.dtype)} and (source) "
                           f"{_scalar_type_name(source.dtype)}")
    d = _wrap_dim(dim, self.dim())
    n = index.numel()
    if source.dim() and n != source._size[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({source._size[d]})")
    if not source.dim() and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {n})")
    if self.dim() > 1 or source.dim() > 1:
        self_slice = [s for k, s in enumerate(self._size) if k != d]
        src_slice = [s for k, s in enumerate(source._size) if k != d]
        if self_slice != src_slice:
            k = next((k for k, (a, b) in enumerate(zip(self_slice, src_slice)) if a != b),
                     min(len(self_slice), len(src_slice)))
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: "
                               f"{' '.join(map(str, self_slice))} at dimension {k} and source "
                               f"slice shape: {' '.join(map(str, src_slice))} at dimension {k}.")
    idx = index._np.reshape(-1)
    size = self._size[d] if self.dim() else 1
    bad = idx[(idx >= size) | (idx < 0)]
    if bad.size:
        raise IndexError(f"index_copy_(): index {bad[0]} is out of bounds for dimension {d} "
                         f"with size {size}")
    if not self.dim():
        if n:
            target[...] = source._np.reshape(-1)[-1]
        return target
    target[(slice(None),) * d + (idx,)] = source._np.reshape(
        source._size if source.dim() else (1,))
    return target


_copy_and_inplace_kernels("index_copy", "index_copy_", _index_copy)


def _flat_index(idx, n):
    """Indices into a flat tensor of n elements, negative ones wrapped (take and put)."""
    bad = idx[(idx >= n) | (idx < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {bad[0]} on a tensor of {n} "
                         f"elements.")
    return np.where(idx < 0, idx + n, idx)


def _put(target, self, index, source, accumulate):
    """Write `source` at the flat (row-major) positions `index` of self; negative indices wrap."""
    if index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_scalar_type_name(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_scalar_type_name(self.dtype)} and source.dtype = "
                           f"{_scalar_type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")
    idx = _flat_index(index._np.reshape(-1), self.numel())
    flat = target.reshape(-1)  # a copy when target is not contiguous: written back below
    values = source._np.reshape(-1)
    if accumulate:
        np.add.at(flat, idx, values)
    else:
        flat[idx] = values
    if not np.shares_memory(flat, target):
        target[...] = flat.reshape(target.shape)
    return target


_copy_and_inplace_kernels("put", "put_", _put, keep_strides=True)


def _masked_scatter_check(self, mask, source):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_scalar_type_name(mask.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_scalar_type_name(self.dtype)} and "
                           f"{_scalar_type_name(source.dtype)}")


def _masked_scatter(target, mask, source):
    """Fill target's masked positions, in row-major order, with source's leading elements."""
    m = np.broadcast_to(mask._np, target.shape)
    count = int(m.sum())
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    target[m] = source._np.reshape(-1)[:count]
    return target


@impl("masked_scatter", "CPU")
def masked_scatter(self, mask, source):
    _masked_scatter_check(self, mask, source)
    shape = broadcast_shape(self._size, mask._size)
    return _wrap(_masked_scatter(np.array(np.broadcast_to(self._np, shape), order="C"), mask,
                                 source))


@impl("masked_scatter_", "CPU")
def masked_scatter_(self, mask, source):
    _masked_scatter_check(self, mask, source)
    _check_inplace_broadcast(self, mask)
    _masked_scatter(self._np, mask, source)
    return self


@impl("masked_scatter", "Meta")
def masked_scatter_meta(self, mask, source):
    _masked_scatter_check(self, mask, source)
    return _meta(broadcast_shape(self._size, mask._size), self.dtype, device=self._device)


@impl("masked_scatter_", "Meta")
def masked_scatter_meta_(self, mask, source):
    _masked_scatter_check(self, mask, source)
    _check_inplace_broadcast(self, mask)
    return self


def _take_index(self, index):
    if index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_scalar_type_name(index.dtype)}")


@impl("take", "CPU")
def take(self, index):
    """self as a flat tensor, read at `index` (negative indices wrap); index's shape."""
    _take_index(self, index)
    return _wrap(np.array(self._np.reshape(-1)[_flat_index(index._np, self.numel())]))


@impl("take", "Meta")
def take_meta(self, index):
    _take_index(self, index)
    return _meta(index._size, self.dtype, device=self._device)


# ---- index_reduce: scatter_reduce along one dim with a vector of indices ------------------------
def _index_reduce(target, self, dim, index, source, reduce, include_self):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {_scalar_type_name(index.dtype)} and size: "
                         f"{list(index._size)}")
    _check_index(index, "index_reduce_", got=True)
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_scalar_type_name(self.dtype)}) and source "
                           f"({_scalar_type_name(source.dtype)}) must have the same scalar type")
    d = _wrap_dim(dim, self.dim())
    n = index.numel()
    _check_scalar_source("index_reduce_", self, d, n, source)
    if n != (source._size[d] if source.dim() else 1):
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({source._size[d] if source.dim() else 1}), for "
                           f"dim: {d}")
    if (self.dim() or source.dim()) and (source.dim() != self.dim() or any(
            a != b for k, (a, b) in enumerate(zip(self._size, source._size)) if k != d)):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(self._size)} "
                           f"source.shape = {list(source._size)}")
    if self.dtype is D.bool and (reduce == "mean" or not include_self or self.dim() <= 1):
        raise NotImplementedError(
            f"\"{'index_func_' if include_self else 'index_reduce_func_exclude_input_init'}\" "
            f"not implemented for 'Bool'")
    idx = index._np.reshape(-1)
    _check_range(idx, self._size[d] if self.dim() else 1,
                 IndexError("index out of range in self"))
    view = target.reshape(1) if not self.dim() else target
    _reduce_into(view, (slice(None),) * d + (idx,), source._np.reshape(view.shape[:d] + (n,) +
                                                                       view.shape[d + 1:]),
                 reduce, include_self)
    return target


_copy_and_inplace_kernels("index_reduce", "index_reduce_", _index_reduce)


# ---- masked indexing (what PyTorch's decompositions of padded gathers and embedding backward
# write): the indices are trusted only where `mask` holds, so they are clamped into range first
# and the masked-off positions read `fill` (or add nothing)
def _clamped(self, indices):
    return [None if i is None else
            _op("clamp")(i, -self.shape[d], self.shape[d] - 1) for d, i in enumerate(indices)]


@impl("_unsafe_masked_index", "CompositeImplicitAutograd")
def unsafe_masked_index(self, mask, indices, fill):
    return _op("where.self")(mask, _op("index.Tensor")(self, _clamped(self, indices)), fill)


@impl("_unsafe_masked_index_put_accumulate", "CompositeImplicitAutograd")
def unsafe_masked_index_put_accumulate(self, mask, indices, values):
    kept = _op("where.self")(mask, values, 0)
    return _op("index_put")(self, _clamped(self, indices), kept, True)
