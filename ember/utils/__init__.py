"""torch.utils: hooks and data loading live here as they are built."""
import importlib

# Loaded on first use, once `ember` itself is complete (utils.data needs all of it).
_SUBMODULES = ("data", "checkpoint", "tensorboard", "dlpack")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
