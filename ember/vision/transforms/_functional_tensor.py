"""The tensor half of ember.vision.transforms.functional: images are ember tensors of shape
(..., C, H, W), float in [0, 1] or integer in [0, max of the dtype]. Geometry goes through
nn.functional (interpolate, pad, grid_sample, conv2d), colour through elementwise ops, with
torchvision's arithmetic so that results match it.
"""
import functools
import math

import numpy as np

import ember
from ember.nn import functional as NF


def _assert_image_tensor(img):
    if not isinstance(img, ember.Tensor) or img.dim() < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    _assert_image_tensor(img)
    channels = 1 if img.dim() == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


_INT_MAX = {ember.uint8: 2 ** 8 - 1, ember.int8: 2 ** 7 - 1, ember.int16: 2 ** 15 - 1,
            ember.int32: 2 ** 31 - 1, ember.int64: 2 ** 63 - 1}


def _max_value(dtype):
    """The value of full intensity: 1.0 for floats, the largest value of an integer dtype."""
    if dtype.is_floating_point:
        return 1.0
    return _INT_MAX[dtype]


def _cast_squeeze_in(img, req_dtypes):
    """Kernels want a batch dim and a float dtype: add / convert, and say what to undo."""
    need_squeeze = img.dim() < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = out_dtype not in req_dtypes
    if need_cast:
        img = img.to(req_dtypes[0])
    return img, need_cast, need_squeeze, out_dtype


def _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype):
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        if out_dtype in (ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64):
            img = ember.round(img)  # float results round to the nearest integer, not truncate
        img = img.to(out_dtype)
    return img


def convert_image_dtype(image, dtype=ember.float32):
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        # float32 holds integers exactly only up to 2**24: refuse the unsafe casts
        if (image.dtype == ember.float32 and dtype in (ember.int32, ember.int64)) or (
                image.dtype == ember.float64 and dtype == ember.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed "
                               "safely.")
        # 1.0 must land on the max value, not one above it: scale by max + 1 - eps, truncate
        eps = 1e-3
        max_val = float(_max_value(dtype))
        return image.mul(max_val + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype).div_(input_max)
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return ember.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def normalize(tensor, mean, std, inplace=False):
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tensor.size()}")
    if _numbers(mean) and _numbers(std):  # as a Normalize transform holds them: convert once
        mean, std = _channel_stats(tuple(mean), tuple(std), tensor.dtype, tensor.device)
    else:
        mean, std = _channel_stats.__wrapped__(mean, std, tensor.dtype, tensor.device)
    # sub (out of place) is clone + sub_ in one op: the same values in a new tensor
    return tensor.sub_(mean).div_(std) if inplace else tensor.sub(mean).div_(std)


def _numbers(values):
    """Python numbers that can key the cache (-0.0 would share 0.0's entry, so it cannot)."""
    return isinstance(values, (list, tuple)) and all(
        type(v) in (int, float) and (v or math.copysign(1, v) > 0) for v in values)


@functools.lru_cache(maxsize=64)
def _channel_stats(mean, std, dtype, device):
    """mean and std as tensors of the image's dtype, shaped (C, 1, 1) when given per channel."""
    mean = ember.as_tensor(mean, dtype=dtype, device=device)
    std = ember.as_tensor(std, dtype=dtype, device=device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to "
                         "division by zero.")
    if mean.dim() == 1:
        mean = mean.view(-1, 1, 1)
    if std.dim() == 1:
        std = std.view(-1, 1, 1)
    return mean, std


def resize(img, size, interpolation="bilinear", antialias=True):
    if antialias and interpolation not in ("bilinear", "bicubic"):
        antialias = False  # torchvision ignores antialias for the other modes
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [ember.float32,
                                                                     ember.float64])
    align_corners = False if interpolation in ("bilinear", "bicubic") else None
    img = NF.interpolate(img, size=list(size), mode=interpolation, align_corners=align_corners,
                         antialias=antialias)
    if interpolation == "bicubic" and out_dtype == ember.uint8:
        img = img.clamp(min=0, max=255)
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def crop(img, top, left, height, width):
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        # the part outside the image is zero padding
        padding_ltrb = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                        max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], padding_ltrb, fill=0)
    return img[..., top:bottom, left:right]


def _parse_pad_padding(padding):
    """[left, top, right, bottom] -> nn.functional.pad's [left, right, top, bottom]."""
    if isinstance(padding, int):
        pad_left = pad_right = pad_top = pad_bottom = padding
    elif len(padding) == 1:
        pad_left = pad_right = pad_top = pad_bottom = padding[0]
    elif len(padding) == 2:
        pad_left = pad_right = padding[0]
        pad_top = pad_bottom = padding[1]
    else:
        pad_left, pad_top, pad_right, pad_bottom = padding
    return [pad_left, pad_right, pad_top, pad_bottom]


