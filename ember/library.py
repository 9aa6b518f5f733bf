"""ember.library: define new operators from Python (torch.library).

    lib = Library("myns", "DEF")
    lib.define("my_add(Tensor x, Tensor y) -> Tensor")

    @impl("myns::my_add", "CPU")
    def my_add_cpu(x, y): ...

    register_autograd("myns::my_add", backward, setup_context=setup_context)

The op then lives in the same dispatch table as the built-ins: `ember.ops.myns.my_add(x, y)`
dispatches by device, records autograd nodes, and shows up in `ember.explain()`.
"""
import contextlib
import sys
import weakref

from ._C._tags import as_tags
from ._core.tensor import Tensor
from ._dispatch import dispatcher as _dispatcher
from ._library.custom_ops import CustomOpDef, batching_rule, custom_op
from ._library.infer_schema import infer_schema
from ._library.opcheck import opcheck


_RESERVED_NAMESPACES = ("prim",)
_BLOCKS = {"DEF": "TORCH_LIBRARY", "FRAGMENT": "TORCH_LIBRARY_FRAGMENT",
           "IMPL": "TORCH_LIBRARY_IMPL"}


class Library:
    """A namespace of ops. kind: "DEF" (a new namespace), "FRAGMENT" or "IMPL" (add kernels).

    What a Library registers lasts as long as the Library: when it is destroyed (`_destroy()`,
    or garbage-collected after `del lib`), the ops it defined are forgotten and each kernel it
    put in place of another gives the slot back -- to a later Library's kernel for the same op
    and key if one is still alive, else to the kernel that was there first."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in _BLOCKS:
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library "
                             "with another name.")
        caller = sys._getframe(1)
        self._where = f"{caller.f_code.co_filename}:{caller.f_lineno}"
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined = []
        self._kernels = []   # the (op, slot) pairs this library holds a kernel in
        self._rules = []     # (op, class) of each _register_torch_dispatch_rule
        self._finalizer = weakref.finalize(self, _undo, self._defined, self._kernels,
                                           self._rules)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        if self.kind == "IMPL":
            raise RuntimeError(f'def("{schema.split("(")[0]}"): Cannot define an operator '
                               "inside of a TORCH_LIBRARY_IMPL block.  All def()s should be "
                               "placed in the (unique) TORCH_LIBRARY block for their namespace.  "
                               f"{self._block_note()}")
        _check_schema_types(schema)
        op = _dispatcher.define(schema, self.ns)
        op._tags = as_tags(tags)
        op._defined_in_python = True
        self._defined.append(op.name)
        return op.short_name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if isinstance(op_name, _dispatcher.OpOverload):
            name = op_name.__qualname__
        elif isinstance(op_name, str):
            name = op_name
        else:
            raise RuntimeError("impl should be passed either a name or an OpOverload object as "
                               f"the first argument, got {type(op_name)}")
        ns, sep, _ = name.rpartition("::")
        if sep and ns != self.ns:
            raise RuntimeError(
                f'impl("{name}", ...): Explicitly provided namespace ({ns}) in operator name '
                "does not match namespace of enclosing TORCH_LIBRARY block "
                f"({self.ns}).  Move this definition to the TORCH_LIBRARY block corresponding "
                "to this namespace (and consider deleting the namespace from your schema "
                f"string.)  {self._block_note()}")
        if dispatch_key and self.dispatch_key and dispatch_key != self.dispatch_key:
            raise RuntimeError(
                f'impl("{name}", ...): Explicitly provided dispatch key ({dispatch_key}) is '
                "inconsistent with the dispatch key of the enclosing TORCH_LIBRARY_IMPL block "
                f"({self.dispatch_key}).  Please declare a separate TORCH_LIBRARY_IMPL block for "
                f"this dispatch key and move your impl() there.  {self._block_note()}")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        op = _dispatcher.lookup(name, self.ns)
        if not allow_override and _has_kernel(op, key):
            raise RuntimeError(f"This is not allowed since there's already a kernel registered "
                               f"from python overriding {name}'s behavior for {key} dispatch "
                               f"key and {self.ns} namespace.")
        _register(op, key, fn, self)

    def _register_torch_dispatch_rule(self, op_name, torch_dispatch_class, fn):
        """`fn` handles the op where `torch_dispatch_class` would, until this library is
        destroyed."""
        from ._dispatch.python_dispatch import register_torch_dispatch_rule
        op = _dispatcher.lookup(op_name, self.ns)
        register_torch_dispatch_rule(op, torch_dispatch_class, fn)
        self._rules.append((op, torch_dispatch_class))

    def _block_note(self):
        return f"(Error occurred while processing {_BLOCKS[self.kind]} block at {self._where})"

    def _destroy(self):
        self._finalizer()


def _undo(defined, kernels, rules):
    """A Library's end: its torch_dispatch rules and kernels leave, its ops are forgotten."""
    for op, cls in rules:
        op._torch_dispatch_rules.pop(cls, None)
    rules.clear()
    for op, slot in reversed(kernels):
        _pop_kernel(op, slot, kernels)
    kernels.clear()
    for name in defined:
        _forget(name)
    defined.clear()


