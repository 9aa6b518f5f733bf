"""torch._custom_op.impl: the older custom-operator API (PyTorch deprecates it for
torch.library.custom_op, and ember keeps it for the code that still uses it).

    @custom_op("mylib::foo")                 # declared by a stub whose annotations give the schema
    def foo(x: Tensor) -> Tensor: ...
    foo.impl("cpu")(kernel)                  # kernels per device type
    foo.impl_save_for_backward()(save)       # save(inputs, output) -> what backward needs
    foo.impl_backward()(backward)            # backward(ctx, saved, *grads) -> {arg: grad}

The op is a plain dispatcher op; its Autograd kernel (torch.library.register_autograd) calls
the two backward pieces, and reports the errors PyTorch's does when they are missing or return
the wrong shape of answer.
"""
import collections
import inspect
import sys

from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from .._library.infer_schema import infer_schema  # noqa: F401  (torch._custom_op.impl.infer_schema)
from ..library import _python_kernel, _library_autograd_key

__all__ = ["custom_op", "CustomOp"]

SUPPORTED_DEVICE_TYPE_TO_KEY = {"cpu": "CPU", "cuda": "CUDA"}
RESERVED_NS = {"prim", "prims", "aten", "at", "torch", "pytorch"}

global_registry = {}   # qualname -> CustomOp


def parse_qualname(qualname):
    names = qualname.split("::", 1)
    if len(names) != 2:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator "
                         f"name should look something like ns::foo")
    if "." in names[1]:
        raise ValueError(f"The torch.custom_ops APIs do not handle overloads, i.e. operator "
                         f"names with '.' in them. Please name your operator something like "
                         f"ns::foo. Got: {qualname}")
    return names[0], names[1]


def validate_namespace(ns):
    if "." in ns:
        raise ValueError(f'custom_op(..., ns="{ns}"): expected ns to not contain any . (and be '
                         f"a valid variable name)")
    if ns in RESERVED_NS:
        raise ValueError(f"custom_op(..., ns='{ns}'): '{ns}' is a reserved namespace, please "
                         f"choose something else. ")


def is_functional_schema(schema):
    """No argument written, no return aliasing an input, at least one return."""
    return (not any(a.mutable for a in schema.arguments)
            and not any(r.alias_info is not None for r in schema.returns)
            and len(schema.returns) > 0)


def _parse_schema(text, name):
    from .._dispatch.schema import Schema
    try:
        return Schema(text)
    except ValueError as e:
        raise AssertionError(f"Invalid function schema: {name}") from e


def _validate_schema(schema):
    if not is_functional_schema(schema):
        raise ValueError(f"custom_op only supports functional operators (ops that do not mutate "
                         f"any inputs, do not return views of the inputs, and has at least one "
                         f"return). Got the following non-functional schema: {schema.text}")
    if any(a.name == "self" for a in schema.arguments):
        raise ValueError(f"custom_op does not support arguments named 'self'. Please rename "
                         f"your argument. Got: {schema.text}")


def _validate_function_matches_schema(schema, func):
    sig = inspect.signature(func)

    def error():
        raise ValueError(f"custom_op(..., manual_schema)(func): When passing in a manual "
                         f"schema, we expect `func`'s signature to match `manual_schema` (aside "
                         f"from type annotations). func's signature: {sig}, manual_schema: "
                         f"{schema.text}")
    params = list(sig.parameters.values())
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        raise ValueError(f"custom_op(..., manual_schema)(func): positional-only args, varargs, "
                         f"and kwargs are not supported. Please rewrite `func` to not have "
                         f"them. Got `func` with signature: {sig}")
    if any(p.default is not inspect.Parameter.empty for p in params):
        raise ValueError(f"custom_op(..., manual_schema)(func): manual_schema does not support "
                         f"default arguments. Got `func` with signature: {sig}")
    ours = [(p.name, p.kind == p.KEYWORD_ONLY) for p in params]
    theirs = [(a.name, a.kwarg_only) for a in schema.arguments]
    if ours != theirs:
        error()


