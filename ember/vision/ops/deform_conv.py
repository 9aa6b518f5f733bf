"""Deformable convolution v1/v2 (Dai et al. 2017, Zhu et al. 2018; torchvision.ops.deform_conv2d),
added to ember through the operator-extension API as `vision::deform_conv2d`: a schema, a CPU
kernel, a fake (Meta) kernel, and a backward that is itself an op. docs/extending.md walks
through this file.

A convolution reads, for output pixel p and kernel tap k, the input at p*stride - padding +
k*dilation. A deformable convolution adds a learned fractional displacement per (p, k) --
`offset` -- and reads there by bilinear interpolation, optionally scaled by a learned `mask`
(v2). The rest is an ordinary convolution, done as in ember's conv kernel (Note [Convolution as
one matrix product]):

    input (B, C, H, W), offset (B, 2*G*K, OH, OW), mask (B, G*K, OH, OW)
        --bilinear sampling, vectorised over B, G, K, OH, OW-->  columns (C*K, B*OH*OW)
    weight (O, C/groups, kh, kw) -> (O, C*K/groups); output = weight @ columns + bias

G = offset_groups splits the channels into blocks that share one offset field; K = kh*kw; the
offset channel 2*(g*K + k) is the row (y) shift of tap k in group g, the next one the column (x)
shift; mask channel g*K + k scales it.

Bilinear sampling of a point (y, x) mixes its four neighbour pixels with weights (1-ly)(1-lx),
(1-ly)lx, ly(1-lx), ly*lx (ly, lx the fractional parts); neighbours outside the map count as 0,
and a point at or beyond one pixel outside reads 0. Because the weights are products, the
backward needs only the same four neighbours:
    d col / d input[neighbour] = mask * weight_of_neighbour           (scatter-add: bincount)
    d col / d y = mask * sum_neighbours value * d weight / d y         (d/dy of (1-ly) is -1)
    d col / d mask = the sampled value
"""
import math

import numpy as np

import ember
from ember import library, nn
from ._utils import _np, _pair

__all__ = ["deform_conv2d", "DeformConv2d"]

library.define("vision::deform_conv2d",
               "(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
               "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, "
               "SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, "
               "bool use_mask) -> Tensor")
library.define("vision::_deform_conv2d_backward",
               "(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, "
               "Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, "
               "SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, "
               "bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)")


