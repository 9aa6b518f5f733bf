"""torchvision.transforms.v2 on ember, for plain images only.

The classes here are the v1 transforms (ember.vision.transforms) wherever v2's behaviour on a
single PIL image or image tensor is the same, plus v2's own ToImage, ToDtype, ToPureTensor
and Identity. What is not here: tv_tensors (Image, Video, BoundingBoxes, Mask, KeyPoints) and
the transforms that exist for them (SanitizeBoundingBoxes, ClampBoundingBoxes,
ConvertBoundingBoxFormat, RandomIoUCrop, ...), passing several inputs or nested structures
through one call (`t(img, boxes, label)`), and the batch transforms CutMix / MixUp. Asking for
one of those names raises NotImplementedError naming it. The random transforms draw as v1 does.
"""
import ember
from ..transforms import (  # noqa: F401
    CenterCrop, ColorJitter, Compose, ConvertImageDtype, FiveCrop, GaussianBlur, Grayscale,
    InterpolationMode, Lambda, Normalize, Pad, PILToTensor, RandomAffine, RandomApply,
    RandomChoice, RandomCrop, RandomErasing, RandomGrayscale, RandomHorizontalFlip, RandomOrder,
    RandomPerspective, RandomResizedCrop, RandomRotation, RandomVerticalFlip, Resize, TenCrop,
    ToPILImage, ToTensor, RandomInvert, RandomPosterize, RandomSolarize, RandomAdjustSharpness,
    RandomAutocontrast, RandomEqualize)
from .. import functional  # noqa: F401
from ..autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from ember import nn

__all__ = ["CenterCrop", "ColorJitter", "Compose", "ConvertImageDtype", "FiveCrop",
           "GaussianBlur", "Grayscale", "InterpolationMode", "Lambda", "Normalize", "Pad",
           "PILToTensor", "RandomAffine", "RandomApply", "RandomChoice", "RandomCrop",
           "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip", "RandomOrder",
           "RandomPerspective", "RandomResizedCrop", "RandomRotation", "RandomVerticalFlip",
           "Resize", "TenCrop",
           "ToPILImage", "ToTensor", "AutoAugment", "AutoAugmentPolicy", "RandAugment",
           "TrivialAugmentWide", "Identity", "ToImage", "ToPureTensor", "ToDtype",
           "functional", "RandomInvert", "RandomPosterize", "RandomSolarize",
           "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize"]

_NOT_HERE = {
    "tv_tensors-based transforms": (
        "SanitizeBoundingBoxes", "SanitizeKeyPoints", "ClampBoundingBoxes", "ClampKeyPoints",
        "ConvertBoundingBoxFormat", "SetClampingMode", "RandomIoUCrop", "RandomZoomOut",
        "get_bounding_boxes", "get_keypoints"),
    "batch transforms": ("CutMix", "MixUp"),
    "transforms ember.vision does not have yet": (
        "AugMix", "JPEG", "ElasticTransform", "GaussianNoise", "LinearTransformation",
        "RandomChannelPermutation", "RandomPhotometricDistort", "RGB", "RandomResize",
        "RandomShortestSize", "ScaleJitter",
        "UniformTemporalSubsample", "Transform", "check_type", "has_all", "has_any",
        "query_chw", "query_size"),
}


def __getattr__(name):
    for what, names in _NOT_HERE.items():
        if name in names:
            raise NotImplementedError(
                f"torchvision.transforms.v2.{name} is not in ember.vision ({what}; ember's v2 "
                f"works on plain PIL images and image tensors, without tv_tensors)")
    raise AttributeError(f"module 'torchvision.transforms.v2' has no attribute '{name}'")


class Identity(nn.Module):
    def forward(self, inpt):
        return inpt


class ToImage(nn.Module):
    """A PIL image or array to a (C, H, W) tensor of the same dtype (no rescaling); a tensor
    passes through."""

    def forward(self, inpt):
        if isinstance(inpt, ember.Tensor):
            return inpt
        import numpy as np
        if isinstance(inpt, np.ndarray):
            arr = inpt[:, :, None] if inpt.ndim == 2 else inpt
            return ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
        return functional.pil_to_tensor(inpt)


class ToPureTensor(Identity):
    """tv_tensors to plain tensors; ember has no tv_tensors, so this passes its input through."""


class ToDtype(nn.Module):
    """Convert an image tensor to `dtype`; scale=True also rescales the values to the dtype's
    range as ConvertImageDtype does. A dict of dtypes per tv_tensor type is not supported."""

    def __init__(self, dtype, scale=False):
        super().__init__()
        if isinstance(dtype, dict):
            raise NotImplementedError("ToDtype with a dict of dtypes per tv_tensors type is not "
                                      "in ember.vision (no tv_tensors)")
        self.dtype = dtype
        self.scale = scale

    def forward(self, inpt):
        if not isinstance(inpt, ember.Tensor):
            return inpt
        if self.scale:
            return functional.convert_image_dtype(inpt, self.dtype)
        return inpt.to(self.dtype)

    def __repr__(self):
        return f"{self.__class__.__name__}(dtype={self.dtype}, scale={self.scale})"
