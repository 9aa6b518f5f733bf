"""View and shape kernels (CPU and Meta), plus copies, joins and conversions.

A view kernel is one function `fn(array, *args) -> array view`, written once with NumPy's view
machinery. On CPU it runs on the tensor's `_np`; on Meta it runs on a memoryless stand-in
array with the same strides (`as_strided` over a one-element buffer: view functions compute
metadata only and never read data), and the stand-in's pointer arithmetic gives the offset.
So CPU and Meta views share one definition and cannot disagree.
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import Tensor, _wrap, _view_of, _meta, _wrap_dim
from .elementwise import check_inplace, broadcast_shape

_dummies = {}


def _stand_in(t):
    """A NumPy array with t's shape and strides over a one-element buffer (meta views)."""
    dt = t.dtype._np
    buf = _dummies.get(dt)
    if buf is None:
        buf = _dummies[dt] = np.zeros(1, dtype=dt)
    it = dt.itemsize
    return np.lib.stride_tricks.as_strided(buf, t._size, tuple(s * it for s in t.stride()))


def _meta_from_stand_in(arr, src):
    it = arr.dtype.itemsize
    base = _dummies[arr.dtype].__array_interface__["data"][0]
    off = (arr.__array_interface__["data"][0] - base) // it
    t = _meta(arr.shape, D._from_np[arr.dtype], tuple(s // it for s in arr.strides),
              src.storage_offset() + off, src._storage_(), src._device)
    t._base = src._base if src._base is not None else src
    return t


def view_result(arr, src):
    t = _view_of(arr, src)
    t._base = src._base if src._base is not None else src
    return t


def view_op(name, fn):
    """Register `fn(array, *args) -> view` as the CPU and Meta kernel of a view op."""
    def cpu(self, *args):
        r = fn(self._np, *args)
        if isinstance(r, list):
            return [view_result(x, self) for x in r]
        return view_result(r, self)

    def meta(self, *args):
        r = fn(_stand_in(self), *args)
        if isinstance(r, list):
            return [_meta_from_stand_in(x, self) for x in r]
        return _meta_from_stand_in(r, self)
    cpu.__qualname__ = cpu.__name__ = name.split(".")[0]
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    return fn


def infer_size(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _view(a, size):
    shape = infer_size(size, a.size)
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None


def _permute(a, dims):
    n = a.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    dims = [_wrap_dim(d, n) for d in dims]
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(a, dims)


def _transpose(a, d0, d1):
    n = a.ndim
    if n == 0:
        return a.view()
    return np.swapaxes(a, _wrap_dim(d0, n), _wrap_dim(d1, n))


def _expand(a, size, implicit=False):
    size = list(size)
    n = len(size)
    if n < a.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(a.shape)}}}, size={size}): the "
                           f"number of sizes provided ({n}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({a.ndim})")
    lead = n - a.ndim
    shape, strides = [], []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            shape.append(s)
            strides.append(0)
            continue
        cur = a.shape[i - lead]
        if s == -1:
            s = cur
        if cur == s:
            strides.append(a.strides[i - lead])
        elif cur == 1:
            strides.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{size}.  Tensor sizes: {list(a.shape)}")
        shape.append(s)
    return np.lib.stride_tricks.as_strided(a, shape, strides)


def _squeeze(a, dims):
    n = a.ndim
    dims = tuple(d for d in {_wrap_dim(d, n) for d in dims} if n and a.shape[d] == 1)
    return np.squeeze(a, axis=dims) if dims else a.view()


def _unsqueeze(a, dim):
    return np.expand_dims(a, _wrap_dim(dim, a.ndim + 1))


def _select(a, dim, index):
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(a.shape)} at dimension {dim}")
    return a[(slice(None),) * dim + (index,)]


