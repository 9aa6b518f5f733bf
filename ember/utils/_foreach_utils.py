"""torch.utils._foreach_utils: which devices have multi-tensor (foreach) and fused optimizer
kernels, and the grouping of tensor lists by device and dtype that a foreach call needs (one
list per (device, dtype)). ember's optimizers have one implementation (see optim/_foreach.py);
these answer as PyTorch's do, for code that asks."""
from .. import _refs as E


def _get_foreach_kernels_supported_devices():
    """The device types with foreach kernels of their own (the CPU's loop per tensor)."""
    return ["cuda", "xpu", "mtia", "privateuseone"]


def _get_fused_kernels_supported_devices():
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """{(device, dtype): (lists, indices)}: the positions of the first list's tensors that share
    a device and dtype, with the tensors at those positions in every list (an empty list stays
    empty; a list may hold None), and with `with_indices` those positions (else [])."""
    groups = {}
    with E.no_grad():
        for i, t in enumerate(tensorlistlist[0]):
            key = (t.device, t.dtype)
            if key not in groups:
                groups[key] = ([[] for _ in tensorlistlist], [])
            lists, indices = groups[key]
            for lst, out in zip(tensorlistlist, lists):
                if lst:
                    out.append(lst[i])
            if with_indices:
                indices.append(i)
    return groups


def _device_has_foreach_support(device):
    return device.type in _get_foreach_kernels_supported_devices() + ["cpu"]


def _has_foreach_support(tensors, device):
    from .._core.tensor import Tensor
    return _device_has_foreach_support(device) and all(
        t is None or type(t) is Tensor for t in tensors)
