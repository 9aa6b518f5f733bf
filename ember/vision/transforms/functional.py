"""torchvision.transforms.functional on ember: each function takes a PIL image or an ember
tensor image ((..., C, H, W)) and dispatches to _functional_pil or _functional_tensor, after the
argument handling the two share (sizes, paddings, crop boxes, rotation matrices).
"""
import math
import numbers
import sys
from enum import Enum

import numpy as np

import ember
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t


class InterpolationMode(Enum):
    """The interpolation names of nn.functional.interpolate / grid_sample, plus PIL's filters."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


# PIL's resampling filter numbers (PIL.Image.Resampling), without importing PIL
pil_modes_mapping = {
    InterpolationMode.NEAREST: 0, InterpolationMode.BILINEAR: 2,
    InterpolationMode.BICUBIC: 3, InterpolationMode.NEAREST_EXACT: 0,
    InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5, InterpolationMode.LANCZOS: 1,
}

_INT_TO_MODE = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
                3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
                5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}


def _interpolation_modes_from_int(i):
    return _INT_TO_MODE[i]


def _is_tensor(img):
    return isinstance(img, ember.Tensor)


def _check_image(img):
    if not (_is_tensor(img) or F_pil._is_pil_image(img)):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def _on_image(img, tensor_kernel, pil_kernel, *args):
    """Run the tensor kernel on a tensor, the PIL one on a PIL image, reject anything else."""
    if _is_tensor(img):
        return tensor_kernel(img, *args)
    _check_image(img)
    return pil_kernel(img, *args)


def get_dimensions(img):
    """[channels, height, width]."""
    return _on_image(img, F_t.get_dimensions, F_pil.get_dimensions)


def get_image_size(img):
    """[width, height] (PIL's order)."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


# ---- conversions ------------------------------------------------------------------------------
def _pil_to_array(pic):
    """The pixels of a PIL image as (H, W, C), in the dtype of its mode."""
    mode_to_nptype = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16,
                      "F": np.float32}
    arr = np.array(pic, mode_to_nptype.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        arr = 255 * arr
    return arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))


def to_tensor(pic):
    """PIL image or (H, W, C) ndarray -> (C, H, W) tensor; uint8 becomes float in [0, 1]."""
    is_numpy = isinstance(pic, np.ndarray)
    if not (F_pil._is_pil_image(pic) or is_numpy):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if is_numpy and pic.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if is_numpy:
        arr = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        arr = _pil_to_array(pic)
    chw = arr.transpose(2, 0, 1)
    if arr.dtype != np.uint8:
        return ember.from_numpy(np.ascontiguousarray(chw))
    float_type = _NUMPY_FLOATS.get(ember.get_default_dtype())
    if float_type is None:  # a default dtype NumPy lacks (bfloat16)
        return ember.from_numpy(np.ascontiguousarray(chw)).to(ember.get_default_dtype()).div(255)
    # uint8 -> float is exact, so converting in the layout copy is .to(default dtype), one op less
    return ember.from_numpy(np.ascontiguousarray(chw, dtype=float_type)).div_(255)


_NUMPY_FLOATS = {ember.float16: np.float16, ember.float32: np.float32, ember.float64: np.float64}


def pil_to_tensor(pic):
    """PIL image -> (C, H, W) tensor of its own dtype, values unscaled (a permuted view)."""
    if not F_pil._is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    img = ember.from_numpy(arr).view(pic.size[1], pic.size[0], len(pic.getbands()))
    return img.permute((2, 0, 1))


def to_pil_image(pic, mode=None):
    """(C, H, W) tensor or (H, W, C) ndarray -> PIL image; float tensors are scaled by 255."""
    Image, _, _ = F_pil._pil()
    if _is_tensor(pic):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        if pic.dim() == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        npimg = np.transpose(pic.cpu().numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        npimg = np.expand_dims(pic, 2) if pic.ndim == 2 else pic
        if npimg.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {npimg.shape[-1]} "
                             "channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")

    channels = npimg.shape[2]
    if channels == 1:
        npimg = npimg[:, :, 0]
        expected_mode = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16",
                         np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                             f"Should be {expected_mode}")
        mode = expected_mode
    else:
        permitted = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}[channels]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for {channels}D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = permitted[0]
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return Image.fromarray(npimg, mode=mode)


def convert_image_dtype(image, dtype=ember.float32):
    """Convert and rescale: floats are in [0, 1], integers in [0, max of their dtype]."""
    if not _is_tensor(image):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def normalize(tensor, mean, std, inplace=False):
    """(image - mean) / std per channel."""
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    return F_t.normalize(tensor, mean=mean, std=std, inplace=inplace)