def _pad_symmetric(img, padding):
    """Mirror padding that repeats the edge pixel (NumPy's 'symmetric'), by index gathering;
    negative amounts crop."""
    in_sizes = img.shape
    left, right, top, bottom = padding
    _x = [i for i in range(-left, in_sizes[-1] + right)]
    _y = [i for i in range(-top, in_sizes[-2] + bottom)]
    x_idx = ember.tensor([_mirror(i, in_sizes[-1]) for i in _x], device=img.device)
    y_idx = ember.tensor([_mirror(i, in_sizes[-2]) for i in _y], device=img.device)
    return img.index_select(-1, x_idx).index_select(-2, y_idx)


def _mirror(i, n):
    period = 2 * n
    i %= period
    return i if i < n else period - 1 - i


def pad(img, padding, fill=0, padding_mode="constant"):
    _assert_image_tensor(img)
    if fill is None:
        fill = 0
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if isinstance(padding, tuple):
        padding = list(padding)
    if isinstance(padding, list) and len(padding) not in (1, 2, 4):
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = _parse_pad_padding(padding)
    if padding_mode == "edge":
        padding_mode = "replicate"
    elif padding_mode == "symmetric":
        return _pad_symmetric(img, p)
    if padding_mode == "constant":
        return NF.pad(img, p, mode="constant", value=float(fill))
    need_squeeze = img.dim() < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = not img.is_floating_point()
    if need_cast:
        img = img.to(ember.float32)
    img = NF.pad(img, p, mode=padding_mode)
    if need_squeeze:
        img = img.squeeze(dim=0)
    return img.to(out_dtype) if need_cast else img


def hflip(img):
    _assert_image_tensor(img)
    return img.flip(-1)


def vflip(img):
    _assert_image_tensor(img)
    return img.flip(-2)


# ---- colour -----------------------------------------------------------------------------------
def _blend(img1, img2, ratio):
    ratio = float(ratio)
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def rgb_to_grayscale(img, num_output_channels=1):
    if img.dim() < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found "
                        f"{img.dim()}")
    c = get_dimensions(img)[0]
    if c not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {c}")
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if c == 3:
        r, g, b = img.unbind(dim=-3)
        # ITU-R BT.601 luma, as PIL's convert("L")
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
        l_img = l_img.unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def adjust_brightness(img, brightness_factor):
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    return _blend(img, ember.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    c = get_dimensions(img)[0]
    dtype = img.dtype if img.is_floating_point() else ember.float32
    gray = rgb_to_grayscale(img) if c == 3 else img
    mean = ember.mean(gray.to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    if get_dimensions(img)[0] == 1:  # a gray image has no saturation to change
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb2hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = ember.max(img, dim=-3).values
    minc = ember.min(img, dim=-3).values
    eqc = maxc == minc  # gray pixels: hue and saturation are 0; avoid dividing by 0
    cr = maxc - minc
    ones = ember.ones_like(maxc)
    s = cr / ember.where(eqc, ones, maxc)
    cr_divisor = ember.where(eqc, ones, cr)
    rc = (maxc - r) / cr_divisor
    gc = (maxc - g) / cr_divisor
    bc = (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = ember.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return ember.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = ember.floor(h * 6.0)
    f = (h * 6.0) - i
    i = i.to(dtype=ember.int32)
    p = ember.clamp((v * (1.0 - s)), 0.0, 1.0)
    q = ember.clamp((v * (1.0 - s * f)), 0.0, 1.0)
    t = ember.clamp((v * (1.0 - s * (1.0 - f))), 0.0, 1.0)
    i = i % 6
    # the sextant i picks which of v, q, p, t each of r, g, b is
    mask = i.unsqueeze(dim=-3) == ember.arange(6, device=i.device).view(-1, 1, 1)
    a1 = ember.stack((v, q, p, p, t, v), dim=-3)
    a2 = ember.stack((t, v, v, q, p, p), dim=-3)
    a3 = ember.stack((p, p, t, v, v, q), dim=-3)
    a4 = ember.stack((a1, a2, a3), dim=-4)
    return ember.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), a4)


def adjust_hue(img, hue_factor):
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if get_dimensions(img)[0] == 1:
        return img
    orig_dtype = img.dtype
    img = convert_image_dtype(img, ember.float32)
    h, s, v = _rgb2hsv(img).unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    img_hue_adj = _hsv2rgb(ember.stack((h, s, v), dim=-3))
    return convert_image_dtype(img_hue_adj, orig_dtype)


# ---- rotation and blur ------------------------------------------------------------------------
def _gen_affine_grid(theta, w, h, ow, oh):
    """grid_sample coordinates of an (oh, ow) output for the inverse affine map `theta`
    (1, 2, 3) given in pixels about the image centre."""
    d = 0.5
    x_grid = ember.linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow, dtype=theta.dtype)
    y_grid = ember.linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh, dtype=theta.dtype)
    base_grid = ember.stack([x_grid.expand(oh, ow), y_grid[:, None].expand(oh, ow),
                             ember.ones(oh, ow, dtype=theta.dtype)], dim=-1)
    rescaled_theta = theta.transpose(1, 2) / ember.tensor([0.5 * w, 0.5 * h], dtype=theta.dtype)
    output_grid = base_grid.view(1, oh * ow, 3).bmm(rescaled_theta)
    return output_grid.view(1, oh, ow, 2)


