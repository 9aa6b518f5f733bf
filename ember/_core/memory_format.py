"""Memory formats: torch.contiguous_format, channels_last (NHWC strides), preserve_format."""
import numpy as np


class memory_format:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

_ORDERS = {"channels_last": (0, 2, 3, 1), "channels_last_3d": (0, 2, 3, 4, 1)}


def copy_in_format(a, fmt):
    """A copy of array `a` laid out in memory format `fmt` (same logical shape)."""
    if fmt is preserve_format:
        return a.copy(order="K")
    if fmt is contiguous_format:
        return np.array(a, order="C")
    order = _ORDERS.get(fmt.name)
    if order is None or a.ndim != len(order):
        raise RuntimeError(f"required rank {4 if fmt is channels_last else 5} tensor to use "
                           f"{fmt.name} format")
    from . import caching_allocator
    inverse = np.argsort(order)
    t = np.transpose(a, order)
    # into an allocator block made in this order: copying a result into a block later reads
    # the order from the strides, which NumPy leaves ambiguous for size-1 dims
    out = caching_allocator.empty(t.shape, a.dtype)
    out[...] = t
    return out.transpose(inverse)


def format_strides(shape, fmt):
    """The strides (in elements) of a dense tensor of `shape` laid out in memory format `fmt`
    (as PyTorch counts them for an empty one: past a size-0 dim the contiguous strides go on as
    if it were 1, the channels-last ones become 0)."""
    order = _ORDERS.get(fmt.name)
    if order is None:
        order, floor = tuple(range(len(shape))), 1
    else:
        floor = 0
    if len(order) != len(shape):
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt.name} format")
    strides = [0] * len(shape)
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(shape[d], floor)
    return tuple(strides)


def is_non_overlapping_and_dense(shape, strides):
    """PyTorch's is_non_overlapping_and_dense: the elements fill a block of memory exactly, in
    some order of the dims (a tensor of fewer than two elements always does)."""
    if 0 in shape:
        return True
    expected = 1
    for stride, size in sorted((st, n) for n, st in zip(shape, strides) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def is_contiguous_as(t, fmt):
    order = _ORDERS.get(fmt.name)
    if fmt is preserve_format:   # asks, as PyTorch's check does, for the default layout
        return t.is_contiguous()
    if order is None or t.dim() != len(order):
        return False if order is not None else t.is_contiguous()
    expected = 1
    strides = t.stride()
    for d in reversed(order):
        size = t._size[d]
        if size != 1 and strides[d] != expected:
            return False
        expected *= size
    return True


# ---- which format a tensor (or a kernel's NumPy array) is in ---------------------------------
def _strides_like_channels_last(sizes, strides):
    """PyTorch's is_channels_last_strides_2d/3d: the strides, read from the channel dim out
    through the spatial dims to the batch dim, never decrease (size-1 dims are let through,
    an N111 tensor is not channels-last)."""
    nd = len(sizes)
    if nd not in (4, 5) or strides[1] == 0:
        return False
    order = (1, 3, 2, 0) if nd == 4 else (1, 4, 3, 2, 0)
    lowest = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < lowest:
            return False
        if d == 0 and lowest == strides[1]:
            return False
        lowest = strides[d]
        if sizes[d] > 1:
            lowest *= sizes[d]
    return True


def suggest_memory_format(t):
    """Tensor.suggest_memory_format(): channels_last(_3d) when the strides look so (the
    format the layout-aware kernels -- convolution, batch norm, pooling -- keep), else
    contiguous_format."""
    size = t._size
    if len(size) in (4, 5) and _strides_like_channels_last(size, t.stride()):
        return channels_last if len(size) == 4 else channels_last_3d
    return contiguous_format


def array_is_channels_last(a, ndim=4):
    """suggest_memory_format() is channels_last for a 4-d NumPy array `a` (ndim 5:
    channels_last_3d for a 5-d one)."""
    if a.ndim != ndim or a.flags.c_contiguous:
        return False
    return _strides_like_channels_last(a.shape, tuple(s // a.itemsize for s in a.strides))


def nhwc(a):
    """The (N, H, W, C) view of an (N, C, H, W) array, copied only when its memory is not
    laid out so already."""
    v = a.transpose(0, 2, 3, 1)
    return v if v.flags.c_contiguous else np.ascontiguousarray(v)


def empty_like_array(a, dtype=None):
    """An uninitialized caching-allocator block of `a`'s shape in `a`'s dimension order (what
    an elementwise kernel writes a permuted input's result into: PyTorch's outputs keep the
    input's memory format)."""
    from . import caching_allocator
    dtype = a.dtype if dtype is None else dtype
    if a.ndim < 2 or a.flags.c_contiguous:
        return caching_allocator.empty(a.shape, dtype)
    order = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))
    return caching_allocator.empty([a.shape[d] for d in order], dtype).transpose(np.argsort(order))
