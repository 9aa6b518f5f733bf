"""Convolution kernels (CPU and Meta): PyTorch's `aten::convolution` for 1, 2 and 3 spatial
dims, plain and transposed, and `im2col`/`col2im` (F.unfold / F.fold).

Note [Convolution as one matrix product]
----------------------------------------
A convolution multiplies every window of the (zero-padded) input by the same weights. Lay the
windows out as the columns of a matrix and the whole convolution is one GEMM, which BLAS runs at
full speed (Caffe's im2col):

    input (N, C, H, W) --pad--> windows view (C, kh, kw, N, oh, ow)    an as_strided view: no copy
                              --copy-->    columns (C*kh*kw, N*oh*ow)  the only big copy
    weight (O, C, kh, kw) ------------>    (O, C*kh*kw)
    output = weight @ columns           -> (O, N*oh*ow) -> (N, O, oh, ow)

Groups split C and O into G blocks and make it G products (one batched matmul). The other two
products of a convolution are the same matrices the other way round:

    grad_weight  = (columns @ grad_output.T).T        columns built again from the input
    grad_input   = weight.T @ grad_output  --col2im-->  (N, C, H, W)

col2im adds each column back onto the window it came from. Windows overlap, so it accumulates:
one strided `+=` per kernel position (9 for a 3x3 kernel), each over the whole batch -- never
`np.add.at`, never a loop over pixels, channels or samples. With stride 1 the input gradient is
a convolution itself (of the padded grad_output with the flipped kernel), and is computed so.

A transposed convolution is the adjoint of a convolution: its forward is the convolution's input
gradient, its input gradient is a convolution, and its weight gradient is a convolution's weight
gradient with input and grad_output swapped. So the three functions `_conv`,
`_conv_input_grad` and `_conv_weight_grad` serve all six products, and the two backward ops
(`_convolution_backward_input/_weight`) are linear in both arguments: their own derivatives are
convolutions again, which gives double backward (see derivatives.py).
"""
import enum
import time

import numpy as np

from .._core import caching_allocator
from .._core import dtype as D
from .._core.memory_format import (channels_last, channels_last_3d, suggest_memory_format,
                                   nhwc, array_is_channels_last, copy_in_format,
                                   format_strides)
from . import _parallel
from ._parallel import contiguous, matmul as _parallel_matmul, parallel_for
from .._dispatch.dispatcher import impl
from .._core.tensor import _wrap, _meta
from .elementwise import not_implemented

_as_strided = np.lib.stride_tricks.as_strided


# ---- shapes and checks ------------------------------------------------------------------------
def conv_output_size(in_size, kernel, stride, padding, dilation):
    return tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                 for i, k, s, p, d in zip(in_size, kernel, stride, padding, dilation))


def conv_transpose_output_size(in_size, kernel, stride, padding, dilation, output_padding):
    return tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1
                 for i, k, s, p, d, op in zip(in_size, kernel, stride, padding, dilation,
                                              output_padding))


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _per_dim(output_padding, stride, dilation):
    """'output_padding_height: 1 ... dilation_width: 1' as PyTorch words it; a 1-d convolution
    runs as a 2-d one of height 1, so it names a height too."""
    if len(stride) == 1:
        output_padding, stride, dilation = (0, *output_padding), (1, *stride), (1, *dilation)
    dims = ("depth", "height", "width")[3 - len(stride):]
    return " ".join(f"{name}_{d}: {v}" for name, values in
                    (("output_padding", output_padding), ("stride", stride), ("dilation", dilation))
                    for d, v in zip(dims, values))


def _check_params(stride, padding, dilation, groups, output_padding, transposed):
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if transposed:
        if any(op < 0 for op in output_padding):
            raise RuntimeError("negative output_padding is not supported")
        if any(op >= max(s, d) for op, s, d in zip(output_padding, stride, dilation)):
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               f"but got {_per_dim(output_padding, stride, dilation)}")


def check_convolution(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups):
    """PyTorch's checks (ConvUtils.h, Convolution.cpp): the output shape, or RuntimeError
    naming the shapes. See Note [Empty convolutions] for inputs without elements."""
    nd = weight.dim() - 2
    if nd < 1:
        raise RuntimeError("weight should have at least three dimensions")
    _check_params(stride, padding, dilation, groups, output_padding, transposed)
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-"
                           f"dimensional weight {_fmt(weight.shape)}, but got {input.dim()}-"
                           f"dimensional input of size {_fmt(input.shape)} instead")
    # PyTorch checks a convolution's bias first, a transposed convolution's weight first
    if not transposed and bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({D.c_type_name(input.dtype)}) and bias type "
                           f"({D.c_type_name(bias.dtype)}) should be the same")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {D.scalar_type_name(input.dtype)} but found "
                           f"{D.scalar_type_name(weight.dtype)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({D.c_type_name(input.dtype)}) and bias type "
                           f"({D.c_type_name(bias.dtype)}) should be the same")
    c_in = input.shape[1]
    w = tuple(weight.shape)
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {_fmt(w)} instead")
    if not transposed:
        if w[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size {_fmt(w)} "
                               "instead")
        if c_in != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_fmt(w)}, expected "
                               f"input{_fmt(input.shape)} to have {w[1] * groups} channels, but "
                               f"got {c_in} channels instead")
        c_out = w[0]
    else:
        if c_in != w[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_fmt(w)}, expected "
                               f"input{_fmt(input.shape)} to have {w[0]} channels, but got "
                               f"{c_in} channels instead")
        if w[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size {_fmt(w)} "
                               "instead")
        c_out = w[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != c_out):
        raise RuntimeError(f"Given weight of size {_fmt(w)}, expected bias to be 1-dimensional "
                           f"with {c_out} elements, but got bias of size {_fmt(bias.shape)} "
                           "instead")
    spatial, kernel = tuple(input.shape[2:]), w[2:]
    if transposed:
        out = conv_transpose_output_size(spatial, kernel, stride, padding, dilation,
                                         output_padding)
    else:
        padded = tuple(i + 2 * p for i, p in zip(spatial, padding))
        effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
        if any(e > p for e, p in zip(effective, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, effective))}). Kernel size can't be "
                               "greater than actual input size")
        out = conv_output_size(spatial, kernel, stride, padding, dilation)
    if input.shape[0] == 0 or c_in == 0:
        return _empty_convolution_shape(input, weight, bias, c_out, out)
    if 0 in input.shape:
        shape = input.shape if nd > 1 else input.shape[:2] + (1,) + input.shape[2:]
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input "
                           f"shape: {_fmt(shape)}")
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, spatial))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, out))}). Output size is too small")
    return (input.shape[0], c_out) + out


# Note [Empty convolutions]
# --------------------------
# An input with no samples or no channels skips the kernels, as PyTorch's "Empty" backend does:
# the result is the empty tensor of the output shape -- with no channels at all when the input
# has none, whatever the weight's out_channels -- and the gradients are zeros of the inputs'
# shapes (the bias's too, though the output has no channel for it). PyTorch builds that empty
# result as `input * weight.view(-1)[0] + bias[0]` (or `input.view(-1) * weight.view(-1)`
# without channels), so an empty batch with an empty weight or bias fails there, with
# IndexError; and any other input without elements (an empty spatial dim) is refused.
def _empty_convolution_shape(input, weight, bias, c_out, out):
    if input.shape[1] == 0:
        c_out = 0
    elif weight.numel() == 0 or (bias is not None and bias.numel() == 0):
        raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
    shape = (input.shape[0], c_out) + tuple(out)
    if any(o < 0 for o in out):
        raise RuntimeError(f"invalid shape dimension {min(out)} for the empty convolution "
                           f"result of input {_fmt(input.shape)} and weight "
                           f"{_fmt(weight.shape)}")
    return shape


# Note [Convolution backends]
# ---------------------------
# PyTorch picks one of several implementations ("backends") per call and names its choice in
# torch._C._select_conv_backend, a test hook. ember has one implementation (the products below)
# and no mkldnn, nnpack, xnnpack or cuDNN, so its answer is the backend PyTorch's CPU build picks
# when those are off: Empty for an input without samples or channels, else by rank (a 1-d
# convolution runs as a 2-d one of height 1), transposition and dilation.
class ConvBackend(enum.IntEnum):
    """torch._C._ConvBackend, with PyTorch's numbering."""
    CudaDepthwise2d = 0
    CudaDepthwise3d = 1
    Cudnn = 2
    CudnnTranspose = 3
    Empty = 4
    Miopen = 5
    MiopenDepthwise = 6
    MiopenTranspose = 7
    Mkldnn = 8
    MkldnnEmpty = 10
    NnpackSpatial = 11
    Overrideable = 12
    Slow2d = 13
    Slow3d = 14
    SlowDilated2d = 15
    SlowDilated3d = 16
    SlowTranspose2d = 17
    SlowTranspose3d = 18
    Winograd3x3Depthwise = 19
    Xnnpack2d = 20
    Mps = 21

    __str__ = enum.Enum.__str__      # "_ConvBackend.Slow2d", as pybind11 prints it


ConvBackend.__name__ = ConvBackend.__qualname__ = "_ConvBackend"


def select_conv_backend(input, weight, bias, stride, padding, dilation, transposed,
                        output_padding, groups, bias_sizes=None):
    """The backend PyTorch's CPU build (mkldnn and nnpack off) runs this convolution with, after
    the same argument checks as the convolution itself (Note [Convolution backends])."""
    nd = weight.dim() - 2
    stride, padding, dilation, output_padding = (
        _expand(v, nd, name) for v, name in ((stride, "stride"), (padding, "padding"),
                                             (dilation, "dilation"),
                                             (output_padding, "output_padding")))
    check_convolution(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups)
    if input.shape[0] == 0 or input.shape[1] == 0:
        return ConvBackend.Empty
    dilated = any(d != 1 for d in dilation)
    three_d = input.dim() == 5
    if transposed:
        return ConvBackend.SlowTranspose3d if three_d else ConvBackend.SlowTranspose2d
    if three_d:
        return ConvBackend.SlowDilated3d if dilated else ConvBackend.Slow3d
    return ConvBackend.SlowDilated2d if dilated else ConvBackend.Slow2d