@contextlib.contextmanager
def _scoped_library(*args, **kwargs):
    """A Library for the duration of a `with` block, destroyed (its definitions forgotten) on
    exit."""
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()


_KEYS = {"cpu": ("CPU",), "meta": ("Meta",), "cuda": ("CUDA",),
         "default": ("CompositeImplicitAutograd",),
         # written in ember ops, for every backend, below autograd
         "CompositeExplicitAutograd": _dispatcher.BACKEND_KEYS}


# backends PyTorch has dispatch keys for and ember has no device of: a kernel registered
# for one can never be reached, so registering it does nothing
_ABSENT_BACKENDS = ("XPU", "HPU", "MPS", "MTIA", "PrivateUse1", "AutogradXPU", "AutogradHPU",
                    "AutogradMPS", "AutogradPrivateUse1")


# the base types a schema may name (PyTorch's schema type parser), and the opaque Python
# types registered with torch._C._register_opaque_type
_SCHEMA_TYPES = {"Tensor", "SymInt", "int", "float", "bool", "Scalar", "str", "ScalarType",
                 "Device", "Layout", "MemoryFormat", "Generator", "Storage", "Stream",
                 "Dimname", "complex", "SymFloat", "SymBool", "GraphModule", "Any", "QScheme",
                 "AnyEnumType", "t", "()"}
_OPAQUE_TYPES = set()
_TYPE_HINTS = {
    "int64_t": "Use `SymInt` or `int` instead of `int64_t` in an operator's schema string. "
               "`SymInt` corresponds to c10::SymInt in C++ while `int` in schema corresponds "
               "to the int64_t type in C++.",
    "double": "Use `float` instead of `double` in an operator's schema string. `float` in "
              "schema corresponds to the double type in C++"}


def _check_schema_types(schema):
    """Every argument and return type of a user's schema is one PyTorch's parser knows; the
    error points at the first that is not, as PyTorch's does."""
    import re
    from ._dispatch.schema import Schema
    parsed = Schema(schema)
    types = [a.type for a in parsed.arguments] + [r.type for r in parsed.returns]
    for typ in types:
        base = re.sub(r"(\[\d*\]|\?)+$", "", typ).split("|")[0]
        if base in _SCHEMA_TYPES or base in _OPAQUE_TYPES:
            continue
        message = _TYPE_HINTS.get(base, "unknown type specifier. Common valid schema types "
                                  "include Tensor, SymInt, int, float, bool, Scalar; for a full "
                                  "list, please see https://github.com/pytorch/pytorch/blob/"
                                  "main/aten/src/ATen/native/README.md#func ")
        where = schema.index(base, schema.index("("))
        raise RuntimeError(f"\n{message}:\n{schema}\n{' ' * where}{'~' * len(base)} <--- HERE\n")


def _has_kernel(op, key):
    if key == "CompositeImplicitAutograd":
        return op._composite is not None
    if key.startswith("Autograd"):
        return isinstance(op.derivative, _CustomDerivative)
    return any(k in op._table for k in _KEYS.get(key, (key,)))


