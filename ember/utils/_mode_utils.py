"""torch.utils._mode_utils: `no_dispatch()` (the Python key switched off: no TorchDispatchMode
sees a call and a Tensor subclass's ops run on its own data) and `all_same_mode`."""
from .._dispatch.python_dispatch import DisableTorchDispatch as no_dispatch  # noqa: F401


def all_same_mode(modes):
    return all(mode == modes[0] for mode in modes)
