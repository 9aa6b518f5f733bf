"""torchvision.transforms on ember: callable objects that take a PIL image or an ember tensor
image and return one, composable with Compose. Random transforms draw from ember's generator
with the same calls, in the same order, as torchvision draws from torch's, so that under the
same seed they make the same choices. Those that torchvision makes nn.Modules are nn.Modules
here too.
"""
import math
import numbers
import random
import warnings
from collections.abc import Sequence

import ember
from ember import nn
from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int

__all__ = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize",
           "Resize", "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice",
           "RandomOrder", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomResizedCrop", "ColorJitter", "RandomRotation", "Grayscale",
           "RandomGrayscale", "GaussianBlur", "InterpolationMode", "FiveCrop", "TenCrop",
           "RandomAffine", "RandomErasing", "RandomPerspective", "RandomInvert",
           "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast",
           "RandomEqualize"]


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def _check_sequence_input(x, name, req_sizes):
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join([str(s) for s in req_sizes])
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _interpolation(interpolation):
    return _interpolation_modes_from_int(interpolation) if isinstance(interpolation, int) \
        else interpolation


def _list_repr(obj, lines):
    """ClassName(\n    line\n    line\n) -- the layout of Compose and friends."""
    return obj.__class__.__name__ + "(" + "".join(f"\n    {x}" for x in lines) + "\n)"


class Compose:
    """Apply transforms one after the other."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _list_repr(self, self.transforms)


class ToTensor:
    """PIL image or (H, W, C) ndarray -> (C, H, W) tensor, uint8 scaled to [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """PIL image -> (C, H, W) tensor of the same dtype and values."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ToPILImage:
    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        mode = f"mode={self.mode}" if self.mode is not None else ""
        return f"{self.__class__.__name__}({mode})"


class ConvertImageDtype(nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(nn.Module):
    """(image - mean) / std per channel, on float tensor images."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(nn.Module):
    """Resize to (h, w), or the shorter edge to `size` keeping the aspect ratio."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, "
                f"interpolation={self.interpolation.value}, max_size={self.max_size}, "
                f"antialias={self.antialias})")


class CenterCrop(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) "
                                                "for size.")

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(nn.Module):
    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or "
                             "symmetric")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                             f"{len(padding)} element tuple")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return (f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class Lambda:
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got "
                            f"{repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class RandomApply(nn.Module):
    """Apply all the transforms with probability p (one ember.rand draw)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if self.p < ember.rand(1):
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _list_repr(self, [f"p={self.p}", *self.transforms])


class RandomTransforms:
    """Base of RandomChoice and RandomOrder; like torchvision they draw from Python's `random`
    module, not from ember's generator."""

    def __init__(self, transforms):
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args, **kwargs):
        raise NotImplementedError()

    def __repr__(self):
        return _list_repr(self, self.transforms)


