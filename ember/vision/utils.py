"""torchvision.utils: `make_grid` tiles a batch of images into one image with padding between
them, and `save_image` writes such a grid (or one image) to a file through Pillow, as
torchvision's do -- the DCGAN and VAE examples save their samples with them."""
import math
import pathlib

import ember


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """A (C, H', W') grid of the images of a (B, C, H, W) tensor or a list of (C, H, W) ones,
    `nrow` per row, `padding` pixels of `pad_value` around each. One-channel images become
    three-channel; `normalize` shifts each image (`scale_each`) or the batch to [0, 1] by
    `value_range` (default: its own min and max)."""
    if not ember.is_tensor(tensor):
        if not isinstance(tensor, list) or not all(ember.is_tensor(t) for t in tensor):
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
        tensor = ember.stack(tensor, dim=0)
    if tensor.dim() == 2:                       # a single image H x W
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:                       # a single image C x H x W
        if tensor.size(0) == 1:
            tensor = ember.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = ember.cat((tensor, tensor, tensor), 1)

    if normalize:
        tensor = tensor.clone()                 # the caller's tensor is left alone
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max "
                            "are numbers")

        def norm_range(t, value_range):
            low, high = value_range if value_range is not None else (float(t.min()),
                                                                     float(t.max()))
            t.clamp_(min=low, max=high)
            t.sub_(low).div_(max(high - low, 1e-5))

        if scale_each:
            for t in tensor:                    # each image on its own range
                norm_range(t, value_range)
        else:
            norm_range(tensor, value_range)

    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding),
                           pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Save a tensor (or list of tensors) as an image file: `make_grid(tensor, **kwargs)`,
    scaled from [0, 1] to bytes with rounding, written by Pillow (`format` when `fp` is a file
    object or its name has no extension)."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("save_image needs Pillow: pip install pillow (or ember[examples])") from e
    grid = make_grid(tensor, **kwargs)
    ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", ember.uint8).numpy()
    if isinstance(fp, pathlib.PurePath):
        fp = str(fp)
    Image.fromarray(ndarr).save(fp, format=format)
