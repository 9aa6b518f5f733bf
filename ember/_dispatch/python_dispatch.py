"""The Python dispatch key: PyTorch's `__torch_dispatch__`.

The key sits below Autograd and above the backend kernels. A call reaches it in two ways:
- a tensor argument's class defines `__torch_dispatch__` (ember/_core/python_key.py marks it),
  so the dispatcher picks the key "Python" for the call instead of a device's;
- a TorchDispatchMode is active: its entry on the dispatcher's mode stack (`ModeEntry`) runs the
  keys above Python (autocast's casts, a composite's decomposition, autograd's recording) and
  then this key instead of the backend kernel.

The key's fallback (`python_fallback`) hands the op to a handler: the topmost mode's, else the
overloaded tensor classes' in argument order (a subclass before its bases); a handler that
returns NotImplemented passes the call on. A handler receives the OpOverload, the overloaded
types, and the call split as PyTorch splits it (positional arguments without trailing defaults;
keyword-only ones that differ from their defaults as kwargs). While it runs, its mode is
suspended -- an op it calls goes to the next mode down, or to the kernels -- and autograd is
off, as below Autograd in PyTorch (so `torch.is_grad_enabled()` reads False inside a handler,
where PyTorch's reads True).
"""
from .._core.grad_mode import _grad_state
from .._core.mode_stack import torch_dispatch_modes as _torch_dispatch_modes
from .._core.python_key import PYTHON_KEY
from .._core.layout import strided
from .._core.tensor import Tensor
from . import dispatcher as _dispatcher

_modes = _dispatcher._modes


class ModeEntry:
    """A TorchDispatchMode's place on the dispatcher's mode stack."""
    __slots__ = ("mode",)

    def __init__(self, mode):
        self.mode = mode

    def __call__(self, op, args, level):
        if _disabled[0]:
            return _dispatcher.call_in_modes(op, args, level - 1)
        return op._dispatch_to_python(args)


class _Suspended:
    """A mode's place while its own handler runs: calls pass on to the level below it."""
    __slots__ = ("entry",)

    def __init__(self, entry):
        self.entry = entry

    def __call__(self, op, args, level):
        return _dispatcher.call_in_modes(op, args, level - 1)


def mode_stack():
    """The active TorchDispatchModes, bottom first (suspended ones left out)."""
    return [e.mode for e in _modes if type(e) is ModeEntry]


def push_mode(mode):
    _modes.append(ModeEntry(mode))
    _torch_dispatch_modes.append(mode)


def pop_mode():
    """Remove and return the topmost active TorchDispatchMode."""
    index = _top_mode_index()
    if index is None:
        raise AssertionError("Trying to pop from an empty mode stack")
    mode = _modes.pop(index).mode
    _torch_dispatch_modes.remove(mode)
    return mode


def _top_mode_index():
    for i in range(len(_modes) - 1, -1, -1):
        if type(_modes[i]) is ModeEntry:
            return i
    return None


class DisableTorchDispatch:
    """torch._C._DisableTorchDispatch (utils._mode_utils.no_dispatch): within it the Python key
    is skipped -- no mode sees a call, and a subclass's ops run on its own data."""

    def __enter__(self):
        _disabled[0] += 1
        return self

    def __exit__(self, *exc):
        _disabled[0] -= 1


_disabled = [0]


def dispatch_disabled():
    """Whether a DisableTorchDispatch block (`no_dispatch()`) is running."""
    return _disabled[0] > 0


# ---- the fallback -------------------------------------------------------------------------
def python_fallback(op, key, args):
    if _disabled[0]:
        return op.redispatch(_backend_key(op, args), args)
    overloaded = overloaded_types(op, args)
    pargs, kwargs = split_arguments(op, args)
    index = _top_mode_index()
    mode = None
    enabled = _grad_state.enabled
    _outer_grad.append(enabled)
    storage = args[0]._storage_() if op._mutates else None
    version = storage._version if storage is not None else 0
    # below Autograd: if it recorded this call, the handler's own ops record nothing
    _grad_state.enabled = enabled and not _requires_grad(op, args)
    try:
        if index is not None:
            entry = _modes[index]
            mode = entry.mode
            if getattr(mode.__torch_dispatch__, "__self__", None) is type(mode):
                raise RuntimeError("Defining your mode's `__torch_dispatch__` as a classmethod "
                                   "is not supported, please make it a plain method")
            _modes[index] = _Suspended(entry)
            try:
                rule = op._torch_dispatch_rules.get(type(mode))
                if rule is not None:
                    result = rule(mode, op, overloaded, pargs, kwargs)
                else:
                    result = mode.__torch_dispatch__(op, overloaded, pargs, kwargs)
            finally:
                _modes[index] = entry
            if result is NotImplemented:   # the subclasses next, the mode active again
                result = _subclass_handlers(op, overloaded, pargs, kwargs)
        elif overloaded:
            result = _subclass_handlers(op, overloaded, pargs, kwargs)
        else:   # nothing overloads the call any more (a mode left): the kernels run it
            return call_below_python_key(op, pargs, kwargs)
    finally:
        _grad_state.enabled = enabled
        _outer_grad.pop()
    if result is NotImplemented:
        lines = [f"Multiple dispatch failed for '{op.__module__}.{op.__name__}'; all "
                 "__torch_dispatch__ handlers returned NotImplemented:", ""]
        if mode is not None:
            lines.append(f"  - mode object {mode!r}")
        lines += [f"  - tensor subclass {t!r}" for t in overloaded]
        lines += ["", "For more information, try re-running with TORCH_LOGS=not_implemented"]
        raise TypeError("\n".join(lines))
    if storage is not None and storage._version == version:
        storage._version += 1   # an in-place op on a wrapper: its version moves as the data's
    if op._is_view:
        _share_storage(args[0], result)
    return result


