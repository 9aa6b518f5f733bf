"""torch.utils._device: a default device for factory functions, as a decorator.

`with torch.device("meta"):` makes factories called without `device=` (torch.empty, zeros,
randn, tensor, a module's parameters, ...) build on that device; ember keeps those contexts
on a stack in ember/_core/device.py, which the factories read. `set_device(d)` applies the
same context to every call of a decorated function -- for a generator function, only while
its own code runs, not between its yields.
"""
from ember._core.device import default_device, device as _device
from ember._core.grad_mode import _DecoratorContextManager

__all__ = ["DeviceContext", "device_decorator", "set_device"]


class DeviceContext(_DecoratorContextManager):
    """`with DeviceContext(d):` is `with torch.device(d):`; the object also decorates."""

    def __init__(self, device):
        self.device = _device(device)

    def __enter__(self):
        self.device.__enter__()
        return self.device

    def __exit__(self, *exc):
        self.device.__exit__(*exc)

    def clone(self):
        return DeviceContext(self.device)


def __getattr__(name):
    if name == "CURRENT_DEVICE":      # the innermost `with device(...)` (None outside any)
        return default_device()
    raise AttributeError(f"module 'torch.utils._device' has no attribute '{name}'")


def device_decorator(device, func):
    return DeviceContext(device)(func)


def set_device(device):
    """Decorator: run the function with `device` as the default for factories (use
    `with torch.device(device):` for a block instead)."""
    return lambda func: device_decorator(_device(device), func)
