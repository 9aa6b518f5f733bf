"""AutoAugment (Cubuk et al. 2018), RandAugment (2019) and TrivialAugmentWide (Müller & Hutter
2021) as torchvision implements them: the same policies, magnitude bins and operations, and the
same draws from the generator (randint / rand calls, in torchvision's order), so the same seed
picks the same operations."""
import math
from enum import Enum

import ember
from ember import nn
from . import functional as F
from .functional import InterpolationMode

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


def _apply_op(img, op_name, magnitude, interpolation, fill):
    if op_name == "ShearX":
        # torchvision shears about the top-left corner (center=[0, 0]) to match PIL's transform
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0,
                        shear=[math.degrees(math.atan(magnitude)), 0.0],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "ShearY":
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0,
                        shear=[0.0, math.degrees(math.atan(magnitude))],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "TranslateX":
        return F.affine(img, angle=0.0, translate=[int(magnitude), 0], scale=1.0,
                        interpolation=interpolation, shear=[0.0, 0.0], fill=fill)
    if op_name == "TranslateY":
        return F.affine(img, angle=0.0, translate=[0, int(magnitude)], scale=1.0,
                        interpolation=interpolation, shear=[0.0, 0.0], fill=fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    if op_name == "Brightness":
        return F.adjust_brightness(img, 1.0 + magnitude)
    if op_name == "Color":
        return F.adjust_saturation(img, 1.0 + magnitude)
    if op_name == "Contrast":
        return F.adjust_contrast(img, 1.0 + magnitude)
    if op_name == "Sharpness":
        return F.adjust_sharpness(img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    if op_name == "AutoContrast":
        return F.autocontrast(img)
    if op_name == "Equalize":
        return F.equalize(img)
    if op_name == "Invert":
        return F.invert(img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


def _tensor_fill(img, fill, channels):
    if isinstance(img, ember.Tensor):
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        if fill is not None:
            return [float(f) for f in fill]
    return fill


def _posterize_bins(num_bins, top):
    return 8 - (ember.arange(num_bins) / ((num_bins - 1) / top)).round().int()


def _space(num_bins, shear, translate_x, translate_y, rotate, enhance, posterize_top):
    """op name -> (magnitudes, signed), in torchvision's key order (randint picks by index)."""
    lin = ember.linspace
    return {
        "ShearX": (lin(0.0, shear, num_bins), True),
        "ShearY": (lin(0.0, shear, num_bins), True),
        "TranslateX": (lin(0.0, translate_x, num_bins), True),
        "TranslateY": (lin(0.0, translate_y, num_bins), True),
        "Rotate": (lin(0.0, rotate, num_bins), True),
        "Brightness": (lin(0.0, enhance, num_bins), True),
        "Color": (lin(0.0, enhance, num_bins), True),
        "Contrast": (lin(0.0, enhance, num_bins), True),
        "Sharpness": (lin(0.0, enhance, num_bins), True),
        "Posterize": (_posterize_bins(num_bins, posterize_top), False),
        "Solarize": (lin(255.0, 0.0, num_bins), False),
        "AutoContrast": (ember.tensor(0.0), False),
        "Equalize": (ember.tensor(0.0), False),
    }


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
        (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)),
        (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)),
        (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)),
        (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)),
        (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)),
        (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
        (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
        (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
        (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
        (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
        (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
        (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
        (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
        (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
        (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
        (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
        (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
        (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)),
        (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)),
        (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)),
        (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)),
        (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)),
        (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)),
        (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)),
        (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


class AutoAugment(nn.Module):
    """One of the policy's 25 sub-policies (randint), each of its two operations applied with
    its probability (rand(2)) and a random sign (randint(2, (2,)))."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy):
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _POLICIES[policy]

    def _augmentation_space(self, num_bins, image_size):
        space = _space(num_bins, 0.3, 150.0 / 331.0 * image_size[1],
                       150.0 / 331.0 * image_size[0], 30.0, 0.9, 4)
        space["Invert"] = (ember.tensor(0.0), False)
        return space

    @staticmethod
    def get_params(transform_num):
        policy_id = int(ember.randint(transform_num, (1,)).item())
        probs = ember.rand((2,))
        signs = ember.randint(2, (2,))
        return policy_id, probs, signs

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _tensor_fill(img, self.fill, channels)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id].item()) \
                    if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation,
                                fill=fill)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(nn.Module):
    """`num_ops` operations drawn uniformly (randint over 14, Identity first), each at the fixed
    `magnitude` bin, with a random sign for signed ones."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        return {"Identity": (ember.tensor(0.0), False),
                **_space(num_bins, 0.3, 150.0 / 331.0 * image_size[1],
                         150.0 / 331.0 * image_size[0], 30.0, 0.9, 4)}

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _tensor_fill(img, self.fill, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        for _ in range(self.num_ops):
            op_index = int(ember.randint(len(op_meta), (1,)).item())
            op_name = list(op_meta.keys())[op_index]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            if signed and ember.randint(2, (1,)):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(nn.Module):
    """One operation drawn uniformly, at a magnitude bin drawn uniformly, with a random sign."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins):
        return {"Identity": (ember.tensor(0.0), False),
                **_space(num_bins, 0.99, 32.0, 32.0, 135.0, 0.99, 6)}

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _tensor_fill(img, self.fill, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        op_index = int(ember.randint(len(op_meta), (1,)).item())
        op_name = list(op_meta.keys())[op_index]
        magnitudes, signed = op_meta[op_name]
        magnitude = float(magnitudes[ember.randint(len(magnitudes), (1,),
                                                   dtype=ember.long)].item()) \
            if magnitudes.ndim > 0 else 0.0
        if signed and ember.randint(2, (1,)):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
