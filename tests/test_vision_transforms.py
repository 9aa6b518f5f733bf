"""ember.vision.transforms on fixed images against reference arithmetic written here with
torch, NumPy and Pillow (torchvision is not installed): torchvision's formulas, its random
draws replayed on torch's generator under the same seed, and its reprs."""
import colorsys
import math
import random

import numpy as np
import pytest

import ember
import ember.vision.transforms as T
import ember.vision.transforms.functional as F

torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
tF = torch.nn.functional

RGB = np.random.default_rng(0).integers(0, 256, (12, 17, 3), dtype=np.uint8)


def pil_rgb():
    return Image.fromarray(RGB)


def float_chw(seed=1, shape=(3, 12, 17)):
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def close(e, expected, atol=1e-6):
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    got = e.numpy() if isinstance(e, ember.Tensor) else np.asarray(e)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), atol=atol)


# --- conversions --------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["RGB", "L", "1", "I", "F", "RGBA"])
def test_to_tensor_from_pil(mode):
    pic = pil_rgb().convert(mode)
    arr = np.array(pic)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    ref = torch.from_numpy(arr.copy()).permute(2, 0, 1)
    if mode == "1":
        ref = 255 * ref.to(torch.uint8)
    if ref.dtype == torch.uint8:
        ref = ref.float() / 255
    out = T.ToTensor()(pic)
    assert out.is_contiguous()
    close(out, ref)


def test_to_tensor_from_ndarray_and_errors():
    close(F.to_tensor(RGB), torch.from_numpy(RGB).permute(2, 0, 1).float() / 255)
    floats = RGB.astype(np.float64)
    close(F.to_tensor(floats[:, :, 0]), torch.from_numpy(floats[None, :, :, 0]))
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        F.to_tensor([1, 2])
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 4 dimensions"):
        F.to_tensor(np.zeros((1, 2, 3, 4)))


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_to_tensor_scales_every_uint8_value_as_torch(default):
    """Bit for bit torch's uint8 -> default dtype -> div(255), for all 256 values."""
    every = np.arange(256, dtype=np.uint8).reshape(16, 16)
    previous = ember.get_default_dtype()
    ember.set_default_dtype(getattr(ember, default))
    try:
        out = F.to_tensor(Image.fromarray(every))
    finally:
        ember.set_default_dtype(previous)
    ref = torch.from_numpy(every)[None].to(getattr(torch, default)).div(255)
    assert out.dtype == getattr(ember, default)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_pil_to_tensor_keeps_values_and_dtype():
    out = T.PILToTensor()(pil_rgb())
    close(out, torch.from_numpy(RGB).permute(2, 0, 1))
    gray = pil_rgb().convert("L")
    close(F.pil_to_tensor(gray), torch.from_numpy(np.array(gray))[None])
    with pytest.raises(TypeError, match="pic should be PIL Image"):
        F.pil_to_tensor(RGB)


def test_to_pil_image():
    t = float_chw()
    pic = T.ToPILImage()(ember.tensor(t))
    assert pic.mode == "RGB" and pic.size == (17, 12)
    expected = (torch.tensor(t) * 255).to(torch.uint8).permute(1, 2, 0)
    np.testing.assert_array_equal(np.array(pic), expected.numpy())
    assert F.to_pil_image(ember.tensor(t[:1])).mode == "L"
    assert F.to_pil_image(ember.tensor(t[:1]), mode="F").mode == "F"
    assert F.to_pil_image(RGB[:, :, :2]).mode == "LA"
    assert F.to_pil_image(np.dstack([RGB, RGB[:, :, :1]])).mode == "RGBA"
    np.testing.assert_array_equal(np.array(F.to_pil_image(T.PILToTensor()(pil_rgb()))), RGB)
    with pytest.raises(ValueError, match="Only modes \\['RGB', 'YCbCr', 'HSV'\\]"):
        F.to_pil_image(RGB, mode="RGBA")
    with pytest.raises(ValueError, match="pic should not have > 4 channels. Got 5 channels"):
        F.to_pil_image(ember.zeros(5, 2, 2))
    assert repr(T.ToPILImage()) == "ToPILImage()" and repr(T.ToPILImage("L")) == \
        "ToPILImage(mode=L)"


