"""Per-sample gradients of F.layer_norm: with x_hat the input normalized over its last
len(normalized_shape) dimensions,

    grad_sample(weight)[i] = sum over sample i's other positions of  x_hat[i] * dy[i]
    grad_sample(bias)[i]   = sum over sample i's other positions of  dy[i]

The normalization must not reach the batch dimension, or the samples would interact."""
import ember

from ... import functional as F
from ....autograd import Function
from .expanded_weights_impl import ExpandedWeight, implements_per_sample_grads
from .expanded_weights_utils import (backward_results, forward_helper,
                                     set_grad_sample_if_exists, standard_kwargs,
                                     sum_over_all_but_batch_and_last_n,
                                     unpack_expanded_weight_or_tensor)


@implements_per_sample_grads(F.layer_norm)
class LayerNormPerSampleGrad(Function):
    @staticmethod
    def forward(ctx, kwarg_names, func, *expanded_args_and_kwargs):
        expanded_args, expanded_kwargs = standard_kwargs(kwarg_names, expanded_args_and_kwargs)
        input, normalized_shape = expanded_args
        if input.dim() <= len(normalized_shape):
            raise RuntimeError(f"Expanded Weights: Layer norm should not normalize over batch "
                               f"dimension for per sample gradientcomputations but got that "
                               f"normalized shape, {normalized_shape}, matched input shape.")
        output, mean, rstd = forward_helper(ember.native_layer_norm, expanded_args,
                                            expanded_kwargs)
        ctx.num_apply_args = 2 + len(expanded_args_and_kwargs)
        ctx.args, ctx.eps = expanded_args, expanded_kwargs["eps"]
        ctx.weight, ctx.bias = expanded_kwargs["weight"], expanded_kwargs["bias"]
        ctx.mean, ctx.rstd = mean, rstd
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, normalized_shape = ctx.args
        input_grad = None
        if input.requires_grad:
            weight = unpack_expanded_weight_or_tensor(ctx.weight)
            bias = unpack_expanded_weight_or_tensor(ctx.bias)
            input_grad = ember.ops.aten.native_layer_norm_backward(
                grad_output, input, normalized_shape, ctx.mean, ctx.rstd, weight, bias,
                (True, False, False))[0]

        def weight_per_sample_grad(weight):
            x_hat = F.layer_norm(input, normalized_shape, eps=ctx.eps)
            return sum_over_all_but_batch_and_last_n(x_hat * grad_output, weight.dim())

        if isinstance(ctx.weight, ExpandedWeight):
            set_grad_sample_if_exists(ctx.weight, weight_per_sample_grad)
        if isinstance(ctx.bias, ExpandedWeight):
            set_grad_sample_if_exists(
                ctx.bias, lambda bias: sum_over_all_but_batch_and_last_n(grad_output, bias.dim()))
        return backward_results(ctx, input_grad)