class CustomOp:
    """One operator defined through this API (get one with `get_op(qualname)`)."""

    def __init__(self, *args, _private_access=False):
        if not _private_access:
            raise RuntimeError("The CustomOp constructor is private and we do not guarantee BC "
                               "for it. Please use custom_op(...) to create a CustomOp object")
        ns, schema, operator_name = args
        self._namespace = ns
        self._schema = schema
        self._opname = operator_name
        self._qualname = f"{ns}::{operator_name}"
        self._op = _dispatcher.define(f"{operator_name}{schema.text[schema.text.index('('):]}", ns)
        self._impls = {}   # kind ("cpu", "abstract", "save_for_backward", "backward") -> (fn, where)
        self._output_differentiability = None
        global_registry[self._qualname] = self
        for device, key in SUPPORTED_DEVICE_TYPE_TO_KEY.items():
            _dispatcher.register_kernel(self._op, key, self._missing_kernel(device))
        _dispatcher.register_kernel(self._op, "Meta", self._no_fake_kernel)
        self._install_autograd()

    def __repr__(self):
        return f'<CustomOp(op="{self._qualname}")>'

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def _destroy(self):
        from ..library import _forget
        _forget(self._op.schema.qualname)
        del global_registry[self._qualname]

    def _register_impl(self, kind, func, stacklevel=2):
        if kind in self._impls:
            raise RuntimeError(f"Attempting to register a {kind} impl for operator "
                               f"{self._qualname} that already has a {kind} impl registered "
                               f"from Python at {self._impls[kind][1]}. This is not supported.")
        frame = sys._getframe(stacklevel)
        self._impls[kind] = (func, f"{frame.f_code.co_filename}:{frame.f_lineno}")

    def _missing_kernel(self, device):
        def kernel(*args):
            if not any(isinstance(t, Tensor) for a in args
                       for t in (a if isinstance(a, (list, tuple)) else (a,))):
                raise NotImplementedError(
                    f"{self._qualname}: There were no Tensor inputs to this operator (e.g. you "
                    f"passed an empty list of Tensors). If your operator is a factory function "
                    f"(that is, it takes no Tensors and constructs a new one), then please use "
                    f"CustomOp.impl_factory to register an implementation for it")
            raise NotImplementedError(
                f"{self._qualname}: The operator has no {device} impl registered. Please use "
                f"impl(..., device_types='{device}') to register one.")
        kernel._custom_op_missing = True
        return kernel

    def _no_fake_kernel(self, *args):
        raise NotImplementedError(
            f"{self._qualname}: There were no fake impl or Meta kernel registered. You may have "
            f"run into this message while using an operator with PT2 compilation APIs "
            f"(torch.compile/torch.export); in order to use this operator with those APIs "
            f"you'll need to add a fake impl. Please see the following for next steps:  "
            f"https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")

    def impl(self, device_types=("cpu", "cuda"), _stacklevel=2):
        device_types = (device_types,) if isinstance(device_types, str) else device_types
        for d in device_types:
            if d not in SUPPORTED_DEVICE_TYPE_TO_KEY:
                raise ValueError(f"CustomOp.impl(device_types=[{d}, ...]): we only support "
                                 f"device_type in {SUPPORTED_DEVICE_TYPE_TO_KEY.keys()}.")

        def inner(f):
            for d in set(device_types):
                key = SUPPORTED_DEVICE_TYPE_TO_KEY[d]
                if d not in self._impls and _has_other_kernel(self._op, key):
                    raise RuntimeError(
                        f"impl(..., device_types={d}): the operator {self._qualname} already "
                        f"has an implementation for this device type via a pre-existing "
                        f"torch.library or TORCH_LIBRARY registration.")
                self._impls.pop(d, None)
                self._register_impl(d, f, stacklevel=_stacklevel)
                _dispatcher.register_kernel(self._op, key, _python_kernel(self._op, f))
            return f
        return inner

    # ---- autograd ------------------------------------------------------------------------
    def _check_can_register_backward(self):
        def error(detail):
            raise RuntimeError(f"Cannot use torch._custom_ops APIs to register backward formula "
                               f"for {detail}. Got operator {self._qualname} with schema: "
                               f"{self._schema.text}")
        if any(a.mutable for a in self._schema.arguments):
            error("non-functional operator")
        if not self._schema.returns:
            error("operator with no returns")
        if any(r.alias_info is not None for r in self._schema.returns):
            error("operator that returns views")
        if self._op._composite is not None:
            raise RuntimeError(
                f"impl_backward/impl_save_for_backward: the operator {self._qualname} already "
                f"has an implementation for this device type via a pre-existing registration "
                f"to DispatchKey::CompositeImplicitAutograd.CompositeImplicitAutograd operators "
                f"do not need an autograd formula; instead, the operator will decompose into "
                f"its constituents and those can have autograd formulas defined on them.")
        key = _library_autograd_key(self._op)
        if key is not None:
            raise RuntimeError(
                f"impl_backward/impl_save_for_backward: the operator {self._qualname} already "
                f"has an Autograd kernel registered to DispatchKey::{key} vi a pre-existing "
                f"torch.library or TORCH_LIBRARY registration. Please either remove those "
                f"registrations or don't use the torch._custom_ops APIs")

    def impl_save_for_backward(self, _stacklevel=2):
        def inner(f):
            self._check_can_register_backward()
            self._register_impl("save_for_backward", f, stacklevel=_stacklevel)
            return f
        return inner

    def impl_backward(self, output_differentiability=None, _stacklevel=2):
        if output_differentiability is not None:
            n = len(self._schema.returns)
            if not isinstance(output_differentiability, list) or \
                    len(output_differentiability) != n or \
                    not all(isinstance(d, bool) for d in output_differentiability):
                raise RuntimeError(
                    f"impl_backward(output_differentiability): expected output_differentiability "
                    f"to be a list of bools with length equal to the number of outputs of this "
                    f"CustomOp got: {output_differentiability}")

        def inner(f):
            self._check_can_register_backward()
            self._register_impl("backward", f, stacklevel=_stacklevel)
            self._output_differentiability = output_differentiability
            return f
        return inner

    def _install_autograd(self):
        from .. import library
        args_spec = self._schema.arguments
        names = [a.name for a in args_spec]
        Inputs = collections.namedtuple("Inputs", names)
        tensor_like = [a.name for a in args_spec if a.type.startswith("Tensor")]

        def kernel(op_, key, args):
            # reached only when an input requires grad under grad mode
            if "save_for_backward" not in self._impls and "backward" not in self._impls:
                raise RuntimeError("Autograd has not been implemented for operator")
            for have, missing in (("backward", "save_for_backward"),
                                  ("save_for_backward", "backward")):
                if missing not in self._impls:
                    raise RuntimeError(
                        f"We found a '{have}' but no '{missing}' impl for {self._qualname}: "
                        f"unable to find a '{missing}' impl. Please use impl_{missing} to "
                        f"register one.")
            return self._differentiable(args)

        self._inputs_type = Inputs
        self._tensor_like = tensor_like
        self._op.derivative = library._CustomDerivative(kernel)

    def _differentiable(self, args):
        from ..autograd.function import Function
        save_fn, where = self._impls["save_for_backward"]
        backward_fn, bwd_where = self._impls["backward"]
        me, Inputs = self, self._inputs_type
        lens = [len(a) if isinstance(a, (list, tuple)) else None for a in args]

        class Generated(Function):
            @staticmethod
            def forward(ctx, *flat):
                regrouped, it = [], iter(flat)
                for n in lens:
                    regrouped.append(next(it) if n is None else [next(it) for _ in range(n)])
                out = _below_autograd(me._op, tuple(regrouped))
                ctx.saved = save_fn(Inputs(*regrouped), out)
                return _check_outputs(me, out)

            @staticmethod
            def backward(ctx, *grads):
                result = backward_fn(ctx, ctx.saved, *grads)
                _validate_grad_dict(me, bwd_where, result, args)
                flat = []
                for a, n in zip(args_names(me), lens):
                    g = result.get(a)
                    flat.extend((g,) if n is None else (g if g is not None else [None] * n))
                return tuple(flat)

        flat = [t for a, n in zip(args, lens) for t in ((a,) if n is None else a)]
        out = Generated.apply(*flat)
        return _mark_nondifferentiable(self, out)