def _apply_grid_transform(img, grid, mode, fill):
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if img.shape[0] > 1:
        grid = grid.expand(img.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        # a channel of ones, sampled with the image, marks which output pixels came from inside
        mask = ember.ones((img.shape[0], 1, img.shape[2], img.shape[3]), dtype=img.dtype)
        img = ember.cat((img, mask), dim=1)
    img = NF.grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = img[:, -1:, :, :].expand_as(img[:, :-1])
        img = img[:, :-1, :, :]
        fill_list, len_fill = (fill, len(fill)) if isinstance(fill, (tuple, list)) else \
            ([float(fill)], 1)
        fill_img = ember.tensor(fill_list, dtype=img.dtype).view(1, len_fill, 1, 1) \
            .expand_as(img)
        if mode == "nearest":
            img = ember.where(mask < 0.5, fill_img, img)
        else:
            img = img * mask + (1.0 - mask) * fill_img
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def _compute_affine_output_size(matrix, w, h):
    """The size of the box that holds the whole transformed image (PIL's expand=True), in
    float32 like torchvision (float64 would turn 8.0 into 8.000000000000002 below)."""
    half = np.array([0.5 * w, 0.5 * h], dtype=np.float32)
    pts = np.array([[-1, -1, 1], [-1, 1, 1], [1, 1, 1], [1, -1, 1]], dtype=np.float32)
    pts[:, :2] *= half
    new_pts = pts @ np.array(matrix, dtype=np.float32).reshape(2, 3).T
    # truncate to 1e-4 so that 1e-15 of rounding noise does not ceil to one more pixel
    tol = np.float32(1e-4)
    cmax = np.ceil(np.trunc((new_pts.max(axis=0) + half) * np.float32(1e4)) * tol)
    cmin = np.floor(np.trunc((new_pts.min(axis=0) + half) * np.float32(1e4)) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def rotate(img, matrix, interpolation="nearest", expand=False, fill=None):
    w, h = img.shape[-1], img.shape[-2]
    ow, oh = _compute_affine_output_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    theta = ember.tensor(matrix, dtype=dtype).reshape(1, 2, 3)
    grid = _gen_affine_grid(theta, w=w, h=h, ow=ow, oh=oh)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _get_gaussian_kernel1d(kernel_size, sigma, dtype):
    ksize_half = (kernel_size - 1) * 0.5
    x = ember.linspace(-ksize_half, ksize_half, steps=kernel_size, dtype=dtype)
    pdf = ember.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma):
    """Separable Gaussian as one depthwise conv2d of the outer-product kernel, reflect-padded."""
    dtype = img.dtype if img.is_floating_point() else ember.float32
    kernel1d_x = _get_gaussian_kernel1d(kernel_size[0], sigma[0], dtype)
    kernel1d_y = _get_gaussian_kernel1d(kernel_size[1], sigma[1], dtype)
    kernel = kernel1d_y[:, None] * kernel1d_x[None, :]
    kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    padding = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2,
               kernel_size[1] // 2]
    img = NF.pad(img, padding, mode="reflect")
    img = NF.conv2d(img, kernel, groups=img.shape[-3])
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def affine(img, matrix, interpolation="nearest", fill=None):
    """Resample through the inverse affine `matrix` (6 floats) at the input's size."""
    dtype = img.dtype if img.is_floating_point() else ember.float32
    theta = ember.tensor(matrix, dtype=dtype).reshape(1, 2, 3)
    w, h = img.shape[-1], img.shape[-2]
    grid = _gen_affine_grid(theta, w=w, h=h, ow=w, oh=h)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def erase(img, i, j, h, w, v, inplace=False):
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


# ---- the AutoAugment operations ----------------------------------------------------------------
def _assert_channels_1_or_3(img, ndim_check=True):
    _assert_image_tensor(img)
    if ndim_check and img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found "
                        f"{img.ndim}")
    c = img.shape[-3] if img.ndim > 2 else 1
    if c not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {c}")


