"""torch.cpu: the CPU device module -- one device, always available, nothing to synchronize --
and `torch.cpu.amp`, the deprecated spelling of `torch.amp` with device "cpu"."""
from . import amp


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    pass  # one CPU device: nothing to select


def is_initialized():
    return True


def synchronize(device=None):
    pass  # CPU ops complete before they return
