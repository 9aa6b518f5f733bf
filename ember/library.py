"""ember.library: define new operators from Python (torch.library).

    lib = Library("myns", "DEF")
    lib.define("my_add(Tensor x, Tensor y) -> Tensor")

    @impl("myns::my_add", "CPU")
    def my_add_cpu(x, y): ...

    register_autograd("myns::my_add", backward, setup_context=setup_context)

The op then lives in the same dispatch table as the built-ins: `ember.ops.myns.my_add(x, y)`
dispatches by device, records autograd nodes, and shows up in `ember.explain()`.
"""
from . import _dispatcher
from .autograd.grad_mode import _grad_state
from .autograd.graph import Node, SavedTensor, gradient_edge


class Library:
    """A namespace of ops. kind: "DEF" (a new namespace), "FRAGMENT" or "IMPL" (add kernels)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("DEF", "FRAGMENT", "IMPL"):
            raise ValueError(f"Unsupported kind: {kind}")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined = []

    def define(self, schema, alias_analysis="", *, tags=()):
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on a Library of kind IMPL")
        op = _dispatcher.define(schema, self.ns)
        self._defined.append(op.name)
        return op.__name__

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False):
        name = op_name if isinstance(op_name, str) else op_name.__name__
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        _dispatcher.register_kernel(_dispatcher.lookup(name, self.ns), _key(key), fn)

    def _destroy(self):
        for name in self._defined:
            _forget(name)
        self._defined = []


def _key(key):
    return {"cpu": "CPU", "meta": "Meta", "cuda": "CUDA", "CompositeExplicitAutograd": "CPU",
            "default": "CompositeImplicitAutograd"}.get(key, key)


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
    ns, _, name = qualname.partition("::")
    if not name:
        raise ValueError(f"expected a qualified name like 'mylib::my_op', got {qualname!r}")
    return _dispatcher.lookup(name, ns)


def define(qualname, schema, *, lib=None, tags=()):
    """define("myns::my_add", "(Tensor x, Tensor y) -> Tensor")"""
    ns, _, name = qualname.partition("::")
    lib = lib or Library(ns, "FRAGMENT")
    return lib.define(name + schema)


def impl(qualname, types, func=None, *, lib=None):
    """Register a kernel for device type(s) ("cpu", "meta", ...); usable as a decorator."""
    keys = (types,) if isinstance(types, str) else tuple(types)

    def register(fn):
        op = _lookup(qualname)
        for k in keys:
            _dispatcher.register_kernel(op, _key(k), fn)
        return fn
    return register(func) if func is not None else register


def register_fake(qualname, func=None, *, lib=None):
    """The op's shape function: its kernel for the Meta key (tensors without data)."""
    return impl(qualname, "Meta", func)


class _Ctx:
    """The `ctx` a registered backward sees: what setup_context saved on it."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        return tuple(s.unpack(self._node) if isinstance(s, SavedTensor) else s
                     for s in self._saved)


class _CustomOpNode(Node):
    __slots__ = ("_ctx", "_backward", "_tensor_pos", "_num_outputs", "_opname")

    def name(self):
        return self._opname

    def apply(self, grads):
        r = self._backward(self._ctx, *grads)
        if not isinstance(r, tuple):
            r = (r,)
        return [r[i] for i in self._tensor_pos]

    def _release_saved(self):
        self._ctx._saved = ()


def register_autograd(qualname, backward, *, setup_context=None, lib=None):
    """Make a custom op differentiable: backward(ctx, *grads) -> one grad per input."""
    op = _lookup(qualname)
    node_name = "".join(p.capitalize() for p in op.schema.name.split("_")) + "Backward0"

    def autograd_kernel(op_, key, args):
        out = op_.redispatch(key, args)
        ctx = _Ctx()
        ctx._to_save = ()
        if setup_context is not None:
            setup_context(ctx, args, out)
        from ._tensor import Tensor
        pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        node = _CustomOpNode()
        node._ctx = ctx
        node._backward = backward
        node._tensor_pos = pos
        node._opname = node_name
        outs = out if isinstance(out, (tuple, list)) else (out,)
        node._num_outputs = len(outs)
        node.next_functions = tuple(gradient_edge(args[i]) for i in pos)
        ctx._node = node
        ctx._saved = [SavedTensor(t) if isinstance(t, Tensor) else t for t in ctx._to_save]
        for k, t in enumerate(outs):
            if isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex):
                t._rg, t.grad_fn, t._output_nr = True, node, k
        return out

    op.derivative = _CustomDerivative(autograd_kernel)


class _CustomDerivative:
    """Marks an op whose Autograd kernel is user-registered (see variable_type)."""

    def __init__(self, kernel):
        self.kernel = kernel
