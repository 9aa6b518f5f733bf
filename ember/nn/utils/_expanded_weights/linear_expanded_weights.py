"""Per-sample gradients of F.linear: for y = x W^T + b over a batch of n samples,

    grad_sample(W)[i] = sum over the non-batch positions of  dy[i]^T x[i]     (out, in)
    grad_sample(b)[i] = sum over the non-batch positions of  dy[i]            (out,)
"""
import ember

from ... import functional as F
from ....autograd import Function
from .expanded_weights_impl import implements_per_sample_grads
from .expanded_weights_utils import (backward_results, forward_helper, is_batch_first,
                                     set_grad_sample_if_exists, unpack_expanded_weight_or_tensor)


@implements_per_sample_grads(F.linear)
class LinearPerSampleGrad(Function):
    @staticmethod
    def forward(ctx, kwarg_names, func, *expanded_args_and_kwargs):
        input = expanded_args_and_kwargs[0]
        if input.dim() <= 1:
            raise RuntimeError(f"Input does not have a batch dimension. Expanded Weights expected "
                               f"input of at least rank 2, got of rank {input.dim()}")
        # linear's own parser names nothing: bias is the third value, by position or by name
        expanded_args = expanded_args_and_kwargs[:2]
        bias = expanded_args_and_kwargs[2] if len(expanded_args_and_kwargs) == 3 else None
        ctx.batch_first = is_batch_first(expanded_args_and_kwargs)
        ctx.num_apply_args = 2 + len(expanded_args_and_kwargs)
        ctx.args, ctx.bias = expanded_args, bias
        return forward_helper(F.linear, expanded_args, {"bias": bias})

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.args
        input_grad = None
        if input.requires_grad:
            input_grad = grad_output.matmul(unpack_expanded_weight_or_tensor(weight))
        if not ctx.batch_first:
            grad_output, input = grad_output.transpose(0, 1), input.transpose(0, 1)
        set_grad_sample_if_exists(weight,
                                  lambda _: ember.einsum("n...i,n...j->nij", grad_output, input))
        set_grad_sample_if_exists(ctx.bias, lambda _: ember.einsum("n...k->nk", grad_output))
        return backward_results(ctx, input_grad)