def args_names(op):
    return [a.name for a in op._schema.arguments]


def _check_outputs(op, out):
    diff = op._output_differentiability
    outs = out if isinstance(out, tuple) else (out,)
    if diff is not None:
        for idx, (o, d) in enumerate(zip(outs, diff)):
            if d and not isinstance(o, (Tensor, list)):
                raise RuntimeError(
                    f"With output_differentiability={diff}. At idx {idx}, we received "
                    f"an object of type {type(o)} that is not a Tensor, so it cannot have be "
                    f"marked as differentiable in output_differentiability.")
    return out


def _mark_nondifferentiable(op, out):
    diff = op._output_differentiability
    if diff is None:
        return out
    outs = list(out)
    for i, d in enumerate(diff):
        if not d:
            o = outs[i]
            outs[i] = [t.detach() for t in o] if isinstance(o, list) else o.detach()
    return tuple(outs)


def _validate_grad_dict(op, where, result, args):
    def error(what):
        raise RuntimeError(f"In the backward function defined for {op} at {where} using the "
                           f"CustomOp API, {what}")
    if not isinstance(result, dict):
        error(f"expected the output of the backward function to be a dict but got "
              f"{type(result)}")
    expected = set(op._tensor_like)
    if expected != result.keys():
        error(f"expected the returned grad_input dict to have keys {expected} but got "
              f"{result.keys()}. The backward function must return a gradient (can be None) for "
              f"each arg to the CustomOp that may be a Tensor or Sequence[Tensor]. Args declared "
              f"to be non-Tensor-like types should not appear in the grad_input dict")
    for name, value in zip(args_names(op), args):
        grad = result.get(name)
        if isinstance(value, (list, tuple)):
            if not isinstance(grad, (tuple, list)):
                error(f"for input '{name}' expected the grad_input dict to hold a list of "
                      f"gradients but got object of type {type(grad)}.")
            if len(grad) != len(value):
                error(f"for input '{name}' expected the grad_input dict to hold a list of "
                      f"{len(value)} gradients but got {len(grad)}")
            for idx, g in enumerate(grad):
                if g is not None and not isinstance(g, Tensor):
                    error(f"for input '{name}' expected the grad_input dict to hold a list of "
                          f"None or Tensor gradients but got object of {type(g)} at index {idx}")
        elif grad is not None and not isinstance(grad, Tensor):
            error(f"got object of type {type(grad)} as the gradient for input '{name}', but "
                  f"expected the gradient to be either None or a Tensor")


