"""ExpandedWeight: a parameter that stands for `batch_size` copies of itself, one per sample.

Operations see an ExpandedWeight through `__torch_function__`. A function with a per-sample
gradient rule (linear, conv1d/2d/3d, embedding, layer_norm, group_norm, instance_norm) runs as
an autograd.Function whose forward calls the plain function on the original weight and whose
backward, besides the input's gradient, writes each weight's per-sample gradients -- a tensor
of shape (batch_size, *weight.shape) -- into the original weight's `grad_sample` attribute.
The weights themselves get no `.grad`. Any other function raises: it cannot know which
dimension of its other tensor arguments is the batch.

    ew = ExpandedWeight(weight, 4, "sum")
    y = F.linear(x, ew)     # __torch_function__ -> LinearPerSampleGrad.apply((), F.linear, x, ew)
    y.sum().backward()      # x.grad as usual; weight.grad_sample: (4, out, in); weight.grad: None

Every rule is an autograd.Function applied as `apply(kwarg_names, func, *args, *kwarg_values)`:
the names of the keyword arguments come first, so the rule can rebuild the call; they and the
function itself get no gradient. RNN/LSTM/GRU need no rule of their own: given such a weight,
ember/nn/_rnn.py runs them step by step through F.linear (PyTorch decomposes them likewise).
"""
from ...._core.tensor import Tensor

HANDLED_FUNCTIONS = {}   # a functional (F.linear, ...): its per-sample-gradient autograd.Function


def implements_per_sample_grads(torch_function):
    """Register the decorated autograd.Function as the rule for `torch_function`."""
    def decorator(autograd_func):
        HANDLED_FUNCTIONS[torch_function] = autograd_func
        return autograd_func
    return decorator


class ExpandedWeight(Tensor):
    """`orig_weight` seen by operations as a weight expanded over a batch of `batch_size`
    samples; loss_reduction ("sum" or "mean") says how the loss combined the samples, so that
    "mean" per-sample gradients can be scaled back by batch_size."""

    handled_functions = HANDLED_FUNCTIONS

    def __new__(cls, orig_weight, batch_size, loss_reduction):
        if not isinstance(orig_weight, Tensor):
            raise RuntimeError(f"Can only make Expanded Weights of Tensors, got "
                               f"{type(orig_weight).__name__}")
        if not orig_weight.requires_grad:
            raise RuntimeError("Can only build ExpandedWeights objects of tensors that "
                               "requires_grad")
        return Tensor._make_subclass(cls, orig_weight, True)

    def __init__(self, orig_weight, batch_size, loss_reduction):
        self.batch_size = batch_size
        self.batch_first = True
        self.allow_smaller_batches = False
        self.orig_weight = orig_weight
        self.loss_reduction = loss_reduction

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rule = cls.handled_functions.get(func)
        if rule is not None:
            return rule.apply(tuple(kwargs), func, *args, *kwargs.values())
        # no fallback: for torch.add(tensor, expanded_weight) the batch dimension of `tensor`
        # is unknown, so the per-sample gradients could not be computed
        raise RuntimeError(f"Expanded Weights encountered but cannot handle function "
                           f"{getattr(func, '__name__', func)}")

    # metadata is the original weight's, read without going through __torch_function__
    # (dtype is a plain attribute of every tensor, never dispatched)
    @property
    def data(self):
        return self.orig_weight.data

    @property
    def shape(self):
        return self.orig_weight.shape

    @property
    def device(self):
        return self.orig_weight.device

    @property
    def is_cuda(self):
        return self.orig_weight.is_cuda

    def data_ptr(self):
        return self.orig_weight.data_ptr()

    def get_device(self):
        return self.orig_weight.get_device()

    def set_allow_smaller_batches(self, is_allow_smaller_batches):
        self.allow_smaller_batches = is_allow_smaller_batches

    def set_batch_first(self, is_batch_first=True):
        self.batch_first = is_batch_first

