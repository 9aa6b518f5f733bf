"""torch.library.custom_op: a Python function made into an operator of the dispatcher.

    @custom_op("mylib::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor, scale: float = 1.0) -> Tensor: ...

defines `mylib::numpy_sin` with the schema inferred from the annotations (infer_schema.py) and
returns a CustomOpDef. Calling it calls the op (`ember.ops.mylib.numpy_sin.default`), so it
dispatches like a built-in: its CPU kernel is the function (or the one `register_kernel` gave for
the device), its Meta kernel the `register_fake` function, and its Autograd kernel an
autograd.Function around the backend kernel with the `register_autograd` formula. Without one,
outputs still record a node (as PyTorch's do), whose backward raises.
"""
import contextlib
import logging
from typing import NamedTuple

from .._core.device import DISPATCH_KEYS as _DEVICE_KEYS
from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from .infer_schema import infer_schema
from .utils import check_aliasing_constraint, python_kernel_call

# PyTorch's logger name, which code listening for these warnings uses
_log = logging.getLogger("torch._library.custom_ops")


class CustomOpDef:
    """What `custom_op` returns: the op, plus the methods that register its other pieces."""

    def __init__(self, namespace, name, schema, fn, tags=()):
        from .._C._tags import Tag
        from .._dispatch.schema import Schema
        self._namespace, self._name = namespace, name
        self._schema = schema
        self._init_fn = fn
        self._backend_fns = {}
        self._disabled_kernels = set()   # device types whose register_kernel kernel is off
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        # Tag.inplace: the op writes its first argument and returns it; Tag.out: it writes its
        # keyword-only Tensors and returns them (PyTorch's out= convention)
        self._is_inplace, self._is_out = Tag.inplace in tags, Tag.out in tags
        parsed = Schema(name + schema, namespace)
        if not self._is_out and any(a.kwarg_only and a.type.startswith("Tensor")
                                    for a in parsed.arguments):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your "
                                      f"tensors not kwarg-only. Got: {schema}")
        self._opoverload = _dispatcher.define(name + schema, namespace)
        self._opoverload._defined_in_python = True
        args = self._opoverload.schema.arguments
        self._mutated = tuple(i for i, a in enumerate(args) if a.mutable)
        self._kw_names = tuple(a.name for a in args if a.kwarg_only)
        self._out_names = tuple(a.name for a in args if a.kwarg_only and a.mutable)
        # the dispatcher's arguments as the Python function takes them
        self._split_kwargs = python_kernel_call(self._opoverload.schema)
        _dispatcher.register_kernel(self._opoverload, "CPU", self._backend_kernel("cpu"))
        _dispatcher.register_kernel(self._opoverload, "CUDA", self._backend_kernel("cuda"))
        _dispatcher.register_kernel(self._opoverload, "Meta", self._fake_kernel)
        self._install_autograd()

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    # ---- kernels ------------------------------------------------------------------------------
    def _backend_kernel(self, device_type):
        def kernel(*args):
            fn = self._init_fn if device_type in self._disabled_kernels else \
                self._backend_fns.get(device_type, self._init_fn)
            if fn is None:
                raise RuntimeError(f"{self._name} does not have a kernel registered for "
                                   f"{device_type}. Please use register_kernel to do so.")
            positional, kwargs = self._split_kwargs(args)
            out = fn(*positional, **kwargs)
            if self._is_inplace:
                if out is not args[0]:
                    raise RuntimeError(f"{self._name} (with implementation in "
                                       f"{_module_of(fn)}): An operator tagged with "
                                       f"torch.Tag.inplace must return its first argument.")
            elif self._is_out:
                outs = out if len(self._out_names) > 1 and isinstance(out, tuple) else (out,)
                if len(outs) != len(self._out_names) or any(
                        o is not kwargs[n] for o, n in zip(outs, self._out_names)):
                    raise RuntimeError(f"{self._name} (with implementation in "
                                       f"{_module_of(fn)}): An operator tagged with "
                                       f"torch.Tag.out must return its mutable keyword-only "
                                       f"arguments.")
            elif not any(r.alias_info is not None for r in self._opoverload.schema.returns):
                check_aliasing_constraint(self._name, args, {}, out, lambda: _module_of(fn))
            for i in self._mutated:  # as PyTorch does for every mutated argument
                for t in args[i] if isinstance(args[i], (list, tuple)) else (args[i],):
                    if isinstance(t, Tensor):
                        t._bump_version()
            return out
        return kernel

    def _fake_kernel(self, *args):
        if self._abstract_fn is None:
            raise RuntimeError(
                f"{self._qualname}: There was no fake impl registered for {self._qualname}. This "
                f"is necessary for torch.compile/export/fx tracing to work. Please use "
                f"`{self._init_fn.__name__ if self._init_fn else self._name}.register_fake` to "
                f"add an fake impl.")
        positional, kwargs = self._split_kwargs(args)
        return self._abstract_fn(*positional, **kwargs)

    # ---- registration -------------------------------------------------------------------------
    def register_kernel(self, device_types, fn=None, /):
        """The kernel for `device_types` ("cpu", ...); usable as a decorator."""
        args = self._opoverload.schema.arguments
        if device_types is not None and not any(a.type.startswith("Tensor") for a in args) \
                and not any(a.name == "device" and a.type.startswith("Device") for a in args):
            raise ValueError("Functions without tensor inputs are required to have a `device: "
                             "torch.device` argument")

        def register(fn):
            for d in (device_types,) if isinstance(device_types, str) or device_types is None \
                    else device_types:
                if d is None:
                    self._init_fn = fn
                    continue
                if d not in _DEVICE_KEYS or d == "meta":
                    raise ValueError(f"register_kernel: unsupported device type {d!r} "
                                     f"(ember runs 'cpu' kernels; use register_fake for meta)")
                self._backend_fns[d] = fn
                _dispatcher.register_kernel(self._opoverload, _DEVICE_KEYS[d],
                                            self._backend_kernel(d))
            return fn
        return register(fn) if fn is not None else register

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Within the block, the kernel register_kernel gave `device_type` is used (enabled)
        or bypassed for the op's default implementation (disabled)."""
        if device_type not in self._backend_fns:
            _log.warning("Attempted to disable kernel for %s but no kernel was registered for "
                         "this device type.", device_type)
        elif enabled == (device_type not in self._disabled_kernels):
            _log.warning("Attempted to %s kernel for %s but it was already %s.",
                         "enable" if enabled else "disable", device_type,
                         "enabled" if enabled else "disabled")
        was_disabled = device_type in self._disabled_kernels
        (self._disabled_kernels.discard if enabled else self._disabled_kernels.add)(device_type)
        try:
            yield
        finally:
            (self._disabled_kernels.add if was_disabled else
             self._disabled_kernels.discard)(device_type)

    def register_fake(self, fn, /):
        """The op's shape function, run for meta tensors (PyTorch's FakeTensor kernel)."""
        if self._is_inplace or self._is_out:
            import warnings
            tag = "torch.Tag.inplace" if self._is_inplace else "torch.Tag.out"
            warnings.warn(f"The fake registration for {self} is unnecessary. Custom ops tagged "
                          f"with {tag} already get an autogenerated fake kernel. The provided "
                          f"fake impl will be used instead.", stacklevel=2)
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """backward(ctx, *grads) -> one gradient per input; setup_context(ctx, inputs, output)."""
        if self._is_out:
            raise RuntimeError(f"Cannot register autograd formula for operator tagged with "
                               f"torch.Tag.out: {self}. Out variants do not support autograd.")
        if not callable(backward):
            raise TypeError(f"Expected backward to be a function, got {type(backward)}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError(f"Expected setup_context to be a function, got {type(setup_context)}")
        if self._mutated:
            raise RuntimeError(f"{self._qualname}: register_autograd is not supported for "
                               "operators that mutate their inputs")
        self._backward_fn, self._setup_context_fn = backward, setup_context

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        """fn(mode_or_cls, func, types, args, kwargs) handles this op where the
        TorchDispatchMode or Tensor subclass `torch_dispatch_class` would otherwise get it."""
        from .._dispatch.python_dispatch import register_torch_dispatch_rule

        def register(fn):
            register_torch_dispatch_rule(self._opoverload, torch_dispatch_class, fn)
            return fn
        return register(fn) if fn is not None else register

    def register_vmap(self, func=None, /):
        """func(info, in_dims, *args) -> (outputs, out_dims): the op's batching rule."""
        def register(func):
            _dispatcher.register_kernel(self._opoverload, "FuncTorchBatched",
                                        batching_rule(func, self._kw_names))
            return func
        return register(func) if func is not None else register

    def register_autocast(self, device_type, cast_inputs):
        raise NotImplementedError(f"{self._qualname}: register_autocast is not supported")

    def _install_autograd(self):
        from ..library import register_autograd

        def backward(ctx, *grads):
            if self._backward_fn is None:
                raise RuntimeError(f"Trying to backward through {self._namespace}."
                                   f"{self._name}.default but no autograd formula was "
                                   f"registered. Please use register_autograd to add one.")
            return self._backward_fn(ctx, *grads)

        def setup_context(**kwargs):
            if self._setup_context_fn is not None:
                self._setup_context_fn(**kwargs)
        if not self._mutated:
            register_autograd(self._opoverload, backward, setup_context=setup_context)
        elif self._is_out:
            from ..library import _CustomDerivative
            self._opoverload.derivative = _CustomDerivative(self._out_autograd)

    def _out_autograd(self, op, key, args):
        """The Autograd kernel of a Tag.out op (reached when an argument requires grad): like
        PyTorch's out= functions, it refuses."""
        raise RuntimeError(f"{self._name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires "
                           f"grad.")


def _module_of(fn):
    import inspect
    return inspect.getmodule(fn)


def _validate_tagged_schema(schema, is_inplace, is_out):
    """A hand-written schema must say what Tag.inplace / Tag.out promise."""
    from .._dispatch.schema import Schema
    parsed = Schema("f" + schema)
    args, rets = parsed.arguments, parsed.returns
    mutable = [a for a in args if a.mutable]
    if is_inplace:
        first = args[0] if args and not args[0].kwarg_only else None
        if first is None or not first.mutable or first.type != "Tensor":
            raise ValueError(f"Schema tagged with torch.Tag.inplace requires the first "
                             f"positional argument to be a mutable Tensor. Got: {schema}")
        if len(rets) != 1 or rets[0].alias_info is None or not rets[0].alias_info.is_write or \
                rets[0].alias_info.before_set != first.alias_info.before_set:
            raise ValueError(f"Schema tagged with torch.Tag.inplace must return the first "
                             f"mutable argument (return must alias the first argument). Got: "
                             f"{schema}")
        if len(mutable) > 1:
            raise ValueError(f"Schema tagged with torch.Tag.inplace must only mutate the first "
                             f"positional argument. Got: {schema}")
    if is_out:
        if not mutable:
            raise ValueError(f"Schema tagged with torch.Tag.out must have at least one mutable "
                             f"argument. Got: {schema}")
        positional = [a.name for a in mutable if not a.kwarg_only]
        if positional:
            raise ValueError(f"Schema tagged with torch.Tag.out requires all mutable arguments "
                             f"to be keyword-only (after the *). Found mutable positional args: "
                             f"{positional}. Got: {schema}")
        if any(a.type != "Tensor" for a in mutable):
            raise ValueError(f"Schema tagged with torch.Tag.out only supports Tensor mutable "
                             f"arguments. Got: {schema}")
        if len(rets) != len(mutable) or any(
                r.alias_info is None or r.alias_info.before_set != a.alias_info.before_set
                for r, a in zip(rets, mutable)):
            raise ValueError(f"Schema tagged with torch.Tag.out must return all mutable "
                             f"arguments in order. Got: {schema}")


# the ops custom_op defined, by qualified name: defining one again replaces it
OPDEFS = {}


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap `fn` as the operator `name` ("namespace::op" or "namespace::op.overload"); usable
    as a decorator. Defining a name again replaces the op."""
    def inner(fn):
        ns, sep, opname = name.partition("::")
        if not sep or not ns or not opname:
            raise ValueError(f"Expected name to be of the form namespace::opname, got {name!r}")
        from .._C._tags import Tag, as_tags
        tag_list = as_tags(tags or ())
        if schema is None:
            text = infer_schema(fn, mutates_args=mutates_args, tags=tag_list)
        else:
            text = schema
            _check_manual_schema(schema, mutates_args)
            _validate_tagged_schema(schema, Tag.inplace in tag_list, Tag.out in tag_list)
        if name in OPDEFS:
            from ..library import _forget
            _forget(OPDEFS.pop(name)._opoverload.schema.qualname)
        op = CustomOpDef(ns, opname, text, None if device_types is not None else fn, tag_list)
        op._opoverload._tags = [Tag.pt2_compliant_tag] + [
            t for t in tag_list if t != Tag.pt2_compliant_tag]
        OPDEFS[name] = op
        if device_types is not None:
            op.register_kernel(device_types, fn)
        return op
    return inner(fn) if fn is not None else inner


def _check_manual_schema(schema, mutates_args):
    """A hand-written schema must mark written exactly the arguments mutates_args names."""
    from .._dispatch.schema import Schema
    if mutates_args == "unknown":
        return
    expected = {a.name for a in Schema("f" + schema).arguments if a.mutable}
    if expected != set(mutates_args):
        raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` "
                         f"and `schema={schema}. The schema suggests that the op mutates "
                         f"{expected} which is different from what was provided to us in "
                         f"`mutates_args`. Please make these consistent.")


class VmapInfo(NamedTuple):
    """What a registered batching rule learns of the vmap it runs in."""
    batch_size: int
    randomness: str


def batching_rule(func, kw_names=()):
    """A FuncTorchBatched kernel from a user rule (torch.library.register_vmap): the rule gets
    the physical tensors with their batch dims (None: unbatched) and says where its outputs'
    batch dims are. The op's keyword-only arguments (`kw_names`) reach the rule by name."""
    from .._functorch import vmap as V

    def rule(*args, **kwargs):
        level = V.max_level(args)
        n = len(args) - len(kw_names)
        in_dims = tuple(a._bdim if V.batched_at(a, level) else None for a in args[:n])
        physical = tuple(a._value if d is not None else a for a, d in zip(args, in_dims))
        size = V.batch_size(level)
        randomness = next(entry[2] for entry in V._levels if entry[0] == level)
        out, out_dims = func(VmapInfo(size, randomness), in_dims, *physical,
                             **dict(zip(kw_names, args[n:])), **kwargs)
        single = isinstance(out, Tensor)
        outs, dims = ((out,), (out_dims,)) if single else (tuple(out), out_dims)
        if isinstance(dims, int) or dims is None:
            dims = (dims,) * len(outs)
        wrapped = []
        for o, d in zip(outs, dims):
            if d is None:  # the same for every example: give it the batch dim
                o, d = o.unsqueeze(0).expand(size, *o.shape), 0
            wrapped.append(V.wrap(o, level, d % o.dim()))
        return wrapped[0] if single else tuple(wrapped)
    return rule
