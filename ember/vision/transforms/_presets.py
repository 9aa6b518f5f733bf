"""The preprocessing attached to pretrained weights (`weights.transforms()`), as torchvision's
transforms._presets: ImageClassification resizes, centre-crops, rescales to [0, 1] floats and
normalises; ObjectDetection only converts to float."""
import ember
from ember import nn
from . import functional as F
from .functional import InterpolationMode

__all__ = ["ObjectDetection", "ImageClassification"]


class ObjectDetection(nn.Module):
    def forward(self, img):
        if not isinstance(img, ember.Tensor):
            img = F.pil_to_tensor(img)
        return F.convert_image_dtype(img, ember.float)

    def __repr__(self):
        return self.__class__.__name__ + "()"


class ImageClassification(nn.Module):
    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406),
                 std=(0.229, 0.224, 0.225), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, ember.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, ember.float)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n"
                f"    resize_size={self.resize_size}\n    mean={self.mean}\n    std={self.std}\n"
                f"    interpolation={self.interpolation}\n)")

    def describe(self):
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image "
                "``torch.Tensor`` objects. The images are resized to "
                f"``resize_size={self.resize_size}`` using ``interpolation={self.interpolation}``, "
                f"followed by a central crop of ``crop_size={self.crop_size}``. Finally the values "
                "are first rescaled to ``[0.0, 1.0]`` and then normalized using "
                f"``mean={self.mean}`` and ``std={self.std}``.")
