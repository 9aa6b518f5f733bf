"""What every binding does after its op: PyTorch's `out=` semantics and `torch.return_types`.

`out=` writes the result into a given tensor: resized (with PyTorch's deprecation warning) if it
has another shape, refused if the result's dtype cannot be cast to it, and refused when autograd
would have to record the write. Ops with several named outputs (`max(dim)` -> values, indices)
return a `torch.return_types.<op>` named tuple.
"""
import collections
import re
import warnings

from .._aten.elementwise import can_cast
from .._core.autocast_state import _autocast_state
from .._core.memory_overlap import check_out_overlap


class _OutVariant:
    """Around the op of an `out=` call: PyTorch runs such a call as the op's `.out` overload,
    which no autocast list names, so the op runs with the AutocastCPU key excluded and the
    result keeps the inputs' precision before it is copied into `out`."""

    def __enter__(self):
        self.prev = _autocast_state.cpu
        _autocast_state.cpu = False

    def __exit__(self, *exc):
        _autocast_state.cpu = self.prev


def _call_with_out(op, out, *args):
    """`op(*args)`; with `out`, PyTorch's `.out` overload: the op without autocast, its result
    copied into `out` (for hand-written bindings of ops with an `out=` keyword)."""
    if out is None:
        return op(*args)
    with _OutVariant():
        result = op(*args)
    return _finish(result, False, out)


def _finish(t, requires_grad=False, out=None, name=None, inputs=()):
    """`t`, or `out` holding it; `name` and `inputs` (the op's tensor arguments) for PyTorch's
    check of `out` against the inputs it overlaps (memory_overlap.check_out_overlap)."""
    if out is not None:
        if name is not None:
            check_out_overlap(name, out, inputs)
        _copy_out(out, t)
        t = out
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


def _copy_out(out, result):
    if result.requires_grad:
        raise RuntimeError(f"{_op_name_of(result)}(): functions with out=... arguments don't "
                           "support automatic differentiation, but one of the arguments requires "
                           "grad.")
    if out._size != result._size:
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out._size)}, which does not match the required output shape "
                          f"{list(result._size)}. This behavior is deprecated.", UserWarning)
        out.set_(result.to(out.dtype))
        return out
    if out.dtype is not result.dtype and not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output type "
                           f"{out.dtype}")
    out.copy_(result)
    return out


def _op_name_of(result):
    """The op that made `result`, read back from its node's name (LogSoftmaxBackward0 ->
    log_softmax), for the out= autograd error."""
    name = type(result.grad_fn).__name__ if result.grad_fn is not None else "op"
    name = re.sub(r"Backward\d*$", "", name)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_ReturnTypes = {}


def _return_type(name, fields):
    t = _ReturnTypes.get(name)
    if t is None:
        t = _ReturnTypes[name] = collections.namedtuple(name, fields)
        t.__module__ = "torch.return_types"
        t.__repr__ = _return_type_repr
    return t


def _return_type_repr(self):
    # PyTorch's structseq repr: one field per line
    items = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{items})"


def _finish_tuple(name, fields, result, out=None, inputs=None):
    """A named tuple of results (torch.return_types.<name>), copied into `out` if given (checked
    against the op's tensor arguments `inputs` where given, as `_finish` does)."""
    if out is not None:
        if inputs is not None:
            check_out_overlap(name, out, inputs)
        result = tuple(_copy_out(o, r) for o, r in zip(out, result))
    return _return_type(name, fields)(*result)
