"""Per-sample gradients of F.instance_norm: each (sample, channel) is normalized on its own,
so with x_hat the normalized input

    grad_sample(weight)[i, c] = sum over sample i's positions of channel c of  x_hat * dy
    grad_sample(bias)[i, c]   = sum over sample i's positions of channel c of  dy

The input's gradient is batch norm's, the input seen as one sample of n * c channels."""
import ember

from ... import functional as F
from ....autograd import Function
from .expanded_weights_impl import implements_per_sample_grads
from .expanded_weights_utils import (backward_results, forward_helper,
                                     set_grad_sample_if_exists, standard_kwargs,
                                     unpack_expanded_weight_or_tensor)


@implements_per_sample_grads(F.instance_norm)
class InstanceNormPerSampleGrad(Function):
    @staticmethod
    def forward(ctx, kwarg_names, func, *expanded_args_and_kwargs):
        expanded_args, expanded_kwargs = standard_kwargs(kwarg_names, expanded_args_and_kwargs)
        output = forward_helper(F.instance_norm, expanded_args, expanded_kwargs)
        ctx.num_apply_args = 2 + len(expanded_args_and_kwargs)
        ctx.input = expanded_args[0]
        ctx.running_mean = expanded_kwargs.get("running_mean")
        ctx.running_var = expanded_kwargs.get("running_var")
        ctx.weight, ctx.bias = expanded_kwargs.get("weight"), expanded_kwargs.get("bias")
        ctx.eps = expanded_kwargs.get("eps", 1e-5)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, eps = ctx.input, ctx.eps
        input_grad = None
        if input.requires_grad:
            b, c = input.shape[0], input.shape[1]
            as_one_sample = (1, b * c, *input.shape[2:])

            def repeated(t):
                return None if t is None else t.repeat(b)
            weight = unpack_expanded_weight_or_tensor(ctx.weight, repeated)
            x = input.reshape(as_one_sample)
            var, mean = ember.var_mean(x, (0,) + tuple(range(2, input.dim())), correction=0)
            rstd = 1 / ember.sqrt(var + eps)
            input_grad = ember.ops.aten.native_batch_norm_backward(
                grad_output.reshape(as_one_sample), x, weight, repeated(ctx.running_mean),
                repeated(ctx.running_var), mean, rstd, True, eps,
                (True, False, False))[0].reshape(input.shape)
        set_grad_sample_if_exists(ctx.weight, lambda _: ember.einsum(
            "ni...->ni", F.instance_norm(input, eps=eps) * grad_output))
        set_grad_sample_if_exists(ctx.bias, lambda _: ember.einsum("ni...->ni", grad_output))
        return backward_results(ctx, input_grad)
