"""RoI max pooling (Girshick, Fast R-CNN; torchvision.ops.roi_pool), registered as
`vision::roi_pool`: each box, rounded to whole feature-map pixels, is cut into a grid of
pooled_h x pooled_w bins and each bin takes its maximum. The kernel also returns where each
maximum was (the argmax, a flat h * W + w index, -1 for an empty bin); the backward sends each
output gradient to that one input pixel.
"""
import numpy as np

import ember
from ember import library
from ._utils import _np, _pair, _rois

__all__ = ["roi_pool", "RoIPool"]

library.define("vision::roi_pool",
               "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
               "SymInt pooled_width) -> (Tensor, Tensor)")
library.define("vision::_roi_pool_backward",
               "(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, "
               "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, "
               "SymInt height, SymInt width) -> Tensor")


def _round_half_away(x):
    """C's round(): 2.5 -> 3, -2.5 -> -3 (NumPy rounds half to even)."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _bin_edges(start, extent, pooled, size, dtype):
    """Integer [begin, end) of each bin along one axis, clipped to the map (bin sizes in the
    input's float type, as torchvision's kernel computes them)."""
    bin_size = dtype.type(extent) / dtype.type(pooled)
    p = np.arange(pooled, dtype=dtype)
    begin = np.clip(np.floor(p * bin_size).astype(np.int64) + start, 0, size)
    end = np.clip(np.ceil((p + 1) * bin_size).astype(np.int64) + start, 0, size)
    return begin, end


def _window(begin, end, size):
    """Indices of each bin's pixels along one axis, padded to the widest bin: (bins, width)
    clipped into the map, and which of them are really in the bin."""
    width = max(int((end - begin).max(initial=0)), 1)
    idx = begin[:, None] + np.arange(width)[None, :]
    return np.minimum(idx, size - 1), idx < end[:, None]


@library.impl("vision::roi_pool", "cpu")
def _roi_pool_cpu(input, rois, spatial_scale, pooled_height, pooled_width):
    x = _np(input)
    r = _np(rois)
    n, c, h, w = x.shape
    k = len(r)
    out = np.zeros((k, c, pooled_height, pooled_width), dtype=x.dtype)
    argmax = np.full((k, c, pooled_height, pooled_width), -1, dtype=np.int64)
    # box corners in float32 arithmetic like torchvision's float kernels, then rounded
    corners = _round_half_away(r[:, 1:].astype(x.dtype) * x.dtype.type(spatial_scale))
    corners = corners.astype(np.int64)
    for i in range(k):  # all bins of one RoI at once: gather a padded window per bin
        x1, y1, x2, y2 = corners[i]
        hs, he = _bin_edges(y1, max(y2 - y1 + 1, 1), pooled_height, h, x.dtype)
        ws, we = _bin_edges(x1, max(x2 - x1 + 1, 1), pooled_width, w, x.dtype)
        rows, row_ok = _window(hs, he, h)  # (PH, mh)
        cols, col_ok = _window(ws, we, w)  # (PW, mw)
        window = x[int(r[i, 0])][:, rows[:, None, :, None], cols[None, :, None, :]]
        ok = row_ok[:, None, :, None] & col_ok[None, :, None, :]  # (PH, PW, mh, mw)
        window = np.where(ok, window, -np.inf).reshape(c, pooled_height, pooled_width, -1)
        j = window.argmax(axis=-1)  # the first maximum, as torchvision's strict `>`
        mw = cols.shape[1]
        flat = rows[np.arange(pooled_height)[:, None], j // mw] * w \
            + cols[np.arange(pooled_width)[None, :], j % mw]
        empty = ~ok.any(axis=(2, 3))  # bins clipped away entirely: 0, argmax -1
        out[i] = np.where(empty, 0, np.take_along_axis(window, j[..., None], -1)[..., 0])
        argmax[i] = np.where(empty, -1, flat)
    return ember.from_numpy(out), ember.from_numpy(argmax)


@library.impl("vision::_roi_pool_backward", "cpu")
def _roi_pool_backward_cpu(grad, rois, argmax, spatial_scale, pooled_height, pooled_width,
                           batch_size, channels, height, width):
    g, am = _np(grad), _np(argmax)
    batch = _np(rois)[:, 0].astype(np.int64)
    plane = (batch[:, None] * channels + np.arange(channels)[None, :]) * (height * width)
    index = plane[:, :, None, None] + am
    hit = am >= 0
    grad_input = np.bincount(index[hit], weights=g[hit],
                             minlength=batch_size * channels * height * width)
    return ember.from_numpy(grad_input.astype(g.dtype).reshape(batch_size, channels, height,
                                                                 width))


@library.register_fake("vision::roi_pool")
def _roi_pool_fake(input, rois, spatial_scale, pooled_height, pooled_width):
    shape = (rois.size(0), input.size(1), pooled_height, pooled_width)
    return input.new_empty(shape), input.new_empty(shape, dtype=ember.int64)


@library.register_fake("vision::_roi_pool_backward")
def _roi_pool_backward_fake(grad, rois, argmax, spatial_scale, pooled_height, pooled_width,
                            batch_size, channels, height, width):
    return grad.new_empty((batch_size, channels, height, width))


def _setup_context(ctx, inputs, output):
    input, rois, spatial_scale, pooled_height, pooled_width = inputs
    ctx.save_for_backward(rois, output[1])
    ctx.mark_non_differentiable(output[1])
    ctx.args = (spatial_scale, pooled_height, pooled_width, *input.shape)


def _backward(ctx, grad, grad_argmax):
    rois, argmax = ctx.saved_tensors
    grad_input = ember.ops.vision._roi_pool_backward(grad, rois, argmax, *ctx.args)
    return grad_input, None, None, None, None


library.register_autograd("vision::roi_pool", _backward, setup_context=_setup_context)


def roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """Max-pool each box of `boxes` ((K, 5) with the batch index first, or a list of
    per-image (L, 4) tensors) from `input` (N, C, H, W) to (K, C, *output_size)."""
    rois = _rois(boxes)
    output_size = _pair(output_size)
    output, _ = ember.ops.vision.roi_pool(input, rois, spatial_scale, output_size[0],
                                          output_size[1])
    return output


class RoIPool(ember.nn.Module):
    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale})")
