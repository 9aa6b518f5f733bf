"""torchvision.io's image reading on ember, through Pillow: read_file, decode_image (and
decode_png / decode_jpeg), read_image, write_png / write_jpeg and ImageReadMode. Images come
back as (C, H, W) uint8 tensors as torchvision's. Video reading (read_video, VideoReader) is
not here and raises NotImplementedError."""
import io as _io
from enum import Enum

import numpy as np

import ember

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png",
           "decode_jpeg", "read_image", "write_png", "write_jpeg", "encode_png", "encode_jpeg"]


class ImageReadMode(Enum):
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODE = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
             ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The file's bytes as a 1-D uint8 tensor."""
    with open(path, "rb") as f:
        data = f.read()
    return ember.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data):
    with open(filename, "wb") as f:
        f.write(data.numpy(force=True).tobytes())


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode encoded image bytes (a uint8 tensor) or a file path into a (C, H, W) uint8
    tensor, converted to `mode` ("RGB", ImageReadMode.GRAY, ...)."""
    from PIL import Image, ImageOps
    if not isinstance(input, ember.Tensor):
        input = read_file(str(input))
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    img = Image.open(_io.BytesIO(input.numpy(force=True).tobytes()))
    if apply_exif_orientation:
        img = ImageOps.exif_transpose(img)
    if mode != ImageReadMode.UNCHANGED:
        img = img.convert(_PIL_MODE[mode])
    elif img.mode not in ("L", "LA", "RGB", "RGBA"):
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    arr = np.asarray(img)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.dtype != np.uint8:
        raise NotImplementedError(f"decode_image of {arr.dtype} images is not supported by "
                                  f"ember.vision")
    return ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


decode_png = decode_image
decode_jpeg = decode_image


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """decode_image(read_file(path))."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


def _encode(input, fmt, **opts):
    from PIL import Image
    if input.dtype != ember.uint8 or input.dim() != 3:
        raise RuntimeError(f"Input tensor dtype should be uint8 and have 3 dimensions, got "
                           f"{input.dtype} with {input.dim()} dimensions")
    arr = input.permute(1, 2, 0).numpy(force=True)
    buf = _io.BytesIO()
    Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr).save(buf, format=fmt, **opts)
    return ember.from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def encode_png(input, compression_level=6):
    return _encode(input, "PNG", compress_level=compression_level)


def encode_jpeg(input, quality=75):
    return _encode(input, "JPEG", quality=quality)


def write_png(input, filename, compression_level=6):
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input, filename, quality=75):
    write_file(filename, encode_jpeg(input, quality))


def __getattr__(name):
    if name in ("read_video", "read_video_timestamps", "write_video", "VideoReader"):
        raise NotImplementedError(f"torchvision.io.{name} (video) is not in ember.vision")
    raise AttributeError(f"module 'torchvision.io' has no attribute '{name}'")
