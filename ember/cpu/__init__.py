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


# ---- streams and events: the CPU runs one op after another, so a stream is a name for "now"
# and an event is always complete (PyTorch keeps them for device-agnostic code)
class Stream:
    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


def current_stream(device=None):
    return _current_stream


class StreamContext:
    """Make `stream` the current one inside the block (None: leave it as it is)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        global _current_stream
        if self.stream is not None:
            self.prev_stream, _current_stream = _current_stream, self.stream

    def __exit__(self, *exc):
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream


def stream(stream):
    return StreamContext(stream)
