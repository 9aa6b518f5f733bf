"""The `__torch_function__` protocol's state and dispatch (PyTorch's torch/csrc/utils/
python_arg_parser.cpp and disable_torch_function.cpp): which arguments of a call are overloaded,
the stack of TorchFunctionModes, the DisableTorchFunction(Subclass) switches, and
`handle_torch_function`, which hands a call to a mode or to the arguments' `__torch_function__`.

Note [The one check on the hot path]
Every public function and Tensor method must notice a Tensor subclass, an object with its own
`__torch_function__`, or an active mode among its arguments, and plain calls must not pay for
it. A binding therefore tests `type(arg) not in FAST_TYPES` for each argument it already looks
at (one set lookup each) and only then calls `torch_function_dispatch`, the slow path that does
the real work. FAST_TYPES holds the exact types that never dispatch: Tensor, nn.Parameter (whose
`__torch_function__` is the disabled one), None and Python's numbers. A binding written by hand
checks all its positional and keyword arguments with `FAST_ARGS` (FAST_TYPES plus the other
argument types of PyTorch's signatures: str, tuple, list, dtype, device...). While a mode is
on the stack both sets are emptied, so every call takes the slow path and meets the mode; they
fill again when the stack empties (also while a mode's own `__torch_function__` runs, since the
mode is popped for that).

The switches are process-wide here (PyTorch keeps them per thread).
"""
import contextlib

FAST_TYPES = set()
FAST_ARGS = set()
_FAST_TYPES, _FAST_ARGS = set(), set()   # what the sets hold while no mode is on the stack

_ENABLED, _SUBCLASSES_DISABLED, _ALL_DISABLED = 0, 1, 2
_state = [_ENABLED]
_mode_stack = []


def never_dispatches(*types, argument_only=False):
    """Add exact types to the fast path (their instances never dispatch)."""
    if not argument_only:
        _FAST_TYPES.update(types)
    _FAST_ARGS.update(types)
    _sync_fast_path()


def _sync_fast_path():
    FAST_TYPES.clear()
    FAST_ARGS.clear()
    if not _mode_stack:
        FAST_TYPES.update(_FAST_TYPES)
        FAST_ARGS.update(_FAST_TYPES)
        FAST_ARGS.update(_FAST_ARGS)


class _DisabledTorchFunctionImpl:
    """The `__torch_function__` of a type that opts out (nn.Parameter): its instances are not
    overloaded, functions run as on plain tensors and return plain tensors. An instance, not a
    function, so that it stays unbound when a class holds it (as PyTorch's builtin does)."""

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"


_disabled_torch_function_impl = _DisabledTorchFunctionImpl()


# ---- the switches --------------------------------------------------------------------------
class _StateGuard:
    _to = _ENABLED

    def __enter__(self):
        self._old = _state[0]
        _state[0] = max(self._old, self._to)
        return self

    def __exit__(self, *exc):
        _state[0] = self._old


class DisableTorchFunctionSubclass(_StateGuard):
    """Within it, Tensor subclasses' `__torch_function__` is not called (modes still are): the
    default `Tensor.__torch_function__` runs the function under it."""
    _to = _SUBCLASSES_DISABLED


class DisableTorchFunction(_StateGuard):
    """Within it, neither subclasses nor modes see calls."""
    _to = _ALL_DISABLED


def is_torch_function_enabled():
    return _state[0] == _ENABLED


def is_torch_function_all_disabled():
    return _state[0] == _ALL_DISABLED


def is_torch_function_mode_enabled():
    return bool(_mode_stack) and _state[0] != _ALL_DISABLED


# ---- the mode stack ------------------------------------------------------------------------
def push_mode(mode):
    _mode_stack.append(mode)
    _sync_fast_path()


def pop_mode():
    if not _mode_stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _mode_stack.pop()
    _sync_fast_path()
    return mode


def mode_stack_len():
    return len(_mode_stack)


def mode_at(index):
    return _mode_stack[index]


@contextlib.contextmanager
def pop_mode_temporarily():
    mode = pop_mode()
    try:
        yield mode
    finally:
        push_mode(mode)


