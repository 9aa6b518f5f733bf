"""torch.overrides: the public face of the `__torch_function__` protocol (its state and dispatch
are in ember/_core/torch_function.py). A Tensor subclass, or any object whose type defines
`__torch_function__(cls, func, types, args=(), kwargs=None)`, sees every call of an ember
function or Tensor method it takes part in, and a TorchFunctionMode sees every call in its scope.

The generated bindings of the ops check their tensor arguments inline (codegen.py); `install`
gives the hand-written functions of the public namespaces (PyTorch's Python-level and C
functions alike) and the hand-written Tensor methods and properties the same check, once, at
the end of `import ember`. A Python-level function's `__torch_function__` receives its required
parameters positionally and every optional one by keyword with its default, as PyTorch's
`handle_torch_function` calls give (ember.fx's Note [Functions without __torch_function__]
names those functions); other functions pass the call as written.
"""
import functools
import types as _types
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ._core import torch_function as _tf
from ._core.torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                                   _disabled_torch_function_impl, handle_torch_function,
                                   has_torch_function)
from ._core.tensor import Tensor
from ._dispatch import vmap_state as _vmap_state

__all__ = [
    "get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
    "get_default_nowrap_functions", "handle_torch_function", "has_torch_function",
    "resolve_name", "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function",
    "enable_reentrant_dispatch", "TorchFunctionMode", "BaseTorchFunctionMode",
    "has_torch_function_unary", "has_torch_function_variadic",
]


def has_torch_function_unary(obj):
    """has_torch_function((obj,)) without building the tuple."""
    if type(obj) in _tf.FAST_TYPES:
        return False
    return _tf.has_torch_function((obj,), skip_exact=Tensor)


def has_torch_function_variadic(*args):
    if _tf.FAST_TYPES.issuperset(map(type, args)):
        return False
    return _tf.has_torch_function(args, skip_exact=Tensor)


def _has_torch_function(relevant_args):
    return _tf.has_torch_function(relevant_args, skip_exact=Tensor)


has_torch_function = _has_torch_function
has_torch_function.__name__ = "has_torch_function"


def is_tensor_like(inp):
    """An exact Tensor, or anything whose type defines `__torch_function__`."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


# ---- modes ----------------------------------------------------------------------------------
class TorchFunctionMode:
    """Override every ember function in a dynamic scope (`with Mode():`). Within the mode's own
    `__torch_function__` the mode is off, so the calls it makes go to the mode below it (or run)."""
    inner = None

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _tf.push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _tf.pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`", stacklevel=_user_stacklevel())
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    n = _tf.mode_stack_len()
    return _tf.mode_at(n - 1) if n else None


def _get_current_function_mode_stack():
    return [_tf.mode_at(i) for i in range(_tf.mode_stack_len())]


def _push_mode(mode):
    _tf.push_mode(mode)


def _pop_mode():
    return _tf.pop_mode()


_pop_mode_temporarily = _tf.pop_mode_temporarily


def enable_reentrant_dispatch():
    """Within a `__torch_dispatch__` handler: ops on the wrapped tensors go through autograd
    again (ember/_dispatch/python_dispatch.py)."""
    from ._dispatch.python_dispatch import ReentrantDispatch
    return ReentrantDispatch()


def wrap_torch_function(dispatcher):
    """Decorator: make a Python function overridable; `dispatcher(*args, **kwargs)` returns the
    arguments to check."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if _tf.has_torch_function(relevant, skip_exact=Tensor):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


# ---- the function lists ---------------------------------------------------------------------
# Tensor attributes that never dispatch (PyTorch's get_ignored_functions for Tensor)
_IGNORED_TENSOR = frozenset({
    "__new__", "__init__", "__init_subclass__", "__subclasshook__", "__class__", "__dict__",
    "__slots__", "__weakref__", "__module__", "__doc__", "__getattribute__", "__setattr__",
    "__delattr__", "__torch_function__", "__torch_dispatch__", "__hash__", "__iter__", "__dir__",
    "__delitem__", "__sizeof__", "__reduce__", "__getstate__", "__setstate__", "__array_priority__",
    "__ember_source__", "as_subclass", "_make_subclass", "_make_wrapper_subclass", "stride",
    "new", "new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros",
    "unflatten", "dtype", "grad_fn"})


# ...of which these still hand their calls to `__torch_function__` in PyTorch (its C methods
# check; the list above only keeps them out of the override tests): a subclass's `s.new_zeros(3)`
# is of its class
_DISPATCHING_ANYWAY = frozenset({"new", "new_empty", "new_empty_strided", "new_full", "new_ones",
                                 "new_tensor", "new_zeros", "unflatten"})