# ---- geometry ---------------------------------------------------------------------------------
def _compute_resized_output_size(image_size, size, max_size=None):
    """[h, w] after resizing to `size`: [h, w] as given, or a one-number size for the shorter
    edge with the aspect ratio kept (and the longer edge capped at max_size)."""
    h, w = image_size
    if len(size) == 2:
        return [size[0], size[1]]
    short, long = (w, h) if w <= h else (h, w)
    requested_new_short = size[0]
    new_short, new_long = requested_new_short, int(requested_new_short * long / short)
    if max_size is not None:
        if max_size <= requested_new_short:
            raise ValueError(f"max_size = {max_size} must be strictly greater than the requested "
                             f"size for the smaller edge size = {size}")
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return [new_h, new_w]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    if isinstance(interpolation, int):
        interpolation = _interpolation_modes_from_int(interpolation)
    elif not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a "
                        "corresponding Pillow integer constant")
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError("Size must be an int or a 1 or 2 element tuple/list, not a "
                             f"{len(size)} element tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size specifies the length of "
                             "the smaller edge, i.e. size should be an int or a sequence of "
                             "length 1 in torchscript mode.")
    size = [size] if isinstance(size, int) else list(size)
    _, image_height, image_width = get_dimensions(img)
    output_size = _compute_resized_output_size((image_height, image_width), size, max_size)
    if [image_height, image_width] == output_size:
        return img
    if not _is_tensor(img):
        return F_pil.resize(img, output_size, pil_modes_mapping[interpolation])
    return F_t.resize(img, output_size, interpolation.value, antialias)


def crop(img, top, left, height, width):
    """The (height, width) window at (top, left); outside the image reads as zero."""
    return _on_image(img, F_t.crop, F_pil.crop, top, left, height, width)


