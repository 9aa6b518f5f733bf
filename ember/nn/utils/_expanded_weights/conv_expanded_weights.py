"""Per-sample gradients of F.conv1d/2d/3d. A convolution is a matrix product of the weight
with the input's patches: for a sample, patch l holds the input values under the kernel at
output position l (channels x kernel positions). So with the patches of sample i as
P[i] (in_channels, L, K) and the output gradient as dY[i] (out_channels, L),

    grad_sample(weight)[i] = dY[i] . P[i]   summed over l, group by group   (out, in/groups, *k)
    grad_sample(bias)[i]   = dY[i] summed over l                           (out,)

The patches come from Tensor.unfold along each spatial dimension of the padded input (the
dilation keeps every dilation-th element of a window). padding="same" may pad a side more
than the other, so the padding is applied explicitly, as left/right amounts per dimension.
"""
import math

import ember

from ... import functional as F
from ....autograd import Function
from .expanded_weights_impl import implements_per_sample_grads
from .expanded_weights_utils import (backward_results, forward_helper,
                                     set_grad_sample_if_exists, unpack_expanded_weight_or_tensor)

_SPATIAL_DIMS = {F.conv1d: 1, F.conv2d: 2, F.conv3d: 3}


def _conv_arguments(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return (input, weight), {"bias": bias, "stride": stride, "padding": padding,
                             "dilation": dilation, "groups": groups}


def _per_dim(value, n):
    """An int or a one-element sequence repeated for each of the n spatial dimensions."""
    if isinstance(value, (tuple, list)):
        return tuple(value) * n if len(value) == 1 else tuple(value)
    return (value,) * n


def _pads(padding, kernel_size, dilation):
    """(left, right) zero padding of each spatial dimension."""
    n = len(kernel_size)
    if padding == "valid":
        return [(0, 0)] * n
    if padding == "same":
        totals = [d * (k - 1) for d, k in zip(dilation, kernel_size)]
        return [(t // 2, t - t // 2) for t in totals]
    return [(p, p) for p in _per_dim(padding, n)]


def _padded(input, pads):
    return F.pad(input, [p for pair in reversed(pads) for p in pair])


def _patches(input, kernel_size, stride, dilation):
    """(n, c, *out, *kernel_size): the input values under the kernel at each output position."""
    for d, (k, s, dil) in enumerate(zip(kernel_size, stride, dilation)):
        input = input.unfold(2 + d, dil * (k - 1) + 1, s)
        if dil > 1:
            input = input[..., ::dil]
    return input


@implements_per_sample_grads(F.conv1d)
@implements_per_sample_grads(F.conv2d)
@implements_per_sample_grads(F.conv3d)
class ConvPerSampleGrad(Function):
    @staticmethod
    def forward(ctx, kwarg_names, conv_fn, *expanded_args_and_kwargs):
        split = len(expanded_args_and_kwargs) - len(kwarg_names)
        expanded_args, expanded_kwargs = _conv_arguments(
            *expanded_args_and_kwargs[:split],
            **dict(zip(kwarg_names, expanded_args_and_kwargs[split:])))
        output = forward_helper(conv_fn, expanded_args, expanded_kwargs)
        input, weight = expanded_args
        n = _SPATIAL_DIMS[conv_fn]
        if input.dim() != n + 2:
            raise RuntimeError(f"Expanded Weights only support convolution with batched input, got "
                               f"{conv_fn} with anunbatched input of dim {input.dim()}, expected "
                               f"input of dim {n + 2}")
        kernel_size = tuple(weight.shape[2:])
        ctx.num_apply_args = 2 + len(expanded_args_and_kwargs)
        ctx.input, ctx.weight, ctx.bias = input, weight, expanded_kwargs["bias"]
        ctx.stride = _per_dim(expanded_kwargs["stride"], n)
        ctx.dilation = _per_dim(expanded_kwargs["dilation"], n)
        ctx.groups = expanded_kwargs["groups"]
        ctx.pads = _pads(expanded_kwargs["padding"], kernel_size, ctx.dilation)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, stride, dilation, groups = ctx.input, ctx.stride, ctx.dilation, ctx.groups
        padded = _padded(input, ctx.pads)
        input_grad = None
        if input.requires_grad:
            weight = unpack_expanded_weight_or_tensor(ctx.weight)
            n = len(ctx.pads)
            grad = ember.ops.aten.convolution_backward(
                grad_output, padded, weight, None, list(stride), [0] * n, list(dilation), False,
                [0] * n, groups, [True, False, False])[0]
            for d, (left, _) in enumerate(ctx.pads):
                grad = grad.narrow(2 + d, left, input.shape[2 + d])
            input_grad = grad

        def weight_per_sample_grad(weight):
            batch, channels = input.shape[0], input.shape[1]
            kernel_size = weight.shape[2:]
            patches = _patches(padded, kernel_size, stride, dilation).reshape(
                batch, groups, channels // groups, -1, math.prod(kernel_size))
            dy = grad_output.reshape(batch, groups, weight.shape[0] // groups, -1)
            return ember.einsum("ngol,ngclk->ngock", dy, patches).reshape(batch, *weight.shape)

        set_grad_sample_if_exists(ctx.weight, weight_per_sample_grad)
        set_grad_sample_if_exists(
            ctx.bias, lambda _: grad_output.reshape(*grad_output.shape[:2], -1).sum(dim=2))
        return backward_results(ctx, input_grad)
