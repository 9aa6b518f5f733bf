"""Per-sample gradients of F.group_norm: with x_hat the input normalized within each group
of channels of each sample,

    grad_sample(weight)[i, c] = sum over sample i's positions of channel c of  x_hat * dy
    grad_sample(bias)[i, c]   = sum over sample i's positions of channel c of  dy
"""
import math

import ember

from ... import functional as F
from ....autograd import Function
from .expanded_weights_impl import ExpandedWeight, implements_per_sample_grads
from .expanded_weights_utils import (backward_results, forward_helper,
                                     set_grad_sample_if_exists, standard_kwargs,
                                     unpack_expanded_weight_or_tensor)


@implements_per_sample_grads(F.group_norm)
class GroupNormPerSampleGrad(Function):
    @staticmethod
    def forward(ctx, kwarg_names, func, *expanded_args_and_kwargs):
        expanded_args, expanded_kwargs = standard_kwargs(kwarg_names, expanded_args_and_kwargs)
        input, num_groups = expanded_args
        weight, bias, eps = (expanded_kwargs[k] for k in ("weight", "bias", "eps"))
        n, c, hxw = input.shape[0], input.shape[1], math.prod(input.shape[2:])
        # native_group_norm checks what F.group_norm would (channels divisible by groups, ...)
        output, mean, rstd = forward_helper(
            ember.native_group_norm, (input, weight, bias, n, c, hxw, num_groups, eps), {})
        ctx.num_apply_args = 2 + len(expanded_args_and_kwargs)
        ctx.input, ctx.num_groups, ctx.eps = input, num_groups, eps
        ctx.weight, ctx.bias, ctx.mean, ctx.rstd = weight, bias, mean, rstd
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, num_groups, eps = ctx.input, ctx.num_groups, ctx.eps
        input_grad = None
        if input.requires_grad:
            weight = unpack_expanded_weight_or_tensor(ctx.weight, lambda t: t.contiguous())
            n, c, hxw = input.shape[0], input.shape[1], math.prod(input.shape[2:])
            input_grad = ember.ops.aten.native_group_norm_backward(
                grad_output.contiguous(), input.contiguous(), ctx.mean, ctx.rstd, weight,
                n, c, hxw, num_groups, (True, False, False))[0]
        if isinstance(ctx.weight, ExpandedWeight):
            set_grad_sample_if_exists(ctx.weight, lambda _: ember.einsum(
                "ni...->ni", F.group_norm(input, num_groups, eps=eps) * grad_output))
        if isinstance(ctx.bias, ExpandedWeight):
            set_grad_sample_if_exists(ctx.bias,
                                      lambda _: ember.einsum("ni...->ni", grad_output))
        return backward_results(ctx, input_grad)