def _slice(a, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise ValueError("step must be greater than zero")
    dim = _wrap_dim(dim, a.ndim)
    return a[(slice(None),) * dim + (slice(start, end, step),)]


def _narrow(a, dim, start, length):
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if start < 0:
        start += size
    if not (0 <= start <= size) or length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return a[(slice(None),) * dim + (slice(start, start + length),)]


def _diagonal(a, offset=0, dim1=0, dim2=1):
    n = a.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    r = np.diagonal(a, offset, d1, d2)
    if a.flags.writeable:
        r.flags.writeable = True
    return r


def _unfold(a, dimension, size, step):
    n = a.ndim
    d = _wrap_dim(dimension, n) if n else 0
    length = a.shape[d] if n else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (length - size) // step + 1
    shape = list(a.shape)
    strides = list(a.strides)
    if n:
        shape[d] = count
        strides[d] = a.strides[d] * step
    return np.lib.stride_tricks.as_strided(a, tuple(shape) + (size,),
                                           tuple(strides) + ((a.strides[d] if n else 0),))


def _split_with_sizes(a, sizes, dim=0):
    dim = _wrap_dim(dim, a.ndim)
    if sum(sizes) != a.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{a.shape[dim]} (input tensor's size at dimension {dim}), but got "
                           f"split_sizes={list(sizes)}")
    out, start = [], 0
    for s in sizes:
        out.append(a[(slice(None),) * dim + (slice(start, start + s),)])
        start += s
    return out


def _unbind(a, dim=0):
    dim = _wrap_dim(dim, a.ndim)
    return [a[(slice(None),) * dim + (i,)] for i in range(a.shape[dim])]


def _alias_view(a):
    return a.view()


def _view_dtype(a, dtype):
    if dtype.itemsize != a.dtype.itemsize and a.ndim and a.strides[-1] != a.dtype.itemsize:
        raise RuntimeError("self.stride(-1) must be 1 to view Float as Double (different element "
                           "sizes), but got " + str(a.strides[-1] // a.dtype.itemsize))
    return a.view(D.np_dtype(dtype))


view_op("view", _view)
view_op("permute", _permute)
view_op("transpose.int", _transpose)
view_op("expand", _expand)
view_op("squeeze.dims", _squeeze)
view_op("unsqueeze", _unsqueeze)
view_op("select.int", _select)
view_op("slice.Tensor", _slice)
view_op("narrow", _narrow)
view_op("diagonal", _diagonal)
view_op("unfold", _unfold)
view_op("split_with_sizes", _split_with_sizes)
view_op("unbind.int", _unbind)
view_op("alias", _alias_view)
view_op("view.dtype", _view_dtype)


@impl("as_strided", "CPU")
def as_strided(self, size, stride, storage_offset=None):
    off = self.storage_offset() if storage_offset is None else storage_offset
    st = self._storage_()
    flat = st._array.reshape(-1).view(np.uint8).view(self.dtype._np)
    it = self.dtype.itemsize
    need = off + sum((s - 1) * abs(k) for s, k in zip(size, stride) if s > 0) + 1
    if any(s == 0 for s in size):
        need = off
    if need > flat.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {off}, and itemsize {it} requiring a storage size of "
                           f"{need * it} are out of bounds for storage of size {flat.size * it}")
    r = np.lib.stride_tricks.as_strided(flat[off:], tuple(size), tuple(k * it for k in stride))
    return view_result(r, self)


@impl("as_strided", "Meta")
def as_strided_meta(self, size, stride, storage_offset=None):
    off = self.storage_offset() if storage_offset is None else storage_offset
    t = _meta(size, self.dtype, stride, off, self._storage_(), self._device)
    t._base = self._base if self._base is not None else self
    return t


@impl("_unsafe_view", "CPU")
def _unsafe_view(self, size):
    return _wrap(np.reshape(self._np, infer_size(size, self._np.size)))


@impl("_unsafe_view", "Meta")
def _unsafe_view_meta(self, size):
    return _meta(infer_size(size, self.numel()), self.dtype, device=self._device)


# ---- copies and conversions -------------------------------------------------------------------
@impl("clone", "CPU")
def clone(self, memory_format=None):
    if memory_format is None:
        return _wrap(self._np.copy(order="K"))
    from .._memory_format import copy_in_format
    return _wrap(copy_in_format(self._np, memory_format))


@impl("clone", "Meta")
def clone_meta(self, memory_format=None):
    return _meta(self._size, self.dtype, device=self._device)


@impl("_to_copy", "CPU")
def _to_copy(self, dtype=None, device=None, memory_format=None):
    if device is not None and _device(device).type == "meta":
        return _meta(self._size, dtype or self.dtype)
    if device is not None and _device(device).type != "cpu":
        raise RuntimeError(f"ember has no '{_device(device).type}' backend yet")
    dt = dtype or self.dtype
    return _wrap(_cast(self._np, dt))


def _cast(a, dt):
    target = D.np_dtype(dt)
    if dt.is_complex or a.dtype.kind != "c":
        if a.dtype.kind == "f" and target.kind in "iub" and target != np.bool_:
            with np.errstate(invalid="ignore"):
                return a.astype(target)
        return a.astype(target, order="K")
    return a.real.astype(target)


def _device(d):
    from .._device import device
    return device(d)


@impl("_to_copy", "Meta")
def _to_copy_meta(self, dtype=None, device=None, memory_format=None):
    if device is not None and _device(device).type == "cpu":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return _meta(self._size, dtype or self.dtype)


@impl("copy_", "CPU")
def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        self._np[...] = src
        return self
    if src._np is None:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    try:
        s = src._np
        if s.dtype != self._np.dtype:
            s = _cast(s, self.dtype)
        np.copyto(self._np, s, casting="unsafe")
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self._size[-1] if self._size else 1}) must "
                           f"match the size of tensor b ({src._size[-1] if src._size else 1}) at "
                           f"non-singleton dimension {max(len(self._size) - 1, 0)}") from None
    return self