# ---- which arguments are overloaded ------------------------------------------------------
def overloaded_args(relevant_args, skip_exact=None):
    """The arguments whose type has an enabled `__torch_function__`, in calling order: each
    type once, a subclass before its superclasses, otherwise left to right (NEP-18's rule).
    Lists and tuples among the arguments are looked into one level (Tensor[] parameters).
    `skip_exact` (the Tensor class, for the bindings of ops) leaves out exact instances of that
    type, as PyTorch's C++ argument parser does; Python-level functions count them."""
    if _state[0] != _ENABLED:
        return []
    types, found = [], []
    for arg in relevant_args:
        if type(arg) in (list, tuple):
            candidates = arg
        else:
            candidates = (arg,)
        for a in candidates:
            t = type(a)
            if t in types or t is skip_exact:
                continue
            tf = getattr(t, "__torch_function__", None)
            if tf is None or tf is _disabled_torch_function_impl:
                continue
            index = len(found)
            for i, old in enumerate(found):
                if issubclass(t, type(old)):
                    index = i
                    break
            types.append(t)
            found.insert(index, a)
    return found


def has_torch_function(relevant_args, skip_exact=None):
    if is_torch_function_mode_enabled():
        return True
    return bool(overloaded_args(relevant_args, skip_exact))


# ---- dispatch -------------------------------------------------------------------------------
def handle_torch_function(public_api, relevant_args, *args, overloaded=None, c_level=False,
                          **kwargs):
    """Call the current mode's, then each overloaded argument's `__torch_function__(public_api,
    types, args, kwargs)` until one returns something other than NotImplemented; if none does,
    raise TypeError with PyTorch's message (its C++ wording for `c_level` functions)."""
    if overloaded is None:
        overloaded = overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    mode = None
    if is_torch_function_mode_enabled():
        with pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if c_level:
        lines = [f"Multiple dispatch failed for '{_api_name(public_api)}'; all __torch_function__ "
                 f"handlers returned NotImplemented:", ""]
        if mode is not None:
            lines.append(f"  - mode object {mode!r}")
        lines += [f"  - tensor subclass {type(a)!r}" for a in overloaded]
        lines += ["", "For more information, try re-running with TORCH_LOGS=not_implemented"]
        raise TypeError("\n".join(lines))
    msg = (f"no implementation found for '{_api_name(public_api)}' on types that implement "
           f"__torch_function__: {[type(a) for a in overloaded]}")
    if mode is not None:
        msg += f" nor in mode {mode}"
    raise TypeError(msg)


def _api_name(public_api):
    """'torch.add', 'torch.Tensor.add', 'torch.nn.functional.relu': the name PyTorch's messages
    give a public function."""
    name = getattr(public_api, "__name__", repr(public_api))
    if getattr(public_api, "__qualname__", "").startswith("Tensor."):
        return f"torch.Tensor.{name}"
    module = getattr(public_api, "__module__", None) or "ember"
    if module == "ember" or module.startswith("ember."):
        module = "torch" + module[len("ember"):]
    return f"{module}.{name}"


NOT_HANDLED = object()


def torch_function_dispatch(public_api, relevant_args, args, kwargs, skip_exact=None,
                            operator=False):
    """The slow path of a binding: the result of `__torch_function__` when an argument or a mode
    takes the call, else NOT_HANDLED (the binding then runs its own body). An `operator`
    (`a + b`) returns NotImplemented when every override declines, so that Python tries the
    other operand's reflected method, as PyTorch's Tensor operators do."""
    overloaded = overloaded_args(relevant_args, skip_exact)
    if not overloaded and not is_torch_function_mode_enabled():
        return NOT_HANDLED
    try:
        return handle_torch_function(public_api, relevant_args, *args, overloaded=overloaded,
                                     c_level=True, **kwargs)
    except TypeError as e:
        if operator and str(e).startswith("Multiple dispatch failed"):
            return NotImplemented
        raise


never_dispatches(type(None), int, float, bool, complex)
never_dispatches(str, bytes, tuple, list, dict, slice, type(Ellipsis), argument_only=True)


def default_nowrap_functions():
    """Accessors whose result the default `Tensor.__torch_function__` hands back unconverted:
    they return a tensor stored on the tensor (`a.grad is a.grad` must hold)."""
    from .tensor import Tensor
    return {Tensor.grad.__get__}
