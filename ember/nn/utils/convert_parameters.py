"""Flatten parameters into one vector and write a vector back into them (the layout that
second-order optimisers and hypernetworks work with): parameter after parameter, each in its
row-major order."""
from ... import _refs as E
from ..._core.tensor import Tensor


def _check_param_device(param, old_param_device):
    """The device index shared by all parameters so far (-1 for CPU); TypeError on a mix."""
    device = param.get_device() if param.device.type == "cuda" else -1
    if old_param_device is not None and device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return device


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's elements (differentiable, a concatenation)."""
    param_device = None
    flat = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        flat.append(param.view(-1))
    return E.cat(flat)


def vector_to_parameters(vec, parameters):
    """Make each parameter's `.data` the next `numel()` elements of `vec` (views, not copies)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__qualname__}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
