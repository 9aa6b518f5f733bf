"""A convolution's forward with its columns kept (`_convolution_with_columns`, see
conv_columns.py), with a cheaper im2col copy, and the bias (and a following ReLU) applied to
the output as it is copied out of the product.

The kernel (ember/_aten/conv.py, Note [Convolution as one matrix product]) copies the windows
of the input into columns (C*kh*kw, N*oh*ow) in one strided copy whose inner loop is one
output row (`ow` elements: 8 in LeNet's second convolution), so loop overhead, not bandwidth,
is its cost. For a stride-1 convolution the same columns come from two copies with long runs:

    S[c, j, n, h, :]        = x[n, c, h, j : j + ow]        one row of ow per (c, j, n, h)
    cols[c, i, j, n, :, :]  = S[c, j, n, i : i + oh, :]     one run of oh*ow per (c, i, j, n)

The columns are the kernel's element for element (a copy computes nothing), the product is the
kernel's call on the same operands, and the bias is added to the (O, N, ...) product in place
before it is copied out as (N, O, ...) -- the same single rounding per element. The generated
code uses it only after both outputs reproduced the kernel's bit for bit on the capture run's
tensors (codegen.py).
"""
import numpy as np

from .._core.caching_allocator import empty as _empty
from .._aten.conv import pad_zeros
from .._aten._parallel import matmul as _parallel_matmul, parallel_for

_as_strided = np.lib.stride_tricks.as_strided


def applies(x, w, b, stride, padding, dilation, groups):
    """Whether this lowering handles the call (x, w, b: the capture run's arrays or None): a
    2-d, ungrouped, stride-1, undilated float convolution of C-contiguous arrays."""
    return (x.ndim == 4 and w.ndim == 4 and groups == 1 and list(stride) == [1, 1]
            and list(dilation) == [1, 1] and len(padding) == 2 and x.dtype == w.dtype
            and x.dtype in (np.float32, np.float64) and x.flags.c_contiguous
            and w.flags.c_contiguous and (b is None or b.dtype == x.dtype)
            and 0 not in x.shape and 0 not in w.shape)


def columns(x, kh, kw):
    """im2col of a padded x (N, C, H, W), stride 1: (1, C*kh*kw, N*oh*ow)."""
    n, c, h, w = x.shape
    oh, ow = h - kh + 1, w - kw + 1
    sn, sc, sh, sw = x.strides
    rows = _empty((c, kw, n, h, ow), x.dtype)
    _copy(rows, _as_strided(x, (c, kw, n, h, ow), (sc, sw, sn, sh, sw), writeable=False))
    cols = _empty((c, kh, kw, n, oh * ow), x.dtype)
    s = rows.strides
    _copy(cols, _as_strided(rows, (c, kh, kw, n, oh * ow),
                            (s[0], s[3], s[1], s[2], rows.itemsize), writeable=False))
    return cols.reshape(1, c * kh * kw, n * oh * ow)


def _copy(out, src):
    """np.copyto(out, src), split over the intra-op threads as the kernel's copies are."""
    parallel_for(lambda i: np.copyto(out[i], src[i]), out.shape, out.size)


def conv_with_columns(x, w, b, padding, fallback=None, relu=False):
    """(output (N, O, oh, ow), columns (1, C*kh*kw, N*oh*ow)) of a stride-1 convolution;
    `fallback()` gives the kernel's (as arrays) when x or w is not C-contiguous (the kernel
    may take another route then, e.g. channels_last).

    The epilogue, per part of the output (one per intra-op thread, as the kernel splits its
    copies): the bias added to the product (O, N, oh, ow) in place and, with relu=True, the
    ReLU that follows the convolution in the graph (codegen.py) applied in place too, then the
    part copied out as (N, O, oh, ow). NumPy runs a binary ufunc whose output is laid out
    differently from its input several times slower than a copy, so the arithmetic runs in
    the product's own layout and only the copy transposes. Same ufuncs on the same values as
    the kernel and the ReLU: the same bits. (The product is split by rows over the threads as
    the kernel's is, so the bits match at any thread count.)"""
    if fallback is not None and not (x.flags.c_contiguous and w.flags.c_contiguous):
        if not relu:
            return fallback()
        y, cols = fallback()
        return np.maximum(y, 0, out=y), cols
    o, _, kh, kw = w.shape
    xp = pad_zeros(x, tuple(padding))
    n = x.shape[0]
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    cols = columns(xp, kh, kw)
    # the kernel's product, split by rows over the intra-op threads as the kernel splits it
    r = _parallel_matmul(w.reshape(o, -1), cols[0], _empty((o, n * oh * ow), x.dtype))
    r = r.reshape(o, n, oh, ow).swapaxes(0, 1)
    y = _empty((n, o, oh, ow), x.dtype)
    bias = None if b is None else np.broadcast_to(b.reshape(-1, 1, 1), y.shape)

    def epilogue(i):
        part = r[i]
        if bias is not None:
            np.add(part, bias[i], out=part)
        if relu:
            np.maximum(part, 0, out=part)
        np.copyto(y[i], part)
    parallel_for(epilogue, y.shape, y.size)
    return y, cols