def _below_autograd(op, args):
    from ..autograd.grad_mode import no_grad
    with no_grad():
        return op.call_positional(*args)


def _has_other_kernel(op, key):
    return key in op._table and not getattr(op._table[key], "_custom_op_missing", False) \
        or op._composite is not None


def custom_op(qualname, manual_schema=None):
    """Decorator: the stub function `func` (its name the op's) defines the op `qualname`."""
    def inner(func):
        if not inspect.isfunction(func):
            raise ValueError(f"custom_op(...)(func): Expected `func` to be a Python function, "
                             f"got: {type(func)}")
        ns, name = parse_qualname(qualname)
        validate_namespace(ns)
        if func.__name__ != name:
            raise ValueError(f"custom_op(qualname='{qualname}', ...)(func): expected `func` to "
                             f"have name '{name}' but got '{func.__name__}'. Please either "
                             f"change the name of `func` or the qualname that is passed to "
                             f"`custom_op`")
        text = infer_schema(func, mutates_args=()) if manual_schema is None else manual_schema
        schema = _parse_schema(f"{name}{text}", name)
        _validate_schema(schema)
        if manual_schema is not None:
            _validate_function_matches_schema(schema, func)
        return _define(ns, name, schema)
    return inner


def _define(ns, name, schema):
    qualname = f"{ns}::{name}"
    if qualname in global_registry or qualname in _dispatcher._registry:
        raise RuntimeError(f"Tried to register an operator ({qualname}) with the same name and "
                           f"overload name multiple times.")
    return CustomOp(ns, schema, name, _private_access=True)


def get_op(qualname):
    """The op `qualname` as a CustomOp: one this API defined, or (an OpOverload) one that
    torch.library defined."""
    if qualname in global_registry:
        return global_registry[qualname]
    ns, name = parse_qualname(qualname)
    try:
        return _dispatcher.lookup(name, ns)
    except RuntimeError:
        raise ValueError(f"Could not find the operator {qualname}. Please make sure you have "
                         f"already registered the operator and (if registered from C++) loaded "
                         f"it via torch.ops.load_library.") from None


def _find_custom_op(qualname, also_check_torch_library=False):
    if qualname in global_registry:
        return global_registry[qualname]
    if not also_check_torch_library:
        raise RuntimeError(f'Could not find custom op "{qualname}". Did you register it via '
                           f"the torch._custom_ops API?")
    ns, name = parse_qualname(qualname)
    op = _dispatcher.lookup(name, ns)
    result = CustomOp.__new__(CustomOp)
    result._namespace, result._opname, result._qualname = ns, name, qualname
    result._schema, result._op, result._impls = op.schema, op, {}
    result._output_differentiability = None
    global_registry[qualname] = result
    result._install_autograd()
    return result
