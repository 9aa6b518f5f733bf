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


# ---- drawing ----------------------------------------------------------------------------------
def _generate_color_palette(num_objects):
    palette = [2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1]
    return [tuple(i * p % 255 for p in palette) for i in range(num_objects)]


def _parse_colors(colors, *, num_objects, dtype=ember.uint8):
    """A list of RGB tuples, one per object: the palette by default, a colour name or an RGB
    triplet for all, or a list; values in [0, 1] for a floating dtype."""
    from PIL import ImageColor
    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(f"Number of colors must be equal or larger than the number of "
                             f"objects, but got {len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"colors must be a tuple or a string, or a list thereof, but got "
                         f"{colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got "
                         f"{colors}.")
    else:
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(c) if isinstance(c, str) else c for c in colors]
    if dtype.is_floating_point:
        colors = [tuple(v / 255 for v in c) for c in colors]
    return colors


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1, font=None,
                        font_size=None, label_colors=None, label_background_colors=None,
                        fill_labels=False):
    """A copy of the (C, H, W) uint8 or float image with the (N, 4) xyxy `boxes` drawn through
    Pillow's ImageDraw, with optional labels; as torchvision's (oriented 8-value boxes are not
    supported here)."""
    from PIL import Image, ImageDraw, ImageFont
    from .transforms import functional as F
    if not isinstance(image, ember.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == ember.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.size(0) not in {1, 3}:
        raise ValueError("Only grayscale and RGB images are supported")
    if boxes.shape[-1] != 4:
        raise NotImplementedError("draw_bounding_boxes: oriented boxes (8 values) are not "
                                  "supported by ember.vision")
    if bool((boxes[:, 0] > boxes[:, 2]).any()) or bool((boxes[:, 1] > boxes[:, 3]).any()):
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                         "torchvision.ops.box_convert to convert them")
    num_boxes = boxes.shape[0]
    if num_boxes == 0:
        import warnings
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * num_boxes
    elif len(labels) != num_boxes:
        raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) mismatch. "
                         f"Please specify labels for each box.")
    colors = _parse_colors(colors, num_objects=num_boxes)
    if label_colors or fill_labels:
        label_colors = _parse_colors(label_colors if label_colors else "black",
                                     num_objects=num_boxes)
    else:
        label_colors = colors.copy()
    if fill_labels and label_background_colors:
        label_background_colors = _parse_colors(label_background_colors, num_objects=num_boxes)
    else:
        label_background_colors = colors.copy()
    if font is None:
        if font_size is not None:
            import warnings
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    with ember.no_grad():
        if image.size(0) == 1:
            image = ember.tile(image, (3, 1, 1))
        original_dtype = image.dtype
        if original_dtype.is_floating_point:
            image = F.convert_image_dtype(image, ember.uint8)
        img_to_draw = Image.fromarray(image.permute(1, 2, 0).numpy())
        draw = ImageDraw.Draw(img_to_draw, "RGBA" if fill else None)
        for bbox, color, label, label_color, label_bg in zip(
                boxes.to(ember.int64).tolist(), colors, labels, label_colors,
                label_background_colors):
            draw.rectangle(bbox, width=width, outline=color,
                           fill=color + (100,) if fill else None)
            if label is not None:
                margin = width + 1
                if fill_labels:
                    left, top, right, bottom = draw.textbbox(
                        (bbox[0] + margin, bbox[1] + margin), label, font=txt_font)
                    draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=label_bg)
                draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=label_color,
                          font=txt_font)
        out = F.pil_to_tensor(img_to_draw)
        if original_dtype.is_floating_point:
            out = F.convert_image_dtype(out, original_dtype)
    return out


def draw_segmentation_masks(image, masks, alpha=0.8, colors=None):
    """The (3, H, W) image with each boolean mask blended in its colour at `alpha`; pixels where
    masks overlap are blended with black, as torchvision's."""
    if not isinstance(image, ember.Tensor):
        raise TypeError(f"The image must be a tensor, got {type(image)}")
    if not (image.dtype == ember.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.size()[0] != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")
    if masks.ndim == 2:
        masks = masks[None, :, :]
    if masks.ndim != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if masks.dtype != ember.bool:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if masks.shape[-2:] != image.shape[-2:]:
        raise ValueError("The image and the masks must have the same height and width")
    num_masks = masks.size()[0]
    if num_masks == 0:
        import warnings
        warnings.warn("masks doesn't contain any mask. No mask was drawn")
        return image
    with ember.no_grad():
        overlapping = masks.sum(dim=0) > 1
        original_dtype = image.dtype
        colors = [ember.tensor(c, dtype=original_dtype)
                  for c in _parse_colors(colors, num_objects=num_masks, dtype=original_dtype)]
        img_to_draw = image.detach().clone()
        for mask, color in zip(masks, colors):
            img_to_draw[:, mask] = color[:, None]
        img_to_draw[:, overlapping] = 0
        out = image * (1 - alpha) + img_to_draw * alpha
        return out.to(original_dtype)