def test_convert_image_dtype():
    f = torch.tensor(float_chw())
    u8 = torch.from_numpy(RGB).permute(2, 0, 1)
    close(T.ConvertImageDtype(ember.uint8)(ember.tensor(f.numpy())),
          (f * (255 + 1.0 - 1e-3)).to(torch.uint8))
    close(F.convert_image_dtype(ember.tensor(u8.numpy()), ember.float64), u8.double() / 255)
    close(F.convert_image_dtype(ember.tensor(u8.numpy()), ember.int32),
          u8.to(torch.int32) * ((2 ** 31) // 256))
    i32 = (u8.to(torch.int32) * 12345678)
    close(F.convert_image_dtype(ember.tensor(i32.numpy()), ember.uint8),
          torch.div(i32, 2 ** 31 // 256, rounding_mode="floor").to(torch.uint8))
    e = ember.tensor(f.numpy())
    assert F.convert_image_dtype(e, ember.float32) is e
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        F.convert_image_dtype(e, ember.int64)


def test_normalize():
    t = float_chw()
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    ref = (torch.tensor(t) - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None,
                                                                                    None]
    e = ember.tensor(t)
    out = T.Normalize(mean, std)(e)
    close(out, ref)
    assert np.array_equal(e.numpy(), t)  # not in place
    T.Normalize(mean, std, inplace=True)(e)
    close(e, ref)
    batched = ember.tensor(np.stack([t, t]))
    close(F.normalize(batched, mean, std), torch.stack([ref, ref]))
    assert repr(T.Normalize(mean, std)) == f"Normalize(mean={mean}, std={std})"
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        F.normalize(ember.tensor(RGB), mean, std)
    for _ in range(2):  # the converted mean and std are cached; the check is not skipped
        with pytest.raises(ValueError, match="std evaluated to zero"):
            F.normalize(ember.tensor(t), mean, (1.0, 0.0, 1.0))
    # same numbers, other dtypes and kinds of mean/std: each converted for its own image
    doubles = F.normalize(ember.tensor(t.astype(np.float64)), list(mean), list(std))
    close(doubles, ref.double(), atol=1e-12 + 1e-6)
    assert doubles.dtype == ember.float64
    close(F.normalize(ember.tensor(t), ember.tensor(mean).view(3, 1, 1), 0.5),
          (torch.tensor(t) - torch.tensor(mean)[:, None, None]) / 0.5)
    signed = F.normalize(ember.tensor([[[-0.0, 1.0]]]), [-0.0], [1.0])  # -0.0 - -0.0 is +0.0
    assert math.copysign(1, signed[0, 0, 0].item()) == 1.0
    with pytest.raises(ValueError, match="Expected tensor to be a tensor image of size"):
        F.normalize(ember.zeros(4, 4), mean, std)


# --- resize and crops ---------------------------------------------------------------------------

@pytest.mark.parametrize("size, max_size, expected", [
    (8, None, (8, 11)), ([8], None, (8, 11)), ((5, 20), None, (5, 20)), (9, 11, (8, 11)),
    (9, 12, (9, 12)),
    (30, None, (30, 42))])
def test_resize_tensor_sizes_and_values(size, max_size, expected):
    t = float_chw()
    out = T.Resize(size, max_size=max_size)(ember.tensor(t))
    ref = tF.interpolate(torch.tensor(t)[None], size=expected, mode="bilinear",
                         align_corners=False, antialias=True)[0]
    close(out, ref, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "bicubic", "bilinear"])
def test_resize_uint8_tensor(mode):
    u8 = torch.from_numpy(RGB).permute(2, 0, 1).contiguous()
    out = F.resize(ember.tensor(u8.numpy()), [7, 9], T.InterpolationMode(mode))
    ref = tF.interpolate(u8[None].float(), size=(7, 9), mode=mode,
                         align_corners=None if mode == "nearest" else False,
                         antialias=mode != "nearest")[0]
    if mode == "bicubic":
        ref = ref.clamp(0, 255)
    if mode != "nearest":
        ref = ref.round()
    diff = np.abs(out.numpy().astype(int) - ref.to(torch.uint8).numpy().astype(int))
    assert out.dtype == ember.uint8 and diff.max() <= 1 and (diff > 0).mean() < 0.02


def test_resize_pil_and_errors():
    pic = pil_rgb()
    for interp, pil_filter in ((T.InterpolationMode.BILINEAR, Image.BILINEAR),
                               (T.InterpolationMode.NEAREST, Image.NEAREST), (3, Image.BICUBIC)):
        out = T.Resize((6, 25), interpolation=interp)(pic)
        np.testing.assert_array_equal(np.array(out), np.array(pic.resize((25, 6), pil_filter)))
    assert T.Resize(12)(pic) is pic  # already the requested size
    assert repr(T.Resize(8)) == \
        "Resize(size=8, interpolation=bilinear, max_size=None, antialias=True)"
    with pytest.raises(ValueError, match="max_size = 8 must be strictly greater"):
        T.Resize(8, max_size=8)(pic)
    with pytest.raises(ValueError, match="max_size should only be passed"):
        F.resize(pic, [8, 9], max_size=20)
    with pytest.raises(TypeError, match="Size should be int or sequence"):
        T.Resize(8.0)


@pytest.mark.parametrize("size", [(5, 8), 4, (12, 17), (14, 20)])
def test_center_crop(size):
    t = float_chw()
    h, w = (size, size) if isinstance(size, int) else size
    ref = torch.tensor(t)
    if h > 12 or w > 17:  # zero padding, the extra pixel on the bottom/right
        ref = tF.pad(ref, [(w - 17) // 2, (w - 16) // 2, (h - 12) // 2, (h - 11) // 2])
    top, left = int(round((ref.shape[1] - h) / 2)), int(round((ref.shape[2] - w) / 2))
    ref = ref[:, top:top + h, left:left + w]
    close(T.CenterCrop(size)(ember.tensor(t)), ref)
    pic_out = T.CenterCrop(size)(pil_rgb())
    ref_pic = pil_rgb().crop((round((17 - w) / 2), round((12 - h) / 2),
                              round((17 - w) / 2) + w, round((12 - h) / 2) + h))
    if h <= 12 and w <= 17:
        np.testing.assert_array_equal(np.array(pic_out), np.array(ref_pic))
    assert pic_out.size == (w, h)


def torch_randint(high):
    return torch.randint(0, high, size=(1,)).item()


def test_random_crop_draws_like_torchvision():
    t = float_chw()
    for seed in range(3):
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        out = T.RandomCrop((5, 7))(ember.tensor(t))
        i, j = torch_randint(12 - 5 + 1), torch_randint(17 - 7 + 1)
        close(out, torch.tensor(t)[:, i:i + 5, j:j + 7])
    ember.manual_seed(0)
    torch.manual_seed(0)
    out = T.RandomCrop(10, padding=(1, 2), fill=0.5, pad_if_needed=True)(ember.tensor(t[:, :8]))
    ref = tF.pad(torch.tensor(t[:, :8]), [1, 1, 2, 2], value=0.5)  # 12 x 19
    i, j = torch_randint(12 - 10 + 1), torch_randint(19 - 10 + 1)
    close(out, ref[:, i:i + 10, j:j + 10])
    ember.manual_seed(0)
    torch.manual_seed(0)
    out = T.RandomCrop(14, pad_if_needed=True, padding_mode="reflect")(ember.tensor(t))
    ref = tF.pad(torch.tensor(t)[None], [0, 0, 2, 2], mode="reflect")[0]  # 16 x 17
    i, j = torch_randint(16 - 14 + 1), torch_randint(17 - 14 + 1)
    close(out, ref[:, i:i + 14, j:j + 14])
    assert repr(T.RandomCrop(10, padding=2)) == "RandomCrop(size=(10, 10), padding=2)"
    with pytest.raises(ValueError, match=r"Required crop size \(13, 5\) is larger than input"):
        T.RandomCrop((13, 5))(ember.tensor(t))


def torchvision_rrc_params(height, width, scale, ratio):
    """RandomResizedCrop.get_params as torchvision writes it, on torch's generator."""
    area = height * width
    log_ratio = torch.log(torch.tensor(ratio))
    for _ in range(10):
        target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
        aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            return torch_randint(height - h + 1), torch_randint(width - w + 1), h, w
    in_ratio = width / height
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


@pytest.mark.parametrize("scale, ratio", [((0.08, 1.0), (3 / 4, 4 / 3)), ((0.5, 0.9), (1, 2)),
                                          ((2.0, 3.0), (0.2, 0.3))])  # the last falls back
def test_random_resized_crop_same_crop_as_torchvision(scale, ratio):
    t = float_chw(shape=(3, 30, 40))
    transform = T.RandomResizedCrop((9, 11), scale=scale, ratio=ratio)
    for seed in range(4):
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        params = T.RandomResizedCrop.get_params(ember.tensor(t), scale, ratio)
        assert params == torchvision_rrc_params(30, 40, scale, ratio)
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        out = transform(ember.tensor(t))
        i, j, h, w = torchvision_rrc_params(30, 40, scale, ratio)
        ref = tF.interpolate(torch.tensor(t)[None, :, i:i + h, j:j + w], size=(9, 11),
                             mode="bilinear", align_corners=False, antialias=True)[0]
        close(out, ref, atol=1e-5)
    assert repr(T.RandomResizedCrop(8)) == (
        "RandomResizedCrop(size=(8, 8), scale=(0.08, 1.0), ratio=(0.75, 1.3333), "
        "interpolation=bilinear, antialias=True)")


def test_random_resized_crop_pil():
    ember.manual_seed(5)
    out = T.RandomResizedCrop(8, interpolation=T.InterpolationMode.BICUBIC)(pil_rgb())
    torch.manual_seed(5)
    i, j, h, w = torchvision_rrc_params(12, 17, (0.08, 1.0), (3 / 4, 4 / 3))
    ref = pil_rgb().crop((j, i, j + w, i + h)).resize((8, 8), Image.BICUBIC)
    np.testing.assert_array_equal(np.array(out), np.array(ref))


@pytest.mark.parametrize("cls, flip", [(T.RandomHorizontalFlip, -1), (T.RandomVerticalFlip, -2)])
def test_random_flips(cls, flip):
    t = float_chw()
    for seed in range(4):
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        out = cls(p=0.5)(ember.tensor(t))
        ref = torch.tensor(t).flip(flip) if torch.rand(1) < 0.5 else torch.tensor(t)
        close(out, ref)
    pil_out = cls(p=1.0)(pil_rgb())
    np.testing.assert_array_equal(np.array(pil_out), np.flip(RGB, axis=1 if flip == -1 else 0))
    assert repr(cls(0.3)) == f"{cls.__name__}(p=0.3)"


@pytest.mark.parametrize("padding, mode", [(2, "constant"), ((1, 3), "edge"),
                                           ((1, 2, 3, 4), "reflect"), ((2, 1, 0, 3), "symmetric"),
                                           ((-1, 2, 3, -2), "symmetric")])
def test_pad(padding, mode):
    left, top, right, bottom = (padding,) * 4 if isinstance(padding, int) else \
        (padding * 2 if len(padding) == 2 else padding)
    np_mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric",
               "constant": "constant"}[mode]

    def np_pad(a, widths):  # negative widths crop
        crop = tuple(slice(max(-b, 0), a.shape[i] - max(-e, 0)) for i, (b, e) in enumerate(widths))
        return np.pad(a[crop], [(max(b, 0), max(e, 0)) for b, e in widths], mode=np_mode)
    t = float_chw()
    out = T.Pad(padding, padding_mode=mode)(ember.tensor(t))
    close(out, np_pad(t, [(0, 0), (top, bottom), (left, right)]))
    u8 = ember.tensor(np.ascontiguousarray(RGB.transpose(2, 0, 1)))
    close(F.pad(u8, padding, padding_mode=mode),
          np_pad(RGB.transpose(2, 0, 1), [(0, 0), (top, bottom), (left, right)]))
    if min(left, top, right, bottom) >= 0:
        np.testing.assert_array_equal(np.array(F.pad(pil_rgb(), padding, padding_mode=mode)),
                                      np_pad(RGB, [(top, bottom), (left, right), (0, 0)]))
    assert repr(T.Pad(padding, padding_mode=mode)) == \
        f"Pad(padding={padding}, fill=0, padding_mode={mode})"


def test_pad_fill_and_errors():
    close(F.pad(ember.tensor(float_chw()), 1, fill=0.25),
          tF.pad(torch.tensor(float_chw()), [1, 1, 1, 1], value=0.25))
    filled = np.array(F.pad(pil_rgb(), 1, fill=(10, 20, 30)))
    assert filled[0, 0].tolist() == [10, 20, 30]
    with pytest.raises(ValueError, match="Padding mode should be either"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError, match="Padding must be an int or a 1, 2, or 4 element tuple"):
        F.pad(ember.zeros(1, 3, 3), (1, 2, 3))


# --- colour -------------------------------------------------------------------------------------

def t_blend(img, other, ratio):
    bound = 1.0 if img.is_floating_point() else 255
    return (ratio * img + (1.0 - ratio) * other).clamp(0, bound).to(img.dtype)


def t_gray(img):
    r, g, b = img.unbind(-3)
    return (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)


@pytest.mark.parametrize("as_uint8", [False, True])
def test_color_adjustments(as_uint8):
    t = torch.from_numpy(RGB).permute(2, 0, 1).contiguous() if as_uint8 else \
        torch.tensor(float_chw())
    e = ember.tensor(t.numpy())
    close(F.adjust_brightness(e, 1.3), t_blend(t, torch.zeros_like(t), 1.3))
    mean = t_gray(t).float().mean(dim=(-3, -2, -1), keepdim=True) if as_uint8 else \
        t_gray(t).mean(dim=(-3, -2, -1), keepdim=True)
    close(F.adjust_contrast(e, 0.6), t_blend(t, mean, 0.6), atol=1e-5)
    close(F.adjust_saturation(e, 1.7), t_blend(t, t_gray(t), 1.7), atol=1e-5)
    close(F.rgb_to_grayscale(e), t_gray(t))
    close(T.Grayscale(3)(e), t_gray(t).expand(3, -1, -1))
    with pytest.raises(ValueError, match="brightness_factor \\(-1\\) is not non-negative"):
        F.adjust_brightness(e, -1)


def test_adjust_hue_against_colorsys():
    t = float_chw(shape=(3, 4, 5))
    for factor in (0.0, 0.2, -0.45):
        out = F.adjust_hue(ember.tensor(t), factor).numpy()
        ref = np.zeros_like(t)
        for y in range(4):
            for x in range(5):
                h, s, v = colorsys.rgb_to_hsv(*t[:, y, x])
                ref[:, y, x] = colorsys.hsv_to_rgb((h + factor) % 1.0, s, v)
        np.testing.assert_allclose(out, ref, atol=1e-5)
    with pytest.raises(ValueError, match=r"hue_factor \(0.6\) is not in \[-0.5, 0.5\]"):
        F.adjust_hue(ember.tensor(t), 0.6)


def test_pil_color_adjustments_use_pillow():
    from PIL import ImageEnhance
    pic = pil_rgb()
    for fn, enhancer in ((F.adjust_brightness, ImageEnhance.Brightness),
                         (F.adjust_contrast, ImageEnhance.Contrast),
                         (F.adjust_saturation, ImageEnhance.Color)):
        np.testing.assert_array_equal(np.array(fn(pic, 1.4)),
                                      np.array(enhancer(pic).enhance(1.4)))
    h, s, v = pic.convert("HSV").split()
    shifted = (np.array(h).astype(int) + int(np.uint8(0.1 * 255))) % 256
    ref = Image.merge("HSV", (Image.fromarray(shifted.astype(np.uint8)), s, v)).convert("RGB")
    np.testing.assert_array_equal(np.array(F.adjust_hue(pic, 0.1)), np.array(ref))
    np.testing.assert_array_equal(np.array(T.Grayscale()(pic)), np.array(pic.convert("L")))


def test_color_jitter_draws_like_torchvision():
    t = float_chw()
    jitter = T.ColorJitter(brightness=0.4, contrast=(0.5, 1.5), saturation=0.3, hue=0.1)
    for seed in range(3):
        ember.manual_seed(seed)
        out = jitter(ember.tensor(t))
        torch.manual_seed(seed)
        order = torch.randperm(4).tolist()
        factors = [float(torch.empty(1).uniform_(lo, hi)) for lo, hi in
                   ((0.6, 1.4), (0.5, 1.5), (0.7, 1.3), (-0.1, 0.1))]
        fns = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        ref = ember.tensor(t)
        for i in order:
            ref = fns[i](ref, factors[i])
        close(out, ref.numpy())
    assert repr(jitter) == ("ColorJitter(brightness=(0.6, 1.4), contrast=(0.5, 1.5), "
                            "saturation=(0.7, 1.3), hue=(-0.1, 0.1))")
    assert T.ColorJitter().brightness is None
    with pytest.raises(ValueError, match="hue values should be between \\(-0.5, 0.5\\)"):
        T.ColorJitter(hue=0.7)
    with pytest.raises(TypeError, match="brightness should be a single number or a list"):
        T.ColorJitter(brightness=(1, 2, 3))


def test_random_grayscale():
    t = float_chw()
    for seed in range(4):
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        out = T.RandomGrayscale(p=0.5)(ember.tensor(t))
        ref = torch.tensor(t)
        if torch.rand(1) < 0.5:
            ref = t_gray(ref).expand(3, -1, -1)
        close(out, ref)


# --- rotation and blur --------------------------------------------------------------------------

def t_rotate(img, angle, mode, expand_to=None, fill=None):
    """Rotation by inverse-mapping each output pixel centre through the rotation about the
    image centre, sampled with torch's grid_sample."""
    c, h, w = img.shape
    oh, ow = expand_to or (h, w)
    a = math.radians(angle)
    ys, xs = torch.meshgrid(torch.arange(oh, dtype=torch.float64) + 0.5 - oh / 2,
                            torch.arange(ow, dtype=torch.float64) + 0.5 - ow / 2, indexing="ij")
    src_x = math.cos(a) * xs - math.sin(a) * ys  # inverse of a counter-clockwise turn
    src_y = math.sin(a) * xs + math.cos(a) * ys
    grid = torch.stack([src_x / (w / 2), src_y / (h / 2)], dim=-1)[None].to(img.dtype)
    ones = torch.ones(1, h, w, dtype=img.dtype)
    out = tF.grid_sample(torch.cat([img, ones])[None], grid, mode=mode, align_corners=False)[0]
    img, mask = out[:-1], out[-1:]
    fill_img = torch.tensor(fill, dtype=img.dtype)[:, None, None].expand_as(img)
    if mode == "nearest":
        return torch.where(mask.expand_as(img) < 0.5, fill_img, img)
    return img * mask + (1 - mask) * fill_img


@pytest.mark.parametrize("angle, mode", [(30.0, "bilinear"), (-75.0, "nearest"),
                                         (10.0, "bilinear")])
def test_rotate_tensor(angle, mode):
    t = float_chw()
    fill = [0.1, 0.2, 0.3]
    out = F.rotate(ember.tensor(t), angle, T.InterpolationMode(mode), fill=fill)
    close(out, t_rotate(torch.tensor(t), angle, mode, fill=fill), atol=1e-5)


def test_rotate_right_angles_and_expand():
    sq = float_chw(shape=(3, 9, 9))
    close(F.rotate(ember.tensor(sq), 90.0), np.rot90(sq, 1, axes=(1, 2)).copy())
    wide = float_chw(shape=(3, 6, 10))
    out = F.rotate(ember.tensor(wide), 90.0, expand=True)
    close(out, np.rot90(wide, 1, axes=(1, 2)).copy())
    pic = F.rotate(pil_rgb(), 90.0, expand=True)
    np.testing.assert_array_equal(np.array(pic), np.array(pil_rgb().rotate(90, expand=True)))
    e = F.rotate(ember.tensor(float_chw()), 33.0, expand=True)
    assert tuple(e.shape[1:]) == np.array(pil_rgb().rotate(33, expand=True)).shape[:2]


def test_random_rotation_draws_like_torchvision():
    t = float_chw()
    transform = T.RandomRotation((-20, 40), interpolation=T.InterpolationMode.BILINEAR, fill=1)
    ember.manual_seed(3)
    out = transform(ember.tensor(t))
    torch.manual_seed(3)
    angle = float(torch.empty(1).uniform_(-20.0, 40.0).item())
    close(out, t_rotate(torch.tensor(t), angle, "bilinear", fill=[1.0] * 3), atol=1e-5)
    assert repr(T.RandomRotation(10)) == \
        "RandomRotation(degrees=[-10.0, 10.0], interpolation=nearest, expand=False, fill=0)"
    with pytest.raises(ValueError, match="If degrees is a single number, it must be positive"):
        T.RandomRotation(-3)


@pytest.mark.parametrize("kernel_size, sigma", [(3, 0.8), ((5, 3), (1.5, 0.6))])
def test_gaussian_blur(kernel_size, sigma):
    t = float_chw()
    kx, ky = (kernel_size,) * 2 if isinstance(kernel_size, int) else kernel_size
    sx, sy = (sigma,) * 2 if isinstance(sigma, float) else sigma

    def kernel1d(k, s):
        x = torch.linspace(-(k - 1) / 2, (k - 1) / 2, k)
        pdf = torch.exp(-0.5 * (x / s) ** 2)
        return pdf / pdf.sum()
    k2 = kernel1d(ky, sy)[:, None] * kernel1d(kx, sx)[None, :]
    padded = tF.pad(torch.tensor(t)[None], [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect")
    ref = tF.conv2d(padded, k2.expand(3, 1, ky, kx), groups=3)[0]
    close(F.gaussian_blur(ember.tensor(t), kernel_size, sigma), ref, atol=1e-6)
    pil_out = F.gaussian_blur(pil_rgb(), kernel_size, sigma)
    u8 = tF.conv2d(tF.pad(torch.from_numpy(RGB).permute(2, 0, 1)[None].float(),
                          [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect"),
                   k2.expand(3, 1, ky, kx), groups=3)[0].round().to(torch.uint8)
    diff = np.abs(np.array(pil_out).astype(int) - u8.permute(1, 2, 0).numpy().astype(int))
    assert diff.max() <= 1


def test_gaussian_blur_transform_draws_sigma():
    t = float_chw()
    ember.manual_seed(2)
    out = T.GaussianBlur(3, sigma=(0.5, 1.5))(ember.tensor(t))
    torch.manual_seed(2)
    sigma = torch.empty(1).uniform_(0.5, 1.5).item()
    close(out, F.gaussian_blur(ember.tensor(t), [3, 3], [sigma, sigma]))
    assert repr(T.GaussianBlur(3)) == "GaussianBlur(kernel_size=(3, 3), sigma=(0.1, 2.0))"
    with pytest.raises(ValueError, match="Kernel size value should be an odd and positive"):
        T.GaussianBlur(4)
    with pytest.raises(ValueError, match="sigma values should be positive and of the form"):
        T.GaussianBlur(3, sigma=(2.0, 1.0))


# --- composition --------------------------------------------------------------------------------

def test_compose_lambda_and_random_containers():
    pipeline = T.Compose([T.CenterCrop(10), T.ToTensor(), T.Lambda(lambda x: x * 2)])
    out = pipeline(pil_rgb())
    ref = torch.from_numpy(RGB[1:11, 4:14]).permute(2, 0, 1).float() / 255 * 2
    close(out, ref)
    assert repr(pipeline) == "Compose(\n    CenterCrop(size=(10, 10))\n    ToTensor()\n" \
                             "    Lambda()\n)"
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)

    t = float_chw()
    apply = T.RandomApply([T.Lambda(lambda x: x + 1)], p=0.5)
    for seed in range(4):
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        skip = 0.5 < torch.rand(1)
        close(apply(ember.tensor(t)), t if skip else t + 1)
    assert repr(apply) == "RandomApply(\n    p=0.5\n    Lambda()\n)"

    steps = [T.Lambda(lambda x: x * 2), T.Lambda(lambda x: x + 1)]
    random.seed(1)
    out = T.RandomOrder(steps)(ember.tensor(t))
    random.seed(1)
    order = list(range(2))
    random.shuffle(order)
    ref = t
    for i in order:
        ref = ref * 2 if i == 0 else ref + 1
    close(out, ref)
    random.seed(4)
    chosen = T.RandomChoice(steps, p=[0.2, 0.8])(ember.tensor(t))
    random.seed(4)
    pick = random.choices([0, 1], weights=[0.2, 0.8])[0]
    close(chosen, t * 2 if pick == 0 else t + 1)
    assert repr(T.RandomChoice(steps)) == "RandomChoice(\n    Lambda()\n    Lambda()\n)(p=None)"
    with pytest.raises(TypeError, match="Argument transforms should be a sequence"):
        T.RandomOrder(steps[0])


def test_transforms_on_batched_tensors():
    batch = np.stack([float_chw(1), float_chw(2)])
    out = T.Compose([T.Resize(8), T.CenterCrop(6), T.Normalize((0.5,) * 3, (0.25,) * 3)])(
        ember.tensor(batch))
    ref = tF.interpolate(torch.tensor(batch), size=(8, 11), mode="bilinear",
                         align_corners=False, antialias=True)
    ref = (ref[:, :, 1:7, 2:8] - 0.5) / 0.25
    close(out, ref, atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size, scale_factor, align_corners", [
    ((5, 7), None, False), ((30, 11), None, False), (None, (0.37, 0.5), False),
    ((5, 7), None, True)])
def test_interpolate_antialias(mode, size, scale_factor, align_corners):
    """nn.functional.interpolate(antialias=True), which tensor Resize relies on."""
    x = np.random.default_rng(3).random((2, 3, 20, 17)).astype(np.float32)
    kwargs = dict(size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners,
                  antialias=True)
    e = ember.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    out_e, out_t = ember.nn.functional.interpolate(e, **kwargs), tF.interpolate(t, **kwargs)
    close(out_e.detach(), out_t.detach(), atol=1e-5)
    g = np.random.default_rng(4).random(tuple(out_t.shape)).astype(np.float32)
    out_e.backward(ember.tensor(g))
    out_t.backward(torch.tensor(g))
    close(e.grad, t.grad, atol=1e-5)
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear"):
        ember.nn.functional.interpolate(e, size=(3, 3), mode="nearest", antialias=True)
