"""The Autograd dispatch key's kernel (PyTorch's VariableType) and the derivative registry.

For an op whose inputs require grad, `autograd_kernel`:
  1. refuses an in-place op on a leaf that requires grad;
  2. saves what the op's derivative formulas read (inputs, their shapes, the result) as
     SavedTensors that remember their version;
  3. redispatches to the backend key (CPU, Meta, ...) to compute the result;
  4. creates the op's Node (`MulBackward0`, ...) with edges to the inputs' producers and makes
     it the result's `grad_fn`; for an in-place op the modified tensor's history is rebased onto
     the new node.

Formulas are registered per op in `ember/autograd/derivatives.py`, one per input (or one for a
group of inputs), like derivatives.yaml. What a formula's parameters are named decides what is
saved: the names of the op's arguments, `result`/`result1`, `<arg>_shape`/`<arg>_dtype`,
`grad`/`grads`.
"""
import inspect

from .. import _dispatcher
from .grad_mode import _grad_state
from .graph import Node, SavedTensor, gradient_edge
from . import anomaly_mode

_NONDIFF = object()


class Derivative:
    """The compiled derivative of one op: what to save and which formula serves which input."""

    def __init__(self, op, formulas, name, output_differentiability):
        self.op = op
        schema = op.schema
        argnames = [a.name for a in schema.arguments]
        self.diff_args = [(i, a.name, a.is_tensor_list) for i, a in enumerate(schema.arguments)
                          if a.is_tensor or a.is_tensor_list]
        self.has_lists = any(is_list for _, _, is_list in self.diff_args)
        self.num_outputs = max(1, len(schema.returns))
        self.output_differentiability = output_differentiability
        saved = []
        self.formulas = []
        diff_names = {n for _, n, _ in self.diff_args}
        for key, fn in formulas.items():
            inputs = tuple(k.strip() for k in key.split(","))
            for n in inputs:
                if n not in diff_names:
                    raise ValueError(f"derivative of {op.name}: '{n}' is not a tensor argument")
            params = tuple(inspect.signature(fn).parameters)
            for p in params:
                if p in ("grad", "grads", "needs") or p in saved:
                    continue
                if p in argnames or p == "result" or (p.startswith("result") and
                                                      p[6:].isdigit()):
                    saved.append(p)
                elif (p.endswith("_shape") or p.endswith("_dtype")) and p[:-6] in argnames:
                    continue
                else:
                    raise ValueError(f"derivative of {op.name}: unknown name '{p}' in formula "
                                     f"for {key} (schema: {schema.text})")
            self.formulas.append((inputs, fn, params, len(inputs) > 1))
        self.saved_inputs = [(n, argnames.index(n)) for n in saved if n in argnames]
        self.saved_outputs = [(n, 0 if n == "result" else int(n[6:])) for n in saved
                              if n not in argnames]
        self.clone_saved_self = False
        if op._mutates:
            self.clone_saved_self = any(n == "self" for n, _ in self.saved_inputs)
        self.node_cls = type(name, (OpNode,), {"__slots__": ()})


class OpNode(Node):
    """The backward node of one op call."""
    __slots__ = ("_deriv", "_saved", "_in_meta", "_spans", "_out_meta", "_num_outputs")

    def apply(self, grads):
        d = self._deriv
        saved = self._saved
        if saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        grads = _materialize(self, grads)
        env = {"grad": grads[0], "grads": grads}
        for name, value in saved.items():
            env[name] = _unpack(value, self)
        spans = self._spans
        nexts = self.next_functions
        out = [None] * len(nexts)
        for inputs, fn, params, combined in d.formulas:
            slots = [spans[n] for n in inputs]
            needs = tuple(any(nexts[k][0] is not None for k in range(a, b)) for a, b in slots)
            if not any(needs):
                continue
            kwargs = {}
            for p in params:
                if p == "needs":
                    kwargs[p] = needs
                elif p in env:
                    kwargs[p] = env[p]
                else:  # <arg>_shape or <arg>_dtype
                    a, _ = spans[p[:-6]]
                    kwargs[p] = self._in_meta[a][0 if p.endswith("_shape") else 1]
            r = fn(**kwargs)
            if not combined:
                r = (r,)
            for (a, b), g in zip(slots, r):
                if b - a == 1 and not (isinstance(g, (list, tuple))):
                    out[a] = g
                elif g is not None:
                    out[a:b] = list(g)
        for k, g in enumerate(out):
            if g is None or nexts[k][0] is None:
                out[k] = None
                continue
            shape, dtype = self._in_meta[k]
            if g._size != shape:
                g = g.sum_to_size(shape)
            if g.dtype is not dtype:
                g = g.to(dtype)
            out[k] = g
        return out

    def _release_saved(self):
        self._saved = None

    def _saved_tensors_names(self):
        return list(self._saved or ())

    def __getattr__(self, name):
        # PyTorch exposes saved values as `_saved_<name>` attributes
        if name.startswith("_saved_"):
            saved = object.__getattribute__(self, "_saved")
            if saved is None:
                raise RuntimeError("Trying to access saved tensors after they have already "
                                   "been freed.")
            key = name[7:]
            if key in saved:
                return _unpack(saved[key], self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


class NotImplementedNode(Node):
    __slots__ = ("_opname", "_num_outputs")

    def apply(self, grads):
        raise NotImplementedError(f"the derivative for '{self._opname}' is not implemented.")


def _unpack(value, node):
    if isinstance(value, SavedTensor):
        return value.unpack(node)
    if isinstance(value, list):
        return [v.unpack(node) if isinstance(v, SavedTensor) else v for v in value]
    return value


def _materialize(node, grads):
    """Multi-output ops get zeros for outputs that received no gradient."""
    if node._out_meta is None or all(g is not None for g in grads):
        return grads
    from .._python_bindings import zeros
    return [g if g is not None else zeros(shape, dtype=dtype, device=dev)
            for g, (shape, dtype, dev) in zip(grads, node._out_meta)]


def _save(value, is_output=False, output_nr=0):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return SavedTensor(value, is_output, output_nr)
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor):
        return [SavedTensor(v) for v in value]
    return value