def get_default_nowrap_functions():
    """Accessors whose result the default `Tensor.__torch_function__` returns unconverted."""
    return _tf.default_nowrap_functions()


@functools.lru_cache(maxsize=None)
def _overridable():
    from .fx import _overrides as fx_overrides
    table = {}
    for fn, (namespace, name) in fx_overrides.overridable_functions().items():
        table.setdefault(namespace, []).append(fn)
    methods = []
    for name, value in vars(Tensor).items():
        if name in _IGNORED_TENSOR or (name.startswith("_") and not name.startswith("__")):
            continue
        if isinstance(value, property):
            methods.append(getattr(Tensor, name).__get__)
        elif callable(value):
            methods.append(value)
    return table, methods


def get_overridable_functions():
    """{namespace: [functions]} for the namespaces whose functions dispatch, and Tensor's
    methods and property getters under the key Tensor."""
    import importlib
    table, methods = _overridable()
    out = {importlib.import_module(ns): list(fns) for ns, fns in table.items()}
    out[Tensor] = list(methods)
    return out


def get_ignored_functions():
    """Public functions that never dispatch."""
    import importlib
    from .fx import _overrides as fx_overrides
    out = set()
    for namespace in fx_overrides._NAMESPACES:
        module = importlib.import_module(namespace)
        for name in fx_overrides._NOT_OVERRIDABLE:
            fn = getattr(module, name, None)
            if callable(fn):
                out.add(fn)
    for name in _IGNORED_TENSOR:
        fn = Tensor.__dict__.get(name)
        if callable(fn) and not isinstance(fn, type):
            out.add(getattr(Tensor, name))
    return out


def get_testing_overrides():
    """{function: a dummy with the function's signature that returns -1}, for every
    overridable function whose signature Python can read."""
    import inspect
    out = {}
    table, methods = _overridable()
    for fn in [f for fns in table.values() for f in fns] + methods:
        try:
            sig = _required_shown_required(inspect.signature(fn))
        except (TypeError, ValueError):
            continue

        def dummy(*args, **kwargs):
            return -1
        dummy.__signature__ = sig
        out[fn] = dummy
    return out


def _required_shown_required(sig):
    """A binding's signature with its required parameters shown without a default: they carry
    the `_REQUIRED` sentinel only so their NumPy names (axis=, x=) can stand in for them, and
    readers of the override (PyTorch's generated __torch_function__ tests count the parameters
    without a default) must see them as the required arguments they are. The `*_deprecated`
    tail that takes add(input, alpha, other)-style calls is not part of the signature either."""
    from ._bindings.codegen import _REQUIRED
    import inspect
    params = [p.replace(default=inspect.Parameter.empty) if p.default is _REQUIRED else p
              for p in sig.parameters.values()
              if p.name != "_deprecated"]  # the deprecated positional-scalar forms' tail
    return sig.replace(parameters=params)


def resolve_name(f):
    """'torch.add' style name of an overridable function (ember's namespaces named torch's)."""
    from .fx import _overrides as fx_overrides
    if isinstance(f, (_types.MethodType, _types.MethodWrapperType)):
        owner = getattr(f, "__self__", None)
        if isinstance(owner, property):
            for name, value in vars(Tensor).items():
                if value is owner:
                    return f"torch.Tensor.{name}.__get__"
    if getattr(f, "__qualname__", "").startswith("Tensor."):
        return "torch." + f.__qualname__
    name = fx_overrides.qualified_name(f)
    return None if name is None else "torch" + name[len("ember"):]


def is_tensor_method_or_property(func):
    """Whether func is a Tensor method or a property's `__get__`, as `__torch_function__`
    receives them."""
    return func in _overridable()[1] or getattr(func, "__name__", None) == "__get__"


