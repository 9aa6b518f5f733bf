"""torch.utils.dlpack: tensors exchanged through DLPack capsules, the zero-copy format NumPy,
torch, JAX and CuPy share. `from_dlpack` takes any producer (an object with `__dlpack__`) or a
capsule; `to_dlpack` is the legacy form that hands out a bare capsule (a new producer should
pass the tensor itself, whose `__dlpack__` speaks the versioned protocol). A capsule can be
consumed only once: the consumer renames it, so a second import fails."""
import enum

from .._bindings.factories import from_dlpack

__all__ = ["from_dlpack", "to_dlpack", "DLDeviceType"]


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """An unversioned DLPack capsule ("dltensor") over the tensor's memory. As PyTorch's, it
    exports a tensor that requires grad too (the capsule carries no autograd)."""
    return tensor.detach().__dlpack__()
