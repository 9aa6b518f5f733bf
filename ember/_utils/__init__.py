"""torch._utils: the small private helpers PyTorch code reaches as `torch._utils.X`
(here `_element_size`, the bytes one element of a dtype takes, and the `_rebuild_*` functions a
checkpoint's pickle calls, which live with the pickling code in ember/serialization/pickling.py)."""
from .._core import dtype as _dtype
from ..serialization.pickling import (_rebuild_meta_tensor_no_storage, _rebuild_parameter,  # noqa: F401
                                      _rebuild_parameter_with_state, _rebuild_sparse_tensor,
                                      _rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3)


def _element_size(dtype):
    """Bytes per element of `dtype` (PyTorch's torch._utils._element_size)."""
    if not isinstance(dtype, _dtype.dtype):
        raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
    return dtype.itemsize


def __getattr__(name):
    # ExceptionWrapper / KeyErrorMessage live with the DataLoader that uses them (loaded on use)
    if name in ("ExceptionWrapper", "KeyErrorMessage"):
        from ..utils.data import _utils
        return getattr(_utils, name)
    raise AttributeError(f"module 'torch._utils' has no attribute '{name}'")