@impl("copy_", "Meta")
def copy_meta(self, src, non_blocking=False):
    if isinstance(src, Tensor) and broadcast_shape(self._size, src._size) != self._size:
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                           f"shape {list(broadcast_shape(self._size, src._size))}")
    return self


@impl("fill_.Scalar", "CPU")
def fill_(self, value):
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        value = value.item()
    self._np[...] = value
    return self


@impl("zero_", "CPU")
def zero_(self):
    self._np[...] = 0
    return self


impl("fill_.Scalar", "Meta")(lambda self, value: self)
impl("zero_", "Meta")(lambda self: self)


# ---- joins ----------------------------------------------------------------------------------
def _cat_check(tensors, dim, name):
    if len(tensors) == 0:
        raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {tensors.index(t)} in argument 0, but "
                            f"got {type(t).__name__}")
    dt = D.result_type_of(tensors) if len({t.dtype for t in tensors}) > 1 else tensors[0].dtype
    return dt


def _cat_dim(tensors, dim):
    ref = next((t for t in tensors if t._size != (0,)), tensors[0])
    n = len(ref._size)
    if n == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, n)
    for i, t in enumerate(tensors):
        if t._size == (0,):
            continue
        if len(t._size) != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and "
                               f"{len(t._size)}")
        for k in range(n):
            if k != d and t._size[k] != ref._size[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref._size[k]} but got size {t._size[k]} for "
                                   f"tensor number {i} in the list.")
    return d, ref


@impl("cat", "CPU")
def cat(tensors, dim=0):
    dt = _cat_check(tensors, dim, "torch.cat")
    d, _ = _cat_dim(tensors, dim)
    arrs = [t._np if t.dtype is dt else t._np.astype(dt._np) for t in tensors
            if t._size != (0,) or len(tensors) == 1]
    if not arrs:
        return _wrap(np.empty((0,), dtype=dt._np))
    return _wrap(np.concatenate(arrs, axis=d))


@impl("cat", "Meta")
def cat_meta(tensors, dim=0):
    dt = _cat_check(tensors, dim, "torch.cat")
    d, ref = _cat_dim(tensors, dim)
    shape = list(ref._size)
    shape[d] = sum(t._size[d] for t in tensors if t._size != (0,))
    return _meta(shape, dt, device=tensors[0]._device)


def _stack_check(tensors):
    first = tensors[0]._size
    for i, t in enumerate(tensors):
        if t._size != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(t._size)} at entry {i}")


@impl("stack", "CPU")
def stack(tensors, dim=0):
    dt = _cat_check(tensors, dim, "stack")
    _stack_check(tensors)
    d = _wrap_dim(dim, len(tensors[0]._size) + 1)
    return _wrap(np.stack([t._np if t.dtype is dt else t._np.astype(dt._np) for t in tensors],
                          axis=d))


@impl("stack", "Meta")
def stack_meta(tensors, dim=0):
    dt = _cat_check(tensors, dim, "stack")
    _stack_check(tensors)
    d = _wrap_dim(dim, len(tensors[0]._size) + 1)
    shape = list(tensors[0]._size)
    shape.insert(d, len(tensors))
    return _meta(shape, dt, device=tensors[0]._device)
