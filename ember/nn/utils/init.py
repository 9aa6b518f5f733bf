"""skip_init: build a module without running its parameter initialisation.

The module is constructed on the meta device (where initialisers are no-ops, as there is no
data to fill) and its tensors are then replaced by uninitialised ones on the requested device,
which is what `Module.to_empty` does.
"""
import inspect

from ... import _refs as E
from ..modules.module import Module


def skip_init(module_cls, *args, **kwargs):
    """`module_cls(*args, **kwargs)` with uninitialised parameters and buffers; the class must
    accept a `device` argument."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    module = module_cls(*args, **kwargs)
    return module._apply(lambda t: E.empty_like(t, device=final_device))
