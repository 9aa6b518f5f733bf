"""A convolution's input gradient through col2im, laid out so every accumulation is long.

The CPU kernel (ember/_aten/conv.py, Note [Convolution as one matrix product]) computes
`cols = weight.T @ grad_output` as (C, *kernel, N, *out) and adds each kernel position's block
onto its window of a zero (C, N, *in) buffer. Each of those k*k strided `+=` runs NumPy's inner
loop over one output row (`ow` elements: 8 in LeNet's second convolution), so loop overhead,
not arithmetic, is the cost. Here the product is the kernel's (same operands, same layout: the
same floats) and only the accumulation buffer changes, to (C, *in, N): a kernel position's
window is then runs of N (or `ow * N`) elements. The additions are the kernel's, in its order
(kernel positions in row-major order onto zeros), so the sums are the same floats too.

The generated code uses it only after it reproduced the kernel's result bit for bit on the
capture run's tensors (codegen.py), so a kernel that changes its algorithm is never silently
contradicted.
"""
import numpy as np

from .._aten.conv import _by_shifts
from .._core.caching_allocator import empty as _empty


def applies(grad_output, weight, input_size, stride, padding, dilation, transposed,
            output_padding, groups):
    """Whether this lowering handles the call (on the capture run's arrays): a plain (not
    transposed, ungrouped) float convolution of C-contiguous arrays with a kernel wider than 1,
    where the kernel takes its col2im route (with stride 1 and no more grad_output channels
    than input channels it convolves instead; channels_last arrays take its NHWC route)."""
    kernel = weight.shape[2:]
    if all(s == 1 for s in stride) and grad_output.shape[1] <= input_size[1] and \
            all(d * (k - 1) - p >= 0 for k, d, p in zip(kernel, dilation, padding)):
        return False
    if _by_shifts(kernel, stride, groups, input_size[1], grad_output.shape[2:]):
        return False  # the kernel's shifted products (no col2im to reproduce)
    return (not transposed and groups == 1 and grad_output.dtype in (np.float32, np.float64)
            and weight.dtype == grad_output.dtype and len(weight.shape) >= 3
            and grad_output.flags.c_contiguous and weight.flags.c_contiguous
            and any(k > 1 for k in weight.shape[2:]) and 0 not in grad_output.shape
            and 0 not in weight.shape)


def conv_input_grad(g, w, input_size, stride, padding, dilation, fallback=None):
    """g (N, O, *out), w (O, C, *kernel) -> the input gradient (N, C, *in), C-contiguous;
    `fallback()` gives the kernel's (as an array) when g or w is not C-contiguous (the kernel
    takes its channels_last route then)."""
    if fallback is not None and not (g.flags.c_contiguous and w.flags.c_contiguous):
        return fallback()
    n, o = g.shape[:2]
    out = g.shape[2:]
    kernel = w.shape[2:]
    c = w.shape[1]
    # the kernel's product, operand for operand: (C*K, N*L)
    gm = _empty((o, n) + tuple(out), g.dtype)
    np.copyto(gm, g.swapaxes(0, 1))
    cols = np.matmul(w.reshape(o, -1).T, gm.reshape(o, -1),
                     out=_empty((c * _prod(kernel), gm.size // o), g.dtype))
    # viewed as (C, *kernel, *out, N)
    cols = np.moveaxis(cols.reshape((c,) + tuple(kernel) + (n,) + tuple(out)), 1 + len(kernel),
                       -1)
    span = tuple((q - 1) * s + d * (k - 1) + 1
                 for q, k, s, d in zip(out, kernel, stride, dilation))
    padded = tuple(i + 2 * p for i, p in zip(input_size[2:], padding))
    size = tuple(max(a, b) for a, b in zip(span, padded))
    acc = _empty((c,) + size + (n,), g.dtype)
    acc.fill(0)
    every = slice(None)
    for pos in np.ndindex(*kernel):
        target = tuple(slice(k * d, k * d + (q - 1) * s + 1, s)
                       for k, d, q, s in zip(pos, dilation, out, stride))
        acc[(every,) + target + (every,)] += cols[(every,) + pos]
    crop = acc[(every,) + tuple(slice(p, p + i) for p, i in zip(padding, input_size[2:]))]
    result = _empty(tuple(input_size), g.dtype)
    np.copyto(result, np.moveaxis(crop, -1, 0))  # (C, *in, N) -> (N, C, *in)
    return result


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n
