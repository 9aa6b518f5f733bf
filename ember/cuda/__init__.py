"""torch.cuda on a machine without CUDA: ember computes on the CPU only, so the queries answer
"no device", seeding is a no-op (as PyTorch's lazy CUDA seeding is when no GPU exists), and
anything that needs a GPU raises the error PyTorch raises on a CPU-only build. `torch.cuda.amp`
is the deprecated spelling of `torch.amp` with device "cuda", which disables itself here as
PyTorch's does without a GPU."""
from . import amp, jiterator  # noqa: F401


def is_available():
    return False


def is_tf32_supported():
    """Whether the current CUDA device computes in TF32: no device, so no."""
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    pass  # PyTorch queues the seed for a CUDA init that never happens


def manual_seed_all(seed):
    pass


def synchronize(device=None):
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    raise AssertionError("Torch not compiled with CUDA enabled")


# ---- torch.cuda's memory functions, as a CPU-only build of PyTorch answers them: no CUDA device
# has been initialized, so the counters read zero and the calls that reach the CUDA allocator
# fail. ember's CPU tensors have these statistics in ember.memory; with a CUDA device these
# would delegate to that device's allocator.
from ..memory import OutOfMemoryError  # noqa: E402,F401


def _no_cuda_allocator(binding):
    """A CPU-only PyTorch build has no binding to the CUDA allocator: calling it is an
    AttributeError naming the missing binding."""
    return AttributeError(f"module 'torch._C' has no attribute '{binding}' (no CUDA in this "
                          "build; ember.memory has the CPU allocator's statistics)")


def _not_compiled():
    return AssertionError("Torch not compiled with CUDA enabled")


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_stats(device=None):
    import collections
    return collections.OrderedDict()


def memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


memory_cached, max_memory_cached = memory_reserved, max_memory_reserved


def memory_summary(device=None, abbreviated=False):
    stats = memory_stats(device)
    return stats["allocated_bytes.all.current"]  # KeyError, as on a CPU-only build


def empty_cache():
    pass  # nothing is cached when CUDA was never initialized


def reset_peak_memory_stats(device=None):
    raise _no_cuda_allocator('_cuda_resetPeakMemoryStats')


def reset_accumulated_memory_stats(device=None):
    raise _no_cuda_allocator('_cuda_resetAccumulatedMemoryStats')


def reset_max_memory_allocated(device=None):
    raise _no_cuda_allocator('_cuda_resetPeakMemoryStats')


def reset_max_memory_cached(device=None):
    raise _no_cuda_allocator('_cuda_resetPeakMemoryStats')


def memory_snapshot(mempool_id=None, include_traces=True):
    raise _no_cuda_allocator('_cuda_memorySnapshot')


def mem_get_info(device=None):
    raise _not_compiled()


def set_per_process_memory_fraction(fraction, device=None):
    raise _not_compiled()


def get_per_process_memory_fraction(device=None):
    raise _not_compiled()