def _requires_grad(op, args):
    return any(t._rg for t in _tensor_args(op, args))


def _share_storage(source, result):
    """A view op's wrapper results share their input's storage (and so its version counter),
    as PyTorch's ADInplaceOrView key makes them."""
    if not isinstance(source, Tensor) or source._sparse is not PYTHON_KEY:
        return
    for r in (result if isinstance(result, (list, tuple)) else (result,)):
        if isinstance(r, Tensor) and r._np is None and r._sparse is PYTHON_KEY:
            r._storage = source._storage_()


_outer_grad = []   # grad mode outside each running handler, for enable_reentrant_dispatch


class ReentrantDispatch:
    """torch.overrides.enable_reentrant_dispatch: within a handler, ops on the wrapped tensors
    go through autograd again (as outside the handler)."""

    def __enter__(self):
        self._old = _grad_state.enabled
        if _outer_grad:
            _grad_state.enabled = _outer_grad[-1]
        return self

    def __exit__(self, *exc):
        _grad_state.enabled = self._old


def _subclass_handlers(op, overloaded, args, kwargs):
    """Each overloaded class's handler in turn, until one does not return NotImplemented."""
    rules = op._torch_dispatch_rules
    for cls in overloaded:
        rule = rules.get(cls)
        if rule is not None:
            result = rule(cls, op, overloaded, args, kwargs)
        else:
            result = cls.__torch_dispatch__(op, overloaded, args, kwargs)
        if result is not NotImplemented:
            return result
    return NotImplemented


def register_torch_dispatch_rule(op, torch_dispatch_class, fn):
    """torch.library.register_torch_dispatch: `fn` handles `op` in place of the class's (or
    mode type's) own `__torch_dispatch__`."""
    if not isinstance(torch_dispatch_class, type):
        raise TypeError(f"register_torch_dispatch: expected a Tensor subclass or a "
                        f"TorchDispatchMode type, got {torch_dispatch_class!r}")
    if "_torch_dispatch_rules" not in op.__dict__:
        op._torch_dispatch_rules = {}
    op._torch_dispatch_rules[torch_dispatch_class] = fn


def overloaded_types(op, args):
    """The classes with a Python key among the tensor arguments: each once, a subclass before
    its bases, otherwise in argument order."""
    found = []
    for i in op._tensor_pos:
        _add_type(found, args[i])
    for i in op._list_pos:
        for t in args[i] or ():
            _add_type(found, t)
    return tuple(found)


def _add_type(found, a):
    if not isinstance(a, Tensor) or a._sparse is not PYTHON_KEY:
        return
    t = type(a)
    if t in found:
        return
    for i, old in enumerate(found):
        if issubclass(t, old):
            found.insert(i, t)
            return
    found.append(t)


def split_arguments(op, args):
    """A full positional call split as PyTorch's Python key hands it on: the positional
    arguments without trailing ones equal to their defaults, and the keyword-only arguments
    that differ from their defaults."""
    schema_args = op.schema.arguments
    positional = [a for a in schema_args if not a.kwarg_only]
    n = len(positional)
    while n and positional[n - 1].has_default and _is_default(args[n - 1], positional[n - 1]):
        n -= 1
    kwargs = {a.name: _as_given(args[i], a) for i, a in enumerate(schema_args)
              if a.kwarg_only and not (a.has_default and _is_default(args[i], a))}
    return tuple(_as_given(args[i], positional[i]) for i in range(n)), kwargs


def _as_given(value, argument):
    """A list argument (`int[]`, `Tensor[]`) as a list, as PyTorch hands it to a handler."""
    if type(value) is tuple and argument.type.endswith("]"):
        return list(value)
    return value


_PLAIN = (bool, int, float, str, list, tuple)


def _is_default(value, argument):
    d = argument.default
    if value is d:
        return True
    if isinstance(value, _PLAIN) and isinstance(d, _PLAIN):
        if isinstance(value, (list, tuple)) and isinstance(d, (list, tuple)):
            return list(value) == list(d)
        return type(value) is type(d) and value == d
    return False


def call_below_python_key(op, args, kwargs):
    """Run `op` on the backend kernels of its tensors' devices, Python key left out (what
    `torch.Tensor.__torch_dispatch__`, the disabled handler, does)."""
    args = op.schema.bind(tuple(args), kwargs, op.__name__)
    return op.redispatch(_backend_key(op, args), args)


def _backend_key(op, args):
    """The key of the tensors' device (or layout), Python key marks left out."""
    for t in _tensor_args(op, args):
        if t._sparse is not None and t.layout is not strided:
            return _dispatcher._sparse_key(t)
        return t._device._key
    return op._default_key(args)


def _tensor_args(op, args):
    for i in op._tensor_pos:
        if isinstance(args[i], Tensor):
            yield args[i]
    for i in op._list_pos:
        for t in args[i] or ():
            if isinstance(t, Tensor):
                yield t


def detach(t):
    """`t.detach()` of a Python-key tensor: `aten.detach.default` through its handler."""
    return _dispatcher.lookup("detach")(t)


_dispatcher.register_fallback("Python", python_fallback)
