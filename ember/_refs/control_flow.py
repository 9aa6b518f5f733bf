"""torch.cond and torch.while_loop, PyTorch's control-flow operators, run eagerly: the predicate is
read (a Python bool or a one-element tensor) and the chosen function runs on the operands. Under
graph capture PyTorch traces both branches; ember's compile treats them as ordinary Python."""
from .._core.tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred, what):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"{what}: expected the predicate to have one element, got a "
                               f"tensor of shape {tuple(pred.shape)}")
        return bool(pred.item())
    if isinstance(pred, (bool, int)):
        return bool(pred)
    raise RuntimeError(f"{what}: expected the predicate to be a bool or a tensor with one "
                       f"element, got {type(pred).__name__}")


def cond(pred, true_fn, false_fn, operands=(), additional_inputs=None):
    """true_fn(*operands) if pred else false_fn(*operands)."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    fn = true_fn if _truth(pred, "cond") else false_fn
    return fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs, additional_inputs=None):
    """Run body_fn on the carried values while cond_fn says so; the final carried values."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    extra = tuple(additional_inputs or ())
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried, *extra), "while_loop"):
        out = body_fn(*carried, *extra)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried
