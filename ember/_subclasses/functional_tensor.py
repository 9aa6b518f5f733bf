"""The tensors of PyTorch's functionalization pass (`torch._to_functional_tensor`, C++'s
FunctionalTensorWrapper) and the switch that makes new tensors functional
(`torch._enable_functionalization`).

A functional tensor wraps a value tensor of its own (a copy of the wrapped tensor: the original
is not written to; `torch._from_functional_tensor` gives the value back). PyTorch records each
mutation and replays it onto the base and the other views of the same data when they are next
used (`torch._sync`), so the observable values are those of running the program eagerly. ember
runs the program eagerly on the values -- an in-place op writes the value in place, a view is a
view of its input's value -- which gives those same values without a replay, so `_sync` has
nothing to do. What functionalization refuses, ember refuses too: an in-place op whose `self` is
not functional while another argument is, growing a view with `resize_`, and writing to a
frozen storage (`torch._freeze_functional_tensor`).
"""
from .._core.tensor import Tensor
from ..utils._python_dispatch import TorchDispatchMode

__all__ = ["FunctionalTensorWrapper", "to_functional_tensor", "from_functional_tensor",
           "is_functional_tensor", "sync", "freeze_functional_tensor", "enable_functionalization",
           "disable_functionalization"]


class FunctionalTensorWrapper(Tensor):
    """A functional tensor: its metadata is its value's (`elem`); ops run on the values."""
    _is_subclass_to_print = False

    def __new__(cls, elem):
        self = Tensor._make_wrapper_subclass(cls, elem.shape, elem.stride(),
                                             elem.storage_offset(), dtype=elem.dtype,
                                             device=elem.device)
        self.elem = elem
        return self

    def __init__(self, elem):
        pass

    def __repr__(self):
        return f"_to_functional_tensor({self.elem!r})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if any(not issubclass(t, FunctionalTensorWrapper) for t in types):
            return NotImplemented
        args = func.schema.bind(tuple(args), kwargs or {}, func.__name__)
        wrappers = {}

        def unwrap(a):
            if isinstance(a, FunctionalTensorWrapper):
                wrappers[id(a.elem)] = a
                return a.elem
            return a
        values = tuple([unwrap(x) for x in a] if isinstance(a, (list, tuple)) else unwrap(a)
                       for a in args)
        if func._mutates and not isinstance(args[0], FunctionalTensorWrapper):
            raise RuntimeError("mutating a non-functional tensor with a functional tensor is "
                               "not allowed. Please ensure that all of your inputs are wrapped "
                               "inside of a functionalize() call.")
        if func._mutates and _frozen(args[0]):
            raise RuntimeError("cannot mutate tensors with frozen storage")
        if func._opname == "resize_" and isinstance(args[0], FunctionalTensorWrapper):
            _check_resize(args[0].elem, values[1])
        _running_on_values[0] += 1   # the values' results are the handler's to wrap
        try:
            out = func(*values)
        finally:
            _running_on_values[0] -= 1
        for w in wrappers.values():   # an in-place op may have resized or restrided its value
            _copy_metadata(w)

        def wrap(t):
            if not isinstance(t, Tensor):
                return t
            if id(t) in wrappers:   # an in-place op returns its input
                return wrappers[id(t)]
            w = FunctionalTensorWrapper(t)
            source = wrappers.get(id(t._base)) if t._base is not None else None
            if func._is_view and isinstance(args[0], FunctionalTensorWrapper):
                source = args[0]
            if source is not None:   # a view of a functional tensor is one of its base
                w._base = source._base if source._base is not None else source
            return w
        if isinstance(out, (list, tuple)):
            items = [wrap(t) for t in out]
            return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
        return wrap(out)


def _frozen(t):
    """Whether `t` is a functional tensor whose storage was frozen (it or its base)."""
    if not isinstance(t, FunctionalTensorWrapper):
        return False
    base = t._base if t._base is not None else t
    return getattr(t, "_frozen_storage", False) or getattr(base, "_frozen_storage", False)


def freeze_functional_tensor(t):
    """torch._freeze_functional_tensor: from now on, writing to `t` or to a view of its
    storage raises."""
    _assert_functional(t, "_freeze_functional_tensor")
    t._frozen_storage = True


def _copy_metadata(w):
    e = w.elem
    w._size, w._stride_, w._offset_ = tuple(e.shape), e.stride(), e.storage_offset()
    w.dtype = e.dtype


def _check_resize(value, size):
    """Functionalization replays a mutation of a view onto its base; a view grown past its
    base's storage could not be replayed."""
    numel = 1
    for n in size:
        numel *= n
    if value._base is not None and numel > value.numel():
        raise RuntimeError("Attempted to resize a view tensor to a larger size. This is not "
                           "allowed in the functionalization pass")


def to_functional_tensor(t):
    """torch._to_functional_tensor: a functional tensor whose value starts as `t`'s."""
    if not isinstance(t, Tensor):
        raise TypeError(f"_to_functional_tensor(): argument 't' must be Tensor, not "
                        f"{type(t).__name__}")
    value = t.clone()   # through t's own subclass handler, if it has one
    if isinstance(value, FunctionalTensorWrapper):   # made functional by an enabled pass
        value = value.elem
    return FunctionalTensorWrapper(value)


def _assert_functional(t, what):
    if not isinstance(t, FunctionalTensorWrapper):
        raise RuntimeError(f"{what}: expected a functional tensor (torch._to_functional_tensor), "
                           f"got {type(t).__name__}")


def from_functional_tensor(t):
    """torch._from_functional_tensor: the current value of a functional tensor."""
    _assert_functional(t, "_from_functional_tensor")
    return t.elem


def is_functional_tensor(t):
    return isinstance(t, FunctionalTensorWrapper)


def sync(t):
    """torch._sync: apply pending mutations of `t`'s aliases to it. ember's functional
    tensors hold their current values at all times (see the module docstring)."""
    _assert_functional(t, "_sync")


class _FunctionalizeMode(TorchDispatchMode):
    """While functionalization is enabled, tensors made from no functional tensor (factories,
    `torch.tensor`) are made functional; ops on functional tensors go to their class."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if types and not _running_on_values[0]:
            return NotImplemented
        out = func(*args, **(kwargs or {}))
        if isinstance(out, Tensor) and not _running_on_values[0]:
            return FunctionalTensorWrapper(out)
        return out


_enabled = []
_running_on_values = [0]   # > 0 while a functional tensor's handler runs an op on values


def enable_functionalization(*, reapply_views=False):
    from .._dispatch import python_dispatch as pd
    mode = _FunctionalizeMode()
    pd.push_mode(mode)
    _enabled.append(mode)


def disable_functionalization():
    from .._dispatch import python_dispatch as pd
    if _enabled:
        mode = _enabled.pop()
        if mode in pd.mode_stack():
            stack = pd.mode_stack()
            popped = []
            while stack and stack[-1] is not mode:
                popped.append(pd.pop_mode())
                stack = pd.mode_stack()
            pd.pop_mode()
            for m in reversed(popped):
                pd.push_mode(m)
