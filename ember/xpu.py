"""torch.xpu without an Intel GPU: ember computes on the CPU, so the queries answer "no device"
(`is_available()` False, `device_count()` 0), seeding and the memory counters are the no-ops and
zeros of a PyTorch build without XPU, and whatever needs the device raises its error
("Torch not compiled with XPU enabled")."""
from collections import OrderedDict

__all__ = ["is_available", "device_count", "is_initialized", "init", "current_device",
           "set_device", "synchronize", "get_device_name", "get_device_properties",
           "get_device_capability", "get_arch_list", "get_gencode_flags", "is_bf16_supported",
           "is_tf32_supported", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "initial_seed", "get_rng_state", "get_rng_state_all", "set_rng_state",
           "set_rng_state_all", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "memory_stats",
           "memory_stats_as_nested_dict", "memory_snapshot", "mem_get_info",
           "can_device_access_peer", "device", "device_of", "stream", "StreamContext",
           "current_stream", "set_stream", "Stream", "Event", "default_generators"]

default_generators = ()


def _not_compiled():
    return AssertionError("Torch not compiled with XPU enabled")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def _needs_xpu(*args, **kwargs):
    raise _not_compiled()


init = current_device = set_device = synchronize = get_device_name = _needs_xpu
get_device_properties = get_device_capability = initial_seed = get_rng_state = _needs_xpu
mem_get_info = can_device_access_peer = current_stream = _needs_xpu
set_per_process_memory_fraction = get_per_process_memory_fraction = _needs_xpu


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def _no_op(*args, **kwargs):
    """Seeding and cache release without a device: nothing to do, as in PyTorch."""


manual_seed = manual_seed_all = seed = seed_all = set_rng_state = set_rng_state_all = _no_op
empty_cache = set_stream = _no_op


def get_rng_state_all():
    return []


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def memory_stats(device=None):
    return OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_snapshot():
    return []


class device:
    """`with xpu.device(i):` selects an XPU: entering fails without XPU support, whatever the
    index (as in PyTorch's CPU-only builds)."""

    def __init__(self, device):
        self.idx = device.index if hasattr(device, "index") else device
        self.prev_idx = -1

    def __enter__(self):
        raise NotImplementedError("PyTorch was compiled without XPU support")

    def __exit__(self, *exc):
        return False


class device_of(device):
    """The device of a tensor's XPU (a no-op for CPU tensors: always, here)."""

    def __init__(self, obj):
        super().__init__(-1)


class StreamContext:
    """`with xpu.stream(s):`; None (the only stream there can be here) is a no-op."""

    def __init__(self, stream):
        self.stream = stream
        if stream is not None:
            raise _not_compiled()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class Stream:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Stream")


class Event:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")
