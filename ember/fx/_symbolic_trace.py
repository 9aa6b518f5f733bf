"""torch.fx's symbolic tracing: run a module's forward once with Proxies for its inputs and
record what it does into a Graph. `Tracer` decides what becomes a node: calls of leaf modules
(ember.nn's own layers, except Sequential) are single call_module nodes, other modules are traced
through; parameters and buffers read are get_attr nodes; ember functions, `wrap`ped functions and
`autowrap_functions` called on Proxies are call_function nodes. `concrete_args` fixes some inputs
to Python values (specialising control flow on them).

While tracing, `Module.__call__` and `Module.__getattr__` are patched (as torch.fx does) and so
are ember's public functions (Note [Functions without __torch_function__] in _overrides.py).
Everything patched is restored when the trace ends, even when it fails.
"""
import builtins
import collections
import copy
import functools
import inspect
import math
import types

from .. import _assert as _ember_assert
from .._core.tensor import Tensor
from .._dispatch.dispatcher import OpOverload, OpOverloadPacket
from ..nn import Module, Parameter, Sequential
from . import _overrides
from .graph import Graph
from .graph_module import GraphModule
from .node import has_side_effect, map_aggregate
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "is_fx_tracing", "ProxyableClassMeta"]

_is_fx_tracing_flag = False


def is_fx_tracing():
    return _is_fx_tracing_flag


def _assert_is_none(value, msg):
    assert value is None, msg


# classes made with ProxyableClassMeta (a dict used as an ordered set)
_proxyable_classes = {}


class ProxyableClassMeta(type):
    """A metaclass whose classes are traceable: constructing one from Proxies records a
    call_function node of the class; one constructed from plain values is a constant, stored
    on the root (`_<Class>_constant_<N>`) when it reaches the graph.

        class TensorPair(metaclass=ProxyableClassMeta): ...
    """

    def __init__(cls, name, bases, attrs):
        _proxyable_classes.setdefault(cls)
        super().__init__(name, bases, attrs)

    def __call__(cls, *args, **kwargs):
        proxy = _find_proxy(args, kwargs) if is_fx_tracing() else None
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", cls, args, kwargs)
        instance = cls.__new__(cls)
        cls.__init__(instance, *args, **kwargs)
        return instance


class PHBase:
    """Marks an input inside `concrete_args` that stays a placeholder."""

    def __repr__(self):
        return "PH"


PH = PHBase()

has_side_effect(_assert_is_none)
has_side_effect(_ember_assert)


def _patch_function(fn, nargs):
    """fn with every parameter made positional (keyword-only ones, then *args and **kwargs as
    single parameters), so a Proxy can stand for a whole *args tuple without being iterated."""
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = co.replace(co_argcount=nargs, co_kwonlyargcount=0, co_posonlyargcount=0,
                      co_flags=flags)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def _find_proxy(*objects):
    found = []

    def find(x):
        if isinstance(x, Proxy):
            found.append(x)
        return x

    map_aggregate(objects, find)
    return found[0] if found else None


def _create_wrapped_func(orig_fn, is_wrap=True):
    """orig_fn recorded as a call_function node when a Proxy is among its arguments. is_wrap
    marks nodes of `wrap`ped and autowrapped functions (the generated code wraps them again);
    ember's own functions stand for torch's __torch_function__ and are not marked."""
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig_fn(*args, **kwargs)
        args, kwargs = _overrides.torch_function_arguments(orig_fn, args, kwargs)
        return_proxy = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        if is_wrap:
            return_proxy.node.meta["is_wrapped"] = True
        return return_proxy
    wrapped._fx_original = orig_fn
    return wrapped


