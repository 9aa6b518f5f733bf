"""torch.utils: hooks, pytrees, data loading, checkpointing, benchmarking, FLOP counting."""
import importlib

# Loaded on first use, once `ember` itself is complete (utils.data needs all of it).
_SUBMODULES = ("data", "checkpoint", "tensorboard", "hooks", "_pytree", "model_zoo", "benchmark",
               "flop_counter", "module_tracker", "cpp_extension", "dlpack")


def __getattr__(name):
    if name == "swap_tensors":
        from ._swap_tensors import swap_tensors
        return swap_tensors
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
