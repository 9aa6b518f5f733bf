"""The pieces every per-sample-gradient rule shares: splitting the `apply` arguments back into
a call, checking the input against the ExpandedWeights' batch size and running the plain
function on the original weights (forward_helper), and storing a weight's per-sample
gradients in its `grad_sample` (set_grad_sample_if_exists)."""
import ember

from ...._core.tensor import Tensor
from .expanded_weights_impl import ExpandedWeight


def is_batch_first(expanded_args_and_kwargs):
    """The ExpandedWeights' common batch_first (None if there are none)."""
    batch_first = None
    for arg in expanded_args_and_kwargs:
        if not isinstance(arg, ExpandedWeight):
            continue
        if not batch_first:
            batch_first = arg.batch_first
        elif arg.batch_first != batch_first:
            raise RuntimeError("Got conflicting batch_first arguments in the same layer")
    return batch_first


def standard_kwargs(kwarg_names, expanded_args):
    """(positional args, kwargs dict) of an `apply` whose last len(kwarg_names) arguments are
    the values of the keyword arguments named."""
    split = len(expanded_args) - len(kwarg_names)
    return expanded_args[:split], dict(zip(kwarg_names, expanded_args[split:], strict=True))


def forward_helper(func, expanded_args, expanded_kwargs):
    """func(*args, **kwargs) with every ExpandedWeight replaced by its original weight, after
    checking that the first argument is a batched input matching their batch size."""
    args, kwargs = _check_and_unexpand_args(func, expanded_args, expanded_kwargs)
    return func(*args, **kwargs)


def _check_and_unexpand_args(func, expanded_args, expanded_kwargs):
    name = getattr(func, "__name__", func)
    input = expanded_args[0]
    if isinstance(input, ExpandedWeight):
        raise RuntimeError(f"Expanded Weights do not support inputs that are also ExpandedWeights. "
                           f"Input must be a Tensor, got {type(input).__name__} in function {name}")
    if not isinstance(input, Tensor):
        raise RuntimeError(f"Expanded Weights requires a Tensor as the first input to get the batch "
                           f"dimension, got {type(input).__name__} in function {name}")
    if input.dim() == 0:
        raise RuntimeError(f"Expanded Weights requires a batch dimension but got an input of size 0 "
                           f"in function {name}")
    if input.shape[0] == 0:
        raise RuntimeError(f"0 is not a valid batch size for Expanded Weights but got input tensor "
                           f"of {input} in function {name}")
    everything = expanded_args + tuple(expanded_kwargs.values())
    expanded = [arg for arg in everything if isinstance(arg, ExpandedWeight)]
    for arg in expanded:
        batch_size = input.shape[0] if arg.batch_first else input.shape[1]
        too_big = batch_size > arg.batch_size if arg.allow_smaller_batches else \
            batch_size != arg.batch_size
        if too_big:
            raise RuntimeError(f"Expected ExpandedWeights to have batch size matching input but got "
                               f"input batch size of {batch_size} with ExpandedWeight of batch size "
                               f"{arg.batch_size}")
    reductions = {arg.loss_reduction for arg in expanded}
    if len(reductions) > 1:
        first, other = expanded[0].loss_reduction, (reductions - {expanded[0].loss_reduction}).pop()
        raise RuntimeError(f"Expected ExpandedWeights to all have the same loss_reduction argument "
                           f"but got onewith {first} and one with {other}")

    def unexpand(arg):
        return arg.orig_weight if isinstance(arg, ExpandedWeight) else arg
    return (tuple(unexpand(arg) for arg in expanded_args),
            {name: unexpand(arg) for name, arg in expanded_kwargs.items()})


def maybe_scale_by_batch_size(grad_sample, expanded_weight):
    """A "mean" loss divided every sample's gradient by the batch size: undo that."""
    if expanded_weight.loss_reduction == "mean":
        return grad_sample * expanded_weight.batch_size
    return grad_sample


def set_grad_sample_if_exists(maybe_expanded_weight, per_sample_grad_fn):
    """If the argument is an ExpandedWeight, add per_sample_grad_fn(original weight) (scaled
    for a "mean" loss, zero-padded up to the batch size) to the original's `grad_sample`; a
    tensor that needs no grad or a non-tensor is left alone."""
    unpacked = unpack_expanded_weight_or_tensor(maybe_expanded_weight)
    if not isinstance(maybe_expanded_weight, ExpandedWeight):
        return
    contribution = maybe_scale_by_batch_size(per_sample_grad_fn(unpacked), maybe_expanded_weight)
    if maybe_expanded_weight.batch_size > contribution.shape[0]:
        # only a weight that allows smaller batches (packed sequences) gets here
        padded = ember.zeros(maybe_expanded_weight.batch_size, *contribution.shape[1:],
                             dtype=contribution.dtype, device=contribution.device)
        padded[:contribution.shape[0]] = contribution
        contribution = padded
    if getattr(unpacked, "grad_sample", None) is not None:
        unpacked.grad_sample = unpacked.grad_sample + contribution
    else:
        unpacked.grad_sample = contribution


def unpack_expanded_weight_or_tensor(maybe_expanded_weight, func=lambda x: x):
    """func(original weight) of an ExpandedWeight, func(t) of a tensor that needs no grad, None
    for anything else; a plain tensor that requires grad is refused (it would get no per-sample
    gradient)."""
    if isinstance(maybe_expanded_weight, ExpandedWeight):
        return func(maybe_expanded_weight.orig_weight)
    if isinstance(maybe_expanded_weight, Tensor):
        if maybe_expanded_weight.requires_grad:
            raise RuntimeError("ExpandedWeights currently does not support a mixture of "
                               "ExpandedWeight parameters and normal Parameters. Please file and "
                               "issue with pytorch/pytorch")
        return func(maybe_expanded_weight)
    return None


def sum_over_all_but_batch_and_last_n(tensor, n_dims):
    """`tensor` summed over every dimension but the first (the batch) and the last n_dims."""
    if tensor.dim() == n_dims + 1:
        return tensor
    return tensor.sum(dim=list(range(1, tensor.dim() - n_dims)))


def backward_results(ctx, input_grad):
    """The gradients an `apply(kwarg_names, func, input, ...)` backward returns: the input's
    and None for everything else (the weights' gradients go to grad_sample instead)."""
    return (None, None, input_grad) + (None,) * (ctx.num_apply_args - 3)
