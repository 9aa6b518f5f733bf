"""torch.device: a device type plus an optional index. The type is also the dispatch key.

A device is also a context manager, as in PyTorch: inside `with torch.device("meta"):` (or after
`torch.set_default_device("meta")`) factory functions called without `device=` (zeros, empty,
tensor, arange, ... and so the parameters nn layers create) make their tensors there; functions
taking a tensor to copy the layout of (`zeros_like`) and `from_numpy` keep their own device.
"""


# every device type PyTorch parses, in its order; ember runs tensors on cpu, meta and lazy only
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
# the backend dispatch key of each device type ember runs tensors on (ember/_dispatch)
DISPATCH_KEYS = {"cpu": "CPU", "meta": "Meta", "cuda": "CUDA", "lazy": "Lazy"}
_NOT_BUILT = {"cuda": "CUDA", "xpu": "XPU", "mtia": "MTIA"}  # asserted by a CPU build's modules


def no_backend(dev, op="aten::empty.memory_format"):
    """The error a CPU build of PyTorch gives for a tensor made on (`op` given) or moved to
    (`op=None`) a device it has no backend for."""
    built = _NOT_BUILT.get(dev.type)
    if built is not None:
        return AssertionError(f"Torch not compiled with {built} enabled")
    if op is None:
        return RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    key = {"maia": "MAIA", "vulkan": "Vulkan", "privateuseone": "PrivateUse1"}.get(
        dev.type, dev.type.upper())
    return NotImplementedError(f"Could not run '{op}' with arguments from the '{key}' backend.")


class device:
    __module__ = "ember"  # printed as <class 'torch.device'> is
    __slots__ = ("type", "index", "_key")  # _key: its dispatch key, read on the hot path
    _cache = {}

    def __new__(cls, type_or_str=None, index=None, *, type=None):
        if type is not None:    # device(type='cpu'), as repr writes it (and generated code)
            type_or_str = type
        if isinstance(type_or_str, device):
            return type_or_str
        key = (type_or_str, index)
        hit = cls._cache.get(key)
        if hit is not None:
            return hit
        if isinstance(type_or_str, int):
            if type_or_str < 0:
                raise RuntimeError("Device index must not be negative")
            raise RuntimeError(f"device index {type_or_str} given without a device type: "
                               "ember has no accelerator backend yet")
        typ, colon, idx = str(type_or_str).partition(":")
        if colon:     # 'cuda:' has an empty index, which is invalid
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type_or_str}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if typ not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start "
                               f"of device string: {type_or_str}")
        self = object.__new__(cls)
        object.__setattr__(self, "type", typ)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "_key", DISPATCH_KEYS.get(typ))
        cls._cache[key] = self
        return self

    def __setattr__(self, name, value):
        raise AttributeError("device is immutable")

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        # only devices compare: PyTorch's device("cpu") == "cpu" is False, and comparing with a
        # string that names no device (OpInfo's `device_type == "privateuse1"`) must not raise
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        _default_stack.append(self)
        return self

    def __exit__(self, *exc):
        _default_stack.pop()


_default_stack = []  # the innermost `with device(...)` last; set_default_device is the bottom
_set_default = [None]


def default_device():
    """The device factories use when given none: None unless one was set (then CPU is meant)."""
    if _default_stack:
        return _default_stack[-1]
    return _set_default[0]


def set_default_device(d):
    """torch.set_default_device: None goes back to the CPU."""
    _set_default[0] = None if d is None else device(d)


def get_default_device():
    return default_device() or cpu


cpu = device("cpu")
meta = device("meta")
lazy = device("lazy", 0)  # what a lazy tensor's .device is (lazy:0), as in PyTorch


_LEGACY_TENSOR_AND_DEVICE = {
    "new": "Legacy tensor new of the form tensor.new(tensor, device=device) is not supported.  "
           "Use torch.as_tensor(...) instead.",
    "constructor": "Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is "
                   "not supported.  Use torch.tensor(...) or torch.as_tensor(...) instead."}


def check_legacy_device(given, default, from_tensor, form):
    """A device passed to a legacy constructor (`torch.Tensor(...)`, `torch.FloatTensor(...)`,
    `x.new(...)`, whose own device is `default`) must be of the default's type, and cannot come
    with a tensor to alias (`form` names the call in that error)."""
    expected = device(default).type
    if device(given).type != expected:
        raise RuntimeError(f"legacy constructor expects device type: {expected} but device type: "
                           f"{device(given).type} was passed")
    if from_tensor:
        raise RuntimeError(_LEGACY_TENSOR_AND_DEVICE["constructor" if form == "base" else form])
