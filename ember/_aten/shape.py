"""View and shape kernels (CPU and Meta), plus copies, joins and conversions.

A view kernel is one function `fn(array, *args) -> array view`, written once with NumPy's view
machinery. On CPU it runs on the tensor's `_np`; on Meta it runs on a memoryless stand-in
array with the same strides (`as_strided` over a one-element buffer: view functions compute
metadata only and never read data), and the stand-in's pointer arithmetic gives the offset.
So CPU and Meta views share one definition and cannot disagree.
"""
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np
from .._core.float8 import as_strided as np_as_strided

from .._core.resizable import check_resizable
from .._core import caching_allocator

from .._core import dtype as D
from .._core.float8 import to_float8
from .._core import complex32 as _c32
from .._dispatch.dispatcher import impl, lookup as _lookup
from .._core.tensor import Tensor, _wrap, _view_of, _meta, _wrap_dim, _contiguous_strides
from .._core.memory_format import contiguous_format, copy_in_format, format_strides, \
    preserve_format, suggest_memory_format
from .tensor_iterator import empty_strided, natural, preserve_strides
from .._core import deterministic
from .._core.device import no_backend
from .._core.grad_mode import _grad_state
from .elementwise import broadcast_error, broadcast_shape, _scalar_type_name
from .factory import fill_scalar, check_contiguous_strides, contiguous_nbytes, \
    STORAGE_MAX

_dummies = {}


def _stand_in(t):
    """A NumPy array with t's shape and strides over a one-element buffer (meta views)."""
    dt = t.dtype._np
    buf = _dummies.get(dt)
    if buf is None:
        buf = _dummies[dt] = np.zeros(1, dtype=dt)
    it = dt.itemsize
    return np_as_strided(buf, t._size, tuple(s * it for s in t.stride()))


