"""torch.accelerator, the device-generic query newer examples start with (`device =
torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"`):
ember has no accelerator, only the CPU."""


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0


# ---- the device-generic memory functions: they act on the current accelerator, and with none
# present PyTorch refuses (ember's CPU statistics are ember.memory's)
def _no_accelerator(*args, **kwargs):
    raise RuntimeError("Cannot access accelerator device when none is available.")


empty_cache = empty_host_cache = memory_stats = memory_allocated = max_memory_allocated = \
    memory_reserved = max_memory_reserved = reset_peak_memory_stats = \
    reset_accumulated_memory_stats = get_memory_info = _no_accelerator
