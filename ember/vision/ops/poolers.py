"""MultiScaleRoIAlign (torchvision.ops.poolers): RoI Align over a feature pyramid, each box
pooled from the level its size maps to (FPN paper eq. 1: k = floor(4 + log2(sqrt(area) / 224))
clamped to the available levels); the levels' scales are inferred from their sizes against
the largest image size on the first call."""
import math

import ember
from ... import nn
from .boxes import box_area
from .roi_align import roi_align

__all__ = ["MultiScaleRoIAlign", "LevelMapper", "initLevelMapper"]


class LevelMapper:
    def __init__(self, k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists):
        s = ember.sqrt(ember.cat([box_area(b) for b in boxlists]))
        target = ember.floor(self.lvl0 + ember.log2(s / self.s0) +
                             ember.tensor(self.eps, dtype=s.dtype))
        target = ember.clamp(target, min=self.k_min, max=self.k_max)
        return target.to(ember.int64) - self.k_min


def initLevelMapper(k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


def _convert_to_roi_format(boxes):
    concat = ember.cat(boxes, dim=0)
    ids = ember.cat([ember.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return ember.cat([ids, concat], dim=1)


def _infer_scale(feature, original_size):
    size = feature.shape[-2:]
    scales = [2 ** float(round(math.log2(float(s1) / float(s2))))
              for s1, s2 in zip(size, original_size)]
    return scales[0]


def _setup_scales(features, image_shapes, canonical_scale, canonical_level):
    if not image_shapes:
        raise ValueError("images list should not be empty")
    max_x = max(s[0] for s in image_shapes)
    max_y = max(s[1] for s in image_shapes)
    scales = [_infer_scale(f, (max_x, max_y)) for f in features]
    lvl_min = -math.log2(scales[0])
    lvl_max = -math.log2(scales[-1])
    return scales, initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale,
                                   canonical_level=canonical_level)


class MultiScaleRoIAlign(nn.Module):
    def __init__(self, featmap_names, output_size, sampling_ratio, *, canonical_scale=224,
                 canonical_level=4):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(self, x, boxes, image_shapes):
        x_filtered = [v for k, v in x.items() if k in self.featmap_names]
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(
                x_filtered, image_shapes, self.canonical_scale, self.canonical_level)
        rois = _convert_to_roi_format(boxes)
        if len(x_filtered) == 1:
            return roi_align(x_filtered[0], rois, output_size=self.output_size,
                             spatial_scale=self.scales[0], sampling_ratio=self.sampling_ratio)
        levels = self.map_levels(boxes)
        first = x_filtered[0]
        result = ember.zeros((len(rois), first.shape[1]) + self.output_size, dtype=first.dtype)
        for level, (feature, scale) in enumerate(zip(x_filtered, self.scales)):
            idx = ember.where(levels == level)[0]
            pooled = roi_align(feature, rois[idx], output_size=self.output_size,
                               spatial_scale=scale, sampling_ratio=self.sampling_ratio)
            result[idx] = pooled.to(result.dtype)
        return result

    def __repr__(self):
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, "
                f"output_size={self.output_size}, sampling_ratio={self.sampling_ratio})")