def _register(op, key, fn, lib=None):
    """One kernel for a device type ("cpu"), a dispatch key ("CPU", "Autograd"), or an alias:
    owned by `lib` (undone when it dies), or without one for good."""
    for slot, kernel in _kernels_for(op, key, fn):
        if lib is None:
            _set_slot(op, slot, kernel)
        else:
            _push_kernel(op, slot, kernel, lib._kernels)


def _kernels_for(op, key, fn):
    """The (slot, kernel) pairs that registering `fn` for `key` fills: a slot is a backend key
    of the op's table, "CompositeImplicitAutograd", or "Autograd" (the op's derivative)."""
    if key in _ABSENT_BACKENDS or key.upper() in _ABSENT_BACKENDS:
        return []
    if key in ("Autograd", "AutogradCPU", "AutogradCUDA"):
        # a kernel that does its own autograd (typically by calling an autograd.Function)
        return [("Autograd", _CustomDerivative(lambda op_, key_, args: fn(*args), key))]
    fn = _python_kernel(op, fn)
    return [(k, fn) for k in _KEYS.get(key, (key,))]


def _get_slot(op, slot):
    if slot == "Autograd":
        return op.derivative
    if slot == "CompositeImplicitAutograd":
        return op._composite
    return op._table.get(slot)


def _set_slot(op, slot, kernel):
    if slot == "Autograd":
        op.derivative = kernel
    elif kernel is None and slot != "CompositeImplicitAutograd":
        op._table.pop(slot, None)
    else:
        _dispatcher.register_kernel(op, slot, kernel)


# (op, slot) -> [(owner, kernel), ...]: the slot's first kernel (owner None), then each live
# Library's in registration order; the last one is in the slot
_stacks = {}


def _push_kernel(op, slot, kernel, owner):
    first = _get_slot(op, slot)
    _set_slot(op, slot, kernel)   # (refuses a key ember's table has no place for)
    _stacks.setdefault((op, slot), [(None, first)]).append((owner, kernel))
    owner.append((op, slot))


def _library_autograd_key(op):
    """The dispatch key of the Autograd kernel a live Library registered for `op`, or None."""
    for owner, kernel in reversed(_stacks.get((op, "Autograd"), ())):
        if owner is not None:
            return kernel.key
    return None


def _pop_kernel(op, slot, owner):
    stack = _stacks.get((op, slot))
    if stack is None:
        return
    stack[:] = [entry for entry in stack if entry[0] is not owner]
    _set_slot(op, slot, stack[-1][1])
    if len(stack) == 1:
        del _stacks[(op, slot)]


def _python_kernel(op, fn):
    """`fn` as a kernel of `op`: the dispatcher passes every argument positionally, and a
    Python kernel takes them as PyTorch calls it (keyword-only ones by name, defaults left
    out: _library.utils.python_kernel_call)."""
    from ._library.utils import python_kernel_call
    if not any(a.has_default or a.kwarg_only for a in op.schema.arguments):
        return fn
    split = python_kernel_call(op.schema)

    def kernel(*args):
        positional, kwargs = split(args)
        return fn(*positional, **kwargs)
    return kernel


def _forget(qualname):
    op = _dispatcher._registry.pop(qualname, None)
    if op is not None:
        ns = op.schema.namespace
        packet = _dispatcher._packets.get((ns, op.schema.name))
        if packet is not None:
            packet._overloads.pop(op.schema.overload or "default", None)
            if not packet._overloads:
                del _dispatcher._packets[(ns, op.schema.name)]


def _lookup(qualname):
    if isinstance(qualname, _dispatcher.OpOverload):
        return qualname
    if isinstance(qualname, _dispatcher.OpOverloadPacket):
        return qualname.default
    ns, _, name = qualname.partition("::")
    if not name:
        raise ValueError(f"expected a qualified name like 'mylib::my_op', got {qualname!r}")
    return _dispatcher.lookup(name, ns)