# ---- giving the hand-written functions the check -------------------------------------------
def _function_wrapper(fn):
    """`fn` with the protocol's check: a call whose arguments are all of FAST_ARGS types costs
    one `issuperset` per args/kwargs and runs fn; anything else looks for an overloaded
    argument or a mode first."""
    @functools.wraps(fn)
    def public(*args, **kwargs):
        if _FAST_ARGS.issuperset(map(type, args)) and (
                not kwargs or _FAST_ARGS.issuperset(map(type, kwargs.values()))):
            return fn(*args, **kwargs)
        relevant = args + tuple(kwargs.values())
        overloaded = _tf.overloaded_args(relevant, skip_exact=Tensor)
        if not overloaded and not _tf.is_torch_function_mode_enabled():
            try:
                return fn(*args, **kwargs)
            except RuntimeError as e:   # under vmap (BatchedTensors are not FAST_ARGS)
                if not _vmap_state.is_data_read(e):
                    raise
                return _vmap_state.per_example(public, args, kwargs, e)
        from .fx import _overrides as fx_overrides
        python_level = fx_overrides.is_python_level(public)
        if python_level:   # PyTorch's Python-level functions count exact Tensors too
            args, kwargs = fx_overrides.torch_function_arguments(public, args, kwargs)
            overloaded = _tf.overloaded_args(relevant)
        return handle_torch_function(public, relevant, *args, overloaded=overloaded,
                                     c_level=not python_level, **kwargs)
    public.__ember_torch_function__ = True
    return public


_FAST_ARGS = _tf.FAST_ARGS


def _property_wrapper(prop):
    """A property whose getter and setter dispatch as `Tensor.<name>.__get__/__set__`."""
    fget, fset = prop.fget, prop.fset

    def getter(self):
        if type(self) in _FAST_ARGS:
            return fget(self)
        overloaded = _tf.overloaded_args((self,), skip_exact=Tensor)
        if not overloaded and not _tf.is_torch_function_mode_enabled():
            return fget(self)
        return handle_torch_function(new.__get__, (self,), self, overloaded=overloaded,
                                     c_level=True)

    def setter(self, value):
        if type(self) in _FAST_ARGS and type(value) in _FAST_ARGS:
            return fset(self, value)
        overloaded = _tf.overloaded_args((self, value), skip_exact=Tensor)
        if not overloaded and not _tf.is_torch_function_mode_enabled():
            return fset(self, value)
        return handle_torch_function(new.__set__, (self, value), self, value,
                                     overloaded=overloaded, c_level=True)

    new = property(getter, setter if fset is not None else None, prop.fdel, prop.__doc__)
    return new


def _wrap_tensor():
    for name, value in list(vars(Tensor).items()):
        if (name in _IGNORED_TENSOR and name not in _DISPATCHING_ANYWAY) or (
                name.startswith("_") and not name.startswith("__")):
            continue
        if isinstance(value, property):
            if not getattr(value.fget, "__ember_torch_function__", False):
                setattr(Tensor, name, _property_wrapper(value))
        elif isinstance(value, _types.FunctionType) and \
                getattr(value, "__ember_torch_function__", False) and \
                value.__name__.startswith("_") and not value.__name__.startswith("__"):
            value.__name__, value.__qualname__ = name, f"Tensor.{name}"   # _to is Tensor.to
        elif isinstance(value, _types.FunctionType) and not hasattr(value, "__ember_op__") \
                and not getattr(value, "__ember_torch_function__", False):
            method = _function_wrapper(value)
            method.__name__, method.__qualname__ = name, f"Tensor.{name}"
            setattr(Tensor, name, method)


# PyTorch's C functions of these namespaces are named with a prefix
_C_PREFIXES = {"ember.linalg": "linalg_", "ember.fft": "fft_", "ember.special": "special_"}


def _wrap_namespaces():
    import importlib
    from .fx import _overrides as fx_overrides
    wrappers = {}
    for namespace in fx_overrides._NAMESPACES:
        module_dict = importlib.import_module(namespace).__dict__
        for name, value in list(module_dict.items()):
            if name.startswith("_") or name in fx_overrides._NOT_OVERRIDABLE:
                continue
            if not isinstance(value, _types.FunctionType) or hasattr(value, "__ember_op__") \
                    or getattr(value, "__ember_torch_function__", False):
                continue
            wrapper = wrappers.get(value)
            if wrapper is None:
                wrapper = wrappers[value] = _function_wrapper(value)
                wrapper.__module__ = namespace   # F.relu.__module__ is torch.nn.functional
                # the plain function stays reachable where it was taken before this (a
                # default argument: TransformerEncoderLayer's activation=F.relu); pickle finds
                # it as <namespace>.relu.__wrapped__
                value.__qualname__ = f"{value.__qualname__}.__wrapped__"
                prefix = _C_PREFIXES.get(namespace)
                if prefix and not fx_overrides.is_python_level(value):
                    wrapper.__name__ = prefix + name   # torch.linalg.norm is `linalg_norm`
            module_dict[name] = wrapper
    fx_overrides.overridable_functions.cache_clear()


def install():
    """Give every hand-written public function and Tensor method the protocol's check."""
    _wrap_tensor()
    _wrap_namespaces()
