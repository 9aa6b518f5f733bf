"""torch.Stream: a device's in-order queue of work, named by its device type, device index and
stream id. ember's devices run each op to completion before it returns, so a stream orders
nothing; the object is kept for what code reads from it and passes on (to `record_stream`, to a
`__torch_dispatch__` handler), as PyTorch's base class of the per-device stream types."""
from .device import device as _device

# PyTorch's DeviceType enum, by value: a stream names its device type by this number
DEVICE_TYPES = ("cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia",
                "xla", "vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu",
                "mtia", "privateuseone")


class Stream:
    """Stream(device=None, *, priority=0), or Stream(stream_id=, device_index=, device_type=)
    for a stream known by its three numbers. Only the CPU's default stream exists here."""

    def __init__(self, device=None, *, priority=0, stream_id=None, device_index=None,
                 device_type=None):
        if stream_id is not None or device_index is not None or device_type is not None:
            if device is not None:
                raise ValueError("Stream(): give a device or (stream_id, device_index, "
                                 "device_type), not both")
            self.stream_id = 0 if stream_id is None else int(stream_id)
            self.device_index = -1 if device_index is None else int(device_index)
            self.device_type = 0 if device_type is None else int(device_type)
            return
        dev = _device("cpu" if device is None else device)
        if dev.type != "cpu":
            raise RuntimeError(f"Stream(): ember has no streams on device type {dev.type}")
        self.stream_id, self.device_index, self.device_type = 0, -1, 0

    @property
    def device(self):
        name = DEVICE_TYPES[self.device_type]
        return _device(name) if self.device_index < 0 else _device(name, self.device_index)

    def query(self):
        self._check_device()
        return True   # every op has finished by the time it returns

    def synchronize(self):
        self._check_device()

    def _check_device(self):
        if self.device_type != 0:
            raise RuntimeError(f"PyTorch is not linked with support for "
                               f"{DEVICE_TYPES[self.device_type]} devices")

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.stream_id, self.device_index,
                                              self.device_type) == \
            (other.stream_id, other.device_index, other.device_type)

    def __hash__(self):
        return hash((self.stream_id, self.device_index, self.device_type))

    def __repr__(self):
        return (f"torch.Stream device_type={DEVICE_TYPES[self.device_type]}, "
                f"device_index={self.device_index}, stream_id={self.stream_id}")
