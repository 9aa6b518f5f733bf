"""torch._utils: the small private helpers PyTorch code reaches as `torch._utils.X`
(here `_element_size`, the bytes one element of a dtype takes, `try_import`, `render_call`, and
the `_rebuild_*` functions a checkpoint's pickle calls, which live with the pickling code in
ember/serialization/pickling.py)."""
import importlib.util
import sys

from .._core import dtype as _dtype
from ..serialization.pickling import (_rebuild_meta_tensor_no_storage, _rebuild_parameter,  # noqa: F401
                                      _rebuild_parameter_with_state, _rebuild_sparse_tensor,
                                      _rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3)
from ..nested._nested_tensor import _rebuild_nested_tensor  # noqa: F401


def _element_size(dtype):
    """Bytes per element of `dtype` (PyTorch's torch._utils._element_size)."""
    if not isinstance(dtype, _dtype.dtype):
        raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
    return dtype.itemsize


def try_import(module_name):
    """The module `module_name`, imported if it was not yet; None if it cannot be found."""
    module = sys.modules.get(module_name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(module_name)
    if spec is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def render_call(fn, args, kwargs):
    """`torch.sum(tensor([...], size=(100,)), dim=0)`: a call as one line, tensors summarised."""
    from ..overrides import resolve_name
    from .._core.tensor_str import printoptions
    name = resolve_name(fn) or str(fn)
    with printoptions(threshold=0, edgeitems=0):
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def __getattr__(name):
    # ExceptionWrapper / KeyErrorMessage live with the DataLoader that uses them (loaded on use)
    if name in ("ExceptionWrapper", "KeyErrorMessage"):
        from ..utils.data import _utils
        return getattr(_utils, name)
    raise AttributeError(f"module 'torch._utils' has no attribute '{name}'")