def _op_call_wrapper(original_call):
    def call(op, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return original_call(op, *args, **kwargs)
        return proxy.tracer.create_proxy("call_function", op, args, kwargs)
    return call


# ---- patching, undone at the end of a trace ----
_wrapped_fns_to_patch = {}   # (id(globals), name) -> globals dict, filled by `wrap`


class _Patcher:
    def __init__(self):
        self._undo = []
        self._visited = set()

    def patch(self, frame_dict, name, new_fn):
        if name in frame_dict:
            self._undo.append((frame_dict.__setitem__, (name, frame_dict[name])))
        else:
            self._undo.append((frame_dict.pop, (name, None)))
        frame_dict[name] = new_fn

    def patch_many(self, frame_dict, replacements):
        """Replace several existing names of one dict at once (one undo entry)."""
        self._undo.append((frame_dict.update, ({name: frame_dict[name] for name in replacements},)))
        frame_dict.update(replacements)

    def patch_method(self, cls, name, new_fn):
        self._undo.append((setattr, (cls, name, cls.__dict__[name])))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        if id(thing) in self._visited:
            return False
        self._visited.add(id(thing))
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self._undo:
            undo, args = self._undo.pop()
            undo(*args)


def _autowrap_check(patcher, frame_dict, wrappers):
    """Patch the names in a module's globals that refer to functions to wrap (so that
    `from ember import flatten` and `from math import sqrt` are recorded too)."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value):
                try:
                    wrapper = wrappers.get(value)
                except TypeError:      # unhashable callable
                    continue
                if wrapper is not None:
                    patcher.patch(frame_dict, name, wrapper)


@functools.lru_cache(maxsize=None)
def _ember_wrappers():
    """One recording wrapper per public ember function, made once (they hold no trace state:
    the Proxy found among the arguments names its tracer)."""
    return {fn: _create_wrapped_func(fn, is_wrap=False)
            for fn in _overrides.overridable_functions()}


@functools.lru_cache(maxsize=None)
def _autowrap_wrapper(fn):
    return _create_wrapped_func(fn)


@functools.lru_cache(maxsize=None)
def _namespace_patch_list():
    """[(namespace dict, {name: wrapper of the function it holds})]."""
    import importlib
    wrappers = _ember_wrappers()
    out = []
    for namespace in _overrides._NAMESPACES:
        module_dict = importlib.import_module(namespace).__dict__
        replacements = {name: wrappers[value] for name, value in module_dict.items()
                        if (not name.startswith("_") or name in _overrides._PRIVATE_OVERRIDABLE)
                        and isinstance(value, (types.FunctionType, types.BuiltinFunctionType))
                        and value in wrappers}
        out.append((module_dict, replacements))
    return out


class Tracer(TracerBase):
    """Tracer(autowrap_modules=(math,), autowrap_functions=())"""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        super().__init__()
        self._autowrap_functions = [value for m in autowrap_modules
                                    for name, value in m.__dict__.items()
                                    if not name.startswith("_") and callable(value)]
        self._autowrap_functions.extend(autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.num_calls = {}
        self.module_stack = collections.OrderedDict()

    def __deepcopy__(self, memo):
        # the modules searched for functions to autowrap cannot be deep-copied: shared
        new_tracer = Tracer.__new__(Tracer)
        for k, v in self.__dict__.items():
            new_tracer.__dict__[k] = copy.copy(v) if k == "_autowrap_search" \
                else copy.deepcopy(v, memo)
        return new_tracer

    # ---- what becomes a node ----
    def is_leaf_module(self, m, module_qualified_name):
        """ember.nn's own modules are leaves (one call_module node each), except Sequential,
        which is traced through; user modules are traced through."""
        module = type(m).__module__
        return (module.startswith("ember.nn") and not isinstance(m, Sequential))

    def path_of_module(self, mod):
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, candidate in self.root.named_modules():
            if candidate is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """The nodes made while m runs record m in their `nn_module_stack` (keyed by path,
        `path@N` for the N+1th call of the same module)."""
        module_qualified_name = self.path_of_module(m)
        num_calls = self.num_calls.get(module_qualified_name, 0)
        module_key = f"{module_qualified_name}@{num_calls}" if num_calls else module_qualified_name
        self.module_stack[module_key] = (module_qualified_name, type(m))
        self.num_calls[module_qualified_name] = num_calls + 1
        try:
            if not self.is_leaf_module(m, module_qualified_name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            self.module_stack.pop(module_key)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A parameter read inside forward becomes (one) get_attr node; other attributes are
        returned as they are."""
        collections = []
        if isinstance(attr_val, Parameter):
            collections.append(self.root.named_parameters)
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            collections.append(self.root.named_buffers)
        for named in collections:
            for n, p in named():
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
        return attr_val

    def create_arg(self, a):
        """Parameters, buffers and submodules of the root become get_attr nodes; any other
        tensor is stored on the root as `_tensor_constant<N>` and read from there."""
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, p in self.root.named_buffers():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
        elif isinstance(a, Module):
            for n, p in self.root.named_modules():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(elem) for elem in a)
            return self.create_node("call_function", a.__class__, args, {})
        if type(a) in _proxyable_classes:
            # an instance built outside the trace: a constant attribute of the root
            i = 0
            while hasattr(self.root, f"_{type(a).__name__}_constant_{i}"):
                i += 1
            qualname = f"_{type(a).__name__}_constant_{i}"
            setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, Tensor):
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[id(a)] = qualname
                self._keep_alive.append(a)
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def get_fresh_qualname(self, prefix):
        i = 0
        while hasattr(self.root, f"{prefix}{i}"):
            i += 1
        return f"{prefix}{i}"

    # ---- the trace ----
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """Placeholders for the root function's parameters (self excluded), in the order of
        its code: positional, keyword-only, then *args and **kwargs (each one placeholder
        holding the whole tuple / dict); those named in concrete_args take the given values."""
        fn = inspect.unwrap(root_fn)
        self._root_annotations = fn.__annotations__     # placeholders are typed as annotated
        co = fn.__code__
        sig = inspect.signature(fn)
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args = []
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            next(names_iter)
            args.append(self.root)
        varstuff = co.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        if (isinstance(concrete_args, tuple) and concrete_args and varstuff
                and total_args == int(is_module)):
            # forward(self, *args): one placeholder per given input, input_0, input_1, ...
            args.extend(self.create_proxy("placeholder", f"input_{i}", (), {})
                        for i in range(len(concrete_args)))
            return root_fn, args
        arg_names = [next(names_iter) for _ in range(int(is_module), total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(name, concrete_args, sig) for name in arg_names)
        if co.co_kwonlyargcount > 0 or varstuff:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args, sig))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args, sig))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name, concrete_args, sig):
        if concrete_args is not None and name in concrete_args:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            count = [0]

            def replace_ph(x):
                count[0] += 1
                out = self.create_proxy("placeholder", f"{name}_{count[0]}", default, {})
                if isinstance(x, PHBase):
                    return out
                if type(x) in (bool, int, float, str, complex):
                    self.create_proxy("call_function", _ember_assert,
                                      (out == x, f"{name} has been specialized to have value "
                                                 f"{x} but got another value"), {})
                elif x is None:
                    self.create_proxy("call_function", _assert_is_none,
                                      (out, f"{name} has been specialized to have value None "
                                            "but got another value"), {})
                return x

            return map_aggregate(concrete_args[name], replace_ph)
        if name.startswith("*"):
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=self._root_annotations.get(name, None))

    def trace(self, root, concrete_args=None):
        """Trace root (a Module or a function) and return its Graph."""
        global _is_fx_tracing_flag
        previous_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, Module):
                self.root = root
                if not hasattr(type(root), self.traced_func_name):
                    raise AssertionError(f"traced_func_name={self.traced_func_name} doesn't "
                                         f"exist in {type(root).__name__}")
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = Module()
                fn = root
            self.graph = Graph(tracer_cls=type(self))
            if hasattr(fn, "__code__"):     # names the generated code's file after the source
                code = fn.__code__
                self.graph._co_fields = {"co_name": code.co_name,
                                         "co_filename": code.co_filename,
                                         "co_firstlineno": code.co_firstlineno}
            self.tensor_attrs = {}
            self._keep_alive = []
            self._collect_tensor_attrs(self.root)
            if not isinstance(fn, types.FunctionType):
                raise TypeError(f"Expected a Python function to trace, got {type(fn)}")
            fn_globals = fn.__globals__
            fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
            with _Patcher() as patcher:
                wrappers = self._install_patches(patcher, fn_globals)
                self._wrappers = wrappers
                result = fn(*args)
                return_type = inspect.get_annotations(inspect.unwrap(fn)).get("return", None)
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=return_type)
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = previous_flag
        return self.graph

    def _collect_tensor_attrs(self, root):
        """Every tensor attribute of the module tree, by qualified name (walked with a stack)."""
        stack = [(root, "")]
        while stack:
            m, prefix = stack.pop()
            for k, v in m.__dict__.items():
                if isinstance(v, Tensor):
                    self.tensor_attrs.setdefault(id(v), prefix + k)
            for k, v in m._buffers.items():
                if v is not None:
                    self.tensor_attrs.setdefault(id(v), prefix + k)
            for k, child in m._modules.items():
                if child is not None:
                    stack.append((child, f"{prefix}{k}."))

    def _install_patches(self, patcher, fn_globals):
        wrappers = dict(_ember_wrappers())
        for fn in self._autowrap_functions:
            if fn not in wrappers:
                wrappers[fn] = _autowrap_wrapper(fn)
        original_getattr = Module.__getattr__
        original_call = Module.__call__
        parameter_proxy_cache = {}
        tracer = self

        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, original_getattr(mod, attr), parameter_proxy_cache)

        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return original_call(mod, *args, **kwargs)
            forward_fn = getattr(type(mod), "forward", None)
            _autowrap_check(patcher, getattr(forward_fn, "__globals__", {}), wrappers)
            return tracer.call_module(mod, forward, args, kwargs)

        patcher.patch_method(Module, "__getattr__", module_getattr_wrapper)
        patcher.patch_method(Module, "__call__", module_call_wrapper)
        # `ember.ops.aten.add.Tensor(proxy, proxy)` and `ember.ops.aten.cat([proxy, t])` are
        # recorded with the op (overload or packet) as the call_function target
        for op_cls in (OpOverload, OpOverloadPacket):
            patcher.patch_method(op_cls, "__call__", _op_call_wrapper(op_cls.__call__))
        # the public namespaces first, so that module globals patched later see originals
        for module_dict, replacements in _namespace_patch_list():
            if patcher.visit_once(module_dict):
                patcher.patch_many(module_dict, replacements)
        for (_, name), frame_dict in list(_wrapped_fns_to_patch.items()):
            orig = frame_dict[name] if name in frame_dict else getattr(builtins, name)
            patcher.patch(frame_dict, name, _create_wrapped_func(orig))
        _autowrap_check(patcher, fn_globals, wrappers)
        for module in self._autowrap_search:
            _autowrap_check(patcher, module.__dict__, wrappers)
        return wrappers


def wrap(fn_or_name):
    """Called at module level: calls of this global function (or builtin, by name) in that
    module are recorded as call_function nodes instead of being traced through."""
    if callable(fn_or_name):
        fn_name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        fn_name = fn_or_name
    else:
        raise AssertionError("wrap must be called with a global function or its string name")
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name


def symbolic_trace(root, concrete_args=None):
    """Trace a Module or function into a GraphModule (its graph, and generated `forward`)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
