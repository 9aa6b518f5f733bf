"""The PIL half of ember.vision.transforms.functional: the same operations on PIL images, done
by Pillow itself (resampling, rotation, ImageEnhance), as torchvision does. Pillow is imported
lazily so that ember.vision imports without it.
"""
import sys

import numpy as np


def _pil():
    try:
        from PIL import Image, ImageEnhance, ImageOps
    except ImportError as e:
        raise ImportError("transforms on PIL images need Pillow: pip install Pillow") from e
    return Image, ImageEnhance, ImageOps


def _is_pil_image(img):
    # An object can only be a PIL image if Pillow has been imported: no import needed here.
    Image = sys.modules.get("PIL.Image")
    return Image is not None and isinstance(img, Image.Image)


def get_dimensions(img):
    channels = len(img.getbands())
    width, height = img.size
    return [channels, height, width]


def resize(img, size, interpolation):
    """size is [h, w]; PIL takes (w, h)."""
    return img.resize(tuple(size[::-1]), interpolation)


def crop(img, top, left, height, width):
    return img.crop((left, top, left + width, top + height))


def hflip(img):
    Image, _, _ = _pil()
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    Image, _, _ = _pil()
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def _parse_fill(fill, img, name="fillcolor"):
    """PIL wants a fill per band as a tuple (or one number for one band)."""
    num_bands = len(img.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and num_bands > 1:
        fill = tuple([fill] * num_bands)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * num_bands
        elif len(fill) != num_bands:
            raise ValueError("The number of elements in 'fill' does not match the number of "
                             f"channels of the image ({len(fill)} != {num_bands})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def pad(img, padding, fill=0, padding_mode="constant"):
    Image, _, ImageOps = _pil()
    left, right, top, bottom = padding
    if padding_mode == "constant":
        opts = _parse_fill(fill, img, name="fill")
        if img.mode == "P":
            palette = img.getpalette()
            image = ImageOps.expand(img, border=(left, top, right, bottom), **opts)
            image.putpalette(palette)
            return image
        return ImageOps.expand(img, border=(left, top, right, bottom), **opts)
    # negative padding crops first, then NumPy pads what is left
    if min(left, top, right, bottom) < 0:
        w, h = img.size
        img = img.crop((max(-left, 0), max(-top, 0), w - max(-right, 0), h - max(-bottom, 0)))
        left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
    arr = np.asarray(img)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
    return Image.fromarray(np.pad(arr, widths, mode=padding_mode))


def rotate(img, angle, interpolation, expand=False, center=None, fill=None):
    opts = _parse_fill(fill, img)
    return img.rotate(angle, interpolation, expand, center, **opts)


def to_grayscale(img, num_output_channels):
    Image, _, _ = _pil()
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        np_img = np.asarray(img.convert("L"))
        return Image.fromarray(np.dstack([np_img, np_img, np_img]))
    raise ValueError("num_output_channels should be either 1 or 3")


def adjust_brightness(img, brightness_factor):
    _, ImageEnhance, _ = _pil()
    return ImageEnhance.Brightness(img).enhance(brightness_factor)


def adjust_contrast(img, contrast_factor):
    _, ImageEnhance, _ = _pil()
    return ImageEnhance.Contrast(img).enhance(contrast_factor)


def adjust_saturation(img, saturation_factor):
    _, ImageEnhance, _ = _pil()
    return ImageEnhance.Color(img).enhance(saturation_factor)


def adjust_hue(img, hue_factor):
    """Shift the H channel of PIL's 8-bit HSV, wrapping around."""
    Image, _, _ = _pil()
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    input_mode = img.mode
    if input_mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    with np.errstate(over="ignore"):
        np_h += np.array(hue_factor * 255).astype(np.uint8)
    h = Image.fromarray(np_h)
    return Image.merge("HSV", (h, s, v)).convert(input_mode)


def affine(img, matrix, interpolation, fill=None):
    opts = _parse_fill(fill, img)
    return img.transform(img.size, _pil()[0].AFFINE, matrix, interpolation, **opts)


def invert(img):
    return _pil()[2].invert(img)


def posterize(img, bits):
    return _pil()[2].posterize(img, bits)


def solarize(img, threshold):
    return _pil()[2].solarize(img, threshold)


def adjust_sharpness(img, sharpness_factor):
    return _pil()[1].Sharpness(img).enhance(sharpness_factor)


def autocontrast(img):
    return _pil()[2].autocontrast(img)


def equalize(img):
    return _pil()[2].equalize(img)


def perspective(img, perspective_coeffs, interpolation, fill=None):
    opts = _parse_fill(fill, img)
    return img.transform(img.size, _pil()[0].PERSPECTIVE, perspective_coeffs, interpolation,
                         **opts)