def _expand(value, nd, name):
    """An int[] argument of length 1 stands for all `nd` dims, as PyTorch's expand_param_if_needed."""
    value = list(value)
    if len(value) == 1 and nd != 1:
        value = value * nd
    if len(value) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got {name}={value}")
    return tuple(value)


# ---- the three products on NumPy arrays -------------------------------------------------------
def compute_dtype(a):
    """float16/bfloat16 are multiplied in float32 (NumPy has no BLAS for them), others as is."""
    return np.float32 if a.dtype in (np.float16, D.bfloat16._np) else a.dtype


def pad_zeros(x, padding, extra=None):
    """x (N, C, *spatial) with `padding` zeros on both sides of each spatial dim (and `extra`
    more at the end)."""
    extra = extra or (0,) * len(padding)
    if not any(padding) and not any(extra):
        return x
    shape = x.shape[:2] + tuple(s + 2 * p + e for s, p, e in zip(x.shape[2:], padding, extra))
    out = _zeros(shape, x.dtype)
    out[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, x.shape[2:]))] = x
    return out


def windows(xp, kernel, stride, dilation, out):
    """The view (N, C, *kernel, *out) of a padded input: [n, c, k..., o...] is
    xp[n, c, o * stride + k * dilation ...]."""
    st = xp.strides
    return _as_strided(xp, xp.shape[:2] + tuple(kernel) + tuple(out),
                       st[:2] + tuple(s * d for s, d in zip(st[2:], dilation)) +
                       tuple(s * t for s, t in zip(st[2:], stride)), writeable=False)


def _columns(x, kernel, stride, padding, dilation, out, groups):
    """im2col: the windows of x as the columns of (G, C/G * K, N * L)."""
    n = x.shape[0]
    nd = len(kernel)
    win = windows(pad_zeros(x, padding), kernel, stride, dilation, out)
    perm = (1,) + tuple(range(2, 2 + nd)) + (0,) + tuple(range(2 + nd, 2 + 2 * nd))
    return contiguous(win.transpose(perm)).reshape(groups, -1, n * _prod(out))


def _col2im(cols, in_shape, kernel, stride, padding, dilation, out):
    """The adjoint of _columns: cols (C, *kernel, N, *out) added onto the windows of a zero
    input of shape in_shape (N, C, *spatial), one strided += per kernel position. The sums
    are made in a (C, N, ...) buffer, where each position's block of cols is contiguous, and
    returned as an (N, C, ...) view."""
    n, c = in_shape[:2]
    # windows that reach past the padded input (a stride that does not divide it) are cut off
    # by a few extra zeros at the end, sliced away with the padding
    span = tuple((o - 1) * s + d * (k - 1) + 1 for o, k, s, d in zip(out, kernel, stride, dilation))
    padded = tuple(i + 2 * p for i, p in zip(in_shape[2:], padding))
    extra = tuple(max(0, a - b) for a, b in zip(span, padded))
    acc = _zeros((c, n) + tuple(p + e for p, e in zip(padded, extra)), cols.dtype)
    targets = [(pos, tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                           for k, d, o, s in zip(pos, dilation, out, stride)))
               for pos in np.ndindex(*kernel)]

    def accumulate(channels):      # channels: a slice of C, summed in the same order
        a, b = acc[channels[0]], cols[channels[0]]
        for pos, target in targets:
            a[(slice(None), slice(None)) + target] += b[(slice(None),) + pos]
    parallel_for(accumulate, (c,), cols.size)
    crop = (Ellipsis,) + tuple(slice(p, p + i) for p, i in zip(padding, in_shape[2:]))
    return acc[crop].swapaxes(0, 1)


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _grouped(a, groups):
    """A (G*X, ...) array as (G, X, rest)."""
    return a.reshape(groups, a.shape[0] // groups, -1)


def _zeros(shape, dtype):
    """np.zeros in a caching-allocator block (reused pages: no page faults on big buffers)."""
    out = caching_allocator.empty(shape, dtype)
    out.fill(0)
    return out


def _batched(a, b):
    """np.matmul(a, b) into a caching-allocator block, its rows shared over the intra-op
    threads (NumPy's BLAS runs single-threaded under ember: _parallel.py)."""
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    return _parallel_matmul(a, b, caching_allocator.empty(shape, np.result_type(a, b)))


def _matmul(a, b):
    """Batched (G, ., .) products; one group is one plain 2-D product (no batching loop)."""
    return _batched(a[0], b[0])[None] if a.shape[0] == 1 else _batched(a, b)


# Note [1x1 convolutions as plain products]
# -------------------------------------------
# A 1x1 convolution without padding has no windows: each sample's output is weight (O, C)
# times its input (C, L), with L the (strided) pixels. NumPy's matmul runs these N products
# straight on the NCHW arrays -- no im2col copy of the input, no transpose of the result --
# and the input gradient (weight.T @ grad) and the weight gradient (sum over samples of
# grad @ input.T) the same way. With fewer than 1024 pixels per sample (every 1x1 convolution
# of a CIFAR ResNet) the N small products are slower than one big one -- much slower when
# OpenBLAS splits each of them over threads -- and the im2col route is kept.
def _direct_1x1(kernel, padding, out):
    return all(k == 1 for k in kernel) and not any(padding) and _prod(out) >= 1024


def _strided_pixels(x, stride, out, groups):
    """x (N, C, *in) at every stride-th pixel as (N, G, C/G, L): a view when stride is 1."""
    xs = x[(Ellipsis,) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride))]
    return contiguous(xs).reshape(x.shape[0], groups, x.shape[1] // groups, -1)


def _conv_1x1(x, w, stride, out, groups):
    wg = w.reshape(groups, w.shape[0] // groups, -1)                     # (G, O/G, C/G)
    r = _batched(wg, _strided_pixels(x, stride, out, groups))          # (N, G, O/G, L)
    return r.reshape((x.shape[0], w.shape[0]) + tuple(out))


# Note [Depthwise convolution]
# ----------------------------
# With one input channel per group and one output channel per group (groups == C_in == C_out,
# MobileNet's and ConvNeXt's depthwise layers), im2col would copy every input value K times to
# multiply each output channel by only K weights. Instead each kernel tap is one pass over the
# output: out[:, c] += w[c, 0, tap] * x_padded[:, c, tap + stride * o] (a strided view), and
# the gradients are the same passes backwards -- the input gradient adds g * w[tap] onto the
# tap's view of a padded zero buffer, the weight gradient sums g * view per channel. Memory is
# the output's size, not K times the input's.
def _depthwise(w_shape, groups):
    return groups > 1 and w_shape[0] == groups and w_shape[1] == 1


def _tap_view(buf, tap, stride, dilation, out):
    """The elements of a padded buffer (N, C, *padded) that kernel position `tap` meets."""
    return buf[(Ellipsis,) + tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                                   for t, d, s, o in zip(tap, dilation, stride, out))]


def _tap_weights(w, tap, nd):
    """w[:, 0, *tap] shaped (C, 1, ...) to scale a (N, C, *out) view channel by channel."""
    return w[(slice(None), 0) + tap][(slice(None),) + (None,) * nd]


_DEPTHWISE_BLOCK = 1 << 16    # output elements per block: a block and its term stay in cache


def _conv_depthwise(x, w, stride, padding, dilation, out):
    """The taps' passes run block by block over output rows (dim 2), so that a long kernel
    (a 1x255 blur: 255 passes) reads and writes cached blocks, not the whole output each pass
    -- 2-3x faster than whole-output passes."""
    xp = pad_zeros(x, padding)
    r = _zeros(x.shape[:2] + tuple(out), x.dtype)
    taps = [(tap, _tap_weights(w, tap, len(out))) for tap in np.ndindex(*w.shape[2:])]
    rows = max(1, _DEPTHWISE_BLOCK // max(1, r[:, :, 0].size))
    for start in range(0, out[0], rows):
        block = r[:, :, start:start + rows]
        term = np.empty_like(block)
        src = xp[:, :, start * stride[0]:]              # the block's first row starts here
        for tap, weights in taps:
            np.multiply(_tap_view(src, tap, stride, dilation, block.shape[2:]), weights,
                        out=term)
            block += term
    return r


def _conv_depthwise_input_grad(g, w, in_shape, stride, padding, dilation):
    out = g.shape[2:]
    padded = tuple(i + 2 * p for i, p in zip(in_shape[2:], padding))
    gx = _zeros(tuple(in_shape[:2]) + padded, g.dtype)
    for tap in np.ndindex(*w.shape[2:]):
        _tap_view(gx, tap, stride, dilation, out)[...] += g * _tap_weights(w, tap, len(out))
    return gx[(Ellipsis,) + tuple(slice(p, p + i) for p, i in zip(padding, in_shape[2:]))]


def _conv_depthwise_weight_grad(g, x, w_shape, stride, padding, dilation):
    out = g.shape[2:]
    xp = pad_zeros(x, padding)
    dw = _zeros(tuple(w_shape), g.dtype)
    spec = "nc" + "xyz"[:len(out)]
    for tap in np.ndindex(*w_shape[2:]):
        dw[(slice(None), 0) + tap] = np.einsum(f"{spec},{spec}->c", g,
                                               _tap_view(xp, tap, stride, dilation, out))
    return dw


def _conv(x, w, stride, padding, dilation, groups, algorithm=None):
    """Convolution (cross-correlation) of x (N, C, *in) with w (O, C/G, *k) -> (N, O, *out),
    by `algorithm` (see Note [Benchmark mode]) or, without one, the rule of thumb."""
    out = conv_output_size(x.shape[2:], w.shape[2:], stride, padding, dilation)
    if algorithm is None:
        algorithm = "direct_1x1" if _direct_1x1(w.shape[2:], padding, out) else \
            "depthwise" if _depthwise(w.shape, groups) else \
            "winograd" if _winograd_pays(w.shape, x.dtype, stride, dilation, groups) else \
            "nhwc" if _small_maps(w.shape, groups, out) else "im2col"
    if algorithm == "direct_1x1":
        return _conv_1x1(x, w, stride, out, groups)
    if algorithm == "depthwise":  # Note [Depthwise convolution]
        return _conv_depthwise(x, w, stride, padding, dilation, out)
    if algorithm == "nhwc":
        return _nchw(_conv_nhwc(nhwc(x), w, stride, padding, dilation, groups))
    if algorithm == "winograd":
        return _conv_winograd(x, w, padding)
    if groups == 1 and w.shape[0] >= 16 and _prod(w.shape[1:]) >= 16 and _prod(out) >= 256:
        return _conv_per_sample(x, w, stride, padding, dilation, out)
    cols = _columns(x, w.shape[2:], stride, padding, dilation, out, groups)
    return _conv_of_columns(cols, w, x.shape[0], out, groups)


def _conv_per_sample(x, w, stride, padding, dilation, out):
    """_conv of one group by Note [Per-sample products], each sample's columns built just
    before its product, in a buffer of the thread's that stays in cache: the columns of the
    whole batch (k*k times the input) never exist. Two threads: MNIST's second convolution
    15.0 -> 13.6 ms, ResNet-18's at 32x32 26.2 -> 20.4 ms, at 16x16 18.9 -> 16.3 ms; at 8x8
    the products are too small and one big product is faster (16.5 against 17.4 ms). For
    C*K < 16 (a first layer) the copies of a few short rows per sample cost more than the
    columns built at once, and so does the loop for fewer than 16 output channels (LeNet's
    first convolution, 6 of them: 0.83 ms from shared columns, 0.96 ms fused)."""
    n, o = x.shape[0], w.shape[0]
    win = windows(pad_zeros(x, padding), w.shape[2:], stride, dilation, out)  # (N, C, *k, *out)
    w2 = w.reshape(o, -1)
    ck, pixels = w2.shape[1], _prod(out)
    r = caching_allocator.empty((n, o, pixels), np.result_type(w2, x))

    def part(index):
        start, stop = _samples(index, n)
        buf = caching_allocator.empty(win.shape[1:], x.dtype)
        cols = buf.reshape(ck, pixels)
        for i in range(start, stop):
            np.copyto(buf, win[i])
            np.matmul(w2, cols, out=r[i])
    parallel_for(part, (n,), r.size * ck)
    return r.reshape((n, o) + tuple(out))


# Note [Winograd F(2x2, 3x3)]
# ----------------------------
# A stride-1 3x3 convolution computes each 2x2 block of outputs from a 4x4 tile of input
# (tiles overlap by 2). Winograd's minimal filtering does it with 16 products per tile and
# channel pair instead of 36: with the fixed matrices
#
#     B^T = [1  0 -1  0]     G = [ 1    0    0 ]     A^T = [1  1  1  0]
#           [0  1  1  0]         [1/2  1/2  1/2]           [0  1 -1 -1]
#           [0 -1  1  0]         [1/2 -1/2  1/2]
#           [0  1  0 -1]         [ 0    0    1 ]
#
# input tiles become V = B^T d B and kernels U = G g G^T (both 4x4), and the output block is
# A^T [sum over input channels of U * V] A. The channel sums are 16 GEMMs, one per (a, b)
# position of the 4x4 transform: (tiles, C) @ (C, O) -- 4 multiply-adds per output pixel and
# channel pair instead of 9. F(2x2, 3x3) loses only a few float32 ulps (its matrices hold 1/2
# and +-1), well inside PyTorch's tolerance; larger tiles (F(4x4, 3x3)) save more products but
# lose accuracy through their larger transform constants.
#
#     x (N, H, W, C) view --pad, one copy--> tiles d --B^T . B: 20 adds over C-long rows-->
#     V (16, tiles, C) --16 GEMMs with U (16, C, O)--> M (16, tiles, O) --A^T . A: 8 adds-->
#     y (N, 2th, 2tw, O) --one copy--> the output, NCHW or NHWC
#
# The transforms are NumPy adds over whole arrays whose rows are channels (NHWC: each row of
# a tile is C contiguous floats), so they run at memory speed whatever the map size. The
# samples go through in chunks of about _WINOGRAD_ROWS tiles -- a chunk's V and M stay in
# cache and its products are big enough for BLAS -- each thread taking its own chunks; when
# the whole batch is fewer chunks than threads (ResNet's 4x4 maps), each step is shared over
# the threads instead. The kernel transform is one (16, 9) @ (9, O*C) product. Copies between
# NCHW and the NHWC tiles go 16 channels at a time (_copy_channels). One thread, batch 32,
# im2col against Winograd, forward / input gradient / weight gradient (ms): ResNet-18's 64
# channels at 32x32 31.7/31.7/40.0 -> 25.4/25.5/26.1, 128 at 16x16 28.5/23.4/33.6 ->
# 19.5/17.5/18.4, 512 at 4x4 28.0/32.4/28.4 -> 20.4/18.0/29.1; MNIST's 32 -> 64 channels at
# 26x26 16.9/28.2/18.7 -> 17.8/18.9/15.5. With 32 channels at 32x32 the forward loses a little
# (9.8 -> 10.9) and the weight gradient wins (13.1 -> 9.7); below 32 channels it is not used.
_WINOGRAD_G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])
_WINOGRAD_ROWS = 256


