"""torch._utils: the small private helpers PyTorch code reaches as `torch._utils.X`
(here `_element_size`, the bytes one element of a dtype takes)."""
from .._core import dtype as _dtype


def _element_size(dtype):
    """Bytes per element of `dtype` (PyTorch's torch._utils._element_size)."""
    if not isinstance(dtype, _dtype.dtype):
        raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
    return dtype.itemsize