def center_crop(img, output_size):
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    """padding: one number (all sides), (left/right, top/bottom) or (left, top, right,
    bottom); padding_mode: constant (fill), edge, reflect or symmetric."""
    if _is_tensor(img):
        return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    _check_image(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, right, top, bottom = F_t._parse_pad_padding(
        list(padding) if isinstance(padding, tuple) else padding)
    return F_pil.pad(img, (left, right, top, bottom), fill=fill, padding_mode=padding_mode)


def hflip(img):
    return _on_image(img, F_t.hflip, F_pil.hflip)


def vflip(img):
    return _on_image(img, F_t.vflip, F_pil.vflip)


def _get_inverse_affine_matrix(center, angle, translate, scale, shear):
    """The 2x3 matrix that maps output pixels back to input pixels for a rotation by `angle`
    degrees (with shear, scale and translation) about `center`: grid_sample reads the input
    at M^-1 applied to each output pixel.

        M = T * C * RotateScaleShear * C^-1,  returned: C * RSS^-1 * C^-1 * T^-1
    """
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    matrix = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
    matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
    matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
    matrix[2] += cx
    matrix[5] += cy
    return matrix


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    """Rotate counter-clockwise by `angle` degrees about `center` (default: the image centre);
    expand=True enlarges the output to hold the whole rotated image."""
    if isinstance(interpolation, int):
        interpolation = _interpolation_modes_from_int(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not _is_tensor(img):
        _check_image(img)
        return F_pil.rotate(img, angle=angle, interpolation=pil_modes_mapping[interpolation],
                            expand=expand, center=center, fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        # pixel coordinates -> coordinates about the image centre
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    # the tensor grid's y axis points down: a counter-clockwise turn is a negative angle there
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return F_t.rotate(img, matrix=matrix, interpolation=interpolation.value, expand=expand,
                      fill=fill)


# ---- colour -----------------------------------------------------------------------------------
def rgb_to_grayscale(img, num_output_channels=1):
    return _on_image(img, F_t.rgb_to_grayscale, F_pil.to_grayscale, num_output_channels)


to_grayscale = rgb_to_grayscale


def adjust_brightness(img, brightness_factor):
    """Blend with black: factor 0 gives black, 1 the original image."""
    return _on_image(img, F_t.adjust_brightness, F_pil.adjust_brightness, brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the image's mean gray: 0 gives flat gray, 1 the original image."""
    return _on_image(img, F_t.adjust_contrast, F_pil.adjust_contrast, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the grayscale image: 0 gives gray, 1 the original image."""
    return _on_image(img, F_t.adjust_saturation, F_pil.adjust_saturation, saturation_factor)


def adjust_hue(img, hue_factor):
    """Rotate the hue by hue_factor of a turn, in [-0.5, 0.5]."""
    return _on_image(img, F_t.adjust_hue, F_pil.adjust_hue, hue_factor)


def gaussian_blur(img, kernel_size, sigma=None):
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got "
                        f"{type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got "
                         f"{len(kernel_size)}")
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got "
                             f"{kernel_size}")
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    if sigma is not None and not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if _is_tensor(img):
        return F_t.gaussian_blur(img, kernel_size, sigma)
    _check_image(img)
    # like torchvision: blur PIL images as tensors
    return to_pil_image(F_t.gaussian_blur(pil_to_tensor(img), kernel_size, sigma),
                        mode=img.mode)


# ---- affine, multi-crop, erasing --------------------------------------------------------------
def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Rotate by `angle` degrees, translate by `translate` pixels, scale and shear (degrees,
    one value for x or (x, y)) about `center` (default: the image centre), keeping the size."""
    if isinstance(interpolation, int):
        interpolation = _interpolation_modes_from_int(interpolation)
    elif not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding "
                        "Pillow integer constant")
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    angle = float(angle)
    translate = list(translate)
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    _, height, width = get_dimensions(img)
    if not _is_tensor(img):
        _check_image(img)
        if center is None:
            center = [width * 0.5, height * 0.5]
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return F_pil.affine(img, matrix=matrix, interpolation=pil_modes_mapping[interpolation],
                            fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = _get_inverse_affine_matrix(center_f, angle, [1.0 * t for t in translate], scale,
                                        shear)
    return F_t.affine(img, matrix=matrix, interpolation=interpolation.value, fill=fill)


def _crop_size(size):
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return size


def five_crop(img, size):
    """The four corner crops and the centre crop: (top-left, top-right, bottom-left,
    bottom-right, center)."""
    size = _crop_size(size)
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"Requested crop size {size} is bigger than input size "
                         f"{(image_height, image_width)}")
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height,
              crop_width)
    return tl, tr, bl, br, center_crop(img, [crop_height, crop_width])


def ten_crop(img, size, vertical_flip=False):
    """five_crop of the image, then of its horizontal (or vertical) flip."""
    size = _crop_size(size)
    first_five = five_crop(img, size)
    img = vflip(img) if vertical_flip else hflip(img)
    return first_five + five_crop(img, size)


def erase(img, i, j, h, w, v, inplace=False):
    """The tensor image with its [i:i+h, j:j+w] region set to `v`."""
    if not isinstance(img, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)


# ---- the AutoAugment operations ----------------------------------------------------------------
def invert(img):
    """max value - img (255 - x for uint8, 1 - x for floats)."""
    return _on_image(img, F_t.invert, F_pil.invert)


def posterize(img, bits):
    """Keep the `bits` high bits of each uint8 value."""
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    return _on_image(img, F_t.posterize, F_pil.posterize, bits)


def solarize(img, threshold):
    """Invert the values at or above `threshold`."""
    return _on_image(img, F_t.solarize, F_pil.solarize, threshold)


def adjust_sharpness(img, sharpness_factor):
    """Blend with PIL's SMOOTH-filtered image: 0 blurred, 1 original, 2 twice as sharp."""
    return _on_image(img, F_t.adjust_sharpness, F_pil.adjust_sharpness, sharpness_factor)


def autocontrast(img):
    """Stretch each channel so its minimum maps to 0 and its maximum to the dtype's maximum."""
    return _on_image(img, F_t.autocontrast, F_pil.autocontrast)


def equalize(img):
    """Histogram equalisation of each channel of a uint8 image (PIL's algorithm)."""
    return _on_image(img, F_t.equalize, F_pil.equalize)


def _get_perspective_coeffs(startpoints, endpoints):
    """The 8 coefficients of the projective map sending each end point to its start point
    (least squares in float64, returned as float32 values like torchvision's)."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} "
                         f"startpoints and {len(endpoints)} endpoints.")
    a = np.zeros((8, 8), dtype=np.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.asarray(startpoints, dtype=np.float64).reshape(8)
    res = np.linalg.lstsq(a, b, rcond=None)[0].astype(np.float32)
    return [float(v) for v in res]


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None):
    """Warp so that the four `startpoints` corners land on `endpoints` ([x, y] each, in the
    order top-left, top-right, bottom-right, bottom-left)."""
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    if isinstance(interpolation, int):
        interpolation = _interpolation_modes_from_int(interpolation)
    elif not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding "
                        "Pillow integer constant")
    if not _is_tensor(img):
        _check_image(img)
        return F_pil.perspective(img, coeffs, interpolation=pil_modes_mapping[interpolation],
                                 fill=fill)
    return F_t.perspective(img, coeffs, interpolation=interpolation.value, fill=fill)
