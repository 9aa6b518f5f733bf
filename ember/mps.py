"""torch.mps without a Metal device: ember computes on the CPU, so `is_available()` is False,
`device_count()` 0 and `manual_seed` a no-op (as PyTorch's is without MPS); everything that
needs the device raises PyTorch's RuntimeError for a machine without the MPS backend."""

__all__ = ["device_count", "is_available", "manual_seed", "seed", "get_rng_state",
           "set_rng_state", "synchronize", "empty_cache", "set_per_process_memory_fraction",
           "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory",
           "compile_shader"]


def _no_mps(what):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    pass  # PyTorch ignores the seed when there is no MPS device


def seed():
    raise _no_mps("getDefaultGenerator")


def get_rng_state(device="mps"):
    raise _no_mps("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    raise _no_mps("getDefaultGenerator")


def synchronize():
    raise _no_mps("deviceSynchronize")


def empty_cache():
    raise _no_mps("emptyCache")


def set_per_process_memory_fraction(fraction):
    raise _no_mps("setMemoryFraction")


def current_allocated_memory():
    raise _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory():
    raise _no_mps("getDriverAllocatedMemory")


def recommended_max_memory():
    raise _no_mps("getRecommendedMaxMemory")


def compile_shader(source):
    raise RuntimeError("MPS is not available")
