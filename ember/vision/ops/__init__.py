"""ember.vision.ops: torchvision's detection operators -- box utilities, NMS, RoI Align/Pool --
and deformable convolution. The RoI ops and deform_conv2d are ops of the `vision` namespace
(`ember.ops.vision.*`), added through ember.library like any user-defined operator."""
from .boxes import (nms, batched_nms, remove_small_boxes, clip_boxes_to_image, box_convert,
                    box_area, box_iou, generalized_box_iou, complete_box_iou, distance_box_iou)
from .roi_align import roi_align, RoIAlign
from .roi_pool import roi_pool, RoIPool
from .deform_conv import deform_conv2d, DeformConv2d
from .misc import (Conv2dNormActivation, Conv3dNormActivation, FrozenBatchNorm2d,
                   SqueezeExcitation, MLP, Permute, stochastic_depth, StochasticDepth,
                   sigmoid_focal_loss)
from .feature_pyramid_network import FeaturePyramidNetwork
from .poolers import MultiScaleRoIAlign

__all__ = ["nms", "batched_nms", "remove_small_boxes", "clip_boxes_to_image", "box_convert",
           "box_area", "box_iou", "generalized_box_iou", "complete_box_iou", "distance_box_iou",
           "roi_align", "RoIAlign", "roi_pool", "RoIPool", "deform_conv2d", "DeformConv2d",
           "Conv2dNormActivation", "Conv3dNormActivation", "FrozenBatchNorm2d",
           "SqueezeExcitation", "MLP", "Permute", "stochastic_depth", "StochasticDepth",
           "sigmoid_focal_loss", "FeaturePyramidNetwork", "MultiScaleRoIAlign"]
