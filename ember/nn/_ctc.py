"""F.ctc_loss's front half: PyTorch's argument conventions (lengths as tensors or tuples,
unbatched input, reductions) in the `ctc_loss` op (CompositeImplicitAutograd, as in PyTorch, so
autocast runs it in float32) around the `_ctc_loss` op, whose kernels are in _aten/ctc.py."""
import numpy as np

from .._core.tensor import Tensor
from .. import _refs as E
from .._core import dtype as D
from .._dispatch.dispatcher import impl, lookup as _lookup

_ctc_loss = _lookup("_ctc_loss")
_ctc_loss_op = _lookup("ctc_loss.IntList")


def _lengths(value, name):
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == D.bool:
            raise RuntimeError(f"{name} must be integral")
        return value.numpy(force=True).astype(np.int64).reshape(-1)
    return np.asarray(value, dtype=np.int64).reshape(-1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    """F.ctc_loss after the reduction string is checked (`reduction` is 0, 1 or 2)."""
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be tensors or "
                        "both be tuples of ints")
    if not isinstance(input_lengths, Tensor) and not all(
            isinstance(v, (tuple, list)) for v in (input_lengths, target_lengths)):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must be tensors or "
                        "tuples of ints")
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    return _ctc_loss_op(log_probs, targets, il.tolist(), tl.tolist(), blank, reduction,
                        zero_infinity)


@impl("ctc_loss.IntList", "CompositeImplicitAutograd")
def _ctc_loss_composite(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                        zero_infinity):
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    res = _ctc_loss(lp, targets, input_lengths, target_lengths, blank, zero_infinity)[0]
    if zero_infinity:
        res = E.where(res == float("inf"), E.zeros((), dtype=res.dtype), res)
    if reduction == 1:
        lengths = E.tensor(np.maximum(target_lengths, 1), dtype=res.dtype)
        return (res / lengths).mean()
    if reduction == 2:
        return res.sum()
    return res if batched else res.squeeze(0)
