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
from typing import NamedTuple

from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from .infer_schema import infer_schema

_DEVICE_KEYS = _dispatcher._DEVICE_KEYS


class CustomOpDef:
    """What `custom_op` returns: the op, plus the methods that register its other pieces."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name = namespace, name
        self._schema = schema
        self._init_fn = fn
        self._backend_fns = {}
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        self._opoverload = _dispatcher.define(name + schema, namespace)
        args = self._opoverload.schema.arguments
        self._mutated = tuple(i for i, a in enumerate(args) if a.mutable)
        self._kw_names = tuple(a.name for a in args if a.kwarg_only)
        _dispatcher.register_kernel(self._opoverload, "CPU", self._backend_kernel("cpu"))
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
            fn = self._backend_fns.get(device_type, self._init_fn)
            if fn is None:
                raise NotImplementedError(f"{self._qualname}: no kernel registered for device "
                                          f"type {device_type!r}")
            positional, kwargs = self._split_kwargs(args)
            out = fn(*positional, **kwargs)
            self._check_no_aliasing(args, out)
            for i in self._mutated:
                if isinstance(args[i], Tensor):
                    args[i]._bump_version()  # as PyTorch does for every mutated argument
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

    def _split_kwargs(self, args):
        """The dispatcher's arguments (in schema order) as the Python function takes them:
        the keyword-only ones by name."""
        n = len(args) - len(self._kw_names)
        return args[:n], dict(zip(self._kw_names, args[n:]))

    def _check_no_aliasing(self, args, out):
        outs = out if isinstance(out, (tuple, list)) else (out,)
        inputs = [a for a in args if isinstance(a, Tensor)] + [
            t for a in args if isinstance(a, (list, tuple)) for t in a if isinstance(t, Tensor)]
        seen = []
        for o in outs:
            if not isinstance(o, Tensor):
                continue
            base = o.untyped_storage()
            if any(a is o or a.untyped_storage() is base for a in inputs) or \
                    any(s is base for s in seen):
                raise RuntimeError(
                    f"{self._name} (with implementation in {self._init_fn!r}): The output of "
                    "this custom operator (1) must not also be an input to this custom operator "
                    "and (2) may not alias any inputs to this custom operator or other returns. "
                    "The most common way to trigger this error is if we have y = custom_op(x) "
                    "and y and x are the same Tensor. Please instead return a clone of the "
                    "offending output tensor(s) (e.g. return x.clone()) or refactor the custom "
                    "operator to not return y.")
            seen.append(base)

    # ---- registration -------------------------------------------------------------------------
    def register_kernel(self, device_types, fn=None, /):
        """The kernel for `device_types` ("cpu", ...); usable as a decorator."""
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

    def register_fake(self, fn, /):
        """The op's shape function, run for meta tensors (PyTorch's FakeTensor kernel)."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """backward(ctx, *grads) -> one gradient per input; setup_context(ctx, inputs, output)."""
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
                                        batching_rule(func))
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


# the ops custom_op defined, by qualified name: defining one again replaces it
OPDEFS = {}


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap `fn` as the operator `name` ("namespace::op" or "namespace::op.overload"); usable
    as a decorator. Defining a name again replaces the op."""
    def inner(fn):
        ns, sep, opname = name.partition("::")
        if not sep or not ns or not opname:
            raise ValueError(f"Expected name to be of the form namespace::opname, got {name!r}")
        text = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        if name in OPDEFS:
            from ..library import _forget
            _forget(OPDEFS.pop(name)._opoverload.schema.qualname)
        op = CustomOpDef(ns, opname, text, None if device_types is not None else fn)
        from .._C._tags import Tag, as_tags
        op._opoverload._tags = [Tag.pt2_compliant_tag] + [
            t for t in as_tags(tags or ()) if t != Tag.pt2_compliant_tag]
        OPDEFS[name] = op
        if device_types is not None:
            op.register_kernel(device_types, fn)
        return op
    return inner(fn) if fn is not None else inner


class VmapInfo(NamedTuple):
    """What a registered batching rule learns of the vmap it runs in."""
    batch_size: int
    randomness: str


def batching_rule(func):
    """A FuncTorchBatched kernel from a user rule (torch.library.register_vmap): the rule gets
    the physical tensors with their batch dims (None: unbatched) and says where its outputs'
    batch dims are."""
    from .._functorch import vmap as V

    def rule(*args):
        level = V.max_level(args)
        in_dims = tuple(a._bdim if V.batched_at(a, level) else None for a in args)
        physical = tuple(a._value if d is not None else a for a, d in zip(args, in_dims))
        size = V.batch_size(level)
        randomness = next(entry[2] for entry in V._levels if entry[0] == level)
        out, out_dims = func(VmapInfo(size, randomness), in_dims, *physical)
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
