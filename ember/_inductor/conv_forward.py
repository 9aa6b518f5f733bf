"""A convolution's forward with its columns kept (`_convolution_with_columns`, see
conv_columns.py), with a cheaper im2col copy and the bias added on the way out.

The kernel (ember/_aten/conv.py, Note [Convolution as one matrix product]) copies the windows
of the input into columns (C*kh*kw, N*oh*ow) in one strided copy whose inner loop is one
output row (`ow` elements: 8 in LeNet's second convolution), so loop overhead, not bandwidth,
is its cost. For a stride-1 convolution the same columns come from two copies with long runs:

    S[c, j, n, h, :]        = x[n, c, h, j : j + ow]        one row of ow per (c, j, n, h)
    cols[c, i, j, n, :, :]  = S[c, j, n, i : i + oh, :]     one run of oh*ow per (c, i, j, n)

The columns are the kernel's element for element (a copy computes nothing), the product is the
kernel's call on the same operands, and the bias is added while the (O, N, ...) product is
written out as (N, O, ...) -- one pass where the kernel copies and then adds, the same single
rounding per element. The generated code uses it only after both outputs reproduced the
kernel's bit for bit on the capture run's tensors (codegen.py).
"""
import numpy as np

from .._core.caching_allocator import empty as _empty
from .._aten.conv import pad_zeros

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
    np.copyto(rows, _as_strided(x, (c, kw, n, h, ow), (sc, sw, sn, sh, sw), writeable=False))
    cols = _empty((c, kh, kw, n, oh * ow), x.dtype)
    s = rows.strides
    np.copyto(cols, _as_strided(rows, (c, kh, kw, n, oh * ow),
                                (s[0], s[3], s[1], s[2], rows.itemsize), writeable=False))
    return cols.reshape(1, c * kh * kw, n * oh * ow)


EPILOGUE_BYTES = 1 << 17  # samples per epilogue chunk: their output stays in L2 for the ReLU


def conv_with_columns(x, w, b, padding, fallback=None, relu=False):
    """(output (N, O, oh, ow), columns (1, C*kh*kw, N*oh*ow)) of a stride-1 convolution;
    `fallback()` gives the kernel's (as arrays) when x or w is not C-contiguous (the kernel
    may take another route then, e.g. channels_last).

    relu=True fuses the ReLU that follows the convolution into the epilogue (codegen.py):
    the output is written out a few samples at a time, bias added while transposing, and the
    ReLU runs in place on those samples while they are still in cache -- the same two ufuncs
    as the separate calls, so the same bits, without a second pass over the whole output."""
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
    r = np.matmul(w.reshape(o, -1), cols[0], out=_empty((o, n * oh * ow), x.dtype))
    r = r.reshape(o, n, oh, ow).swapaxes(0, 1)
    y = _empty((n, o, oh, ow), x.dtype)
    bias = None if b is None else b.reshape(-1, 1, 1)
    step = n if not relu else max(1, EPILOGUE_BYTES // (o * oh * ow * x.itemsize))
    for lo in range(0, n, step):
        ys = y[lo:lo + step]
        if bias is None:
            np.copyto(ys, r[lo:lo + step])
        else:
            np.add(r[lo:lo + step], bias, out=ys)
        if relu:
            np.maximum(ys, 0, out=ys)
    return y, cols
