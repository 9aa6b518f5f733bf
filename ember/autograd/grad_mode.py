"""torch.autograd.grad_mode: the grad-mode context managers. The flags they switch live in the
core layer (`ember._core.grad_mode`), below the dispatcher that reads them on every call;
`inference_mode` also pushes a dispatch mode, so it is defined here, above the dispatcher."""
from .._core.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: F401
                               is_grad_enabled, is_inference_mode_enabled,
                               _DecoratorContextManager, _grad_state)
from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from .._dispatch.dispatcher import call_in_modes


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside are inference tensors (`is_inference()`): they
    never join a graph later (saving one for backward raises) and cannot be modified in place
    outside inference mode. `inference_mode(False)` switches back to normal mode inside.

    A dispatch mode marks each op's new outputs while the flag is on; a view inherits the
    flag of its base and an in-place op's result keeps its own.
    """

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool) or mode is None:
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        self.prev = (_grad_state.enabled, _grad_state.inference)
        _grad_state.enabled = not self.mode
        _grad_state.inference = bool(self.mode)
        if self.mode:
            _dispatcher._modes.append(_mark_inference)

    def __exit__(self, *exc):
        _grad_state.enabled, _grad_state.inference = self.prev
        if self.mode:
            _dispatcher._modes.remove(_mark_inference)

    def clone(self):
        return self.__class__(self.mode)


def _mark_inference(op, args, level):
    out = call_in_modes(op, args, level - 1)
    if _grad_state.inference:
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, Tensor) and not (op._mutates and t is args[0]):
                base = t._base
                if base is None or base._inference:
                    t._inference = True
    return out


_view_replay = [False]  # torch._C._is_view_replay_enabled()


class _force_original_view_tracking(_DecoratorContextManager):
    """Sets whether autograd regenerates a view written in place by replaying its chain of
    view ops (PyTorch's "view replay"); a plain call sets it, a `with` block restores it.
    ember regenerates such a view from its base the same way in both modes (by element
    positions, ember/autograd/views.py), so the flag changes no gradient; it is kept for the
    code that sets and reads it."""

    def __init__(self, mode):
        self.prev = _view_replay[0]
        self.mode = mode
        _view_replay[0] = bool(mode)

    def __call__(self, orig_func):
        _view_replay[0] = self.prev
        return super().__call__(orig_func)

    def __enter__(self):
        _view_replay[0] = bool(self.mode)

    def __exit__(self, *exc):
        _view_replay[0] = self.prev

    def clone(self):
        return self.__class__(self.mode)


class _unsafe_preserve_version_counter(_DecoratorContextManager):
    """Inside, in-place writes to `tensors` do not count: their version counters are set back
    on exit. Unsafe (autograd then cannot see those writes); for code that knows the saved
    values it overwrites are restored before backward reads them."""

    def __init__(self, tensors):
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _unsafe_set_version_counter(self.tensors, self.prev_versions)

    def clone(self):
        return self.__class__(self.tensors)


def is_view_replay_enabled():
    """Whether `_force_original_view_tracking` switched view replay on (see there)."""
    return _view_replay[0]


def _unsafe_set_version_counter(tensors, versions):
    """Set each tensor's version counter (shared with its views) to the given value, hiding
    in-place writes from autograd's checks. Unsafe: a saved tensor can then be stale."""
    for t, v in zip(tensors, versions):
        if not isinstance(t, Tensor):
            raise TypeError(f"_unsafe_set_version_counter expects Tensors, got {type(t).__name__}")
        if v < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {v}")
        t._storage_()._version = v


_multithreading = [True]  # torch._C._is_multithreading_enabled()


def is_multithreading_enabled():
    """Whether backward may run on per-device worker threads (the flag only: ember's engine
    runs every backward on the calling thread, as PyTorch's does for CPU-only graphs)."""
    return _multithreading[0]


class set_multithreading_enabled(_DecoratorContextManager):
    """Sets the multithreaded-backward flag; a plain call sets it, a `with` block restores it."""

    def __init__(self, mode):
        self.prev = _multithreading[0]
        _multithreading[0] = bool(mode)
        self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _multithreading[0] = self.prev

    def clone(self):
        return self.__class__(self.mode)
