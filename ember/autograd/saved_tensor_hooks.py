"""Saved-tensor hooks: how a tensor saved for backward is stored, chosen by the user.

PyTorch's `torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)` (its C++ side is
`SavedTensorDefaultHooks`): while the context is active, every tensor an op saves for backward
(a built-in op's inputs and outputs, a custom Function's `save_for_backward`) is handed to
`pack_hook` and only what that returns is kept in the graph; backward hands it to
`unpack_hook` and uses the tensor that comes back. `save_on_cpu` is one such pair, and
`grad_fn._raw_saved_<name>.register_hooks(pack, unpack)` sets a pair on one saved tensor.

    forward:   t --pack_hook--> packed (kept by the node, t itself is not)
    backward:  packed --unpack_hook--> data, given t's place in the graph (grad_fn / leaf)

Version counters cannot be followed through the hooks, so a tensor saved with hooks is not
checked for in-place changes when it is unpacked (as in PyTorch).
"""
import contextlib
import weakref

from .._core.grad_mode import no_grad
from .._core.tensor import Tensor, _alias

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

# The active (pack_hook, unpack_hook) pairs, innermost last, and the message that entering one
# raises while they are disabled (None: enabled). graph.SavedTensor reads `default_hooks`.
default_hooks = []
_disabled_message = [None]


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through `pack_hook` now and
    `unpack_hook` when backward reads them. Only the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_message[0] is not None:
            raise RuntimeError(_disabled_message[0])
        default_hooks.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args):
        if not default_hooks:
            raise RuntimeError("saved_tensors_hooks: exit without a matching enter (no saved "
                               "tensor hooks are active)")
        default_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward (on a
    CPU-only build nothing moves)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)
        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside it, entering saved_tensors_hooks raises RuntimeError(error_message); so does
    entering it while hooks are active."""
    previous = _disabled_message[0]
    try:
        _disabled_message[0] = error_message
        if default_hooks:
            raise RuntimeError(error_message)
        yield
    finally:
        _disabled_message[0] = previous


def pack(saved, t, hooks):
    """Store pack_hook(t) in `saved` instead of `t`, with what unpacking needs to give the
    result t's place in the graph: a non-leaf input's grad_fn, a leaf's accumulator."""
    pack_hook, unpack_hook = hooks
    grad_fn = accumulator = None
    if not saved._is_output:
        if t.grad_fn is not None:
            grad_fn = t.grad_fn
            saved._output_nr = t._output_nr
        elif t._rg:
            from .graph import grad_accumulator  # graph imports this module
            accumulator = weakref.ref(grad_accumulator(t))
    version = t._version
    with no_grad():
        packed = pack_hook(t)
    if t._version != version:
        raise RuntimeError(
            "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
            "to pack hook cannot be modified by in-place operations as this can lead to "
            "unexpected side-effects. Please open an issue if you need to perform in-place "
            "operations on the input to a pack hook.")
    saved._t = None
    saved._hooks = (packed, unpack_hook, grad_fn, accumulator)


def unpack(saved, node):
    packed, unpack_hook, grad_fn, accumulator = saved._hooks
    data = unpack_hook(packed)
    if not isinstance(data, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(data).__name__}")
    if saved._is_output:
        grad_fn = node
    if grad_fn is None and accumulator is None:
        return data   # nothing to attach: the hook's tensor itself, as PyTorch returns it
    out = _alias(data)
    if grad_fn is not None:
        out._rg = True
        out.grad_fn = grad_fn
        out._output_nr = saved._output_nr
    elif accumulator is not None:
        out._rg = True
        out._grad_acc = accumulator
    return out


def register(saved, pack_hook, unpack_hook):
    """`SavedTensor.register_hooks`: pack one saved tensor with its own pair of hooks."""
    if saved._hooks is not None:
        raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                           "been set. Hint: only one pair of hooks is allowed at a time.")
    if saved._t is None:
        raise RuntimeError(
            "Calling register_hooks on a saved tensor after it has been freed. Saved "
            "intermediate values of the graph are freed when you call .backward() or "
            "autograd.grad(). Specify retain_graph=True if you need to backward through the "
            "graph a second time or if you need to access saved variables after calling "
            "backward.")
    pack(saved, saved._t, (pack_hook, unpack_hook))


@contextlib.contextmanager
def _backward_scope():
    """A backward pass sees the hooks active when it started, and what its own hooks push or
    pop stays inside it: PyTorch runs backward under a copy of the caller's thread-local
    state and restores the caller's afterwards."""
    before = list(default_hooks)
    try:
        yield
    finally:
        default_hooks[:] = before
