"""torch.utils: hooks and data loading live here as they are built."""
import importlib


def __getattr__(name):
    # Loaded on first use, once `ember` itself is complete (utils.data needs all of it).
    if name == "data":
        return importlib.import_module(f"{__name__}.data")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