# Note [Small maps in NHWC]
# --------------------------
# im2col's copy moves runs of the output's width: 8 floats for LeNet's second convolution
# (12x12 -> 8x8), a NumPy inner loop per 8 elements. The same columns built from an NHWC copy
# of the input move runs of kw*C floats (a window row's pixels with all their channels are
# contiguous there), and the product (N*L, kh*kw*C) @ (kh*kw*C, O) writes the output NHWC,
# copied back to NCHW at the end. With outputs at most 12 wide and 4 or more input channels
# that wins for the forward and the weight gradient (one thread, ms, im2col -> NHWC: LeNet's 6
# -> 16 channels 5x5 forward 1.14 -> 0.60, weight gradient 1.08 -> 0.72; 16 -> 32 3x3 at 8x8
# 0.76 -> 0.44 and 0.75 -> 0.47; ResNet-18's stride-2 256 -> 512 at 8x8, where the product is
# all of it, a tie: 17.0 / 17.3 and 16.9 / 16.2); at 16 wide and more, or from one input
# channel, NCHW's runs are long enough and its columns win (16 -> 32 at 16x16: 3.0 against
# 5.4 forward).
def _small_maps(w_shape, groups, out):
    return len(w_shape) == 4 and groups == 1 and w_shape[1] >= 4 and out[-1] <= 12


def _winograd_applies(w_shape, stride, dilation, groups):
    return (len(w_shape) == 4 and tuple(w_shape[2:]) == (3, 3) and groups == 1 and
            all(s == 1 for s in stride) and all(d == 1 for d in dilation))


def _winograd_pays(w_shape, dtype, stride, dilation, groups):
    """The rule of thumb's choice of Winograd (Note [Winograd F(2x2, 3x3)]): where it applies,
    for 32 channels or more in and out, float32/float64."""
    return (_winograd_applies(w_shape, stride, dilation, groups) and min(w_shape[:2]) >= 32 and
            dtype in (np.float32, np.float64))


def _conv_winograd(x, w, padding):
    """Stride-1 3x3 convolution of x (N, C, H, W) with w (O, C, 3, 3) by F(2x2, 3x3)."""
    out = conv_output_size(x.shape[2:], (3, 3), (1, 1), padding, (1, 1))
    r = caching_allocator.empty((x.shape[0], w.shape[0]) + tuple(out), x.dtype)
    _winograd(x.transpose(0, 2, 3, 1), _winograd_kernel(w), padding, r.transpose(0, 2, 3, 1))
    return r


def _winograd_kernel(w, flipped=False):
    """U = G w G^T for w (O, C, 3, 3) as (16, C, O) -- or, `flipped`, for the kernel of the
    input gradient's convolution (w's taps reversed, its channels swapped) as (16, O, C)."""
    o, c = w.shape[:2]
    g = _WINOGRAD_G.astype(w.dtype)
    kron = np.kron(g, g)                                            # (16, 9)
    u = _parallel_matmul(kron[:, ::-1] if flipped else kron, w.reshape(o * c, 9).T,
                         caching_allocator.empty((16, o * c), w.dtype)).reshape(16, o, c)
    return u if flipped else u.transpose(0, 2, 1)


