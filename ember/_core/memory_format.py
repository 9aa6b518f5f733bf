"""Memory formats: torch.contiguous_format, channels_last (NHWC strides), preserve_format."""
import numpy as np


class memory_format:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

_ORDERS = {"channels_last": (0, 2, 3, 1), "channels_last_3d": (0, 2, 3, 4, 1)}


def copy_in_format(a, fmt):
    """A copy of array `a` laid out in memory format `fmt` (same logical shape)."""
    if fmt is preserve_format:
        return a.copy(order="K")
    if fmt is contiguous_format:
        return np.array(a, order="C")
    order = _ORDERS.get(fmt.name)
    if order is None or a.ndim != len(order):
        raise RuntimeError(f"required rank {4 if fmt is channels_last else 5} tensor to use "
                           f"{fmt.name} format")
    inverse = np.argsort(order)
    return np.ascontiguousarray(np.transpose(a, order)).transpose(inverse)


def format_strides(shape, fmt):
    """The strides (in elements) of a dense tensor of `shape` laid out in memory format `fmt`."""
    order = _ORDERS.get(fmt.name, tuple(range(len(shape))))
    if len(order) != len(shape):
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt.name} format")
    strides = [0] * len(shape)
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def is_contiguous_as(t, fmt):
    order = _ORDERS.get(fmt.name)
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if order is None or t.dim() != len(order):
        return False if order is not None else t.is_contiguous()
    expected = 1
    strides = t.stride()
    for d in reversed(order):
        size = t._size[d]
        if size != 1 and strides[d] != expected:
            return False
        expected *= size
    return True