def define(qualname, schema, *, lib=None, tags=()):
    """define("myns::my_add", "(Tensor x, Tensor y) -> Tensor"); the older form
    `define(lib, "my_add(Tensor x) -> Tensor")` is a decorator registering the kernel too."""
    if isinstance(qualname, Library):
        lib, text = qualname, schema

        def register(fn):
            name = lib.define(text, tags=tags)
            lib.impl(name, fn, "CompositeImplicitAutograd")
            return fn
        return register
    ns, sep, name = qualname.partition("::")
    if not sep:
        raise ValueError(f"define(qualname, schema): expected qualname to be of the form "
                         f"namespace::name, got {qualname}")
    if not schema.startswith("("):
        raise ValueError(f"define(qualname, schema, ...): expected schema to look like e.g. "
                         f"\"(Tensor x) -> Tensor\" but got \"{schema}\"")
    if lib is None:
        lib = Library(ns, "FRAGMENT")
        _keep_alive.append(lib)   # an op defined without a Library of the caller's lives on
    return lib.define(name + schema, tags=tags)


_keep_alive = []


def impl(qualname, types, func=None, *, lib=None):
    """Register a kernel for device type(s) ("cpu", "meta", ...); usable as a decorator.
    The older form `impl(lib, name, dispatch_key)` registers through `lib.impl`."""
    if isinstance(qualname, Library):
        lib, name, key = qualname, types, func or ""

        def register_in(fn):
            lib.impl(name, fn, key)
            return fn
        return register_in
    keys = (types,) if isinstance(types, str) else tuple(types)
    for k in keys:
        if k.lower() not in _DEVICE_TYPES and k not in _KEYS and k not in _ABSENT_BACKENDS \
                and k not in _dispatcher.BACKEND_KEYS + _dispatcher.TRANSFORM_KEYS \
                and not k.startswith(("Autograd", "Composite")):
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                               f"start of device string: {k}")

    def register(fn):
        op = _lookup(qualname)
        for k in keys:
            _register(op, k, fn, lib)
        return fn
    return register(func) if func is not None else register


# the device types PyTorch's device strings start with
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                 "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """The op's shape function: its kernel for the Meta key (tensors without data).

    A second registration replaces the first (`allow_override=False` refuses, naming where
    the first was made); one made through a `_scoped_library` is undone when it closes."""
    op = _opdef_of(op)
    if isinstance(op, CustomOpDef):
        return op.register_fake(func) if func is not None else op.register_fake

    def register(func):
        target = _lookup(op)
        name = target.schema.qualname
        if target._composite is not None:
            raise RuntimeError(
                f"register_fake(...): the operator {name} already has an implementation for "
                f"this device type via a pre-existing registration to "
                f"DispatchKey::CompositeImplicitAutograd.CompositeImplicitAutograd operators do "
                f"not need an fake impl; instead, the operator will decompose into its "
                f"constituents and those can have fake impls defined on them.")
        existing = target._table.get("Meta")
        if existing is not None and not allow_override:
            where = getattr(existing, "_fake_location", None)
            if where is not None:
                raise RuntimeError(f"register_fake(...): the operator {name} already has a "
                                   f"fake impl registered at {where}.")
            raise RuntimeError(
                f"register_fake(...): the operator {name} already has an DispatchKey::Meta "
                f"implementation via a pre-existing torch.library or TORCH_LIBRARY "
                f"registration. Please either remove that registration or don't call "
                f"register_fake.")

        def fake(*args, **kwargs):
            return func(*args, **kwargs)
        fake._fake_location = _caller_location()
        _register(target, "Meta", fake, lib)
        return func
    return register(func) if func is not None else register


def _caller_location():
    """'file:line' of the innermost frame outside ember (where a registration was made)."""
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame = frame.f_back
    return "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """A kernel for a custom op (or any op) for the given device types; a decorator too."""
    op = _opdef_of(op)
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func) if func is not None else \
            op.register_kernel(device_types)
    return impl(op, "CompositeExplicitAutograd" if device_types is None else device_types, func,
                lib=lib)


def _opdef_of(op):
    """The CustomOpDef behind `op` (a qualified name or an OpOverload) if custom_op made it:
    registrations through torch.library's functions then go through its methods."""
    from ._library.custom_ops import OPDEFS
    if isinstance(op, _dispatcher.OpOverloadPacket):
        op = op.default
    if isinstance(op, _dispatcher.OpOverload):
        name = op.schema.qualname
    elif isinstance(op, str):
        name = op.removesuffix(".default")
    else:
        return op
    return OPDEFS.get(name, op)