def _winograd_chunk(n, th, tw):
    """Samples per chunk (about _WINOGRAD_ROWS tiles), and whether the threads take whole
    chunks (else each step is shared over them)."""
    chunk = min(n, -(-_WINOGRAD_ROWS // (th * tw)))
    return chunk, -(-n // chunk) >= _parallel._WORKERS


def _winograd(xt, u, padding, dst):
    """dst (N, oh, ow, O), a view, = the convolution of xt (N, H, W, C), a view, with the
    transformed kernel u (16, C, O)."""
    n, c = xt.shape[0], xt.shape[3]
    o, dt = dst.shape[3], xt.dtype
    th, tw = (dst.shape[1] + 1) // 2, (dst.shape[2] + 1) // 2
    chunk, by_chunks = _winograd_chunk(n, th, tw)
    if by_chunks:
        def part(index):                                            # a thread's own chunks
            start, stop = _samples(index, n)
            bufs = _WinogradBuffers(min(chunk, stop - start), th, tw, c, o, dt)
            for s in range(start, stop, chunk):
                e = min(s + chunk, stop)
                rows = bufs.transform_input(xt[s:e], padding)
                np.matmul(bufs.v[:, :rows], u, out=bufs.m[:, :rows])
                bufs.transform_output(dst[s:e])
        parallel_for(part, (n,), dst.size * c * 9)
        return
    bufs = _WinogradBuffers(n, th, tw, c, o, dt)
    parallel_for(lambda i: bufs.transform_input(xt[i[0]], padding, i[0]), (n,), bufs.v.size * 4)
    _parallel_matmul(bufs.v, u, bufs.m)
    parallel_for(lambda i: bufs.transform_output(dst[i[0]], i[0]), (n,), bufs.m.size * 4)


def _winograd_weight_grad(gt, xt, padding):
    """The weight gradient (O, C, 3, 3) of the convolution of xt (N, H, W, C) whose output
    gradient is gt (N, oh, ow, O) (views): with Z = A g A^T the gradient's 4x4 tiles,
    dU[a, b]^T = Z[a, b]^T V[a, b] summed over all tiles -- 16 GEMMs (O, tiles) @ (tiles, C)
    -- and dw = G^T dU G."""
    n, c = xt.shape[0], xt.shape[3]
    o, dt = gt.shape[3], xt.dtype
    th, tw = (gt.shape[1] + 1) // 2, (gt.shape[2] + 1) // 2
    chunk, by_chunks = _winograd_chunk(n, th, tw)
    if by_chunks:
        def samples(start, stop):
            bufs = _WinogradBuffers(min(chunk, stop - start), th, tw, c, o, dt)
            total, term = np.zeros((16, o, c), dt), np.empty((16, o, c), dt)
            for s in range(start, stop, chunk):
                e = min(s + chunk, stop)
                rows = bufs.transform_input(xt[s:e], padding)
                bufs.transform_grad(gt[s:e])
                np.matmul(bufs.m[:, :rows].transpose(0, 2, 1), bufs.v[:, :rows], out=term)
                total += term
            return total
        du = _sum_by_samples(samples, n, gt.size * c * 9)
    else:
        bufs = _WinogradBuffers(n, th, tw, c, o, dt)
        parallel_for(lambda i: (bufs.transform_input(xt[i[0]], padding, i[0]),
                                bufs.transform_grad(gt[i[0]], i[0])), (n,), bufs.v.size * 4)
        du = _parallel_matmul(bufs.m.transpose(0, 2, 1), bufs.v,
                              caching_allocator.empty((16, o, c), dt))
    g = _WINOGRAD_G.astype(dt)
    # dU^T (16, O*C) read as (O*C, 16) @ G x G (16, 9): (O, C, 3, 3) as it lies
    return _parallel_matmul(du.reshape(16, o * c).T, np.kron(g, g),
                            caching_allocator.empty((o * c, 9), dt)).reshape(o, c, 3, 3)


def _copy_channels(dst, src):
    """dst[...] = src for (N, H, W, C) arrays, one of them an NCHW array's view: copied 16
    channels at a time, so that the NCHW side is read (or written) 16 rows at once -- a whole
    transposing copy steps a page at a time through it (64 channels of 32x32: 6.3 -> 2.3 ms)."""
    if dst.strides[3] == dst.itemsize and src.strides[3] == src.itemsize:
        np.copyto(dst, src)
        return
    for c in range(0, dst.shape[3], 16):
        np.copyto(dst[..., c:c + 16], src[..., c:c + 16])


class _WinogradBuffers:
    """The arrays Winograd's steps go through for up to `n` samples, from caching-allocator
    blocks; each step works on the first k samples of them, or on samples [i]."""

    def __init__(self, n, th, tw, c, o, dt):
        self.th, self.tw = th, tw
        self.xp = _zeros((n, 2 * th + 2, 2 * tw + 2, c), dt)     # padded tiles (zero edges)
        self.r = caching_allocator.empty((4, n, th, 2 * tw + 2, c), dt)   # B^T d
        self.v = caching_allocator.empty((16, n * th * tw, c), dt)         # B^T d B
        self.m = caching_allocator.empty((16, n * th * tw, o), dt)         # products, or Z
        self.s = caching_allocator.empty((8, n, th, tw, o), dt)            # A^T m, or A g
        self.y = caching_allocator.empty((n, 2 * th, 2 * tw, o), dt)       # A^T m A, or g

    def _tiles(self, a, i):
        """a (16, n*tiles, X) as (4, 4, n, th, tw, X), samples [i] of it."""
        return a.reshape(4, 4, -1, self.th, self.tw, a.shape[2])[:, :, i]

    def transform_input(self, x, padding, i=None):
        """v = B^T d B for the samples x (k, H, W, C), into the first k samples (or [i]);
        returns the rows of v they fill."""
        th, tw, k = self.th, self.tw, x.shape[0]
        i = slice(0, k) if i is None else i
        ph, pw = padding
        xp = self.xp[i]
        _copy_channels(xp[:, ph:ph + x.shape[1], pw:pw + x.shape[2]], x)
        d = [xp[:, a:a + 2 * th:2] for a in range(4)]               # the tiles' rows a
        r = self.r[:, i]
        np.subtract(d[0], d[2], out=r[0])
        np.add(d[1], d[2], out=r[1])
        np.subtract(d[2], d[1], out=r[2])
        np.subtract(d[1], d[3], out=r[3])
        e = [r[:, :, :, b:b + 2 * tw:2] for b in range(4)]          # the tiles' columns b
        v = self._tiles(self.v, i)
        np.subtract(e[0], e[2], out=v[:, 0])
        np.add(e[1], e[2], out=v[:, 1])
        np.subtract(e[2], e[1], out=v[:, 2])
        np.subtract(e[1], e[3], out=v[:, 3])
        return k * th * tw

    def transform_output(self, dst, i=None):
        """dst (k, oh, ow, O) = A^T m A of the first k samples (or [i])."""
        th, tw, k = self.th, self.tw, dst.shape[0]
        i = slice(0, k) if i is None else i
        m = self._tiles(self.m, i)
        s = self.s[:, i].reshape((2, 4) + m.shape[2:])
        np.add(m[0], m[1], out=s[0])
        s[0] += m[2]
        np.subtract(m[1], m[2], out=s[1])
        s[1] -= m[3]
        y = self.y[i]
        blocks = y.reshape(k, th, 2, tw, 2, -1).transpose(2, 4, 0, 1, 3, 5)  # [dy, dx]
        np.add(s[:, 0], s[:, 1], out=blocks[:, 0])
        blocks[:, 0] += s[:, 2]
        np.subtract(s[:, 1], s[:, 2], out=blocks[:, 1])
        blocks[:, 1] -= s[:, 3]
        _copy_channels(dst, y[:, :dst.shape[1], :dst.shape[2]])

    def transform_grad(self, g, i=None):
        """m = Z = A g A^T, the 4x4 tiles of the output gradient g (k, oh, ow, O) of the
        first k samples (or [i]): the adjoint of transform_output."""
        th, tw, k = self.th, self.tw, g.shape[0]
        i = slice(0, k) if i is None else i
        y = self.y[i]
        _copy_channels(y[:, :g.shape[1], :g.shape[2]], g)
        y[:, g.shape[1]:] = 0                                       # odd sizes: no output there
        y[:, :, g.shape[2]:] = 0
        blocks = y.reshape(k, th, 2, tw, 2, -1).transpose(2, 4, 0, 1, 3, 5)  # [dy, dx]
        s = self.s[:, i].reshape((4, 2) + blocks.shape[2:])         # A g: [a, dx]
        np.copyto(s[0], blocks[0])
        np.add(blocks[0], blocks[1], out=s[1])
        np.subtract(blocks[0], blocks[1], out=s[2])
        np.negative(blocks[1], out=s[3])
        z = self._tiles(self.m, i)
        np.copyto(z[:, 0], s[:, 0])
        np.add(s[:, 0], s[:, 1], out=z[:, 1])
        np.subtract(s[:, 0], s[:, 1], out=z[:, 2])
        np.negative(s[:, 1], out=z[:, 3])


# Note [Benchmark mode]
# ----------------------
# `ember.backends.cudnn.benchmark = True` does what it does for cuDNN: the first time a
# forward convolution meets a new (input shape, weight shape, stride, padding, dilation,
# groups, dtype) it runs every algorithm that applies -- im2col + GEMM over NCHW, the direct
# per-sample GEMMs of a 1x1 convolution, im2col + GEMM over an NHWC copy, Winograd for a
# stride-1 3x3 one (Note [Winograd F(2x2, 3x3)]) -- times them, and
# uses the fastest for that shape from then on. All of them compute the same sums in different
# orders (results agree to float32 rounding). The choice can differ from run to run (timings
# are noisy), so `ember.backends.cudnn.deterministic = True` keeps the fixed rule of thumb,
# and results bit-for-bit reproducible, as PyTorch's deterministic switch does. Off by
# default, as in PyTorch: on this CPU the rule of thumb was as fast as the timed choice for
# the MNIST and ResNet-18 steps measured, and timing costs each new shape three runs.
_chosen = {}
algorithm_flags = {"benchmark": False, "deterministic": False}   # ember.backends.cudnn's


def _algorithms(x, w, stride, padding, dilation, groups):
    names = ["im2col"]
    if all(k == 1 for k in w.shape[2:]) and not any(padding):
        names.append("direct_1x1")
    if w.ndim == 4:
        names.append("nhwc")
    if _depthwise(w.shape, groups):
        names.append("depthwise")
    if _winograd_applies(w.shape, stride, dilation, groups):
        names.append("winograd")
    return names


def _benchmarked_conv(x, w, stride, padding, dilation, groups):
    if not algorithm_flags["benchmark"] or algorithm_flags["deterministic"]:
        return _conv(x, w, stride, padding, dilation, groups)
    key = (x.shape, w.shape, tuple(stride), tuple(padding), tuple(dilation), groups, x.dtype)
    algorithm = _chosen.get(key)
    if algorithm is not None:
        return _conv(x, w, stride, padding, dilation, groups, algorithm)
    timings = []
    for name in _algorithms(x, w, stride, padding, dilation, groups):
        start = time.perf_counter()
        r = _conv(x, w, stride, padding, dilation, groups, name)
        timings.append((time.perf_counter() - start, name, r))
    _, algorithm, r = min(timings, key=lambda t: t[0])
    _chosen[key] = algorithm
    return contiguous(r)


def _conv_of_columns(cols, w, n, out, groups):
    """The convolution's output (N, O, *out) from the input's columns (G, C/G * K, N * L):
    one product and a transposing copy of its (O, N*L) result, or -- with one group, when a
    sample's pixels are many (Note [Per-sample products]) -- one product per sample, each
    writing its sample's (O, L) block of the output in place."""
    ck, pixels = cols.shape[1], _prod(out)
    if groups == 1 and _per_sample(ck, pixels):
        a = cols.reshape(ck, n, pixels).transpose(1, 0, 2)        # (N, C*K, L)
        w2 = w.reshape(w.shape[0], ck)
        r = caching_allocator.empty((n, w.shape[0], pixels), np.result_type(w2, a))
        parallel_for(lambda i: np.matmul(w2, a[i], out=r[i]), (n,), r.size * ck)
        return r.reshape((n, w.shape[0]) + tuple(out))
    r = _matmul(_grouped(w, groups), cols)                        # (G, O/G, N*L)
    return contiguous(r.reshape((w.shape[0], n) + tuple(out)).swapaxes(0, 1))


def _grad_matrix(g, groups):
    """grad_output (N, O, *out) as (G, O/G, N*L)."""
    n, o = g.shape[:2]
    return contiguous(g.reshape(n, o, -1).swapaxes(0, 1)).reshape(groups, o // groups, -1)


def _conv_input_grad(g, w, in_shape, stride, padding, dilation, groups):
    """The input gradient of _conv (and a transposed convolution's forward): g (N, O, *out),
    w (O, C/G, *k) -> (N, C, *in).

    With stride 1 it is itself a convolution: of g, padded by d*(k-1) - p, with the kernel
    flipped and its in/out channels swapped -- one im2col copy of g instead of col2im's k*k
    accumulating passes over the input, the cheaper of the two when g has no more channels
    than the input. Otherwise: weight.T @ grad, and col2im."""
    kernel = w.shape[2:]
    out = g.shape[2:]
    if _direct_1x1(kernel, padding, out):
        n = g.shape[0]
        wg = w.reshape(groups, w.shape[0] // groups, -1).swapaxes(1, 2)  # (G, C/G, O/G)
        r = _batched(wg, g.reshape(n, groups, g.shape[1] // groups, -1))
        r = r.reshape((n, in_shape[1]) + tuple(out))
        if tuple(out) == tuple(in_shape[2:]):
            return r
        gx = _zeros(in_shape, r.dtype)
        gx[(Ellipsis,) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride))] = r
        return gx
    if _depthwise(w.shape, groups):  # Note [Depthwise convolution]
        return _conv_depthwise_input_grad(g, w, in_shape, stride, padding, dilation)
    full = [d * (k - 1) - p for k, d, p in zip(kernel, dilation, padding)]
    if all(q >= 0 for q in full) and _winograd_pays(w.shape, g.dtype, stride, dilation, groups):
        r = caching_allocator.empty(tuple(in_shape), g.dtype)
        _winograd(g.transpose(0, 2, 3, 1), _winograd_kernel(w, flipped=True), full,
                  r.transpose(0, 2, 3, 1))
        return r
    if all(s == 1 for s in stride) and all(q >= 0 for q in full) and \
            g.shape[1] <= in_shape[1]:
        if groups == 1:
            # (C, O, *k) with every kernel axis flipped, as a view of one copy laid out
            # (O, *k, C): flipping all kernel axes reverses the flattened kernel, and this copy
            # moves runs of C (a copy into (C, O, *k) order moves runs of k*k reversed
            # elements: 7 ms against about 1 for ResNet's 512x512x3x3)
            o, c = w.shape[:2]
            t = np.ascontiguousarray(w.reshape(o, c, -1).transpose(0, 2, 1)[:, ::-1])
            flipped = t.reshape((o,) + tuple(kernel) + (c,)).transpose(
                (w.ndim - 1, 0) + tuple(range(1, w.ndim - 1)))
        else:
            wg = w.reshape((groups, w.shape[0] // groups) + w.shape[1:])
            flipped = np.flip(wg.swapaxes(1, 2), tuple(range(3, w.ndim + 1)))
            flipped = flipped.reshape((-1, w.shape[0] // groups) + tuple(kernel))
        return _benchmarked_conv(g, flipped, stride, full, dilation, groups)
    if _by_shifts(kernel, stride, groups, in_shape[1], out):
        return _input_grad_by_shifts(g, w, in_shape, padding, dilation)
    wg = _grouped(w, groups)                                      # (G, O/G, C/G*K)
    cols = _matmul(wg.swapaxes(1, 2), _grad_matrix(g, groups))    # (G, C/G*K, N*L)
    cols = cols.reshape((in_shape[1],) + tuple(kernel) + (g.shape[0],) + tuple(out))
    return _col2im(cols, in_shape, kernel, stride, padding, dilation, out)


# Note [Input gradient by shifted products]
# ------------------------------------------
# col2im adds k*k blocks of columns onto the input's windows, each a strided += whose rows are
# the output's width long: for LeNet's second convolution (8x8 outputs) that is 25 passes of
# 8-float runs, 2.1 ms of the 2.8 the input gradient took. Instead, each kernel tap (i, j)
# makes its own product, w[:, :, i, j].T @ grad -- (C, O) @ (O, N*L) -- and adds it onto the
# input gradient shifted by the tap. Written over the padded input's rows, flattened, a shift
# is one offset, i*d*Wp + j*d, if grad is first widened from the output's width to the padded
# input's (Wp; the extra columns are zeros, so what they add past a row's end is nothing):
#
#     acc (C, N, Hp*Wp + (kw-1)*d)    acc[:, :, s : s + oh*Wp] += w[:,:,i,j].T @ grad_wide
#        row h: |.....Wp.....|        grad_wide (O, N, oh*Wp): grad's rows padded to Wp
#
# so every add runs over oh*Wp contiguous floats per (channel, sample), and no k*k-times
# columns exist: each tap's product fits in cache. The products are Wp/ow times bigger than
# col2im's, and with very few input channels (C < 4: a (3, O) product per tap) BLAS runs them
# slowly, so this is taken for 2-D stride-1 convolutions of one group, at least 4 input
# channels and outputs at most 16 wide (one thread, ms, col2im -> shifts: LeNet's 6 -> 16
# channels 5x5 at 12x12 1.78 -> 0.88, 16 -> 24 3x3 at 16x16 3.70 -> 2.44; kept on col2im: 3
# -> 16 3x3 at 32x32 2.01 against 2.83, 16 -> 32 5x5 at 64x64 31.0 against 37.6). The sums over
# taps go in col2im's order, so the two agree to the products' rounding.
def _by_shifts(kernel, stride, groups, c, out):
    return len(kernel) == 2 and tuple(stride) == (1, 1) and groups == 1 and c >= 4 and \
        out[1] <= 16


def _input_grad_by_shifts(g, w, in_shape, padding, dilation):
    """The input gradient (N, C, H, W) of a 2-D stride-1 convolution of one group, from
    g (N, O, oh, ow) and w (O, C, kh, kw), by Note [Input gradient by shifted products]."""
    n, o, oh, ow = g.shape
    c = in_shape[1]
    kh, kw = w.shape[2:]
    hp, wp = in_shape[2] + 2 * padding[0], in_shape[3] + 2 * padding[1]
    span = oh * wp
    wide = _zeros((o, n, oh, wp), g.dtype)
    wide[..., :ow] = g.transpose(1, 0, 2, 3)
    wide = wide.reshape(o, n, span)
    taps = w.transpose(2, 3, 1, 0)                                # (kh, kw, C, O)
    acc = _zeros((c, n, hp * wp + (kw - 1) * dilation[1]), np.result_type(g, w))

    def part(index):                                              # a slice of the samples
        rows = index[0]
        grad = wide[:, rows].reshape(o, -1)
        product = caching_allocator.empty((c, grad.shape[1]), acc.dtype)
        shifted = product.reshape(c, -1, span)
        a = acc[:, rows]
        for i in range(kh):
            for j in range(kw):
                s = i * dilation[0] * wp + j * dilation[1]
                np.matmul(taps[i, j], grad, out=product)
                dst = a[:, :, s:s + span]
                np.add(dst, shifted, out=dst)
    parallel_for(part, (n,), c * n * span * kh * kw)
    r = acc[:, :, :hp * wp].reshape(c, n, hp, wp)
    return r[:, :, padding[0]:padding[0] + in_shape[2],
             padding[1]:padding[1] + in_shape[3]].swapaxes(0, 1)


def _conv_weight_grad(g, x, w_shape, stride, padding, dilation, groups, cols=None):
    """The weight gradient of _conv: g (N, O, *out), x (N, C, *in) -> (O, C/G, *k), from the
    input's columns (the forward's, or built again). When the product is long and thin (N*L
    much larger than C*K), OpenBLAS is faster (and steadier under load) with the big matrix
    on the left: (columns @ grad.T).T."""
    if cols is None and _direct_1x1(w_shape[2:], padding, g.shape[2:]):
        gg = g.reshape(g.shape[0], groups, g.shape[1] // groups, -1)   # (N, G, O/G, L)
        xs = _strided_pixels(x, stride, g.shape[2:], groups)            # (N, G, C/G, L)
        return _batched(gg, xs.swapaxes(2, 3)).sum(0).reshape(w_shape)
    if cols is None and _depthwise(w_shape, groups):  # Note [Depthwise convolution]
        return _conv_depthwise_weight_grad(g, x, w_shape, stride, padding, dilation)
    if cols is None and _winograd_pays(w_shape, x.dtype, stride, dilation, groups):
        return _winograd_weight_grad(g.transpose(0, 2, 3, 1), x.transpose(0, 2, 3, 1), padding)
    if cols is None and _small_maps(w_shape, groups, g.shape[2:]):
        return _canonical(np.ascontiguousarray(_conv_weight_grad_nhwc(
            nhwc(g), nhwc(x), w_shape, stride, padding, dilation, groups)))
    ck, pixels = _prod(w_shape[1:]), _prod(g.shape[2:])
    chunk = _CHUNK_BYTES // (ck * pixels * x.itemsize)
    if groups == 1 and 4 * ck > pixels and chunk >= 2 and chunk * pixels >= 1024:
        return _weight_grad_chunked(g, x, w_shape, stride, padding, dilation, chunk, cols)
    if cols is None:
        cols = _columns(x, w_shape[2:], stride, padding, dilation, g.shape[2:], groups)
    if groups == 1 and 4 * ck <= pixels:
        return _weight_grad_per_sample(g, cols, w_shape)
    gm = _grad_matrix(g, groups)                                  # (G, O/G, N*L)
    if cols.shape[2] > cols.shape[1]:
        r = _matmul(cols, gm.swapaxes(1, 2)).swapaxes(1, 2)      # (G, O/G, C/G*K)
    else:
        r = _matmul(gm, cols.swapaxes(1, 2))
    return np.ascontiguousarray(r).reshape(w_shape)


# Note [Per-sample products]
# ----------------------------
# The columns (C*K, N*L) hold each sample's L pixels together, so besides one big product a
# convolution is also N products, one per sample, that need no copy of the result or of
# grad_output: the forward's w (O, C*K) @ cols[:, n] (C*K, L) is sample n's (O, L) output as
# NCHW lays it, and the weight gradient is the sum over samples of g[n] (O, L) @ cols[:, n].T.
# They pay when a sample's products are big enough for BLAS to run at full speed (L >= 512)
# or when the one big product would be long and thin: a first layer's C*K is a few rows (9 for
# one input channel), and one (O, 9) @ (9, N*L) or (9, N*L) @ (N*L, O) product runs at a fifth
# of OpenBLAS's speed, while N products of (9, L) run at full speed. MNIST's first convolution
# (one thread): forward 2.8 -> 1.5 ms, weight gradient 3.3 -> 1.5 ms; with ResNet's 16x16 and
# smaller maps the one big product stays faster. The samples are shared over the threads.
def _samples(index, n):
    """The (start, stop) of the samples a parallel_for part over N covers."""
    s = index[0]
    return (0, n) if s is Ellipsis else (s.start, s.stop)


def _sum_by_samples(fn, n, size):
    """The sum of fn(start, stop) over parallel_for parts of N samples (`size` elements of
    work), added in sample order whatever the threads' timing."""
    parts = {}

    def part(index):
        start, stop = _samples(index, n)
        parts[start] = fn(start, stop)
    parallel_for(part, (n,), size)
    r = None
    for _, p in sorted(parts.items()):
        r = p if r is None else r + p
    return r


def _per_sample(ck, pixels):
    """Whether a product with C*K = `ck` and L = `pixels` runs faster per sample."""
    return pixels >= 512 or 4 * ck <= pixels


def _weight_grad_per_sample(g, cols, w_shape):
    """The weight gradient by Note [Per-sample products]: g (N, O, *out) read as it lies,
    cols (1, C*K, N*L). Each thread sums its own samples; the partial sums are added in
    sample order (the same result for any thread count but the rounding of that last sum)."""
    n, o = g.shape[:2]
    ck = cols.shape[1]
    a = cols.reshape(ck, n, -1).transpose(1, 0, 2)                # (N, C*K, L)
    b = g.reshape(n, o, -1).transpose(0, 2, 1)                    # (N, L, O)
    r = _sum_by_samples(lambda i, j: np.matmul(a[i:j], b[i:j]).sum(0), n, a.size + b.size)
    return np.ascontiguousarray(r.T).reshape(w_shape)


_CHUNK_BYTES = 1400 << 10  # the columns of a chunk of samples: about a core's L2 cache


def _weight_grad_chunked(g, x, w_shape, stride, padding, dilation, chunk, columns=None):
    """The weight gradient (one group) `chunk` samples at a time: the chunk's columns and its
    grad_output, transposed to (O, chunk*L), are built in buffers of the thread's that fit in
    its L2 cache, and their product is added to the thread's sum. The batch's columns (k*k
    times the input) and the (O, N*L) copy of grad_output never exist, and the product reads
    its operands from cache: MNIST's second convolution (columns 0.66 MB a sample, two to a
    chunk) 25.4 -> 23.1 ms on one thread, 16.8 -> 15.1 ms on two. Used when two samples'
    columns fit and a chunk has 1024 pixels or more: larger samples (ResNet's 32x32 maps, 2.4
    MB each) measured no faster than the one product, and with fewer pixels a chunk's product
    is short for the (C*K, O) sum it adds to (ResNet's 8x8 maps, 128 pixels to a chunk: 22 ->
    36 ms; its 4x4 ones 25 -> 60 ms). Given the forward's `columns` (1, C*K, N*L), their
    chunks are multiplied where they lie, in the same order: the same floats."""
    out = g.shape[2:]
    n, o = g.shape[:2]
    ck, pixels = _prod(w_shape[1:]), _prod(out)
    nd = len(out)
    if columns is None:
        win = windows(pad_zeros(x, padding), w_shape[2:], stride, dilation, out)
        win = win.transpose((1,) + tuple(range(2, 2 + nd)) + (0,) +
                            tuple(range(2 + nd, 2 + 2 * nd)))       # (C, *k, N, *out)
    else:
        given = columns.reshape(ck, n, pixels)
    gs = g.reshape(n, o, pixels).swapaxes(0, 1)                      # (O, N, L)
    dtype = np.result_type(g, x)

    def samples(start, stop):
        if columns is None:
            cols = caching_allocator.empty((ck, chunk, pixels), x.dtype)
            cols_view = cols.reshape((-1,) + tuple(w_shape[2:]) + (chunk,) + tuple(out))
        grads = caching_allocator.empty((o, chunk, pixels), g.dtype)
        total, term = np.zeros((ck, o), dtype), np.empty((ck, o), dtype)
        for i in range(start, stop, chunk):
            k = min(chunk, stop - i)
            if columns is None:
                np.copyto(_chunk(cols_view, nd, k), _chunk(win, nd, k, i))
                part_cols = cols[:, :k].reshape(ck, -1)
            else:
                part_cols = given[:, i:i + k].reshape(ck, -1)
            np.copyto(grads[:, :k], gs[:, i:i + k])
            # the long operands' rows on the left: OpenBLAS runs (ck, kL) @ (kL, o) faster
            np.matmul(part_cols, grads[:, :k].reshape(o, -1).T, out=term)
            total += term
        return total
    r = _sum_by_samples(samples, n, g.size * ck)
    return np.ascontiguousarray(r.T).reshape(w_shape)


def _chunk(a, nd, k, start=0):
    """a[..., start:start+k, *out] of an array (..., N, *out) with `nd` trailing dims."""
    return a[(Ellipsis, slice(start, start + k)) + (slice(None),) * nd]


# Note [Channels-last convolution]
# ----------------------------------
# With a channels_last input or weight (PyTorch's rule: either one), a 2-d convolution runs on
# the NHWC layout and returns a channels_last result, as PyTorch's CPU kernels do. A window's
# kh x kw x C values are then contiguous runs of C, so the columns are rows:
#
#     input (N, H, W, C) --pad--> windows view (N, oh, ow, kh, kw, C)    as_strided: no copy
#                              --copy-->  columns (N*oh*ow, kh*kw*C)       one strided copy
#     weight (O, C, kh, kw) ----------->  (kh*kw*C, O)
#     output = columns @ weight        -> (N*oh*ow, O), which *is* the NHWC output
#
# No transpose of the result, and a 1x1 stride-1 convolution needs no copy at all (the
# columns are the input). The weight gradient is columns.T @ grad (grad read as (N*oh*ow, O)),
# and the input gradient grad @ weight.T, added back onto the windows (col2im over NHWC).
# Groups make G products over (G, N*oh*ow, kh*kw*C/G) columns.
def channels_last_2d(input, weight):
    """PyTorch's thnn/mkldnn_conv_use_channels_last: a 4-d input or weight in channels_last."""
    return weight.dim() == 4 and (suggest_memory_format(input) is channels_last or
                                  suggest_memory_format(weight) is channels_last)


def channels_last_3d_conv(input, weight):
    """The same rule for 3-d convolutions: a 5-d input or weight in channels_last_3d. (The
    NDHWC result is a layout copy of the NCDHW computation: PyTorch's strides, not its memory
    traffic. The NHWC im2col generalised to 3 spatial dims measured slower, 40 against 29 ms
    for a (4, 16, 8, 16, 16) 3x3x3 convolution forward + backward: its col2im adds run over
    C-long rows, short for the narrow channels of 3-d networks.)"""
    return weight.dim() == 5 and (suggest_memory_format(input) is channels_last_3d or
                                  suggest_memory_format(weight) is channels_last_3d)


def _result_format(a, b):
    """The memory format of a convolution's results for operands a and b (input or
    grad_output, and weight): channels_last(_3d) by PyTorch's rule, else None."""
    if channels_last_2d(a, b):
        return channels_last
    if channels_last_3d_conv(a, b):
        return channels_last_3d
    return None


def _pad_nhwc(x, padding, extra=(0, 0)):
    if not any(padding) and not any(extra):
        return x
    n, h, w, c = x.shape
    out = _zeros((n, h + 2 * padding[0] + extra[0], w + 2 * padding[1] + extra[1], c), x.dtype)
    out[:, padding[0]:padding[0] + h, padding[1]:padding[1] + w] = x
    return out


def _columns_nhwc(x, kernel, stride, padding, dilation, out, groups):
    """x (N, H, W, C) -> columns (G, N*oh*ow, kh*kw*C/G); a view when nothing is copied."""
    xp = _pad_nhwc(x, padding)
    n, c = x.shape[0], x.shape[3]
    sn, sh, sw, sc = xp.strides
    win = _as_strided(xp, (n,) + tuple(out) + tuple(kernel) + (c,),
                      (sn, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1], sc),
                      writeable=False)
    cols = contiguous(win)
    rows = n * out[0] * out[1]
    if groups == 1:
        return cols.reshape(1, rows, -1)
    cols = cols.reshape(rows, kernel[0] * kernel[1], groups, c // groups).transpose(2, 0, 1, 3)
    return contiguous(cols).reshape(groups, rows, -1)


def _weight_nhwc(w, groups):
    """w (O, C/G, kh, kw) as (G, kh*kw*C/G, O/G)."""
    o = w.shape[0]
    wg = w.reshape((groups, o // groups) + w.shape[1:])           # (G, O/G, C/G, kh, kw)
    return contiguous(wg.transpose(0, 3, 4, 2, 1)).reshape(groups, -1, o // groups)


def _ungroup_rows(r):
    """(G, rows, X) -> (rows, G*X)."""
    if r.shape[0] == 1:
        return r[0]
    return contiguous(r.transpose(1, 0, 2)).reshape(r.shape[1], -1)


def _group_rows(a, groups):
    """(rows, G*X) -> (G, rows, X)."""
    if groups == 1:
        return a[None]
    return a.reshape(a.shape[0], groups, -1).transpose(1, 0, 2)


def _conv_nhwc(x, w, stride, padding, dilation, groups):
    """x (N, H, W, C), w (O, C/G, kh, kw) -> the output (N, oh, ow, O)."""
    out = conv_output_size(x.shape[1:3], w.shape[2:], stride, padding, dilation)
    if _depthwise(w.shape, groups):  # Note [Depthwise convolution]: no K-times columns
        return nhwc(_conv_depthwise(_nchw(x), w, stride, padding, dilation, out))
    if _winograd_pays(w.shape, x.dtype, stride, dilation, groups):
        r = caching_allocator.empty((x.shape[0],) + tuple(out) + (w.shape[0],), x.dtype)
        _winograd(x, _winograd_kernel(w), padding, r)
        return r
    cols = _columns_nhwc(x, w.shape[2:], stride, padding, dilation, out, groups)
    r = _ungroup_rows(_matmul(cols, _weight_nhwc(w, groups)))
    return r.reshape((x.shape[0],) + tuple(out) + (w.shape[0],))


def _conv_input_grad_nhwc(g, w, in_shape, stride, padding, dilation, groups):
    """g (N, oh, ow, O), w (O, C/G, kh, kw) -> the input gradient (N, H, W, C) (in_shape is
    the NCHW shape)."""
    if _depthwise(w.shape, groups):  # Note [Depthwise convolution]
        return nhwc(_conv_depthwise_input_grad(_nchw(g), w, in_shape, stride, padding,
                                               dilation))
    n, c = in_shape[:2]
    kernel, out = w.shape[2:], g.shape[1:3]
    gm = _group_rows(g.reshape(-1, g.shape[3]), groups)                # (G, rows, O/G)
    cols = _matmul(gm, _weight_nhwc(w, groups).swapaxes(1, 2))          # (G, rows, K*C/G)
    if groups > 1:
        cols = cols.reshape(groups, -1, kernel[0] * kernel[1], c // groups).transpose(1, 2, 0, 3)
    cols = cols.reshape((n,) + tuple(out) + tuple(kernel) + (c,))
    span = tuple((o - 1) * s + d * (k - 1) + 1 for o, k, s, d in zip(out, kernel, stride, dilation))
    padded = tuple(i + 2 * p for i, p in zip(in_shape[2:], padding))
    extra = tuple(max(0, a - b) for a, b in zip(span, padded))
    acc = _zeros((n,) + tuple(p + e for p, e in zip(padded, extra)) + (c,), cols.dtype)
    targets = [(pos, tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                           for k, d, o, s in zip(pos, dilation, out, stride)))
               for pos in np.ndindex(*kernel)]

    def accumulate(samples):       # samples: a slice of N, summed in the same order
        a, b = acc[samples[0]], cols[samples[0]]
        for pos, target in targets:
            a[(slice(None),) + target] += b[(slice(None), slice(None), slice(None)) + pos]
    parallel_for(accumulate, (n,), cols.size)
    return acc[:, padding[0]:padding[0] + in_shape[2], padding[1]:padding[1] + in_shape[3]]


def _conv_weight_grad_nhwc(g, x, w_shape, stride, padding, dilation, groups):
    """g (N, oh, ow, O), x (N, H, W, C) -> the weight gradient (O, C/G, kh, kw), in the
    (kh, kw, C/G)-inner layout it is computed in (a channels_last view when G is 1)."""
    if _depthwise(w_shape, groups):  # Note [Depthwise convolution]
        return _conv_depthwise_weight_grad(_nchw(g), _nchw(x), w_shape, stride, padding,
                                           dilation)
    o = w_shape[0]
    kernel = w_shape[2:]
    cols = _columns_nhwc(x, kernel, stride, padding, dilation, g.shape[1:3], groups)
    gm = _group_rows(g.reshape(-1, o), groups)                         # (G, rows, O/G)
    r = _matmul(gm.swapaxes(1, 2), cols)                                # (G, O/G, K*C/G)
    r = r.reshape((o,) + tuple(kernel) + (w_shape[1],))
    return r.transpose(0, 3, 1, 2)


# ---- kernels ----------------------------------------------------------------------------------
_CONV_DTYPES = (D.uint8, D.int8, D.int16, D.int32, D.int64, D.float16, D.bfloat16, D.float32,
                D.float64)
_WIDE_DTYPES = (D.int64, D.float16, D.bfloat16, D.float32, D.float64)


def _check_dtype(dt, transposed, dilation, nd):
    """PyTorch's CPU kernels for integer convolutions: all integer dtypes for a plain one,
    only int64 for a dilated or a transposed one (the kernels' names are in the message)."""
    if transposed and dt not in _WIDE_DTYPES:
        raise not_implemented(f"slow_conv_transpose{max(nd, 2)}d_out_cpu", dt)
    if any(d != 1 for d in dilation) and dt not in _WIDE_DTYPES:
        raise not_implemented("slow_conv_dilated<>", dt)
    if dt not in _CONV_DTYPES:
        raise not_implemented("slow_conv2d_cpu", dt)


def _arrays(*tensors):
    """The tensors' arrays in the dtype the products are computed in."""
    dt = compute_dtype(tensors[0]._np)
    return [t._np.astype(dt, copy=False) for t in tensors]


@impl("convolution", "CPU")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    shape = check_convolution(input, weight, bias, stride, padding, dilation, transposed,
                              output_padding, groups)
    if 0 in input.shape:             # Note [Empty convolutions]
        return _wrap(np.zeros(shape, input.dtype._np))
    _check_dtype(input.dtype, transposed, dilation, weight.dim() - 2)
    x, w = _arrays(input, weight)
    if 0 in shape:
        return _wrap(np.zeros(shape, input.dtype._np))
    if transposed:
        r = np.ascontiguousarray(_conv_input_grad(x, w, shape, stride, padding, dilation,
                                                  groups))
        if channels_last_2d(input, weight):
            return _wrap(_nchw(nhwc(_add_bias(r, bias, input.dtype))))
    elif channels_last_2d(input, weight):
        r = _conv_nhwc(nhwc(x), w, stride, padding, dilation, groups)
        return _wrap(_nchw(_add_bias_nhwc(r, bias, input.dtype)))
    else:
        r = _benchmarked_conv(x, w, stride, padding, dilation, groups)
    if channels_last_3d_conv(input, weight):
        return _wrap(copy_in_format(_add_bias(r, bias, input.dtype), channels_last_3d))
    return _wrap(_canonical(_add_bias(r, bias, input.dtype)))


def _canonical(a):
    """NumPy calls an array with a size-1 dimension contiguous whatever that dimension's stride
    (a (1, C, ...) batch, or an NHWC result viewed as NCHW); PyTorch's contiguous strides are
    the products of the later sizes."""
    return a.reshape(-1).reshape(a.shape) if 1 in a.shape and a.flags.c_contiguous else a


def _nchw(a):
    """The (N, C, H, W) view of an NHWC array: a channels_last result."""
    return a.transpose(0, 3, 1, 2)


def _add_bias_nhwc(r, bias, dtype):
    if bias is not None:
        r += bias._np.astype(r.dtype)
    return r.astype(dtype._np, copy=False)


def _add_bias(r, bias, dtype):
    if bias is not None:
        b = bias._np.astype(r.dtype).reshape((-1,) + (1,) * (r.ndim - 2))
        parallel_for(lambda i: np.add(r[i], b, out=r[i]), r.shape[:1], r.size)
    return np.ascontiguousarray(r, dtype=dtype._np)


@impl("convolution", "Meta")
def convolution_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                     groups):
    shape = check_convolution(input, weight, bias, stride, padding, dilation, transposed,
                              output_padding, groups)
    fmt = _result_format(input, weight)
    return _meta(shape, input.dtype, None if fmt is None else format_strides(shape, fmt),
                 device=input.device)


# Note [Keeping the forward's columns for the weight gradient]
# -------------------------------------------------------------
# The weight gradient multiplies grad_output by the very columns the forward built from the
# input. `_convolution_with_columns` returns them as a second output, which its derivative
# saves (`result1`) and hands to `_convolution_backward_weight`, as PyTorch's old THNN
# convolutions did with their saved `finput`. F.conv* no longer use it: since the columns
# come from caching-allocator blocks (no page faults), building them again in backward costs
# 1-3% of a MNIST or ResNet-18 training step, while keeping them held every training
# convolution's columns (k*k times its input) from forward to backward -- a ResNet-18 CIFAR
# step at batch 32 peaked at 947 MB RSS with them and 437 MB without (torch: 722 MB). The op
# stays for code that wants the trade. Transposed convolutions build no columns of their input.
def _columns_shape(input, weight, out, groups):
    k = _prod(weight.shape[2:])
    return (groups, input.shape[1] // groups * k, input.shape[0] * _prod(out))


@impl("_convolution_with_columns", "CPU")
def convolution_with_columns(input, weight, bias, stride, padding, dilation, groups):
    nd = weight.dim() - 2
    shape = check_convolution(input, weight, bias, stride, padding, dilation, False, [0] * nd,
                              groups)
    out = shape[2:]
    if 0 in input.shape:             # Note [Empty convolutions]
        return (_wrap(np.zeros(shape, input.dtype._np)),
                _wrap(np.zeros(_columns_shape(input, weight, out, groups),
                               compute_dtype(input._np))))
    _check_dtype(input.dtype, False, dilation, nd)
    x, w = _arrays(input, weight)
    if 0 in shape:
        return (_wrap(np.zeros(shape, input.dtype._np)),
                _wrap(np.zeros(_columns_shape(input, weight, out, groups), x.dtype)))
    cols = _columns(x, w.shape[2:], stride, padding, dilation, out, groups)
    r = _conv_of_columns(cols, w, x.shape[0], out, groups)
    return _wrap(_add_bias(r, bias, input.dtype)), _wrap(cols)


@impl("_convolution_with_columns", "Meta")
def convolution_with_columns_meta(input, weight, bias, stride, padding, dilation, groups):
    nd = weight.dim() - 2
    shape = check_convolution(input, weight, bias, stride, padding, dilation, False, [0] * nd,
                              groups)
    cols_dtype = D.float32 if input.dtype in (D.float16, D.bfloat16) else input.dtype
    return (_meta(shape, input.dtype, device=input.device),
            _meta(_columns_shape(input, weight, shape[2:], groups), cols_dtype,
                  device=input.device))


@impl("_convolution_backward_input", "CPU")
def convolution_backward_input(grad_output, weight, input_size, stride, padding, dilation,
                               transposed, output_padding, groups):
    g, w = _arrays(grad_output, weight)
    if 0 in g.shape or 0 in w.shape:
        return _wrap(np.zeros(input_size, grad_output.dtype._np))
    if channels_last_2d(grad_output, weight):
        gl = nhwc(g)
        if transposed:
            r = _conv_nhwc(gl, w, stride, padding, dilation, groups)
            r = r[(slice(None), *map(slice, input_size[2:]))]
        else:
            r = _conv_input_grad_nhwc(gl, w, tuple(input_size), stride, padding, dilation,
                                      groups)
        return _wrap(_nchw(contiguous(r, grad_output.dtype._np)))
    if transposed:
        # an output_padding of a stride or more gives output positions no input reached: the
        # convolution of the gradient runs past the input there, and those sums are dropped
        r = _conv(g, w, stride, padding, dilation, groups)
        r = r[(slice(None), slice(None), *map(slice, input_size[2:]))]
    else:
        r = _conv_input_grad(g, w, tuple(input_size), stride, padding, dilation, groups)
    if channels_last_3d_conv(grad_output, weight):
        return _wrap(copy_in_format(r.astype(grad_output.dtype._np, copy=False),
                                    channels_last_3d))
    return _wrap(_canonical(contiguous(r, grad_output.dtype._np)))


@impl("_convolution_backward_weight", "CPU")
def convolution_backward_weight(grad_output, input, weight_size, stride, padding, dilation,
                                transposed, output_padding, groups, columns=None):
    """With `columns` (the forward's, see Note [Keeping the forward's columns ...]) the input
    itself is not read."""
    g, x = _arrays(grad_output, input)
    if 0 in g.shape or 0 in x.shape:
        return _wrap(np.zeros(weight_size, grad_output.dtype._np))
    if not transposed and columns is None and len(weight_size) == 4 and (
            array_is_channels_last(x) or array_is_channels_last(g)):
        r = _conv_weight_grad_nhwc(nhwc(g), nhwc(x), tuple(weight_size), stride, padding,
                                   dilation, groups)
        return _wrap(_weight_layout(r, grad_output.dtype._np))
    if transposed:
        # the weight (C_in, O/G, *k) of a transposed convolution pairs input channels with the
        # output's windows: a convolution's weight gradient with the two swapped
        r = _conv_weight_grad(x, g, tuple(weight_size), stride, padding, dilation, groups)
        if len(weight_size) == 4 and (array_is_channels_last(x) or array_is_channels_last(g)):
            return _wrap(_weight_layout(r, grad_output.dtype._np))
    else:
        r = _conv_weight_grad(g, x, tuple(weight_size), stride, padding, dilation, groups,
                              None if columns is None else columns._np)
    if len(weight_size) == 5 and (array_is_channels_last(x, 5) or array_is_channels_last(g, 5)):
        return _wrap(copy_in_format(r.astype(grad_output.dtype._np, copy=False),
                                    channels_last_3d))
    return _wrap(np.ascontiguousarray(r, dtype=grad_output.dtype._np))


def _weight_layout(r, dtype):
    """A weight gradient computed in channels-last order is returned channels_last, as
    PyTorch's: a convolution that runs channels-last (its input or its weight is) gives its
    weight gradient that layout, whatever the weight's own."""
    if r.dtype == dtype and array_is_channels_last(r):
        return r
    return copy_in_format(r.astype(dtype, copy=False), channels_last)


@impl("_convolution_backward_input", "Meta")
def convolution_backward_input_meta(grad_output, weight, input_size, *rest):
    fmt = _result_format(grad_output, weight)
    return _meta(tuple(input_size), grad_output.dtype,
                 None if fmt is None else format_strides(tuple(input_size), fmt),
                 device=grad_output.device)


@impl("_convolution_backward_weight", "Meta")
def convolution_backward_weight_meta(grad_output, input, weight_size, *rest):
    strides = None
    if len(weight_size) == 4 and channels_last in (
            suggest_memory_format(input), suggest_memory_format(grad_output)):
        strides = format_strides(tuple(weight_size), channels_last)
    return _meta(tuple(weight_size), grad_output.dtype, strides, device=grad_output.device)


# ---- im2col / col2im (F.unfold / F.fold) ------------------------------------------------------
_UNFOLD_DTYPES = (D.bool, D.float16, D.bfloat16, D.float32, D.float64, D.complex64,
                  D.complex128)


def _pairs(**values):
    for k, v in values.items():
        if len(v) != 2:
            raise RuntimeError(f"It is expected {k} equals to 2, but got size {len(v)}")


def _im2col_shape(self, kernel_size, dilation, padding, stride):
    _pairs(kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    if self.dim() not in (3, 4) or 0 in self.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{_fmt(self.shape)}")
    if any(k <= 0 for k in kernel_size):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel_size[0]} kernel_width: {kernel_size[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{stride[0]} stride_width: {stride[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    out = conv_output_size(self.shape[-2:], kernel_size, stride, padding, dilation)
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input with spatial size ({self.shape[-2]}, "
                           f"{self.shape[-1]}), kernel_size=({kernel_size[0]}, "
                           f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), "
                           f"padding=({padding[0]}, {padding[1]}), calculated shape of the array "
                           f"of sliding blocks as ({out[0]}, {out[1]}), but its components must "
                           "be at least one.")
    c = self.shape[-3] * kernel_size[0] * kernel_size[1]
    return tuple(self.shape[:-3]) + (c, out[0] * out[1]), out


@impl("im2col", "CPU")
def im2col(self, kernel_size, dilation, padding, stride):
    shape, out = _im2col_shape(self, kernel_size, dilation, padding, stride)
    if self.dtype not in _UNFOLD_DTYPES:
        raise not_implemented("im2col_out_cpu", self.dtype)
    x = self._np if self.dim() == 4 else self._np[None]
    win = windows(pad_zeros(x, padding), kernel_size, stride, dilation, out)  # (N, C, kh, kw, ..)
    return _wrap(np.ascontiguousarray(win).reshape(shape))


def _col2im_shape(self, output_size, kernel_size, dilation, padding, stride):
    _pairs(output_size=output_size, kernel_size=kernel_size, dilation=dilation,
           padding=padding, stride=stride)
    if self.dim() not in (2, 3) or 0 in self.shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possible 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{_fmt(self.shape)}")
    k = kernel_size[0] * kernel_size[1]
    if any(v <= 0 for v in kernel_size) or any(v <= 0 for v in stride) or \
            any(v <= 0 for v in dilation) or any(v < 0 for v in padding):
        raise RuntimeError("col2im: kernel_size, stride and dilation should be greater than "
                           "zero and padding non-negative")
    if self.shape[-2] % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={self.shape[-2]} and "
                           f"kernel_size=({kernel_size[0]}, {kernel_size[1]}).")
    blocks = conv_output_size(output_size, kernel_size, stride, padding, dilation)
    given = (f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size="
             f"({kernel_size[0]}, {kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), "
             f"padding=({padding[0]}, {padding[1]}), stride=({stride[0]}, {stride[1]}), ")
    if blocks[0] * blocks[1] != self.shape[-1]:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={self.shape[-1]}.")
    if any(b < 1 for b in blocks):  # two negative counts can multiply to the input's size
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), which is too small (non-positive)")
    c = self.shape[-2] // k
    return tuple(self.shape[:-2]) + (c,) + tuple(output_size), blocks


@impl("col2im", "CPU")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    shape, blocks = _col2im_shape(self, output_size, kernel_size, dilation, padding, stride)
    if self.dtype not in _UNFOLD_DTYPES:
        raise not_implemented("col2im_out_cpu", self.dtype)
    a = self._np if self.dim() == 3 else self._np[None]
    n = a.shape[0]
    c = shape[-3]
    # (N, C*K, L) -> (C, *kernel, N, *blocks), the layout _col2im adds up
    cols = a.reshape((n, c) + tuple(kernel_size) + tuple(blocks))
    cols = cols.transpose(1, 2, 3, 0, 4, 5)
    dt = np.int64 if a.dtype == np.bool_ else compute_dtype(a)
    r = _col2im(cols.astype(dt, copy=False), (n, c) + tuple(output_size), kernel_size, stride,
                padding, dilation, blocks)
    r = r != 0 if a.dtype == np.bool_ else r
    return _wrap(np.ascontiguousarray(r.reshape(shape), dtype=a.dtype))


@impl("im2col", "Meta")
def im2col_meta(self, kernel_size, dilation, padding, stride):
    return _meta(_im2col_shape(self, kernel_size, dilation, padding, stride)[0], self.dtype,
                 device=self.device)


@impl("col2im", "Meta")
def col2im_meta(self, output_size, kernel_size, dilation, padding, stride):
    return _meta(_col2im_shape(self, output_size, kernel_size, dilation, padding, stride)[0],
                 self.dtype, device=self.device)