def _meta_from_stand_in(arr, src):
    it = arr.dtype.itemsize
    base = _dummies[src.dtype._np].__array_interface__["data"][0]
    offset = src.storage_offset() * src.dtype.itemsize + arr.__array_interface__["data"][0] - base
    t = _meta(arr.shape, D._from_np[arr.dtype], tuple(s // it for s in arr.strides),
              offset // it, src._storage_(), src._device)
    return _as_view_of(t, src)


def view_result(arr, src):
    return _as_view_of(_view_of(arr, src), src)


def _as_view_of(t, src):
    """Make t a view of src's base. Made with grad mode off from a tensor requiring grad, it
    requires grad too but has no history and sends no gradient anywhere (Note [Views made
    in no_grad mode] in autograd/views.py)."""
    if src._inference:  # a view of an inference tensor: an inference tensor, not tracked
        t._inference = True
        return t
    base = src._base
    if base is None:
        base = src
    elif src._view_fn is not None:  # a view of a dtype-changing view: replayed, not positioned
        t._view_fn = src._view_fn + (_as_strided_step(t, base),)
    t._base = base
    if "_fw_nondiff_view" in src.__dict__:
        # a view of forward AD's primal alias (or of a view of it) takes no tangent from the
        # base either: the primal is the tangent-free value (forward_ad._primal)
        t.__dict__["_fw_nondiff_view"] = True
    if not _grad_state.enabled:
        t._creation_meta = "inference_mode" if _grad_state.inference else "no_grad"
        if base._rg:
            t._rg = True
            t._nograd_view = t._creation_meta
            t._view_version = t._storage._version
    elif src._creation_meta is not None:   # a view of such a view keeps how it was made
        t._creation_meta = src._creation_meta
    return t


# Note [Views autograd replays]: `view_as_real` and `view_as_complex` views (and views of them)
# cannot be told as positions in their base's elements, as other views are (autograd/views.py):
# an element of one is half of, or two of, the base's. Such a view carries `_view_fn`, the
# steps that make it again from its base ("view_as_real", "view_as_complex", or an as_strided
# ("as_strided", size, stride, bytes past the base's start)); autograd replays them on the base
# (or on a gradient of the base's shape) after an in-place write, as PyTorch's view_fn.
def _as_strided_step(t, base):
    return ("as_strided", t._size, t.stride(),
            t.storage_offset() * t.dtype.itemsize - base.storage_offset() * base.dtype.itemsize)


def _replayed(kernel, step):
    """A view op's kernel whose views are remade by replaying `step` (Note above)."""
    def run(self, *args):
        t = kernel(self, *args)
        base = t._base
        if base is not None:
            prefix = self._view_fn
            if prefix is None:
                prefix = () if self._base is None else (_as_strided_step(self, base),)
            t._view_fn = prefix + (step,)
        return t
    run.__qualname__ = run.__name__ = kernel.__name__
    return run


def _empty_view(meta, src):
    """A CPU view with no elements. NumPy normalizes the strides and data pointer of empty
    arrays, so such a view keeps PyTorch's strides and offset explicitly (computed by the Meta
    kernel, as for a meta tensor)."""
    t = view_result(np.empty(meta._size, meta.dtype._np), src)
    t._stride_, t._offset_ = meta._stride_, meta._offset_
    return t


def view_op(name, fn, check=None, tracked=True, replay=None):
    """Register `fn(array, *args) -> view` as the CPU and Meta kernel of a view op; `check(self,
    *args)` raises PyTorch's errors for inputs the view cannot be made of. An op that is not
    `tracked` shares memory without making an autograd view (`_base` None, as `view(dtype)`);
    one with a `replay` step is remade by autograd by replaying it (Note [Views autograd
    replays])."""

    def cpu(self, *args):
        if check is not None:
            check(self, *args)
        r = None
        if self._np.size:
            r = fn(self._np, *args)
            if type(r) is not list:
                if r.size:
                    return view_result(r, self)
            else:
                out = []
                for x in r:
                    if not x.size:
                        break
                    out.append(view_result(x, self))
                else:
                    return _multi_output(out)
        m = meta(self, *args)
        if type(m) is not list:
            return _empty_view(m, self)
        if r is None:
            return _multi_output([_empty_view(x, self) for x in m])
        return _multi_output([view_result(x, self) if x.size else _empty_view(y, self)
                              for x, y in zip(r, m)])

    def meta(self, *args):
        if check is not None:
            check(self, *args)
        r = fn(_stand_in(self), *args)
        if isinstance(r, list):
            return _multi_output([_meta_from_stand_in(x, self) for x in r])
        return _meta_from_stand_in(r, self)
    cpu.__qualname__ = cpu.__name__ = name.split(".")[0]
    if replay is not None:
        cpu, meta = _replayed(cpu, replay), _replayed(meta, replay)
    impl(name, "CPU")(cpu if tracked else _untracked(cpu))
    impl(name, "Meta")(meta if tracked else _untracked(meta))
    return fn


def _multi_output(views):
    """The views of an op returning several (split, unbind, ...): autograd refuses in-place
    writes to them (PyTorch's MULTI_OUTPUT_NODE creation meta), even made without grad."""
    for t in views:
        t._multi_output_view = True
    return views


def _untracked(kernel):
    def run(self, *args):
        t = kernel(self, *args)
        t._base = t._view_fn = None
        t._rg = t._nograd_view = False
        t._creation_meta = None
        return t
    run.__qualname__ = run.__name__ = kernel.__name__
    return run


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
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because "
                               f"the unspecified dimension size -1 can be any value and is "
                               f"ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def view_strides(old_shape, old_strides, new_shape):
    """PyTorch's computeStride: strides that make `new_shape` a view of the same elements in
    the same order, or None if some new dim would span two non-adjacent chunks of memory.

    Dims of the old shape are grouped into chunks that are contiguous with one another; each
    chunk must be covered exactly by a run of new dims. A size-1 dim takes the stride its
    position implies (the same choice as PyTorch, so strides compare equal)."""
    if not old_shape:
        return (1,) * len(new_shape)
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        return tuple(old_strides) if tuple(old_shape) == tuple(new_shape) else \
            _contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_stride = old_strides[-1] if old_strides else 1
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and
                      old_strides[d - 1] != tensor_numel * chunk_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_stride = old_strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _view(a, size):
    shape = infer_size(size, a.size)
    if a.flags.c_contiguous and a.size and (not a.ndim or a.strides[-1] == a.itemsize):
        return a.reshape(shape)  # NumPy's C-order strides are PyTorch's here
    it = a.itemsize
    strides = view_strides(a.shape, [s // it for s in a.strides], shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return _strided(a, shape, strides)


def _strided(a, shape, strides, offset=0):
    """A view of `a`'s memory with element `strides`, starting `offset` elements past `a`'s
    first element (the offset may point one past the end when the view has no elements)."""
    it = a.itemsize
    if offset:
        a = np_as_strided(a, (2,), (offset * it,))[1:]
    return np_as_strided(a, tuple(shape), tuple(s * it for s in strides))


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
    d0, d1 = _wrap_dim(d0, n), _wrap_dim(d1, n)  # a 0-d tensor takes dims 0 and -1
    return np.swapaxes(a, d0, d1) if n else a.view()


def _expand(a, size, implicit=False):
    size = list(size)
    n = len(size)
    if n < a.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(a.shape)}}}, size={size}): the "
                           f"number of sizes provided ({n}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({a.ndim})")
    lead = n - a.ndim
    shape, strides = [0] * n, [0] * n
    # right to left, as PyTorch's inferExpandGeometry: a new leading dim of size 1 gets the
    # stride that steps over the dims after it (as unsqueeze gives), a broadcast dim stride 0
    for i in range(n - 1, -1, -1):
        s = size[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            shape[i] = s
            strides[i] = shape[i + 1] * strides[i + 1] if s == 1 and i + 1 < n else 0
            continue
        cur = a.shape[i - lead]
        if s == -1:
            s = cur
        if cur == s:
            strides[i] = a.strides[i - lead]
        elif cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{size}.  Tensor sizes: {list(a.shape)}")
        shape[i] = s
    return np_as_strided(a, shape, strides)


def _squeeze(a, dims):
    n = a.ndim
    wrapped = [_wrap_dim(d, n) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        twice = next(d for d in wrapped if wrapped.count(d) > 1)
        raise RuntimeError(f"dim {twice} appears multiple times in the list of dims")
    dims = tuple(d for d in set(wrapped) if n and a.shape[d] == 1)
    return np.squeeze(a, axis=dims) if dims else a.view()


def _unsqueeze(a, dim):
    d = _wrap_dim(dim, a.ndim + 1)
    r = np.expand_dims(a, d)
    # PyTorch keeps every stride and gives the new dim the one that steps over the dim it is
    # inserted before; NumPy may renormalize the strides of size-1 dims
    strides = a.strides[:d] + (a.itemsize if d == a.ndim else a.shape[d] * a.strides[d],) + \
        a.strides[d:]
    if r.strides != strides:
        r = np_as_strided(r, r.shape, strides)
    return r


def _select(a, dim, index):
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(a.shape)} at dimension {dim}")
    return a[(slice(None),) * dim + (index, Ellipsis)]  # `...` keeps a 0-d result a view


def _slice(a, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise ValueError("step must be greater than zero")
    dim = _wrap_dim(dim, a.ndim)
    r = a[(slice(None),) * dim + (slice(start, end, step),)]
    if r.shape[dim]:  # NumPy's slice is PyTorch's unless it is empty
        return r
    size = a.shape[dim]
    start = 0 if start is None else start + size if start < 0 else start
    end = size if end is None else end + size if end < 0 else end
    start = min(max(start, 0), size)
    return _slice_dim(a, dim, start, min(max(end, start), size), step)


def _slice_dim(a, dim, start, end, step=1):
    """a[start:end:step] along `dim`, bounds already clamped to 0 <= start <= end <= size.

    An empty slice still starts at element `start` in PyTorch (its storage_offset moves and its
    stride is multiplied by step); NumPy keeps an empty slice at the array's own start."""
    if end > start:
        return a[(slice(None),) * dim + (slice(start, end, step),)]
    it = a.itemsize
    shape = a.shape[:dim] + (0,) + a.shape[dim + 1:]
    strides = [s // it for s in a.strides]
    offset = start * strides[dim]
    strides[dim] *= step
    return _strided(a, shape, strides, offset)


def _narrow(a, dim, start, length):
    if isinstance(start, Tensor):  # PyTorch's narrow.Tensor overload: a 0-d integer tensor
        dt = start.dtype
        if start.dim() != 0 or dt.is_floating_point or dt.is_complex or dt is D.bool:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = start.item()
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return _slice_dim(a, dim, start, start + length)


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
    d = _wrap_dim(dimension, n)
    length = a.shape[d] if n else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
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
    return np_as_strided(a, tuple(shape) + (size,),
                                           tuple(strides) + ((a.strides[d] if n else 0),))


def _split_with_sizes(a, sizes, dim=0):
    if not a.ndim:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _wrap_dim(dim, a.ndim)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={list(sizes)}")
    if sum(sizes) != a.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{a.shape[dim]} (input tensor's size at dimension {dim}), but got "
                           f"split_sizes={list(sizes)}")
    out, start = [], 0
    for s in sizes:
        out.append(_slice_dim(a, dim, start, start + s))
        start += s
    return out


def _wrap_dim_no_scalar(dim, ndim):
    """A dim of a tensor with dims: a 0-d tensor has none to name (PyTorch's
    maybe_wrap_dim with wrap_scalar=false)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _unbind(a, dim=0):
    dim = _wrap_dim_no_scalar(dim, a.ndim)
    return [a[(slice(None),) * dim + (i, Ellipsis)] for i in range(a.shape[dim])]


def _alias_view(a):
    return a.view()


def _view_dtype(a, dtype):
    """Reinterpret the bytes as `dtype`. With a different element size the last dim must be
    contiguous and is rescaled; the other strides and the offset are rescaled with it (the
    caller checks they can be: _check_view_dtype)."""
    new = D.np_dtype(dtype)
    old_it, new_it = a.itemsize, new.itemsize
    if old_it == new_it:
        return a.view(new)
    strides = [s // old_it for s in a.strides]
    shape = list(a.shape)
    if old_it > new_it:
        ratio = old_it // new_it
        shape[-1] *= ratio
        strides = [s * ratio for s in strides[:-1]] + [1]
    else:
        ratio = new_it // old_it
        shape[-1] //= ratio
        strides = [s // ratio for s in strides[:-1]] + [1]
    # one element of the new dtype at a's first byte, then strided over the same memory
    first = np_as_strided(a, (max(new_it // old_it, 1),), (old_it,))
    return _strided(first.view(np.uint8)[:new_it].view(new), shape, strides)


def _check_view_dtype(self, dtype):
    """PyTorch's checks of view(dtype) with a different element size, in its order (the bits
    are refused even for the same dtype)."""
    if self.is_conj() or self.is_neg():
        which = "conjugate view tensors" if self.is_conj() else \
            "tensors with negative bit set"
        raise RuntimeError(f"torch.Tensor.view is not supported for {which} when converting to "
                           "a different dtype.")
    old_it, new_it = self.dtype.itemsize, dtype.itemsize
    if old_it == new_it:
        return
    what = (f"{_scalar_type_name(self.dtype)} as {_scalar_type_name(dtype)} "
            f"(different element sizes)")
    if self.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to view {what}")
    strides = self.stride()
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {what}, but got {strides[-1]}")
    if old_it > new_it:
        return
    ratio = new_it // old_it
    if self._size[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {what}, but "
                           f"got {self._size[-1]}")
    if self.storage_offset() % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view "
                           f"{what}, but got {self.storage_offset()}")
    for i, st in enumerate(strides[:-1]):
        if st % ratio:
            raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to view "
                               f"{what}, but got {st}")


def _t(a):
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return np.swapaxes(a, 0, 1) if a.ndim == 2 else a.view()


def split_sizes(size, split_size):
    """The chunk lengths split(split_size) cuts a dim of length `size` into (the last may be
    shorter; a zero-length dim gives one empty chunk)."""
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    if split_size == 0:
        if size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        return [0]
    return [split_size] * (size // split_size) + ([size % split_size] if size % split_size
                                                  else []) or [0]


def _split(a, split_size, dim=0):
    if not a.ndim:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, a.ndim)
    return _split_with_sizes(a, split_sizes(a.shape[d], split_size), d)


view_op("view", _view)
view_op("t", _t)
view_op("squeeze", lambda a: _squeeze(a, range(a.ndim)))
view_op("squeeze.dim", lambda a, dim: _squeeze(a, (dim,)))
view_op("split.Tensor", _split)
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
view_op("detach", _alias_view, tracked=False)  # Tensor.detach's op, while a mode must see it


@impl("_local_scalar_dense", "CPU")
def _local_scalar_dense(self):
    """Tensor.item()'s op, which a __torch_dispatch__ handler sees for a wrapper subclass."""
    return self.item()


@impl("_local_scalar_dense", "Meta")
def _local_scalar_dense_meta(self):
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")
view_op("view.dtype", _view_dtype, _check_view_dtype, tracked=False)


def _view_as_real(a):
    """A complex array's memory as (real, imag) pairs: a trailing dim of 2, stride 1."""
    real = np.dtype(np.float16 if a.dtype == _NP_COMPLEX32 else a.dtype.char.lower())
    first = np_as_strided(a, (1,), (a.itemsize,)).view(real)
    return np_as_strided(first, a.shape + (2,), a.strides + (real.itemsize,))


def _view_as_complex(a):
    """(real, imag) pairs in a trailing dim of 2 as complex numbers (the caller checks the
    strides); the inverse of _view_as_real. An empty array's strides are arbitrary (NumPy
    gives zeros), so it is given contiguous ones first."""
    if a.size == 0:
        a = np_as_strided(
            a, a.shape, tuple(s * a.itemsize for s in _contiguous_strides(a.shape)))
    return _view_dtype(a, _COMPLEX_OF[a.dtype])[..., 0]


def _check_view_as_real(self):
    if not self.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if self.is_conj():
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original.")


view_op("view_as_real", _view_as_real, _check_view_as_real, replay="view_as_real")


_COMPLEX_OF = {np.dtype(np.float16): D.complex32, np.dtype(np.float32): D.complex64,
               np.dtype(np.float64): D.complex128}


def _check_view_as_complex(self):
    if self.dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: "
                           f"{_scalar_type_name(self.dtype)}")
    if self.dim() == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if self._size[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    # checked for empty tensors too, as PyTorch does (from_numpy of an empty array has
    # strides 0)
    stride = self.stride()
    if stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if self.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")


view_op("view_as_complex", _view_as_complex, _check_view_as_complex,
        replay="view_as_complex")


def _check_as_strided(size, stride):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(k < 0 for k in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {list(size)}")


@impl("as_strided", "CPU")
def as_strided(self, size, stride, storage_offset=None):
    _check_as_strided(size, stride)
    off = self.storage_offset() if storage_offset is None else storage_offset
    st = self._storage_()
    flat = st._bytes().view(self.dtype._np)
    it = self.dtype.itemsize
    need = off + sum((s - 1) * abs(k) for s, k in zip(size, stride) if s > 0) + 1
    if any(s == 0 for s in size):  # no element to reach: any offset is in bounds, as PyTorch's
        need = 0
    if need > flat.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {off}, and itemsize {it} requiring a storage size of "
                           f"{need * it} are out of bounds for storage of size {flat.size * it}")
    r = np_as_strided(flat[off:], tuple(size), tuple(k * it for k in stride))
    t = view_result(r, self)
    if not r.size:
        t._stride_, t._offset_ = tuple(stride), off
    return t


@impl("as_strided", "Meta")
def as_strided_meta(self, size, stride, storage_offset=None):
    _check_as_strided(size, stride)
    off = self.storage_offset() if storage_offset is None else storage_offset
    t = _meta(size, self.dtype, stride, off, self._storage_(), self._device)
    return _as_view_of(t, self)


# slice_inverse: `self` is a slice of `src`'s geometry; the result views self's memory with
# src's sizes, strides and offset, the base the slice was cut from (functionalization's inverse)
impl("slice_inverse", "CPU")(lambda self, src, dim=0, start=None, end=None, step=1: as_strided(
    self, src.shape, src.stride(), src.storage_offset()))
impl("slice_inverse", "Meta")(lambda self, src, dim=0, start=None, end=None, step=1:
                              as_strided_meta(self, src.shape, src.stride(),
                                              src.storage_offset()))


@impl("_unsafe_view", "CPU")
def _unsafe_view(self, size):
    return _wrap(np.reshape(self._np, infer_size(size, self._np.size)))


def _repeat_shape(self, repeats):
    if len(repeats) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    size = (1,) * (len(repeats) - self.dim()) + tuple(self._size)
    out = tuple(r * s for r, s in zip(repeats, size))
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {list(out)}")
    return size, out


@impl("repeat", "CPU")
def repeat(self, repeats):
    """Tensor.repeat: the tensor tiled `repeats` times along each dim (numpy's tile); always a
    fresh contiguous tensor."""
    size, _ = _repeat_shape(self, repeats)
    if not repeats:  # a 0-d tensor repeated by (): a 0-d copy (np.tile gives one dim)
        return _wrap(np.array(self._np, copy=True))
    return _wrap(np.ascontiguousarray(np.tile(np.reshape(self._np, size), tuple(repeats))))


@impl("repeat", "Meta")
def repeat_meta(self, repeats):
    return _meta(_repeat_shape(self, repeats)[1], self.dtype, device=self._device)


@impl("_unsafe_view", "Meta")
def _unsafe_view_meta(self, size):
    return _meta(infer_size(size, self.numel()), self.dtype, device=self._device)


# ---- copies and conversions -------------------------------------------------------------------
def _preserved_copy(a, dt=None):
    """A copy of array `a` (cast to dtype `dt`) with PyTorch's preserve_format layout: a dense
    array keeps its strides, another is made dense in the order of its strides."""
    if a.flags.c_contiguous and (1 not in a.shape or natural(a)) or not a.size:
        # into a caching-allocator block at once (a NumPy copy would be copied there again)
        return caching_allocator.copy(a) if dt is None else _cast(a, dt)
    out = empty_strided(a.shape, preserve_strides(a.shape, [s // a.itemsize for s in a.strides]),
                        a.dtype if dt is None else D.np_dtype(dt))
    if dt is None:
        out[...] = a
    else:
        out[...] = _cast(a, dt)
    return out


def copy_preserving(a):
    """A copy of array `a` with PyTorch's preserve_format layout."""
    return _preserved_copy(a)


def _preserved_strides(t):
    return preserve_strides(t._size, t.stride())


def _keep_empty_strides(out, src):
    """`out` (a preserve_format copy of `src`) with the strides of an empty `src`, which NumPy's
    copy forgets and PyTorch's keeps."""
    if not out._np.size:
        out._stride_, out._offset_ = src.stride(), 0
    return out


def _in_format(out, fmt):
    """`out` (a copy made in memory format `fmt`) with `fmt`'s strides when it is empty: NumPy
    gives an empty array contiguous strides, PyTorch lays it out in the format asked for."""
    if not out._np.size and fmt is not contiguous_format:
        out._stride_, out._offset_ = format_strides(out._size, fmt), 0
    return out


@impl("clone", "CPU")
def clone(self, memory_format=None):
    if memory_format is None or memory_format is preserve_format:
        return _keep_empty_strides(_wrap(copy_preserving(self._np)), self)
    return _in_format(_wrap(copy_in_format(self._np, memory_format)), memory_format)


@impl("clone", "Meta")
def clone_meta(self, memory_format=None):
    if memory_format is None or memory_format is preserve_format:
        return _meta(self._size, self.dtype, _preserved_strides(self), device=self._device)
    return _meta(self._size, self.dtype, format_strides(self._size, memory_format),
                 device=self._device)


# PyTorch's ops for its autograd tests (their backward formulas, in derivatives/shape.py, are
# what the tests recognize): copies of self, and view(-1) and its copy
impl("_test_autograd_multiple_dispatch.fullcoverage", "CPU")(clone)
impl("_test_autograd_multiple_dispatch.fullcoverage", "Meta")(clone_meta)
impl("_test_warn_in_autograd", "CPU")(clone)
impl("_test_warn_in_autograd", "Meta")(clone_meta)


@impl("_test_autograd_multiple_dispatch_view", "CompositeImplicitAutograd")
def _test_autograd_multiple_dispatch_view(self):
    return _lookup("view")(self, [-1])


@impl("_test_autograd_multiple_dispatch_view_copy", "CompositeImplicitAutograd")
def _test_autograd_multiple_dispatch_view_copy(self):
    return _lookup("view_copy")(self, [-1])


@impl("_to_copy", "CPU")
def _to_copy(self, dtype=None, device=None, memory_format=None):
    if device is not None and _device(device).type == "meta":
        return _meta(self._size, dtype or self.dtype, _preserved_strides(self))
    if device is not None and _device(device).type != "cpu":
        if _device(device).type == "lazy":  # the lazy backend takes the copy in
            return _lookup("_to_copy").redispatch("Lazy", (self, dtype, device, memory_format))
        raise no_backend(_device(device), None)  # what a CPU build says
    dt = dtype or self.dtype
    if memory_format is None or memory_format is preserve_format:
        return _keep_empty_strides(_wrap(_preserved_copy(self._np, dt)), self)
    # cast first: astype's order="K" copy of the formatted array could permute the strides of
    # its size-1 dims
    return _in_format(_wrap(copy_in_format(self._np if dt is self.dtype else _cast(self._np, dt),
                                           memory_format)), memory_format)


_NP_COMPLEX32 = _c32.NP_COMPLEX32


def _cast(a, dt):
    target = D.np_dtype(dt)
    if a.dtype == _NP_COMPLEX32:  # (no NumPy casts from it: through complex64, exactly)
        a = _c32.widen(a)
    if a.dtype.kind == "c" and not dt.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=_user_stacklevel())
        a = a.real
    if dt._kind is not None:
        return _c32.narrow(a) if dt is D.complex32 else to_float8(a, dt)
    if target == np.float16:
        a = _c32.through_float(a)
    if a.dtype.kind == "f" and (target.kind != "f" or target.itemsize < a.itemsize):
        with np.errstate(over="ignore", invalid="ignore"):  # silent like a C cast
            return a.astype(target, order="K")
    return a.astype(target, order="K")


def _device(d):
    from .._core.device import device
    return device(d)


@impl("_to_copy", "Meta")
def _to_copy_meta(self, dtype=None, device=None, memory_format=None):
    if device is not None and _device(device).type == "cpu":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if memory_format is None or memory_format is preserve_format:
        return _meta(self._size, dtype or self.dtype, _preserved_strides(self))
    return _meta(self._size, dtype or self.dtype, format_strides(self._size, memory_format))


@impl("copy_", "CPU")
def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        self._np[...] = src
        return self
    if (self._sparse is not None or src._sparse is not None) and \
            (type(self._sparse) is tuple or type(src._sparse) is tuple):  # a sparse COO side
        return _lookup("copy_")._table["SparseCPU"](self, src, non_blocking)
    if src._np is None:
        if src._lazy is None:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        src = src.detach().to("cpu")  # a copy out of the lazy device runs its pending graph
    try:
        s = src._np
        if s.dtype != self._np.dtype:
            s = _cast(s, self.dtype)
        np.copyto(self._np, s, casting="unsafe")
    except ValueError:
        try:
            shape = broadcast_shape(self._size, src._size)
        except RuntimeError:  # TensorIterator's message, naming the first mismatch from the right
            raise broadcast_error(self, src) from None
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                           f"shape {list(shape)}") from None
    return self


@impl("copy_", "Meta")
def copy_meta(self, src, non_blocking=False):
    if isinstance(src, Tensor) and broadcast_shape(self._size, src._size) != self._size:
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                           f"shape {list(broadcast_shape(self._size, src._size))}")
    return self


def _check_fill_value(value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                           f"with {value.dim()} dimensions.")


@impl("fill_.Tensor", "CPU")
@impl("fill_.Scalar", "CPU")
def fill_(self, value):
    _check_fill_value(value)
    if isinstance(value, Tensor):
        with np.errstate(over="ignore", invalid="ignore"):   # fill_.Tensor: a plain cast
            self._np[...] = _cast(np.asarray(value.item()), self.dtype)
        return self
    self._np[...] = fill_scalar(value, self.dtype)
    return self


@impl("zero_", "CPU")
def zero_(self):
    if self.dtype is D.float8_e8m0fnu:  # no zero in it: PyTorch writes the zero byte (2**-127)
        self._np.view(np.uint8)[...] = 0
    else:
        self._np[...] = 0
    return self


@impl("fill.Tensor", "CPU")
@impl("fill.Scalar", "CPU")
def fill(self, value):
    """fill_ on an empty_like(self): PyTorch's functional fill."""
    out = empty_strided(self._size, _preserved_strides(self), self._np.dtype)
    return _keep_empty_strides(fill_(_wrap(out), value), self)


def _fill_meta_(self, value):
    _check_fill_value(value)
    return self


@impl("fill.Tensor", "Meta")
@impl("fill.Scalar", "Meta")
def fill_meta(self, value):
    _check_fill_value(value)
    return _meta(self._size, self.dtype, _preserved_strides(self), device=self._device)


impl("fill_.Scalar", "Meta")(_fill_meta_)
impl("fill_.Tensor", "Meta")(_fill_meta_)
impl("zero_", "Meta")(lambda self: self)


# ---- joins ----------------------------------------------------------------------------------
def _cat_check(tensors, dim, name):
    if len(tensors) == 0:
        if name == "stack":
            raise RuntimeError("stack expects a non-empty TensorList")
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
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
    arrs = [t._np if t.dtype is dt else _c32.astype(t._np, dt._np) for t in tensors
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
    return _wrap(np.stack([t._np if t.dtype is dt else _c32.astype(t._np, dt._np)
                           for t in tensors], axis=d))


@impl("stack", "Meta")
def stack_meta(tensors, dim=0):
    dt = _cat_check(tensors, dim, "stack")
    _stack_check(tensors)
    d = _wrap_dim(dim, len(tensors[0]._size) + 1)
    shape = list(tensors[0]._size)
    shape.insert(d, len(tensors))
    return _meta(shape, dt, device=tensors[0]._device)


# ---- reorderings: flip, roll, tril/triu (copies) --------------------------------------------
def _dims_list(dims, ndim, name):
    out = [_wrap_dim(d, ndim) for d in dims]
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


@impl("flip", "CPU")
def flip(self, dims):
    a = self._np
    axes = _dims_list(dims, a.ndim, "flip")
    if not a.ndim:
        return _wrap(a.copy())
    # the copy keeps a dense input's layout (preserve_format); a flipped view has negative
    # strides, so the layout is chosen on the input, not on the view
    out = empty_strided(a.shape, preserve_strides(a.shape, self.stride()), a.dtype)
    out[...] = np.flip(a, axes)
    return _keep_empty_strides(_wrap(out), self)


@impl("flip", "Meta")
def flip_meta(self, dims):
    _dims_list(dims, self.dim(), "flip")
    return _meta(self._size, self.dtype, _preserved_strides(self), device=self._device)


def _roll_args(self, shifts, dims):
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
    return [_wrap_dim_no_scalar(d, self.dim()) for d in dims]


@impl("roll", "CPU")
def roll(self, shifts, dims=()):
    axes = _roll_args(self, shifts, dims)
    if not axes:  # roll the flattened tensor, then restore the shape
        return _wrap(np.roll(self._np.reshape(-1), shifts[0]).reshape(self._size))
    return _wrap(np.ascontiguousarray(np.roll(self._np, shifts, axes)))


@impl("roll", "Meta")
def roll_meta(self, shifts, dims=()):
    _roll_args(self, shifts, dims)
    return _meta(self._size, self.dtype, device=self._device)


def _triangle(name, np_fn):
    def cpu(self, diagonal=0):
        if self.dim() < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return _wrap(np.ascontiguousarray(np_fn(self._np, diagonal)))

    def meta(self, diagonal=0):
        if self.dim() < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return _meta(self._size, self.dtype, device=self._device)
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


_triangle("tril", np.tril)
_triangle("triu", np.triu)


# ---- diag_embed, rot90 and the *_scatter ops (issue 3) --------------------------------------
def _diag_embed_shape(self, offset, dim1, dim2):
    n = self.dim() + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = self._size[-1] + abs(offset) if self._size else abs(offset) + 1
    batch = list(self._size[:-1])
    for d in sorted((d1, d2)):
        batch.insert(d, size)
    return tuple(batch), d1, d2


@impl("diag_embed", "CPU")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Each last-dim vector of self becomes the `offset` diagonal of a matrix in (dim1, dim2)."""
    shape, d1, d2 = _diag_embed_shape(self, offset, dim1, dim2)
    out = np.zeros(shape, dtype=self.dtype._np)
    # a writable view of the target diagonal: NumPy's diagonal() view is read-only
    view = np.moveaxis(out, (d1, d2), (-2, -1))
    k = self._size[-1] if self._size else 1
    rows = np.arange(k) + max(-offset, 0)
    cols = np.arange(k) + max(offset, 0)
    view[..., rows, cols] = self._np
    return _wrap(out)


@impl("diag_embed", "Meta")
def diag_embed_meta(self, offset=0, dim1=-2, dim2=-1):
    return _meta(_diag_embed_shape(self, offset, dim1, dim2)[0], self.dtype,
                 device=self._device)


def _rot90_args(self, k, dims):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.dim()}")
    d0, d1 = (_wrap_dim(d, self.dim()) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return k % 4, (d0, d1)


@impl("rot90", "CPU")
def rot90(self, k=1, dims=(0, 1)):
    k, dims = _rot90_args(self, k, dims)
    return _wrap(np.ascontiguousarray(np.rot90(self._np, k, dims)))


@impl("rot90", "Meta")
def rot90_meta(self, k=1, dims=(0, 1)):
    k, (d0, d1) = _rot90_args(self, k, dims)
    shape = list(self._size)
    if k % 2:
        shape[d0], shape[d1] = shape[d1], shape[d0]
    return _meta(shape, self.dtype, device=self._device)


def _scatter_into(view_fn, name):
    """`<view>_scatter(self, src, ...)`: a copy of self with the view `view_fn` selects
    replaced by src (the functional form of writing into a view). src of another dtype is
    cast to self's as `copy_` casts it, as in PyTorch."""

    def check(self, src, args):
        target = view_fn(_stand_in(self), *args)
        if tuple(target.shape) != tuple(src._size):
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src "
                               f"size = {list(src._size)}, slice size = {list(target.shape)}")

    def cpu(self, src, *args):
        check(self, src, args)
        out = np.array(self._np)
        view_fn(out, *args)[...] = src._np if src.dtype is self.dtype else \
            _cast(src._np, self.dtype)
        return _wrap(out)

    def meta(self, src, *args):
        check(self, src, args)
        return _meta(self._size, self.dtype, device=self._device)
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


_scatter_into(_select, "select_scatter")
_scatter_into(_slice, "slice_scatter")
_scatter_into(_diagonal, "diagonal_scatter")


# ---- unfold_backward: overlap-add, the adjoint of unfold ------------------------------------
def _unfold_backward_shape(grad_in, input_sizes, dim, size, step):
    """The output's sizes and the wrapped dim; a 0-d input counts as one element along dim 0."""
    if step <= 0:
        raise ValueError(f"step is {step} but must be > 0")  # PyTorch's TORCH_CHECK_VALUE
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    sizes = tuple(int(s) for s in input_sizes)
    d = _wrap_dim(dim, len(sizes))
    frames = grad_in._size[d] if len(grad_in._size) == len(sizes) + 1 else -1
    expected = sizes[:d] + (frames,) + sizes[d + 1:] + (size,) if sizes else (size,)
    if grad_in._size != expected:
        raise RuntimeError(f"unfold_backward: expected grad_in of size {list(expected)} for an "
                           f"input of size {list(sizes)} unfolded along dim {dim} in windows "
                           f"of {size}, but got {list(grad_in._size)}")
    return sizes, d


@impl("unfold_backward", "CPU")
def unfold_backward(grad_in, input_sizes, dim, size, step):
    """The sum of every window `unfold(dim, size, step)` cut, added back where it was cut from
    (windows overlap when step < size; parts past the input's end are dropped).

    Each window is split into blocks of `step` elements: block j of window f lands on block f + j
    of the output, so one vectorised addition per block position adds up all the windows."""
    sizes, d = _unfold_backward_shape(grad_in, input_sizes, dim, size, step)
    length = sizes[d] if sizes else 1
    g = grad_in._np if sizes else grad_in._np.reshape(1, size)
    g = np.moveaxis(g, d, -2)  # (..., frames, size)
    frames = g.shape[-2]
    blocks = -(-size // step)
    pad = [(0, 0)] * (g.ndim - 1) + [(0, blocks * step - size)]
    g = np.pad(g, pad).reshape(g.shape[:-1] + (blocks, step))
    out = np.zeros(g.shape[:-3] + (max(frames + blocks - 1, -(-length // step)), step),
                   dtype=grad_in.dtype._np)
    for j in range(blocks):
        out[..., j:j + frames, :] += g[..., :, j, :]
    out = out.reshape(out.shape[:-2] + (out.shape[-2] * step,))[..., :length]
    return _wrap(np.ascontiguousarray(np.moveaxis(out, -1, d)).reshape(sizes))


@impl("unfold_backward", "Meta")
def unfold_backward_meta(grad_in, input_sizes, dim, size, step):
    sizes, _ = _unfold_backward_shape(grad_in, input_sizes, dim, size, step)
    return _meta(sizes, grad_in.dtype, device=grad_in._device)


# ---- in-place view ops and resize_ ----------------------------------------------------------
# `x.t_()` makes x itself the transposed view: the kernels compute the out-of-place view at the
# same dispatch key and move its sizes, strides and offset into `self` (storage unchanged).
def _restride(self, view):
    self._np, self._size = view._np, view._size
    if view._stride_ is not None:
        self._stride_, self._offset_ = view._stride_, view._offset_
    else:
        self.__dict__.pop("_stride_", None)
        self.__dict__.pop("_offset_", None)
    return self


def _inplace_view_op(name, view_name):
    op = _lookup(view_name)
    for key in ("CPU", "Meta"):
        kernel = op._table[key]
        impl(name, key)(lambda self, *args, _k=kernel: _restride(self, _k(self, *args)))
    _lookup(name)._inplace_view = True


for _name, _view_name in (("t_", "t"), ("transpose_", "transpose.int"),
                          ("swapdims_", "transpose.int"), ("swapaxes_", "transpose.int"),
                          ("squeeze_", "squeeze"), ("squeeze_.dim", "squeeze.dim"),
                          ("squeeze_.dims", "squeeze.dims"), ("unsqueeze_", "unsqueeze"),
                          ("as_strided_", "as_strided")):
    _inplace_view_op(_name, _view_name)


# ---- the views' copies: view_copy, slice_copy, ... ------------------------------------------
# Each runs its view's kernel and then clone's, at the same dispatch key, into contiguous memory.
VIEW_COPIES = {"view_copy": "view", "view_copy.dtype": "view.dtype",
               "permute_copy": "permute", "t_copy": "t", "transpose_copy.int": "transpose.int",
               "squeeze_copy": "squeeze", "squeeze_copy.dim": "squeeze.dim",
               "squeeze_copy.dims": "squeeze.dims", "unsqueeze_copy": "unsqueeze",
               "select_copy.int": "select.int", "slice_copy.Tensor": "slice.Tensor",
               "diagonal_copy": "diagonal", "expand_copy": "expand",
               "unbind_copy.int": "unbind.int", "split_copy.Tensor": "split.Tensor",
               "split_with_sizes_copy": "split_with_sizes", "detach_copy": "detach",
               "alias_copy": "alias", "unfold_copy": "unfold", "as_strided_copy": "as_strided",
               "view_as_real_copy": "view_as_real", "view_as_complex_copy": "view_as_complex"}


def _view_copy_kernel(view, clone):
    def kernel(self, *args):
        result = view(self, *args)
        if isinstance(result, (list, tuple)):
            return [clone(r, contiguous_format) for r in result]
        return clone(result, contiguous_format)
    return kernel


for _name, _view_name in VIEW_COPIES.items():
    for _key in ("CPU", "Meta"):
        impl(_name, _key)(_view_copy_kernel(_lookup(_view_name)._table[_key],
                                            _lookup("clone")._table[_key]))


def _resize(self, size, memory_format, key):
    """Give `self` the contiguous (or `memory_format`) layout of `size` from its storage offset,
    growing the storage (keeping its bytes) when it is too small, as PyTorch's resize_."""
    size = tuple(int(s) for s in size)
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    if size == self._size:
        # PyTorch counts a resize_ as an in-place op only when the sizes change: take back
        # the count the dispatcher adds after every in-place kernel
        self._storage_()._version -= 1
        if memory_format is None:
            return self
    strides = format_strides(size, memory_format) if memory_format is not None else \
        _contiguous_strides(size)
    offset = self.storage_offset()
    numel = math.prod(size)
    if numel > STORAGE_MAX:   # (c10 computes numel in int64_t before the bytes)
        raise RuntimeError("numel: integer multiplication overflow")
    check_contiguous_strides(size)
    storage = self._storage_()
    need = contiguous_nbytes(size, self.dtype.itemsize, offset) if numel else 0
    old = storage.nbytes()
    if need > old:
        check_resizable(storage)   # (a NumPy array may share it: ember/_core/resizable.py)
        storage.resize_(need)
        value = deterministic.fill_value(self.dtype)
        if value is not None and storage._array is not None:
            it = self.dtype.itemsize
            storage._bytes()[-(-old // it) * it:need].view(self.dtype._np)[...] = value
    as_strided = _lookup("as_strided")._table[key]
    return _restride(self, as_strided(self, size, strides, offset))


impl("resize_", "CPU")(lambda self, size, memory_format=None: _resize(self, size, memory_format,
                                                                      "CPU"))
impl("resize_", "Meta")(lambda self, size, memory_format=None: _resize(self, size, memory_format,
                                                                       "Meta"))
def _resize_as(self, the_template, memory_format, key):
    """resize_ to the template's size; preserve_format takes the template's suggested layout."""
    if memory_format is preserve_format:
        memory_format = suggest_memory_format(the_template)
    return _resize(self, the_template._size, memory_format, key)


impl("resize_as_", "CPU")(lambda self, the_template, memory_format=None: _resize_as(
    self, the_template, memory_format, "CPU"))
impl("resize_as_", "Meta")(lambda self, the_template, memory_format=None: _resize_as(
    self, the_template, memory_format, "Meta"))


@impl("_assert_tensor_metadata", "CompositeImplicitAutograd")
def _assert_tensor_metadata(a, size=None, stride=None, dtype=None, device=None, layout=None):
    """RuntimeError unless `a` has each given property (sizes, strides, dtype, device, layout,
    checked in that order); the messages say the dtype as c10 does on either side ("Expected:
    Float, Got: long int")."""
    for what, expected, got, show in (
            ("sizes", size, a.shape, list), ("strides", stride, a.stride, list),
            ("dtype", dtype, a.dtype, None), ("device", device, a.device, None),
            ("layout", layout, a.layout, None)):
        if expected is None:
            continue
        got = got() if callable(got) else got
        if what == "device":
            expected = type(got)(expected)
        if (list(got) != list(expected)) if show else (got != expected):
            if what == "dtype":
                expected, got = D.scalar_type_name(expected), D.c_type_name(got)
            elif what == "layout":
                expected, got = expected.c10_name, got.c10_name
            elif show:
                expected, got = list(expected), list(got)
            raise RuntimeError(f"Tensor {what} mismatch! Expected: {expected}, Got: {got}")
