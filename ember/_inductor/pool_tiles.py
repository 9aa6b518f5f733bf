"""2x2 max pooling over tiling windows, lowered for the generated code (a compile-time
lowering of `max_pool2d_with_indices` and its backward).

With kernel == stride == 2, no padding and dilation 1 (LeNet's and most CNNs' pooling) the
windows tile the input: viewed as (M, oh, 2, ow, 2) every window is one (2, 2) block, so the
maximum and its PyTorch index need no window views or position loop. The first maximum in
row-major order, as the kernel picks it (ties: the earlier position wins), is a tournament:
within each window row the right element wins only when strictly greater, then the lower row
wins only when its winner is strictly greater. The flat index is the window's origin, plus W
for the lower row, plus 1 for the right column. A NaN anywhere (PyTorch's rule: the last NaN
wins) sends the call back to the kernel.

The backward is the kernel's scatter for windows that do not overlap (one assignment of each
gradient at its flat index, zeros elsewhere) into a caching-allocator block rather than fresh
np.zeros pages, with each plane's offset computed once per shape: 1.5-2x faster on LeNet's
pooling gradients. (Four masked writes into the (2, 2) blocks were slower than the scatter.)

The generated code uses both only after they reproduced the kernels' results bit for bit on
the capture run's tensors (codegen.py).
"""
import numpy as np
from .._core.float8 import as_strided

from .._core.caching_allocator import empty as _empty

_origins = {}
_plane_offsets = {}


def applies(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Whether the lowering handles this call of max_pool2d_with_indices (x: an array)."""
    def pair(v, default=None):
        v = list(v) if v else default
        return None if v is None else (v * 2 if len(v) == 1 else v)
    return (pair(kernel_size) == [2, 2] and pair(stride, pair(kernel_size)) == [2, 2]
            and pair(padding) == [0, 0] and pair(dilation) == [1, 1] and not ceil_mode
            and x.ndim in (3, 4) and x.dtype in (np.float32, np.float64)
            and x.shape[-1] >= 2 and x.shape[-2] >= 2 and x.size > 0)


def _origin(oh, ow, w):
    """The flat input index of each window's first element, (oh, ow) int64."""
    key = (oh, ow, w)
    o = _origins.get(key)
    if o is None:
        o = _origins[key] = np.arange(oh)[:, None] * (2 * w) + np.arange(ow)[None, :] * 2
    return o


def _tiles(a, h, w):
    """a (..., h, w) as (M, oh, 2, ow, 2): the 2x2 blocks (a view; rows/columns past the last
    whole window are left out)."""
    oh, ow = h // 2, w // 2
    m = a.size // (h * w)
    s = a.strides
    return as_strided(
        a, (m, oh, 2, ow, 2), (s[-1] * h * w, 2 * s[-2], s[-2], 2 * s[-1], s[-1]))


def max_pool_tiles(x, fallback):
    """(values, indices) of 2x2 max pooling of x (..., H, W); `fallback()` gives the kernel's
    (as arrays) for inputs this does not take: non-contiguous, or holding a NaN."""
    if not x.flags.c_contiguous:
        return fallback()
    h, w = x.shape[-2:]
    oh, ow = h // 2, w // 2
    t = _tiles(x, h, w)
    left, right = t[..., 0], t[..., 1]                  # (M, oh, 2, ow)
    row = np.maximum(left, right)
    col = np.greater(right, left).view(np.uint8)        # each row's winner is the right one
    upper, lower = row[:, :, 0], row[:, :, 1]
    shape = x.shape[:-2] + (oh, ow)
    values = np.maximum(upper, lower, out=_empty(shape, x.dtype).reshape(upper.shape))
    if np.isnan(values).any():
        return fallback()
    down = np.greater(lower, upper).view(np.uint8)      # the lower row's winner wins
    c0 = col[:, :, 0]
    right_won = np.bitwise_xor(c0, col[:, :, 1])
    right_won &= down
    right_won ^= c0                                     # the winning row's column
    idx = np.multiply(down, w, out=_empty(shape, np.int64).reshape(upper.shape),
                      dtype=np.int64)
    idx += right_won
    idx += _origin(oh, ow, w)
    return values.reshape(shape), idx.reshape(shape)


def max_pool_tiles_backward(g, indices, input_shape):
    """The input gradient of max pooling whose windows do not overlap: g and indices
    (..., oh, ow), the input's shape (..., H, W) -> each gradient at its flat index in its
    plane, +0.0 elsewhere."""
    oh, ow = g.shape[-2:]
    size = input_shape[-1] * input_shape[-2]
    m = g.size // (oh * ow)
    key = (m, size)
    offsets = _plane_offsets.get(key)
    if offsets is None:
        offsets = _plane_offsets[key] = (np.arange(m) * size)[:, None]
    out = _empty(tuple(input_shape), g.dtype)
    out.fill(0)
    flat = np.add(indices.reshape(m, oh * ow), offsets)
    out.reshape(-1)[flat.reshape(-1)] = g.reshape(-1)
    return out
