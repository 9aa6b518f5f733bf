"""torch.autograd.graph.allow_mutation_on_saved_tensors: inside the context, writing in place
to a tensor autograd saved for backward is allowed; the saved value is cloned just before the
write, and backward reads the clone.

Two pieces cooperate, as in PyTorch: saved-tensor hooks that save a handle instead of the
tensor (and give back the original, or its clone once one was made), and a dispatch mode that
sees every in-place op before it runs and clones each saved tensor its `self` aliases. A saved
tensor is named by (id, data_ptr, version) and its memory by (data_ptr, version), so a write
through another tensor over the same memory (a view at the same address) finds it too.
"""
import contextlib
import weakref
from collections import defaultdict

from .._dispatch import dispatcher as _dispatcher
from .saved_tensor_hooks import saved_tensors_hooks

__all__ = ["allow_mutation_on_saved_tensors"]

_active = [None]  # the context now open (contexts do not nest)


class _Handle:
    """What the pack hook saves: a weakly referenced key for the original and its clone."""


class _AllowMutationOnSavedContext:
    """The state of one context: the originals and clones by handle, the handles by saved
    tensor (weakly: a handle lives as long as a graph saves it) and the saved tensors by
    memory."""

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()
        self.original = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _tid(t):
    return (id(t), t.data_ptr(), t._version)


def _sid(t):
    return (t.data_ptr(), t._version)


def _pack(ctx, tensor):
    tid = _tid(tensor)
    ctx.sid_to_tid[_sid(tensor)].add(tid)
    handle = ctx.tid_to_weakhandle.get(tid)
    if handle is None:  # the same tensor at the same version may be saved many times
        handle = _Handle()
        ctx.tid_to_weakhandle[tid] = handle
        ctx.original[handle] = tensor
    return handle


def _unpack(ctx, handle):
    if _active[0] is not ctx or (handle not in ctx.cloned and handle not in ctx.original):
        raise AssertionError("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                             "context in which the graph was originally recorded.")
    cloned = ctx.cloned.get(handle)
    return cloned if cloned is not None else ctx.original[handle]


def _clone_saved(ctx, t):
    """Clone every saved tensor over `t`'s memory at its version, before `t` is written."""
    for tid in ctx.sid_to_tid.get(_sid(t), ()):
        handle = ctx.tid_to_weakhandle.get(tid)
        if handle is None or handle in ctx.cloned:  # freed by a backward, or cloned already
            continue
        ctx.cloned[handle] = ctx.original.pop(handle).clone()


def _clone_before_mutation_mode(ctx):
    def mode(op, args, level):
        if op._mutates:
            _clone_saved(ctx, args[0])
        return _dispatcher.call_in_modes(op, args, level - 1)
    return mode


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Allow in-place writes to tensors saved for backward: each is cloned before the write.
    Run forward and backward inside the same context; yields the context's state."""
    ctx = _AllowMutationOnSavedContext()
    mode = _clone_before_mutation_mode(ctx)
    with saved_tensors_hooks(lambda t: _pack(ctx, t), lambda h: _unpack(ctx, h)):
        _dispatcher._modes.append(mode)
        try:
            if _active[0] is not None:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _active[0] = ctx
            try:
                yield ctx
            finally:
                _active[0] = None
        finally:
            _dispatcher._modes.remove(mode)
            ctx.clear()
