"""The Autograd dispatch key's kernel (PyTorch's VariableType) and the derivative registry.

For an op whose inputs require grad, `autograd_kernel`:
  1. refuses an in-place op on a leaf that requires grad (or on a view of one);
  2. records the edges to the inputs' producers, and saves what the derivative formulas of
     the inputs that need a gradient read (inputs, the result) as SavedTensors that remember
     their version;
  3. redispatches to the backend key (CPU, Meta, ...) to compute the result;
  4. creates the op's Node (`MulBackward0`, ...) and makes it the result's `grad_fn`; an
     in-place op rebases the modified tensor's history onto the new node, and an in-place op
     on a view rebases its base's history onto a CopySlices node (see ember/autograd/views.py).

Formulas are registered per op in `ember/autograd/derivatives.py`, one per input (or one for a
group of inputs), like derivatives.yaml. What a formula's parameters are named decides what is
saved: the names of the op's arguments, `result`/`result1`, `<arg>_shape`/`<arg>_dtype`,
`grad`/`grads`.
"""
import inspect
from weakref import ref as _weakref

from .._dispatch import dispatcher as _dispatcher
from .graph import _Node as Node, SavedTensor, freed_error, short_name, summed_to
from .views import CUSTOM_FUNCTION_VIEW, gradient_edge, nograd_view_error, rebase_view_history, \
    rebased_recipe
from . import anomaly_mode
from . import graph as _graph
from . import saved_tensor_hooks as _saved_hooks
from .._core.tensor import Tensor
from .graph import zeros

_NONDIFF = object()
_NOT_IMPLEMENTED = object()  # no derivative, in PyTorch too: backward through it raises
_FREED = object()  # what a saved tensor becomes after backward without retain_graph
_PLAIN = frozenset((int, float, bool, str, type(None)))  # saved values read as they are