class RandomChoice(RandomTransforms):
    def __init__(self, transforms, p=None):
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args):
        t = random.choices(self.transforms, weights=self.p)[0]
        return t(*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"


class RandomOrder(RandomTransforms):
    def __call__(self, img):
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomCrop(nn.Module):
    @staticmethod
    def get_params(img, output_size):
        """(top, left, height, width) of a uniformly placed crop of output_size."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = ember.randint(0, h - th + 1, size=(1,)).item()
        j = ember.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        super().__init__()
        self.size = tuple(_setup_size(size, error_msg="Please provide only two dimensions "
                                                      "(h, w) for size."))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        if ember.rand(1) < self.p:
            return F.hflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(RandomHorizontalFlip):
    def forward(self, img):
        if ember.rand(1) < self.p:
            return F.vflip(img)
        return img


class RandomResizedCrop(nn.Module):
    """A crop of random area (a `scale` fraction of the image) and aspect ratio, resized to
    `size` -- the Inception-style training augmentation."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) "
                                                "for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        """(top, left, height, width): up to 10 tries of a random area and log-uniform aspect
        ratio that fits, else a central crop clamped to the ratio range."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = ember.log(ember.tensor(ratio))
        for _ in range(10):
            target_area = area * ember.empty(1).uniform_(scale[0], scale[1]).item()
            # exp in float32, as torchvision's torch.exp: the rounding below can tell
            aspect_ratio = ember.exp(ember.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = ember.randint(0, height - h + 1, size=(1,)).item()
                j = ember.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation,
                              antialias=self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, "
                f"scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, "
                f"interpolation={self.interpolation.value}, antialias={self.antialias})")


class ColorJitter(nn.Module):
    """Random brightness, contrast, saturation and hue changes, applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                     clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        """A number v means [center - v, center + v]; None if the range changes nothing."""
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """The order (a randperm of 4) and a factor per enabled adjustment."""
        fn_idx = ember.randperm(4)
        b = None if brightness is None else \
            float(ember.empty(1).uniform_(brightness[0], brightness[1]))
        c = None if contrast is None else \
            float(ember.empty(1).uniform_(contrast[0], contrast[1]))
        s = None if saturation is None else \
            float(ember.empty(1).uniform_(saturation[0], saturation[1]))
        h = None if hue is None else float(ember.empty(1).uniform_(hue[0], hue[1]))
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation,
                                             self.hue)
        adjust = ((F.adjust_brightness, b), (F.adjust_contrast, c), (F.adjust_saturation, s),
                  (F.adjust_hue, h))
        for fn_id in fn_idx.tolist():
            fn, factor = adjust[fn_id]
            if factor is not None:
                img = fn(img, factor)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(brightness={self.brightness}, "
                f"contrast={self.contrast}, saturation={self.saturation}, hue={self.hue})")


class RandomRotation(nn.Module):
    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=0):
        super().__init__()
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.interpolation = _interpolation(interpolation)
        self.expand = expand
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    @staticmethod
    def get_params(degrees):
        return float(ember.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def forward(self, img):
        fill = self.fill
        channels, _, _ = F.get_dimensions(img)
        if isinstance(img, ember.Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else \
                [float(f) for f in fill]
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self):
        s = (f"{self.__class__.__name__}(degrees={self.degrees}, "
             f"interpolation={self.interpolation.value}, expand={self.expand}")
        if self.center is not None:
            s += f", center={self.center}"
        if self.fill is not None:
            s += f", fill={self.fill}"
        return s + ")"


class Grayscale(nn.Module):
    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(nn.Module):
    """Grayscale with probability p, keeping the number of channels."""

    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if ember.rand(1) < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class GaussianBlur(nn.Module):
    """Blur with a Gaussian whose sigma is drawn uniformly from the (min, max) range."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two "
                                                    "integers")
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        return ember.empty(1).uniform_(sigma_min, sigma_max).item()

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self):
        return f"{self.__class__.__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class FiveCrop(nn.Module):
    """The four corner crops and the centre crop of `size` (a tuple of 5 images)."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for "
                                                "size.")

    def forward(self, img):
        return F.five_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class TenCrop(nn.Module):
    """FiveCrop of the image and of its flip (horizontal unless vertical_flip)."""

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for "
                                                "size.")
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


class RandomAffine(nn.Module):
    """A random affine map keeping the centre: angle ~ U(degrees), translation ~ U(+-translate *
    size) rounded, scale ~ U(scale), shear ~ U(shear[0:2]) (and U(shear[2:4]) for y). The draws
    are torch.empty(1).uniform_ calls in torchvision's order."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        super().__init__()
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            for t in translate:
                if not 0.0 <= t <= 1.0:
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = _setup_angle(shear, name="shear", req_sizes=(2, 4)) \
            if shear is not None else None
        self.interpolation = interpolation
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        def uniform(lo, hi):
            return float(ember.empty(1).uniform_(lo, hi).item())
        angle = uniform(float(degrees[0]), float(degrees[1]))
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            translations = (int(round(uniform(-max_dx, max_dx))),
                            int(round(uniform(-max_dy, max_dy))))
        else:
            translations = (0, 0)
        scale = uniform(scale_ranges[0], scale_ranges[1]) if scale_ranges is not None else 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        fill = self.fill
        channels, height, width = F.get_dimensions(img)
        if isinstance(img, ember.Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else \
                [float(f) for f in fill]
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear,
                              [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill,
                        center=self.center)

    def __repr__(self):
        s = f"{self.__class__.__name__}(degrees={self.degrees}"
        s += f", translate={self.translate}" if self.translate is not None else ""
        s += f", scale={self.scale}" if self.scale is not None else ""
        s += f", shear={self.shear}" if self.shear is not None else ""
        s += f", interpolation={self.interpolation.value}" \
            if self.interpolation != InterpolationMode.NEAREST else ""
        s += f", fill={self.fill}" if self.fill != 0 else ""
        s += f", center={self.center}" if self.center is not None else ""
        return s + ")"


class RandomErasing(nn.Module):
    """With probability p, erase a random rectangle of a tensor image (Zhong et al.): area
    fraction ~ U(scale), log aspect ratio ~ U(log ratio), up to 10 tries; `value` a number, a
    per-channel sequence or "random" (standard normal noise)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = ember.log(ember.tensor(ratio))
        for _ in range(10):
            erase_area = area * ember.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = ember.exp(
                ember.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = ember.empty([img_c, h, w], dtype=ember.float32).normal_()
            else:
                v = ember.tensor(value)[:, None, None]
            i = ember.randint(0, img_h - h + 1, size=(1,)).item()
            j = ember.randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if ember.rand(1) < self.p:
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            elif isinstance(self.value, (list, tuple)):
                value = [float(v) for v in self.value]
            else:
                value = self.value
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError("If value is a sequence, it should have either a single value "
                                 f"or {img.shape[-3]} (number of input channels)")
            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")


class RandomPerspective(nn.Module):
    """With probability p, a perspective warp moving each corner inwards by up to
    distortion_scale * half the size (eight randint draws in torchvision's order)."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR,
                 fill=0):
        super().__init__()
        self.p = p
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.distortion_scale = distortion_scale
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    def forward(self, img):
        fill = self.fill
        channels, height, width = F.get_dimensions(img)
        if isinstance(img, ember.Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else \
                [float(f) for f in fill]
        if ember.rand(1) < self.p:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    @staticmethod
    def get_params(width, height, distortion_scale):
        half_height, half_width = height // 2, width // 2
        dw, dh = int(distortion_scale * half_width), int(distortion_scale * half_height)

        def draw(lo, hi):
            return int(ember.randint(lo, hi, size=(1,)).item())
        topleft = [draw(0, dw + 1), draw(0, dh + 1)]
        topright = [draw(width - dw - 1, width), draw(0, dh + 1)]
        botright = [draw(width - dw - 1, width), draw(height - dh - 1, height)]
        botleft = [draw(0, dw + 1), draw(height - dh - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class _RandomOp(nn.Module):
    """Apply the functional op with probability p (one rand(1) draw, as torchvision's)."""
    _args = ()

    def __init__(self, *args, p=0.5):
        super().__init__()
        for name, value in zip(self._args, args):
            setattr(self, name, value)
        self.p = p

    def _op(self, img):
        raise NotImplementedError

    def forward(self, img):
        if ember.rand(1).item() < self.p:
            return self._op(img)
        return img

    def __repr__(self):
        fields = "".join(f"{name}={getattr(self, name)}," for name in self._args)
        return f"{self.__class__.__name__}({fields}p={self.p})"


class RandomInvert(_RandomOp):
    def _op(self, img):
        return F.invert(img)


class RandomPosterize(_RandomOp):
    _args = ("bits",)

    def __init__(self, bits, p=0.5):
        super().__init__(bits, p=p)

    def _op(self, img):
        return F.posterize(img, self.bits)


class RandomSolarize(_RandomOp):
    _args = ("threshold",)

    def __init__(self, threshold, p=0.5):
        super().__init__(threshold, p=p)

    def _op(self, img):
        return F.solarize(img, self.threshold)


class RandomAdjustSharpness(_RandomOp):
    _args = ("sharpness_factor",)

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(sharpness_factor, p=p)

    def _op(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)


class RandomAutocontrast(_RandomOp):
    def _op(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomOp):
    def _op(self, img):
        return F.equalize(img)