def invert(img):
    _assert_channels_1_or_3(img)
    return _max_value(img.dtype) - img


def posterize(img, bits):
    _assert_image_tensor(img)
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found "
                        f"{img.ndim}")
    if img.dtype != ember.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels_1_or_3(img)
    return img & -int(2 ** (8 - bits))


def solarize(img, threshold):
    _assert_channels_1_or_3(img)
    if threshold > _max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return ember.where(img >= threshold, invert(img), img)


def _blurred_degenerate_image(img):
    """The image smoothed by PIL's SMOOTH kernel (1 1 1 / 1 5 1 / 1 1 1, over 13), its border
    pixels kept."""
    dtype = img.dtype if img.is_floating_point() else ember.float32
    kernel = ember.ones((3, 3), dtype=dtype)
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()
    kernel = kernel.expand(img.shape[-3], 1, 3, 3)
    tmp, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    tmp = NF.conv2d(tmp, kernel, groups=tmp.shape[-3])
    tmp = _cast_squeeze_out(tmp, need_cast, need_squeeze, out_dtype)
    result = img.clone()
    result[..., 1:-1, 1:-1] = tmp
    return result


def adjust_sharpness(img, sharpness_factor):
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    _assert_channels_1_or_3(img, ndim_check=False)
    if img.size(-1) <= 2 or img.size(-2) <= 2:
        return img
    return _blend(img, _blurred_degenerate_image(img), sharpness_factor)


def autocontrast(img):
    _assert_channels_1_or_3(img)
    bound = _max_value(img.dtype)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    minimum = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    maximum = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    scale = bound / (maximum - minimum)
    eq_idxs = ember.isfinite(scale).logical_not()
    minimum[eq_idxs] = 0
    scale[eq_idxs] = 1
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def _scale_channel(img_chan):
    hist = ember.bincount(img_chan.reshape(-1), minlength=256)
    nonzero_hist = hist[hist != 0]
    step = ember.div(nonzero_hist[:-1].sum(), 255, rounding_mode="floor")
    if step == 0:
        return img_chan
    lut = ember.div(ember.cumsum(hist, 0) + ember.div(step, 2, rounding_mode="floor"), step,
                    rounding_mode="floor")
    lut = NF.pad(lut, [1, 0])[:-1].clamp(0, 255)
    return lut[img_chan.to(ember.int64)].to(ember.uint8)


def equalize(img):
    _assert_image_tensor(img)
    if not 3 <= img.ndim <= 4:
        raise TypeError(f"Input image tensor should have 3 or 4 dimensions, but found {img.ndim}")
    if img.dtype != ember.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels_1_or_3(img)
    if img.ndim == 3:
        return ember.stack([_scale_channel(img[c]) for c in range(img.size(0))])
    return ember.stack([equalize(x) for x in img])


def _perspective_grid(coeffs, ow, oh, dtype):
    """grid_sample coordinates of the projective map (a x + b y + c, d x + e y + f) /
    (g x + h y + 1) evaluated at the output pixel centres."""
    theta1 = ember.tensor([[[coeffs[0], coeffs[1], coeffs[2]],
                            [coeffs[3], coeffs[4], coeffs[5]]]], dtype=dtype)
    theta2 = ember.tensor([[[coeffs[6], coeffs[7], 1.0], [coeffs[6], coeffs[7], 1.0]]],
                          dtype=dtype)
    d = 0.5
    x_grid = ember.linspace(d, ow * 1.0 + d - 1.0, steps=ow).to(dtype)
    y_grid = ember.linspace(d, oh * 1.0 + d - 1.0, steps=oh).to(dtype)
    base_grid = ember.stack([x_grid.expand(oh, ow), y_grid[:, None].expand(oh, ow),
                             ember.ones(oh, ow, dtype=dtype)], dim=-1).view(1, oh * ow, 3)
    rescaled_theta1 = theta1.transpose(1, 2) / ember.tensor([0.5 * ow, 0.5 * oh], dtype=dtype)
    output_grid = base_grid.bmm(rescaled_theta1) / base_grid.bmm(theta2.transpose(1, 2)) - 1.0
    return output_grid.view(1, oh, ow, 2)


def perspective(img, perspective_coeffs, interpolation="bilinear", fill=None):
    if not isinstance(img, ember.Tensor):
        raise TypeError("Input img should be Tensor.")
    _assert_image_tensor(img)
    if len(perspective_coeffs) != 8:
        raise ValueError("Argument coeffs should have 8 float values")
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")
    dtype = img.dtype if img.is_floating_point() else ember.float32
    grid = _perspective_grid(perspective_coeffs, ow=img.shape[-1], oh=img.shape[-2], dtype=dtype)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)