class _WrappedNumber:
    """A Python number passed for a `Tensor` argument and saved for backward, where the saved
    value must be told apart from a plain number (a list of saved values). PyTorch wraps such a
    number in a tensor and saves that, so backward frees it like any saved tensor and a second
    backward through the node raises; an OpNode keeps the bare number under the argument's
    name and frees it by name (`Derivative.tensor_saved`)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# the names an OpNode's formulas read besides the saved values
_ENV_NAMES = ("grad", "grads", "raw_grads", "needs")


class Derivative:
    """The compiled derivative of one op: what to save and which formula serves which input."""
    complex_refused = None  # the op's name if it records no complex output (complex_allowlist)

    def __init__(self, op, formulas, name, output_differentiability):
        self.op = op
        self.formula_specs, self.name_spec = formulas, name  # what a derived in-place op reuses
        schema = op.schema
        argnames = [a.name for a in schema.arguments]
        self.diff_args = [(i, a.name, a.is_tensor_list) for i, a in enumerate(schema.arguments)
                          if a.is_tensor or a.is_tensor_list]
        self.diff_pos = tuple(i for i, _, _ in self.diff_args)
        self.list_args = {n for _, n, is_list in self.diff_args if is_list}
        self.has_lists = any(is_list for _, _, is_list in self.diff_args)
        self.spans = None if self.has_lists else {
            n: (k, k + 1) for k, (_, n, _) in enumerate(self.diff_args)}
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
                if p in _ENV_NAMES or p in saved:
                    continue
                if p in argnames or p == "result" or (p.startswith("result") and
                                                      p[6:].isdigit()):
                    saved.append(p)
                elif (p.endswith("_shape") or p.endswith("_dtype")) and p[:-6] in argnames:
                    continue
                else:
                    raise ValueError(f"derivative of {op.name}: unknown name '{p}' in formula "
                                     f"for {key} (schema: {schema.text})")
            # simple: one input, every parameter a name the node's environment holds (an
            # input's shape or dtype too, without tensor lists), all positional -- the
            # formula is called as fn(*values), its result is that input's
            simple = len(inputs) == 1 and inputs[0] not in self.list_args and all(
                p in _ENV_NAMES or p in argnames or p.startswith("result") or
                (not self.has_lists and p[-6:] in ("_shape", "_dtype") and p[:-6] in argnames)
                for p in params) and all(
                q.kind is q.POSITIONAL_OR_KEYWORD
                for q in inspect.signature(fn).parameters.values())
            self.formulas.append((inputs, fn, params, len(inputs) > 1, simple))
        self.saved_inputs = [(n, argnames.index(n)) for n in saved if n in argnames]
        # without tensor lists, the `<arg>_shape` / `<arg>_dtype` the formulas read: (name,
        # edge position, field of the input's (shape, dtype))
        self.meta_params = () if self.has_lists else tuple(
            (p, self.spans[p[:-6]][0], 0 if p.endswith("_shape") else 1)
            for p in dict.fromkeys(p for _, _, params, _, _ in self.formulas for p in params)
            if p[-6:] in ("_shape", "_dtype") and p[:-6] in self.spans and p not in argnames)
        self.tensor_saved = {n for _, n, is_list in self.diff_args if not is_list and n in saved}
        self.saved_outputs = [(n, 0 if n == "result" else int(n[6:])) for n in saved
                              if n not in argnames]
        # what backward frees by name: the Tensor arguments (also when a number was passed)
        # and the outputs
        self.freed = self.tensor_saved | {n for n, _ in self.saved_outputs}
        # Save only what the formulas of the inputs that need a gradient read (PyTorch's
        # `should_compute_output` around each SavedVariable): `x * w` with a constant `w`
        # keeps no reference to `x`, so modifying `x` in place afterwards is no error.
        # Without tensor lists, each formula's inputs sit at fixed edge positions.
        self.formula_saves = None
        self.saves_by_missing = {}
        if not self.has_lists and len(self.formulas) > 1:
            position = {n: k for k, (_, n, _) in enumerate(self.diff_args)}
            self.formula_saves = [(tuple(position[n] for n in inputs),
                                   {p for p in params if p in saved})
                                  for inputs, _, params, _, _ in self.formulas]
        # the commonest derivative: no tensor list, every formula simple. Backward then runs
        # each formula whose input has an edge as fn(*values) and nothing else
        self.plan = None
        if not self.has_lists and all(simple for *_, simple in self.formulas):
            self.plan = tuple((self.spans[inputs[0]][0], fn, params)
                              for inputs, fn, params, _, _ in self.formulas)
        self.clone_saved_self = False
        if op._mutates:
            self.clone_saved_self = any(n == "self" for n, _ in self.saved_inputs)
        self.node_cls = None
        self.pick_node_cls = None
        if callable(name):
            # one ember op standing for several torch overloads (sum() and sum(dim) are
            # SumBackward0 and SumBackward1): the name is a function of the op's arguments
            classes = {}
            positions = [argnames.index(p) for p in inspect.signature(name).parameters]

            def pick(args):
                n = name(*[args[i] for i in positions])
                cls = classes.get(n)
                if cls is None:
                    cls = classes[n] = _node_class(n, saved, self)
                return cls
            self.pick_node_cls = pick
        else:
            self.node_cls = _node_class(name, saved, self)

    def saves_for(self, missing):
        """(saved inputs, saved outputs) that the formulas of the inputs with an edge read;
        worked out once per pattern of inputs without one (bit k: input k has no edge)."""
        saves = self.saves_by_missing.get(missing)
        if saves is None:
            saves = self.saves_by_missing[missing] = self._saves_for_missing(missing)
        return saves

    def _saves_for_missing(self, missing):
        if self.formula_saves is None:
            return self.saved_inputs, self.saved_outputs
        names = set()
        for positions, saves in self.formula_saves:
            if any(not missing >> k & 1 for k in positions):
                names |= saves
        return ([s for s in self.saved_inputs if s[0] in names],
                [s for s in self.saved_outputs if s[0] in names])


class OpNode(Node):
    """The backward node of one op call. Its class (`MulBackward0`) holds the op's Derivative
    and, without tensor lists, each input's range of edges; a multi-output node sets
    `_num_outputs` and `_out_meta` (zeros for outputs that got no gradient) on itself."""
    __slots__ = ("_saved", "_in_meta")
    _deriv = None
    _spans = None
    _out_meta = None

    def apply(self, grads):
        d = self._deriv
        raw = grads  # None where an output received no gradient (PyTorch's undefined grad)
        if self._out_meta is not None:
            grads = _materialize(self, grads)
        env = {"grad": grads[0], "grads": grads, "raw_grads": raw, "needs": (True,)}
        for name, value in self._saved.items():
            kind = type(value)
            if kind is Tensor:  # an input saved bare: it was at version 0
                storage = value._storage
                if (storage is not None and storage._version) or \
                        (value.grad_fn is None and "_detached_inplace" in value.__dict__):
                    _bare_saved(value).unpack(self)  # raises PyTorch's modified/detached error
            elif kind is SavedTensor:
                value = value.unpack(self)
            elif kind not in _PLAIN:
                value = _unpack(value, self)
            env[name] = value
        metas = self._in_meta
        for name, k, field in d.meta_params:
            env[name] = metas[k][field]
        nexts = self.next_functions
        out = [None] * len(nexts)
        if d.plan is None:
            self._run_formulas(d, env, nexts, out)
        else:
            for k, fn, params in d.plan:
                if nexts[k][0] is not None:
                    out[k] = fn(*map(env.__getitem__, params))
        for k, g in enumerate(out):
            if g is None:
                continue
            if nexts[k][0] is None:
                out[k] = None
                continue
            shape, dtype = metas[k]
            if g._size != shape:
                g = summed_to(self, k, g, shape)
            if g.dtype is not dtype:
                if g.dtype.is_complex and not dtype.is_complex:
                    g = g.real      # a real input of a complex op: PyTorch's handle_r_to_c
                g = g.to(dtype)
            out[k] = g
        return out

    def _run_formulas(self, d, env, nexts, out):
        """Every formula of a derivative with tensor lists or formulas for several inputs."""
        spans = self._spans
        has_edge = [fn is not None for fn, _ in nexts]
        for inputs, fn, params, combined, simple in d.formulas:
            slots = [spans[n] for n in inputs]
            if combined:
                needs = tuple([True in has_edge[a:b] for a, b in slots])
                if True not in needs:
                    continue
                env["needs"] = needs
            elif True in has_edge[slots[0][0]:slots[0][1]]:
                env["needs"] = (True,)
            else:
                continue
            if simple:
                out[slots[0][0]] = fn(*map(env.__getitem__, params))
                continue
            kwargs = {}
            for p in params:
                if p in env:
                    kwargs[p] = env[p]
                else:  # <arg>_shape or <arg>_dtype (one per element of a tensor list)
                    a, b = spans[p[:-6]]
                    field = 0 if p.endswith("_shape") else 1
                    kwargs[p] = ([m[field] for m in self._in_meta[a:b]] if p[:-6] in d.list_args
                                 else self._in_meta[a][field])
            r = fn(**kwargs)
            if not combined:
                r = (r,)
            for (a, b), g in zip(slots, r):
                if b - a == 1 and not (isinstance(g, (list, tuple))):
                    out[a] = g
                elif g is not None:
                    out[a:b] = list(g)

    def _release_saved(self):
        # free the saved tensors; shapes and scalars stay, so a node that saved no tensor
        # can run again (as in PyTorch, only reading a freed tensor is an error)
        saved = self._saved
        freed = self._deriv.freed
        for name, value in saved.items():
            kind = type(value)
            if kind is SavedTensor:  # freed for its `_raw_saved_` handle too
                value._t = value._hooks = None
                saved[name] = _FREED
            elif value is None or value is _FREED or kind in _PLAIN and name not in freed:
                continue
            elif name in freed or isinstance(value, (Tensor, _WrappedNumber)) or (
                    kind is list and value and isinstance(value[0], SavedTensor)):
                saved[name] = _FREED

    def _saved_tensors_names(self):
        return list(self._saved or ())


def _node_class(name, saved_names, deriv):
    """The OpNode subclass of one op (`MulBackward0`). PyTorch exposes a node's saved values as
    attributes: `_saved_<name>` unpacks one, `_raw_saved_<name>` is its SavedTensor (for
    register_hooks). They are properties, not a __getattr__, which would slow down every
    attribute read of every node."""
    attrs = {"__slots__": (), "_deriv": deriv, "_spans": deriv.spans}
    for key in saved_names:
        attrs["_saved_" + key] = property(_saved_getter(key))
        attrs["_raw_saved_" + key] = property(_raw_saved_getter(key))
    return type(name, (OpNode,), attrs)


def _saved_getter(key):
    def get(node):
        saved = node._saved
        if key not in saved:  # saved only when an input that needs a gradient reads it:
            return None       # PyTorch's undefined SavedVariable
        return _unpack(saved[key], node)
    return get


def _raw_saved_getter(key):
    def get(node):
        saved = node._saved
        value = saved.get(key)
        if isinstance(value, Tensor):  # saved bare: the handle replaces it from now on
            value = saved[key] = _bare_saved(value)
        if value is _FREED:
            value = SavedTensor.__new__(SavedTensor)  # a handle that knows it was freed
            value._t = value._hooks = None
        if isinstance(value, SavedTensor) or type(value) is list:
            return value
        raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                             f"'_raw_saved_{key}'")
    return get


class NotImplementedNode(Node):
    __slots__ = ("_opname", "_num_outputs")

    def apply(self, grads):
        base = self._opname.partition(".")[0]
        if self._opname in _NO_FORMULA:  # PyTorch's autograd fallback for an op with no entry
            raise RuntimeError(f"derivative for {base} is not implemented")
        # derivatives.yaml's not_implemented("geqrf") names the op without its namespace
        raise NotImplementedError(f"the derivative for '{base.partition('::')[2]}' is not "
                                  "implemented.")


def _unpack(value, node):
    if value is _FREED:
        raise freed_error()
    if isinstance(value, Tensor):
        return _bare_saved(value).unpack(node)
    if isinstance(value, SavedTensor):
        return value.unpack(node)
    if type(value) is _WrappedNumber:
        return value.value
    if isinstance(value, list):
        return [v.unpack(node) if isinstance(v, SavedTensor) else v for v in value]
    return value


def _bare_saved(t):
    """The SavedTensor of an input saved bare (which means: at version 0)."""
    saved = SavedTensor.__new__(SavedTensor)
    saved._t, saved._version, saved._is_output, saved._output_nr = t, 0, False, 0
    saved._hooks = None
    return saved


def _materialize(node, grads):
    """Multi-output ops get zeros for differentiable outputs that received no gradient (a
    non-differentiable output's stays None: no formula reads it)."""
    if all(g is not None for g in grads):
        return grads
    return [zeros(*meta) if g is None and meta is not None else g
            for g, meta in zip(grads, node._out_meta)]


def _save(value, is_output=False, output_nr=0):
    if isinstance(value, Tensor):
        return SavedTensor(value, is_output, output_nr)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return [SavedTensor(v) if isinstance(v, Tensor) else v for v in value]
    return value


def _requires_grad_dtype(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _add_edges(tensors, edges, metas):
    """The gradient edge and (shape, dtype) of each input (none for a missing tensor)."""
    for t in tensors:
        if isinstance(t, Tensor):
            edges.append(gradient_edge(t))
            metas.append((t._size, t.dtype))
        else:
            edges.append(_NO_EDGE)
            metas.append(_NO_META)


def autograd_kernel(op, key, args):
    d = op.derivative
    view = None
    restrides = False
    if op._is_view and args[0]._inference:  # an inference tensor's view: untracked, no grad
        return op.redispatch(key, args)
    if op._mutates:
        view = _check_inplace(args[0])
        # an in-place view op (t_, squeeze_, ...) changes no values, so a view's base keeps its
        # history: the view itself just gets the new node on top of its own
        restrides = getattr(op, "_inplace_view", False)
        if restrides:
            view = None
    if type(d) is not Derivative:
        if d is _NONDIFF:
            return op.redispatch(key, args)
        if d is None or d is _NOT_IMPLEMENTED:
            return _not_implemented_kernel(op, key, args)
        return d.kernel(op, key, args)  # ember.library.register_autograd

    # edges to the inputs' producers (before an in-place op rebases `self`); an in-place op
    # on a view sends the gradient of the view's old value to the base's old history
    edges = []
    metas = []
    missing = 0  # bit k: input k has no edge (what is saved depends on it)
    spans = d.spans  # each input's range of edges: fixed, without tensor lists
    if spans is None:
        spans = {}
        for i, name, is_list in d.diff_args:
            start = len(edges)
            _add_edges(args[i] if is_list else (args[i],), edges, metas)
            spans[name] = (start, len(edges))
    else:
        for k, i in enumerate(d.diff_pos):
            t = args[i]
            if isinstance(t, Tensor):
                fn = t.grad_fn
                if fn is not None and t._base is None:  # gradient_edge's commonest case
                    edges.append((fn, t._output_nr))
                else:
                    edge = gradient_edge(t)
                    if edge[0] is None:
                        missing |= 1 << k
                    edges.append(edge)
                metas.append((t._size, t.dtype))
            else:
                missing |= 1 << k
                edges.append(_NO_EDGE)
                metas.append(_NO_META)
    if view is not None:
        edges[0] = gradient_edge(view._base)
        missing = missing & ~1 | (edges[0][0] is None)

    saves = d.saves_by_missing.get(missing)
    saved_inputs, saved_outputs = saves if saves is not None else d.saves_for(missing)
    saved = {}
    if saved_inputs:
        # an input never written in place is saved bare (no SavedTensor: its version is known
        # to be 0), unless saved-tensor hooks must see it
        bare = not _saved_hooks.default_hooks
        for name, i in saved_inputs:
            v = args[i]
            if d.clone_saved_self and name == "self":
                v = v.clone()  # the value before the op overwrites it (recorded: double backward)
            if isinstance(v, Tensor):
                storage = v._storage
                if bare and (storage is None or not storage._version) and not v._inference:
                    saved[name] = v
                else:
                    saved[name] = SavedTensor(v)
            elif name in d.tensor_saved or type(v) in _PLAIN:
                saved[name] = v  # a number for a Tensor argument: freed by name after backward
            else:
                saved[name] = _save(v)

    kernel = op._table.get(key)  # the backend's kernel, as op.redispatch runs it
    out = kernel(*args) if kernel is not None and not op._mutates else op.redispatch(key, args)

    node = _new_node(d.node_cls or d.pick_node_cls(args))  # no __init__: class defaults stand
    node._seq = _next_seq()
    node.next_functions = tuple(edges)
    node._in_meta = metas
    node._saved = saved
    if d.spans is None:
        node._spans = spans
    diff = d.output_differentiability
    if isinstance(out, Tensor) or not isinstance(out, (tuple, list)):
        outs = (out,)
    else:
        outs = out
        node._num_outputs = len(outs)
        if len(outs) > 1:
            node._out_meta = [(t._size, t.dtype, t._device) if diff is None or diff[k] else None
                              for k, t in enumerate(outs)]
    if anomaly_mode._enabled:
        anomaly_mode.record_forward_trace(node)
    if view is not None:
        rebase_view_history(view, node)
    else:
        for k, t in enumerate(outs):
            dtype = t.dtype
            if (diff is None or diff[k]) and (dtype.is_floating_point or dtype.is_complex):
                t._rg = True
                t.grad_fn = node
                t._output_nr = k
        if d.complex_refused is not None:
            _refuse_complex(d, outs)
    # saved once they have their grad_fn: a saved-tensor pack hook sees them as the user will
    for name, k in saved_outputs:
        saved[name] = SavedTensor(outs[k], is_output=True, output_nr=k)
        if view is not None:
            saved[name]._view_of = (_weakref(view._base), rebased_recipe(view))
    if view is not None:
        return out
    if outs and (op._is_view or (restrides and outs[0]._base is not None)):
        version = outs[0]._storage_()._version
        for t in outs:
            t._view_version = version
        if op._is_view and _is_multi_output_view(args[0]):
            # PyTorch's creation meta: a view of such a view refuses in-place writes too
            for t in outs:
                t._multi_output_view = True
    return out


def _is_multi_output_view(t):
    if not isinstance(t, Tensor) or t._base is None:
        return False
    fn = t.grad_fn
    return t._multi_output_view or (isinstance(fn, OpNode) and fn._num_outputs > 1)


_NO_EDGE = (None, 0)
_NO_META = ((), None)
_new_node = object.__new__
_next_seq = _graph._seq.__next__


def _refuse_complex(d, outs):
    for k, t in enumerate(outs):
        if t.dtype.is_complex and t._rg and (d.output_differentiability is None or
                                             d.output_differentiability[k]):
            raise RuntimeError(f"{d.complex_refused} does not support automatic differentiation "
                               "for outputs with complex dtype.")


def _check_inplace(self):
    """Refuse in-place ops autograd cannot record; return `self` if it is a view, else None."""
    base = self._base
    fn = self.grad_fn
    if base is not None and getattr(fn, "_is_function_node", False):
        raise RuntimeError(f"Output {self._output_nr} of {short_name(fn)} is a view and is being "
                           f"modified inplace.{CUSTOM_FUNCTION_VIEW}")
    if self._nograd_view:  # Note [Views made in no_grad mode] in views.py
        raise RuntimeError(nograd_view_error(self, "is being"))
    if self._creation_meta is not None and base is not None:
        # made where no graph was recorded (no_grad, inference mode, a custom Function's
        # forward), or a view of such a view: which history would the write join?
        raise RuntimeError(nograd_view_error(self, "is being", self._creation_meta))
    if base is None:
        if self.grad_fn is None and self._rg:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        return None
    fn = self.grad_fn
    if self._multi_output_view or (isinstance(fn, OpNode) and fn._num_outputs > 1):
        made = (f"Output {self._output_nr} of {short_name(fn)} is a view and is being modified "
                "inplace." if fn is not None else "A view was created in no_grad mode and is "
                "being modified inplace with grad mode enabled.")
        raise RuntimeError(
            f"{made} This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should replace "
            "the inplace operation by an out-of-place one.")
    if base.grad_fn is None and base._rg:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return self


# PyTorch's autograd fallback node for an op without a derivatives.yaml entry prints as
# `NotImplemented`; an op whose entry says not_implemented(...) gets a generated node named
# after the entry (the in-place asinh_ is the second entry named asinh)
NotImplementedNode.__name__ = NotImplementedNode.__qualname__ = "NotImplemented"
_NAMED_NOT_IMPLEMENTED = frozenset({
    "geqrf", "_unique2", "unique_dim", "unique_consecutive", "_cdist_backward",
    "_ctc_loss_backward", "_embedding_bag_per_sample_weights_backward", "asinh_", "acosh_",
    "atanh_"})
_not_implemented_classes = {}


def _not_implemented_node(op):
    if op.short_name not in _NAMED_NOT_IMPLEMENTED:
        return NotImplementedNode()
    cls = _not_implemented_classes.get(op)
    if cls is None:
        name = node_name_of(op.schema.name)
        if op._mutates:   # asinh_'s entry is the second one named asinh
            name = name[:-1] + "1"
        cls = _not_implemented_classes[op] = type(name, (NotImplementedNode,), {"__slots__": ()})
    return cls()


def _not_implemented_kernel(op, key, args):
    out = op.redispatch(key, args)
    node = _not_implemented_node(op)
    node._opname = op.name
    node._num_outputs = 1
    node.next_functions = tuple(gradient_edge(a) for a in _tensor_args(op, args))
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for t in outs:
        if _requires_grad_dtype(t):
            t._rg, t.grad_fn = True, node
    refused = NOT_IMPLEMENTED_COMPLEX_REFUSED.get(op.name)
    if refused is not None and any(t.dtype.is_complex and t._rg for t in outs):
        raise RuntimeError(f"{refused} does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return out


def _tensor_args(op, args):
    ts = [args[i] for i in op._tensor_pos]
    for i in op._list_pos:
        ts.extend(args[i])
    return [t for t in ts if isinstance(t, Tensor)]


def derivative(name, formulas=None, *, node_name=None, output_differentiability=None,
               namespace="aten"):
    """Register the backward formulas of op `name`: {input name (or "a, b"): formula}."""
    op = _dispatcher.lookup(name, namespace) if isinstance(name, str) else name
    if formulas is None:
        op.derivative = _NONDIFF
        return
    node_name = node_name or node_name_of(op.schema.name)
    op.derivative = Derivative(op, formulas, node_name, output_differentiability)


def derive_inplace_derivatives():
    """An in-place op derived from a schema line (exp_ from exp) reuses its out-of-place op's
    formulas, and its node has the same name, as in PyTorch (`x.exp_()` -> ExpBackward0)."""
    for op in _dispatcher._registry.values():
        functional = op.functional
        if functional is None or op.derivative is not None or functional.derivative is None:
            continue
        fd = functional.derivative
        if fd is _NONDIFF or type(fd) is not Derivative:
            op.derivative = fd
        else:
            op.derivative = Derivative(op, fd.formula_specs, fd.name_spec,
                                       fd.output_differentiability)


def derive_view_copy_derivatives(copies):
    """A view's copy ({'slice_copy.Tensor': 'slice.Tensor', ...}) has its view's formulas, and
    its node the view's name with `_copy` (SliceBackward0_copy), as PyTorch generates them."""
    for name, view_name in copies.items():
        op, view = _dispatcher.lookup(name), _dispatcher.lookup(view_name).derivative
        if type(view) is not Derivative:
            op.derivative = view
        else:
            op.derivative = Derivative(op, view.formula_specs, view.name_spec + "_copy",
                                       view.output_differentiability)


# ops that derivatives.yaml does not list at all (backward raises RuntimeError, not the
# NotImplementedError of a `not_implemented` formula)
_NO_FORMULA = set()
# the listed `not_implemented` ops off the complex allowlist -> the name their refusal of a
# complex output gives (PyTorch generates that check for them as for any listed op; the ops
# derivatives.yaml does not list fall back without it). Filled by complex_allowlist.
NOT_IMPLEMENTED_COMPLEX_REFUSED = {}


def not_implemented(*names, listed=True):
    """Ops PyTorch has no derivative for: their outputs require grad, and backward raises
    (NotImplementedError where derivatives.yaml says `not_implemented`, RuntimeError where it
    has no entry: listed=False)."""
    for n in names:
        op = _dispatcher.lookup(n)
        op.derivative = _NOT_IMPLEMENTED
        if not listed:
            _NO_FORMULA.add(op.name)


def not_differentiable(*names):
    for n in names:
        derivative(n, None)


def node_name_of(opname):
    """PyTorch's node name for an op: each '_'-separated part title-cased (log1p ->
    Log1PBackward0, index_put_ -> IndexPutBackward0)."""
    return "".join(p.title() for p in opname.split("_")) + "Backward0"


_dispatcher.register_fallback("Autograd", autograd_kernel)
