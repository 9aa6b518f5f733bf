"""torch.nn.grad: a convolution's input and weight gradients as functions of their own, from the same
two ops the convolution's backward uses (`_convolution_backward_input` / `_weight`)."""
from .. import ops
from .modules.utils import _single, _pair, _triple

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight",
           "conv3d_input", "conv3d_weight"]


def _input_grad(tuple_of, input_size, weight, grad_output, stride, padding, dilation, groups):
    n = len(tuple_of(0))
    return ops.aten._convolution_backward_input(
        grad_output, weight, list(input_size), list(tuple_of(stride)), list(tuple_of(padding)),
        list(tuple_of(dilation)), False, [0] * n, groups)


def _weight_grad(tuple_of, input, weight_size, grad_output, stride, padding, dilation, groups):
    n = len(tuple_of(0))
    return ops.aten._convolution_backward_weight(
        grad_output, input, list(weight_size), list(tuple_of(stride)), list(tuple_of(padding)),
        list(tuple_of(dilation)), False, [0] * n, groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its input, of shape `input_size`."""
    return _input_grad(_single, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its weight, of shape `weight_size`."""
    return _weight_grad(_single, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its input, of shape `input_size`."""
    return _input_grad(_pair, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its weight, of shape `weight_size`."""
    return _weight_grad(_pair, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its input, of shape `input_size`."""
    return _input_grad(_triple, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its weight, of shape `weight_size`."""
    return _weight_grad(_triple, input, weight_size, grad_output, stride, padding, dilation, groups)
