"""torch.utils._python_dispatch: TorchDispatchMode and the helpers that `__torch_dispatch__`
code uses. The mechanism (where the Python key sits, how a handler is picked) is
ember/_dispatch/python_dispatch.py; the modes live on the dispatcher's one mode stack."""
import contextlib
import warnings

from .._core._warnings import user_stacklevel as _user_stacklevel
from .._core.tensor import Tensor
from .._dispatch import python_dispatch as _pd

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode", "is_in_torch_dispatch_mode",
           "is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type",
           "transform_subclass", "return_and_correct_aliasing"]

_is_in_torch_dispatch_mode = False
_is_in_non_infra_torch_dispatch_mode = False


def is_in_torch_dispatch_mode(include_infra_modes=True):
    return _is_in_torch_dispatch_mode if include_infra_modes else \
        _is_in_non_infra_torch_dispatch_mode


def any_torch_dispatch_mode_on_stack():
    return any(not m.is_infra_mode() and not m.ignore_compile_internals()
               for m in _pd.mode_stack())


class TorchDispatchMode:
    """Override every aten op called in a dynamic scope (`with Mode():`), at the Python key:
    below autograd (a mode sees `aten.mul.Tensor`, and during backward the backward's ops),
    above the kernels; factory functions reach it too. Inside the mode's own
    `__torch_dispatch__`, ops go to the next mode down (or run)."""
    supports_higher_order_operators = False

    def __init__(self, _dispatch_key=None):
        if _dispatch_key is not None:
            raise NotImplementedError("TorchDispatchMode(_dispatch_key=...): ember has no "
                                      "PreDispatch key")
        self.old_dispatch_mode_flags = []
        self.old_non_infra_dispatch_mode_flags = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        global _is_in_torch_dispatch_mode, _is_in_non_infra_torch_dispatch_mode
        if not hasattr(self, "old_dispatch_mode_flags"):  # a subclass skipped __init__
            self.old_dispatch_mode_flags, self.old_non_infra_dispatch_mode_flags = [], []
        self.old_dispatch_mode_flags.append(_is_in_torch_dispatch_mode)
        self.old_non_infra_dispatch_mode_flags.append(_is_in_non_infra_torch_dispatch_mode)
        _is_in_torch_dispatch_mode = True
        _is_in_non_infra_torch_dispatch_mode = \
            _is_in_non_infra_torch_dispatch_mode or not self.is_infra_mode()
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        global _is_in_torch_dispatch_mode, _is_in_non_infra_torch_dispatch_mode
        _is_in_torch_dispatch_mode = self.old_dispatch_mode_flags.pop()
        _is_in_non_infra_torch_dispatch_mode = self.old_non_infra_dispatch_mode_flags.pop()
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`", stacklevel=_user_stacklevel())
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False

    @classmethod
    def ignore_compile_internals(cls):
        return cls.is_infra_mode()


class BaseTorchDispatchMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_dispatch_mode():
    """The mode the next op call goes to (the top of the stack), or None."""
    stack = _pd.mode_stack()
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack():
    """The active modes, the one the next call goes to last."""
    return _pd.mode_stack()


def _push_mode(mode):
    _pd.push_mode(mode)


def _pop_mode(k=None):
    if k is not None:
        raise NotImplementedError("_pop_mode(key): ember has no infra-mode keys")
    return _pd.pop_mode()


@contextlib.contextmanager
def _pop_mode_temporarily(k=None):
    old = _pop_mode(k)
    try:
        yield old
    finally:
        _push_mode(old)


@contextlib.contextmanager
def _disable_current_modes():
    """Pop every mode for the duration; yields them, bottom first, and pushes them back."""
    old = [_pop_mode() for _ in range(len(_pd.mode_stack()))]
    try:
        yield old[::-1]
    finally:
        for mode in reversed(old):
            _push_mode(mode)


# ---- wrapper subclasses ---------------------------------------------------------------------
def is_traceable_wrapper_subclass(t):
    """Whether t is a Tensor subclass instance with __tensor_flatten__/__tensor_unflatten__."""
    return isinstance(t, Tensor) and type(t) is not Tensor and \
        is_traceable_wrapper_subclass_type(type(t))


def is_traceable_wrapper_subclass_type(t):
    return isinstance(t, type) and issubclass(t, Tensor) and t is not Tensor and \
        hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def transform_subclass(t, callback, outer_size=None, outer_stride=None):
    """A fresh instance of t's wrapper class over callback(name, inner) of each inner tensor."""
    outer_size = t.size() if outer_size is None else outer_size
    outer_stride = t.stride() if outer_stride is None else outer_stride
    attrs, ctx = t.__tensor_flatten__()
    inner = {a: callback(a, getattr(t, a)) for a in attrs}
    sub = type(t).__tensor_unflatten__(inner, ctx, outer_size, outer_stride)
    if sub.shape != outer_size:
        raise AssertionError(f"Expected return value from {type(t)}__tensor_unflatten__() to "
                             f"have shape equal to {outer_size}, but got: {sub.shape}")
    if sub.stride() != tuple(outer_stride):
        raise AssertionError(f"Expected return value from {type(t)}__tensor_unflatten__() to "
                             f"have stride equal to {outer_stride}, but got: {sub.stride()}")
    return sub


def return_and_correct_aliasing(func, args, kwargs, out):
    """What a wrapper's handler returns so that aliasing is as the op's schema says: a view
    op's outputs share their input's storage; an in-place or out= op returns the argument it
    wrote to rather than a fresh wrapper."""
    schema = func._schema
    bound = schema.bind(tuple(args), dict(kwargs or {}), func.__name__)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    written = [v for a, v in zip(schema.arguments, bound) if a.mutable]
    if schema.returns_view:
        source = next((v for a, v in zip(schema.arguments, bound)
                       if a.alias and not a.mutable and isinstance(v, Tensor)), None)
        if source is not None:
            for o in outs:
                if isinstance(o, Tensor) and type(o) is not Tensor:
                    o._storage = source._storage_()
    if not written:
        return out
    if len(written) == 1:
        return written[0]
    return type(out)(written)