def register_vmap(op, func=None, /, *, lib=None):
    """The batching rule of a custom op: func(info, in_dims, *args) -> (outputs, out_dims)."""
    op = _opdef_of(op)
    if isinstance(op, CustomOpDef):
        return op.register_vmap(func) if func is not None else op.register_vmap
    target = _lookup(op)
    _refuse_kwarg_only_tensors(target.schema, "register_vmap")

    def register(func):
        _register(target, "FuncTorchBatched", batching_rule(func), lib)
        return func
    return register(func) if func is not None else register


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """func(mode_or_cls, func, types, args, kwargs) handles `op` where `torch_dispatch_class`
    (a TorchDispatchMode type or a Tensor subclass) would; a decorator too."""
    op = _opdef_of(op)
    if isinstance(op, CustomOpDef):
        return op.register_torch_dispatch(torch_dispatch_class, func) if func is not None \
            else op.register_torch_dispatch(torch_dispatch_class)
    from ._dispatch.python_dispatch import register_torch_dispatch_rule
    target = _lookup(op)

    def register(func):
        register_torch_dispatch_rule(target, torch_dispatch_class, func)
        return func
    return register(func) if func is not None else register


def register_autograd(qualname, backward, *, setup_context=None, lib=None):
    """Make a custom op differentiable: backward(ctx, *grads) -> one grad per input.

    As in PyTorch, this builds an autograd.Function around the op: its forward is the op's
    backend kernel (run below the Autograd key, so a kernel written with ember ops records
    nothing), `setup_context(ctx=, inputs=, output=)` saves what backward needs, and the node it
    creates is named GeneratedBackwardFor_<ns>_<name>_<overload>Backward.

    The Function sees tensors one by one, while the op's schema may take or return `Tensor[]`
    and take keyword-only arguments. So a call is flattened for the Function (each list member
    is an input or output of its own) and regrouped for the user's functions: setup_context
    and backward see the op's positional arguments (a list stays a list, and needs_input_grad
    has the same shape), keyword-only ones as `keyword_only_inputs`, and one gradient (a list
    for a list output) per output; backward returns one gradient (a list for a list input)
    per positional argument.
    """
    qualname = _opdef_of(qualname)
    if isinstance(qualname, CustomOpDef):
        return qualname.register_autograd(backward, setup_context=setup_context)
    from ._C._tags import Tag
    from .autograd.function import Function
    op = _lookup(qualname)
    schema = op.schema
    if Tag.out in op.tags:
        raise RuntimeError(f"Cannot register autograd formula for operator tagged with "
                           f"torch.Tag.out: {op}. Out variants do not support autograd.")
    _refuse_kwarg_only_tensors(schema, "register_autograd")
    name = f"GeneratedBackwardFor_{schema.namespace}_{schema.name}_{schema.overload or 'default'}"
    is_list = tuple(a.is_tensor_list for a in schema.arguments)
    n_positional = sum(not a.kwarg_only for a in schema.arguments)
    kw_names = tuple(a.name for a in schema.arguments if a.kwarg_only)

    def forward(*flat):
        call = flat[-1]
        # grad mode is off, so this reaches the backend key; through the dispatch modes, which
        # see the op itself as PyTorch's do (selective checkpointing keeps its result)
        out = op.call_positional(*call.regroup(flat[:-1]))
        single = not isinstance(out, (tuple, list)) or schema.returns == ["Tensor[]"]
        outs = (out,) if single else tuple(out)
        call.out_lens = tuple(len(o) if isinstance(o, (list, tuple)) else None for o in outs)
        call.single = single
        if call.out_lens == (None,):
            return out
        return tuple(t for o in outs for t in (o if isinstance(o, (list, tuple)) else (o,)))

    def user_setup(ctx, inputs, output):
        call = inputs[-1]
        ctx._ember_call = call
        if setup_context is None:
            return
        args = call.regroup(inputs[:-1])
        kwargs = dict(ctx=ctx, inputs=tuple(args[:n_positional]), output=call.structure(output))
        if kw_names:
            kwargs["keyword_only_inputs"] = dict(zip(kw_names, args[n_positional:]))
        setup_context(**kwargs)

    def user_backward(ctx, *grads):
        call = ctx._ember_call
        flat_needs = ctx.needs_input_grad
        ctx.needs_input_grad = tuple(call.regroup(flat_needs[:-1])[:min(n_positional,
                                                                        call.n_passed)])
        try:
            result = backward(ctx, *_regroup(grads, call.out_lens))
        finally:
            ctx.needs_input_grad = flat_needs
        result = result if isinstance(result, tuple) else (result,)
        flat = []
        for n, g in zip(call.lens, result):
            flat.extend((g,) if n is None else (g if g is not None else (None,) * n))
        return (*flat, *(None,) * (len(flat_needs) - len(flat)))

    fn = type(name, (Function,), {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(user_setup),
        "backward": staticmethod(user_backward)})

    def kernel(op_, key, args):
        call = _Call(tuple(len(a) if lst and isinstance(a, (list, tuple)) else None
                           for a, lst in zip(args, is_list)))
        call.n_passed = _n_passed(schema, args)
        flat = [t for a, n in zip(args, call.lens) for t in ((a,) if n is None else a)]
        return call.structure(fn.apply(*flat, call))
    op.derivative = _CustomDerivative(kernel)