# ---- shapes and checks ------------------------------------------------------------------------
def _output_size(input, weight, stride, pad, dilation):
    (h, w), (kh, kw) = input.shape[-2:], weight.shape[-2:]
    return ((h + 2 * pad[0] - (dilation[0] * (kh - 1) + 1)) // stride[0] + 1,
            (w + 2 * pad[1] - (dilation[1] * (kw - 1) + 1)) // stride[1] + 1)


def _check(input, weight, offset, mask, stride, pad, dilation, groups, offset_groups, use_mask):
    """torchvision's argument checks (RuntimeError, as its TORCH_CHECKs); returns (OH, OW)."""
    kh, kw = weight.shape[-2:]
    out_h, out_w = _output_size(input, weight, stride, pad, dilation)
    checks = (  # (ok, message): messages are lambdas, built only on failure
        (input.dim() == 4, lambda: f"input must be 4D, got {input.dim()}D"),
        (offset.dim() == 4, lambda: f"offset must be 4D, got {offset.dim()}D"),
        (not use_mask or mask.dim() == 4, lambda: f"mask must be 4D, got {mask.dim()}D"),
        (weight.dim() == 4, lambda: f"weight must be 4D, got {weight.dim()}D"),
        (kh > 0 and kw > 0, lambda: f"weight_h: {kh} weight_w: {kw}"),
        (min(stride) > 0, lambda: f"stride_h: {stride[0]} stride_w: {stride[1]}"),
        (min(pad) >= 0, lambda: f"pad_h: {pad[0]} pad_w: {pad[1]}"),
        (min(dilation) > 0, lambda: f"dilation_h: {dilation[0]} dilation_w: {dilation[1]}"),
        (weight.size(1) * groups == input.size(1),
         lambda: f"weight.size(1) * n_weight_grps == input.size(1): {weight.size(1)} * "
                 f"{groups} != {input.size(1)}"),
        (weight.size(0) % groups == 0, lambda: "weight.size(0) % n_weight_grps == 0"),
        (offset.size(1) == offset_groups * 2 * kh * kw,
         lambda: f"offset.shape[1] is not valid: got: {offset.size(1)} expected: "
                 f"{offset_groups * 2 * kh * kw}"),
        (not use_mask or mask.size(1) == offset_groups * kh * kw,
         lambda: f"mask.shape[1] is not valid: got: {mask.size(1)} expected: "
                 f"{offset_groups * kh * kw}"),
        (input.size(1) % offset_groups == 0, lambda: "input.size(1) % n_offset_grps == 0"),
        (offset.size(0) == input.size(0), lambda: "invalid batch size of offset"),
        (not use_mask or mask.size(0) == input.size(0), lambda: "invalid batch size of mask"),
        (out_h > 0 and out_w > 0,
         lambda: f"Calculated output size too small - out_h: {out_h} out_w: {out_w}"),
        (tuple(offset.shape[2:]) == (out_h, out_w),
         lambda: f"offset output dims: ({offset.size(2)}, {offset.size(3)}) - computed "
                 f"output dims: ({out_h}, {out_w})"),
        (not use_mask or tuple(mask.shape[2:]) == (out_h, out_w),
         lambda: f"mask output dims: ({mask.size(2)}, {mask.size(3)}) - computed output "
                 f"dims: ({out_h}, {out_w})"))
    for ok, message in checks:
        if not ok:
            raise RuntimeError(message())
    return out_h, out_w


# ---- bilinear sampling ------------------------------------------------------------------------
class _Samples:
    """Where each (batch, offset group, tap, output pixel) samples the input, as four
    neighbours with their bilinear weights, the weights' derivatives and the values read."""

    def __init__(self, x, offset, kernel, stride, pad, dilation, offset_groups):
        b, c, h, w = x.shape
        kh, kw = kernel
        g, k = offset_groups, kh * kw
        out_h, out_w = offset.shape[2:]
        off = offset.reshape(b, g, k, 2, out_h, out_w)
        tap_y = np.repeat(np.arange(kh) * dilation[0], kw)[:, None, None]
        tap_x = np.tile(np.arange(kw) * dilation[1], kh)[:, None, None]
        y = off[:, :, :, 0] + (tap_y + (np.arange(out_h) * stride[0] - pad[0])[:, None])
        x_ = off[:, :, :, 1] + (tap_x + (np.arange(out_w) * stride[1] - pad[1]))
        y = y.reshape(b, g, 1, -1)  # (B, G, 1, K*OH*OW): broadcasts over a group's channels
        x_ = x_.reshape(b, g, 1, -1)
        inside = (y > -1) & (y < h) & (x_ > -1) & (x_ < w)
        y0, x0 = np.floor(y), np.floor(x_)
        ly, lx = y - y0, x_ - x0
        hy, hx = 1 - ly, 1 - lx
        y0, x0 = y0.astype(np.int64), x0.astype(np.int64)
        self.shape = (b, g, c // g, h * w)
        planes = x.reshape(self.shape)
        # per neighbour: its row and column, its bilinear weight and that weight's derivatives
        # by y and x; stored as (flat index, in-image mask, weight, d/dy, d/dx, value read)
        self.corners = []
        for yc, xc, wt, dy, dx in ((y0, x0, hy * hx, -hx, -hy), (y0, x0 + 1, hy * lx, -lx, hy),
                                   (y0 + 1, x0, ly * hx, hx, -ly),
                                   (y0 + 1, x0 + 1, ly * lx, lx, ly)):
            valid = inside & (yc >= 0) & (yc < h) & (xc >= 0) & (xc < w)
            index = np.where(valid, yc * w + xc, 0)
            value = np.take_along_axis(planes, index, axis=3) * valid  # (B, G, Cg, K*P)
            self.corners.append((index, valid, wt, dy, dx, value))

    def values(self):
        """The bilinear samples, (B, G, Cg, K*OH*OW)."""
        return sum(wt * value for _, _, wt, _, _, value in self.corners)


def _weight_matrix(weight, groups):
    """(O, C/groups, kh, kw) -> (groups, O/groups, C/groups*K): one GEMM operand per group."""
    o, cw, kh, kw = weight.shape
    return weight.reshape(groups, o // groups, cw * kh * kw)


def _masked(samples, mask, use_mask):
    """(B, G, Cg, K*P) samples scaled by the (B, G*K, OH, OW) mask (v2), or as they are (v1)."""
    if not use_mask:
        return samples
    b, g = samples.shape[:2]
    return samples * mask.reshape(b, g, 1, -1)


def _to_gemm(cols, k, groups):
    """(B, G, Cg, K*P) -> the GEMM's (groups, C/groups*K, B*P) columns."""
    b, g, cg, kp = cols.shape
    p = kp // k
    cols = cols.reshape(b, g * cg * k, p).transpose(1, 0, 2)  # (C*K, B, P)
    return cols.reshape(groups, g * cg * k // groups, b * p)


def _from_gemm(cols, b, g, k):
    """The inverse of _to_gemm."""
    ck, bp = cols.shape[0] * cols.shape[1], cols.shape[2]
    return cols.reshape(ck, b, bp // b).transpose(1, 0, 2).reshape(b, g, -1, k * (bp // b))


# ---- kernels ----------------------------------------------------------------------------------
def _unpack(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w):
    return (stride_h, stride_w), (pad_h, pad_w), (dilation_h, dilation_w)


@library.impl("vision::deform_conv2d", "cpu")
def _deform_conv2d_cpu(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                       dilation_h, dilation_w, groups, offset_groups, use_mask):
    stride, pad, dilation = _unpack(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w)
    out_h, out_w = _check(input, weight, offset, mask, stride, pad, dilation, groups,
                          offset_groups, use_mask)
    x, w = _np(input), _np(weight)
    b, k = x.shape[0], w.shape[2] * w.shape[3]
    samples = _Samples(x, _np(offset), w.shape[2:], stride, pad, dilation, offset_groups)
    cols = _to_gemm(_masked(samples.values(), _np(mask), use_mask), k, groups)
    out = np.matmul(_weight_matrix(w, groups), cols)  # (groups, O/groups, B*P)
    out = out.reshape(w.shape[0], b, out_h, out_w).transpose(1, 0, 2, 3)
    out = out + _np(bias)[:, None, None]
    return ember.from_numpy(np.ascontiguousarray(out, dtype=x.dtype))


@library.impl("vision::_deform_conv2d_backward", "cpu")
def _deform_conv2d_backward_cpu(grad, input, weight, offset, mask, bias, stride_h, stride_w,
                                pad_h, pad_w, dilation_h, dilation_w, groups, offset_groups,
                                use_mask):
    stride, pad, dilation = _unpack(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w)
    x, w, off, m, g_out = _np(input), _np(weight), _np(offset), _np(mask), _np(grad)
    b, k = x.shape[0], w.shape[2] * w.shape[3]
    samples = _Samples(x, off, w.shape[2:], stride, pad, dilation, offset_groups)
    values = samples.values()
    go = g_out.transpose(1, 0, 2, 3).reshape(groups, w.shape[0] // groups, -1)  # (grp, O/g, B*P)
    w_mat = _weight_matrix(w, groups)

    grad_weight = np.matmul(go, _to_gemm(_masked(values, m, use_mask), k, groups)
                            .transpose(0, 2, 1)).reshape(w.shape)
    grad_bias = g_out.sum(axis=(0, 2, 3))
    grad_cols = _from_gemm(np.matmul(w_mat.transpose(0, 2, 1), go), b, offset_groups, k)

    if use_mask:
        mask_b = m.reshape(b, offset_groups, 1, -1)
        grad_mask = (grad_cols * values).sum(axis=2).reshape(m.shape)
        grad_cols = grad_cols * mask_b
    else:
        grad_mask = np.zeros_like(m)

    nb, ng, cg, hw = samples.shape
    plane = (np.arange(nb * ng * cg) * hw).reshape(nb, ng, cg, 1)
    grad_input = np.zeros(x.size, dtype=np.float64)
    grad_y = np.zeros(grad_cols.shape[:2] + grad_cols.shape[3:], dtype=x.dtype)
    grad_x = np.zeros_like(grad_y)
    for index, valid, wt, dy, dx, value in samples.corners:
        grad_input += np.bincount((plane + index).ravel(),
                                  weights=(grad_cols * (wt * valid)).ravel(), minlength=x.size)
        through = (grad_cols * value).sum(axis=2)  # d loss / d weight_of_this_neighbour
        grad_y += through * dy[:, :, 0]
        grad_x += through * dx[:, :, 0]
    out_h, out_w = off.shape[2:]
    grad_offset = np.stack([grad_y.reshape(b, offset_groups, k, out_h, out_w),
                            grad_x.reshape(b, offset_groups, k, out_h, out_w)], axis=3)
    return tuple(ember.from_numpy(np.ascontiguousarray(a, dtype=x.dtype)) for a in (
        grad_input.reshape(x.shape), grad_weight, grad_offset.reshape(off.shape), grad_mask,
        grad_bias))


@library.register_fake("vision::deform_conv2d")
def _deform_conv2d_fake(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                        dilation_h, dilation_w, groups, offset_groups, use_mask):
    stride, pad, dilation = _unpack(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w)
    out_h, out_w = _check(input, weight, offset, mask, stride, pad, dilation, groups,
                          offset_groups, use_mask)
    return input.new_empty((input.size(0), weight.size(0), out_h, out_w))


@library.register_fake("vision::_deform_conv2d_backward")
def _deform_conv2d_backward_fake(grad, input, weight, offset, mask, bias, *args):
    return (input.new_empty(input.shape), weight.new_empty(weight.shape),
            offset.new_empty(offset.shape), mask.new_empty(mask.shape),
            bias.new_empty(bias.shape))


def _setup_context(ctx, inputs, output):
    input, weight, offset, mask, bias, *params = inputs
    ctx.save_for_backward(input, weight, offset, mask, bias)
    ctx.params = params


def _backward(ctx, grad):
    grads = ember.ops.vision._deform_conv2d_backward(grad, *ctx.saved_tensors, *ctx.params)
    grad_input, grad_weight, grad_offset, grad_mask, grad_bias = grads
    return (grad_input, grad_weight, grad_offset, grad_mask, grad_bias) + (None,) * 9


library.register_autograd("vision::deform_conv2d", _backward, setup_context=_setup_context)


# ---- the Python API ---------------------------------------------------------------------------
def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0),
                  dilation=(1, 1), mask=None):
    """Deformable convolution. input (B, C, H, W); offset (B, 2*G*kh*kw, OH, OW) with G
    offset groups; weight (O, C/groups, kh, kw); mask (B, G*kh*kw, OH, OW) or None (v1)."""
    out_channels = weight.shape[0]
    use_mask = mask is not None
    if mask is None:
        mask = ember.zeros((input.shape[0], 1), device=input.device, dtype=input.dtype)
    if bias is None:
        bias = ember.zeros(out_channels, device=input.device, dtype=input.dtype)
    stride_h, stride_w = _pair(stride)
    pad_h, pad_w = _pair(padding)
    dil_h, dil_w = _pair(dilation)
    weights_h, weights_w = weight.shape[-2:]
    n_offset_grps = offset.shape[1] // (2 * weights_h * weights_w)
    n_weight_grps = input.shape[1] // weight.shape[1]
    if n_offset_grps == 0:
        raise RuntimeError(
            "the shape of the offset tensor at dimension 1 is not valid. It should be a "
            "multiple of 2 * weight.size[2] * weight.size[3].\n"
            f"Got offset.shape[1]={offset.shape[1]}, while 2 * weight.size[2] * "
            f"weight.size[3]={2 * weights_h * weights_w}")
    return ember.ops.vision.deform_conv2d(input, weight, offset, mask, bias, stride_h,
                                          stride_w, pad_h, pad_w, dil_h, dil_w, n_weight_grps,
                                          n_offset_grps, use_mask)


class DeformConv2d(nn.Module):
    """A Conv2d whose forward takes the offsets (and optionally the mask), usually predicted
    by an ordinary Conv2d from the same input."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self.weight = nn.Parameter(ember.empty(out_channels, in_channels // groups,
                                               *self.kernel_size))
        if bias:
            self.bias = nn.Parameter(ember.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input, offset, mask=None):
        return deform_conv2d(input, offset, self.weight, self.bias, stride=self.stride,
                             padding=self.padding, dilation=self.dilation, mask=mask)

    def __repr__(self):
        s = (f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, "
             f"kernel_size={self.kernel_size}, stride={self.stride}")
        s += f", padding={self.padding}" if self.padding != (0, 0) else ""
        s += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        s += f", groups={self.groups}" if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s + ")"
