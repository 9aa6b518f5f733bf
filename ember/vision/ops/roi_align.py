"""RoI Align (He et al., Mask R-CNN; torchvision.ops.roi_align), registered as the op
`vision::roi_align` with a CPU kernel, a fake (Meta) kernel and a backward.

Each output bin averages grid_h x grid_w bilinear samples of the feature map. Bilinear
interpolation weights factor into a row part and a column part, and so does the sampling grid,
so for one RoI the whole pooled output is two matrix products:

    out[c] = Wy @ input[b, c] @ Wx.T        Wy: (pooled_h, H), Wx: (pooled_w, W)

where Wy[p, h] sums the row weights that the samples of bin row p put on feature row h (divided
by grid_h). The backward is the adjoint, grad_input[b, c] += Wy.T @ grad[c] @ Wx.
"""
import numpy as np

import ember
from ember import library
from ._utils import _np, _pair, _rois

__all__ = ["roi_align", "RoIAlign"]

library.define("vision::roi_align",
               "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
               "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor")
library.define("vision::_roi_align_backward",
               "(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
               "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, "
               "SymInt width, int sampling_ratio, bool aligned) -> Tensor")


def _axis_weights(start, end, pooled, sampling_ratio, aligned, size, dtype):
    """(K, pooled, size): the interpolation weight each bin puts on each row (or column),
    averaged over the bin's samples along this axis, following torchvision's CPU kernel
    (samples beyond one pixel outside the map count as zero, others clamp to the border)."""
    extent = end - start
    if not aligned:
        extent = np.maximum(extent, 1.0)  # legacy behaviour: force malformed RoIs to 1 pixel
    bin_size = extent / pooled
    if sampling_ratio > 0:
        grid = np.full(len(start), sampling_ratio)
    else:  # adaptive: about one sample per pixel
        grid = np.ceil(extent / pooled).astype(np.int64)
    grid = np.maximum(grid, 0)
    g = max(int(grid.max(initial=0)), 1)
    i = np.arange(g)
    # sample coordinates, (K, pooled, g)
    c = (start[:, None, None] + np.arange(pooled)[None, :, None] * bin_size[:, None, None]
         + (i + 0.5)[None, None, :] * (bin_size / np.maximum(grid, 1))[:, None, None])
    used = (i[None, None, :] < grid[:, None, None]) & (c >= -1.0) & (c <= size)
    c = np.maximum(c, 0.0)
    low = np.floor(c).astype(np.int64)
    at_edge = low >= size - 1
    low = np.where(at_edge, size - 1, low)
    high = np.where(at_edge, size - 1, low + 1)
    frac = np.where(at_edge, 0.0, c - low)
    scale = used / np.maximum(grid, 1)[:, None, None]
    weights = np.zeros((len(start), pooled, size))
    rows = np.arange(len(start))[:, None, None] * pooled + np.arange(pooled)[None, :, None]
    flat = weights.reshape(-1, size)
    np.add.at(flat, (np.broadcast_to(rows, c.shape), low), (1 - frac) * scale)
    np.add.at(flat, (np.broadcast_to(rows, c.shape), high), frac * scale)
    return weights.astype(dtype, copy=False)


def _roi_weights(rois, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned, h, w, dtype):
    offset = 0.5 if aligned else 0.0
    r = rois.astype(np.float64)
    x1, y1, x2, y2 = (r[:, j] * spatial_scale - offset for j in range(1, 5))
    wy = _axis_weights(y1, y2, pooled_h, sampling_ratio, aligned, h, dtype)
    wx = _axis_weights(x1, x2, pooled_w, sampling_ratio, aligned, w, dtype)
    return r[:, 0].astype(np.int64), wy, wx


@library.impl("vision::roi_align", "cpu")
def _roi_align_cpu(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                   aligned):
    x = _np(input)
    n, c, h, w = x.shape
    batch, wy, wx = _roi_weights(_np(rois), spatial_scale, pooled_height, pooled_width,
                                 sampling_ratio, aligned, h, w, x.dtype)
    out = np.zeros((len(batch), c, pooled_height, pooled_width), dtype=x.dtype)
    for b in np.unique(batch):  # all RoIs of one image at once
        sel = np.nonzero(batch == b)[0]
        k = len(sel)
        rows = np.matmul(wy[sel].reshape(k * pooled_height, h), x[b])  # (C, k*ph, W)
        rows = rows.reshape(c, k, pooled_height, w).transpose(1, 0, 2, 3)
        out[sel] = np.matmul(rows, wx[sel].transpose(0, 2, 1)[:, None])
    return ember.from_numpy(out)


@library.impl("vision::_roi_align_backward", "cpu")
def _roi_align_backward_cpu(grad, rois, spatial_scale, pooled_height, pooled_width,
                            batch_size, channels, height, width, sampling_ratio, aligned):
    g = _np(grad)
    batch, wy, wx = _roi_weights(_np(rois), spatial_scale, pooled_height, pooled_width,
                                 sampling_ratio, aligned, height, width, g.dtype)
    grad_input = np.zeros((batch_size, channels, height, width), dtype=g.dtype)
    for b in np.unique(batch):
        sel = np.nonzero(batch == b)[0]
        k = len(sel)
        cols = np.matmul(g[sel], wx[sel][:, None])  # (k, C, ph, W)
        cols = cols.transpose(1, 0, 2, 3).reshape(channels, k * pooled_height, width)
        grad_input[b] = np.matmul(wy[sel].reshape(k * pooled_height, height).T, cols)
    return ember.from_numpy(grad_input)


@library.register_fake("vision::roi_align")
def _roi_align_fake(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                    aligned):
    return input.new_empty((rois.size(0), input.size(1), pooled_height, pooled_width))


@library.register_fake("vision::_roi_align_backward")
def _roi_align_backward_fake(grad, rois, spatial_scale, pooled_height, pooled_width,
                             batch_size, channels, height, width, sampling_ratio, aligned):
    return grad.new_empty((batch_size, channels, height, width))


def _setup_context(ctx, inputs, output):
    input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned = inputs
    ctx.save_for_backward(rois)
    ctx.args = (spatial_scale, pooled_height, pooled_width, *input.shape, sampling_ratio,
                aligned)


def _backward(ctx, grad):
    rois, = ctx.saved_tensors
    spatial_scale, ph, pw, n, c, h, w, sampling_ratio, aligned = ctx.args
    grad_input = ember.ops.vision._roi_align_backward(grad, rois, spatial_scale, ph, pw, n, c,
                                                      h, w, sampling_ratio, aligned)
    return grad_input, None, None, None, None, None, None


library.register_autograd("vision::roi_align", _backward, setup_context=_setup_context)


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """Pool each box of `boxes` (a (K, 5) tensor of (batch index, x1, y1, x2, y2) or a list of
    per-image (L, 4) tensors) from `input` (N, C, H, W) to (K, C, *output_size).
    spatial_scale maps box coordinates to the feature map; sampling_ratio is the number of
    samples per bin side (<= 0: adaptive, ceil(roi size / output size)); aligned=True shifts
    boxes by half a pixel so that pixel centres are at .5 coordinates."""
    rois = _rois(boxes)
    output_size = _pair(output_size)
    return ember.ops.vision.roi_align(input, rois, spatial_scale, output_size[0],
                                      output_size[1], sampling_ratio, aligned)


class RoIAlign(ember.nn.Module):
    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale,
                         self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
                f"aligned={self.aligned})")
