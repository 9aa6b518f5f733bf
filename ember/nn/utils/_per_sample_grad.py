"""call_for_per_sample_grads: run a module with each trainable parameter replaced by an
ExpandedWeight (torch.func.functional_call), so that one backward of a batched loss leaves each
parameter's per-sample gradients, shape (batch_size, *param.shape), in `param.grad_sample`."""
import functools

from ..._core.tensor import Tensor
from ...utils import _pytree as pytree
from ..modules.module import Module
from ._expanded_weights.expanded_weights_impl import ExpandedWeight


def call_for_per_sample_grads(module, *, batch_size=None, loss_reduction="sum",
                              batch_first=True):
    """A function that calls `module` and, on backward, fills `grad_sample` of each of its
    parameters that requires grad. batch_size defaults to the common size of the batch
    dimension (the first, or the second if not batch_first) of every tensor argument.
    loss_reduction is "sum" or "mean": with "mean" the per-sample gradients are multiplied by
    the batch size, undoing the mean's division."""
    if loss_reduction not in ("sum", "mean"):
        raise RuntimeError(f"Expected loss_reduction argument to be sum or mean, got "
                           f"{loss_reduction}")
    if not isinstance(module, Module):
        raise RuntimeError(f"Module passed must be nn.Module, got {type(module).__name__}")
    if not (batch_size is None or isinstance(batch_size, int)):
        raise RuntimeError(f"Batch size passed must be None or an integer, got "
                           f"{type(batch_size).__name__}")
    if batch_size is not None and batch_size < 1:
        raise RuntimeError(f"Batch size must be positive, got {batch_size}")
    for weight in module.parameters():
        if getattr(weight, "grad_sample", None) is not None:
            raise RuntimeError(f"Current Expanded Weights accumulates the gradients, which will be "
                               f"incorrect for multiple calls without clearing gradients. Please "
                               f"clear out the grad_sample parameter of {weight} or post an issue "
                               f"to pytorch/pytorch to prioritize correct behavior")

    def compute_batch_size(*args, **kwargs):
        found = None
        for arg in pytree.arg_tree_leaves(*args, **kwargs):
            if not isinstance(arg, Tensor):
                continue
            size = arg.shape[0] if batch_first else arg.shape[1]
            if found is not None and found != size:
                raise RuntimeError(f"When computing batch size, found at least one input with "
                                   f"batch size {found} and one with batch size {size}. Please "
                                   f"specify it explicitly using the batch size kwarg in "
                                   f"call_for_per_sample_grads")
            found = size
        if found is None:
            raise RuntimeError("Unable to find a tensor in the passed args and kwargs. They may "
                               "not be pytree-able and so ExpandedWeights cannot compute the "
                               "batch size from the inputs. Please specify it explicitly")
        return found

    @functools.wraps(module.forward)
    def wrapper(*args, **kwargs):
        from ...func import functional_call
        size = batch_size if batch_size is not None else compute_batch_size(*args, **kwargs)
        params = {name: ExpandedWeight(value, size, loss_reduction) if value.requires_grad
                  else value for name, value in module.named_parameters()}
        return functional_call(module, params, args, kwargs)

    return wrapper