def _refuse_kwarg_only_tensors(schema, what):
    if any(a.kwarg_only and a.type.startswith("Tensor") for a in schema.arguments):
        raise NotImplementedError(f"{what} with kwarg-only Tensor args. In the original "
                                  f"definition of the op, please make your tensors not "
                                  f"kwarg-only. Got: {schema}")


def _n_passed(schema, args):
    """How many arguments a call passed: PyTorch's boxed call into Python drops the trailing
    ones equal to their defaults, so a registered backward's ctx.needs_input_grad has an entry
    only for the others."""
    n = len(args)
    while n and schema.arguments[n - 1].has_default and \
            not isinstance(args[n - 1], Tensor) and args[n - 1] == schema.arguments[n - 1].default:
        n -= 1
    return n


def _regroup(flat, lens):
    """`flat` in groups: one item per None in `lens`, a list of n items per n."""
    it = iter(flat)
    return [next(it) if n is None else [next(it) for _ in range(n)] for n in lens]


class _Call:
    """One call of a register_autograd op: where its tensor lists were flattened."""

    def __init__(self, lens):
        self.lens = lens          # per argument: None, or the length of its tensor list
        self.out_lens = (None,)   # the same for the outputs (set by forward)
        self.n_passed = len(lens)  # the arguments not left to their defaults (_n_passed)
        self.single = True

    def regroup(self, flat):
        return _regroup(flat, self.lens)

    def structure(self, output):
        """The Function's flat outputs as the op returns them."""
        if self.out_lens == (None,):
            return output
        outs = _regroup(output if isinstance(output, tuple) else (output,), self.out_lens)
        return outs[0] if self.single else tuple(outs)


class _CustomDerivative:
    """Marks an op whose Autograd kernel is user-registered (see variable_type), and the
    dispatch key a Library registered it for ("Autograd", "AutogradCPU", ...; None when not)."""

    def __init__(self, kernel, key=None):
        self.kernel = kernel
        self.key = key


def get_ctx():
    """The context a fake kernel asks for an output size that depends on the input's data
    (`ctx.new_dynamic_size()`). It exists while a fake tensor is being traced; ember has no
    fake tensors, so a fake kernel that asks for it runs on the meta device, which has no data
    to size the output from -- the error PyTorch raises there."""
    raise RuntimeError(
        "Attempted to call get_ctx() for the meta implementation. You have presumably called "
        "get_ctx() because the operator has a data-dependent output shape; if so, there is no "
        "such meta implementation and this error is the correct behavior.")


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    """PyTorch's custom_op for functions that launch Triton kernels (which its compiler can
    see into). ember runs no Triton kernels, so a triton_op is a custom_op."""
    return custom_op(name, fn, mutates_args=mutates_args, schema=schema)
