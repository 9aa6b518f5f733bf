"""Per-sample gradients of F.embedding: sample i's gradient for row r of the weight is the
sum of the output gradients of sample i's positions that looked up r (a scatter-add of the
output gradient into a zero (n, num_embeddings, dim) tensor). The indices get no gradient."""
import ember

from ... import functional as F
from ....autograd import Function
from .expanded_weights_impl import implements_per_sample_grads
from .expanded_weights_utils import (backward_results, forward_helper,
                                     set_grad_sample_if_exists, standard_kwargs)


@implements_per_sample_grads(F.embedding)
class EmbeddingPerSampleGrad(Function):
    @staticmethod
    def forward(ctx, kwarg_names, func, *expanded_args_and_kwargs):
        expanded_args, expanded_kwargs = standard_kwargs(kwarg_names, expanded_args_and_kwargs)
        if expanded_args[0].dim() == 1:
            raise RuntimeError(f"Expanded Weights needs an input with a batch size, got a 1D "
                               f"tensor, {expanded_args[0]}")
        ctx.num_apply_args = 2 + len(expanded_args_and_kwargs)
        ctx.input, ctx.weight = expanded_args
        return forward_helper(F.embedding, expanded_args, expanded_kwargs)

    @staticmethod
    def backward(ctx, grad_output):
        input = ctx.input

        def weight_per_sample_grad(weight):
            n, dim = input.shape[0], weight.shape[1]
            index = input.unsqueeze(-1).expand(*input.shape, dim).reshape(n, -1, dim)
            grad_sample = ember.zeros(n, *weight.shape, device=weight.device,
                                      dtype=grad_output.dtype)
            return grad_sample.scatter_add_(1, index, grad_output.reshape(n, -1, dim))

        set_grad_sample_if_exists(ctx.weight, weight_per_sample_grad)
        return backward_results(ctx, None)   # integer indices are not differentiable