def _requires_grad_dtype(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def autograd_kernel(op, key, args):
    d = op.derivative
    if op._mutates:
        self = args[0]
        if self.grad_fn is None and self._rg:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    if d is _NONDIFF:
        return op.redispatch(key, args)
    if d is not None and type(d) is not Derivative:  # ember.library.register_autograd
        return d.kernel(op, key, args)
    if d is None:
        out = op.redispatch(key, args)
        node = NotImplementedNode()
        node._opname = op.name
        node._num_outputs = 1
        node.next_functions = tuple(gradient_edge(a) for a in _tensor_args(op, args))
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if _requires_grad_dtype(t):
                t._rg, t.grad_fn = True, node
        return out

    saved = {}
    for name, i in d.saved_inputs:
        v = args[i]
        if d.clone_saved_self and name == "self":
            with _no_grad():
                v = v.clone()
        saved[name] = _save(v)

    # edges and input metadata, before an in-place op rebases `self`
    edges = []
    metas = []
    spans = {}
    from .._tensor import Tensor
    for i, name, is_list in d.diff_args:
        a = args[i]
        start = len(edges)
        for t in (a if is_list else (a,)):
            if isinstance(t, Tensor):
                edges.append(gradient_edge(t))
                metas.append((t._size, t.dtype))
            else:
                edges.append((None, 0))
                metas.append(((), None))
        spans[name] = (start, len(edges))

    out = op.redispatch(key, args)

    node = d.node_cls()
    node.next_functions = tuple(edges)
    node._deriv = d
    node._in_meta = metas
    node._spans = spans
    node._num_outputs = d.num_outputs
    outs = out if isinstance(out, (tuple, list)) else (out,)
    node._out_meta = None if len(outs) == 1 else [(t._size, t.dtype, t._device) for t in outs]
    for name, k in d.saved_outputs:
        saved[name] = SavedTensor(outs[k], is_output=True, output_nr=k)
    node._saved = saved
    diff = d.output_differentiability
    for k, t in enumerate(outs):
        if (diff is None or diff[k]) and _requires_grad_dtype(t):
            t._rg = True
            t.grad_fn = node
            t._output_nr = k
    if op._is_view:
        src = args[0]
        outs[0]._base = src._base if src._base is not None else src
    if anomaly_mode._enabled:
        anomaly_mode.record_forward_trace(node)
    return out


def _tensor_args(op, args):
    from .._tensor import Tensor
    ts = [args[i] for i in op._tensor_pos]
    for i in op._list_pos:
        ts.extend(args[i])
    return [t for t in ts if isinstance(t, Tensor)]


class _no_grad:
    def __enter__(self):
        self.prev = _grad_state.enabled
        _grad_state.enabled = False

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev


def derivative(name, formulas=None, *, node_name=None, output_differentiability=None,
               namespace="aten"):
    """Register the backward formulas of op `name`: {input name (or "a, b"): formula}."""
    op = _dispatcher.lookup(name, namespace) if isinstance(name, str) else name
    if formulas is None:
        op.derivative = _NONDIFF
        return
    node_name = node_name or _camel(op.schema.name) + "Backward0"
    op.derivative = Derivative(op, formulas, node_name, output_differentiability)


def not_differentiable(*names):
    for n in names:
        derivative(n, None)


def _camel(name):
    name = name.rstrip("_")
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


_dispatcher._autograd_kernel = autograd_kernel
