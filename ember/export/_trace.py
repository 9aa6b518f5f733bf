"""The capture behind `ember.export.export`: run the module once at the dispatcher and turn what
ran into an fx Graph of ATen op calls, as torch.export's non-strict mode does.

torch.export runs `forward` as ordinary Python on fake tensors under a dispatch mode; every ATen
op that reaches the dispatcher becomes a call_function node. ember runs `forward` on the example
inputs themselves under the GraphRecorder mode (ember/_dispatch/recorder.py) and converts the
recorded calls into fx nodes:

    placeholders   p_<param>, b_<buffer>, c_<constant>, then the user's inputs by argument name
    call_function  target = the OpOverload (`ember.ops.aten.linear.default`), named after the
                   op (`linear`, `linear_1`); trailing arguments equal to their schema defaults
                   are left out, as torch's graphs leave them out; an op with several results
                   is followed by `getitem` nodes for the results something reads; after an
                   in-place op (`add_`), later reads of its target read that node
    output         the flat tuple of results

Only the outermost op call is recorded, so a CompositeImplicitAutograd op (`conv2d`,
`batch_norm`, `dropout`, `flatten.using_ints`) stays whole, as in torch's export graphs;
run_decompositions records what its kernel calls instead. The capture runs with
`backends.cudnn.enabled` off, as torch.export's does (so `batch_norm` records
`cudnn_enabled=False`).

Running the module for real would update its buffers (BatchNorm's running statistics) and draw
from the random generator; both are put back afterwards, so exporting leaves the module and the
random stream as they were, as exporting on fake tensors does.

Reading a tensor's value in Python (`if x.sum() > 0:`, `.item()`) makes a graph that only holds
for these example values; torch.export raises GuardOnDataDependentSymNode there, and so does
ember, naming the op whose result was read.
"""
import inspect
import operator
import re

from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from .._dispatch.recorder import GraphRecorder, Value, Call
from ..fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
from ..fx.graph import Graph as FxGraph
from ..utils import _pytree as pytree
from .dynamic_shapes import SymExpr
from .graph_signature import (ConstantArgument, InputKind, InputSpec, OutputKind, OutputSpec,
                              TensorArgument)


class LiftedInput:
    """One placeholder of the exported graph: its kind, name and the tensor it had at capture."""
    __slots__ = ("kind", "name", "target", "persistent", "value")

    def __init__(self, kind, name, target, value, persistent=None):
        self.kind, self.name, self.target = kind, name, target
        self.value, self.persistent = value, persistent


def module_state(mod):
    """The parameters and buffers torch.export lifts, in its order, with its placeholder names."""
    lifted = []
    for name, p in mod.named_parameters():
        lifted.append(LiftedInput(InputKind.PARAMETER, placeholder_name("p_", name), name, p))
    non_persistent = set()
    for prefix, m in mod.named_modules():
        for b in getattr(m, "_non_persistent_buffers_set", ()):
            non_persistent.add(f"{prefix}.{b}" if prefix else b)
    for name, b in mod.named_buffers():
        lifted.append(LiftedInput(InputKind.BUFFER, placeholder_name("b_", name), name, b,
                                  persistent=name not in non_persistent))
    return lifted


def placeholder_name(prefix, target):
    """torch.export's placeholder name for lifted state: the prefix, then the target with a
    leading `self_` dropped, every other character than letters and digits as `_`, in lower
    case (`self_attn.in_proj_weight` -> `p_attn_in_proj_weight`)."""
    if target.startswith("self_"):
        target = target[len("self_"):]
    return prefix + re.sub(r"[^a-zA-Z0-9]", "_", target).lower()


def _parameters(forward):
    try:
        return list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        return []


def positional_names(forward):
    return [p.name for p in _parameters(forward)
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def user_input_names(forward, args, kwargs):
    """A placeholder name for each leaf of (args, kwargs): the argument's name, with the path
    into a nested argument appended (`xs_0`, `inputs_mask`), as torch.export names them."""
    positional = positional_names(forward)
    var_args = next((p.name for p in _parameters(forward) if p.kind == p.VAR_POSITIONAL),
                    "args")
    names = []
    for i, a in enumerate(args):
        base = positional[i] if i < len(positional) else f"{var_args}_{i - len(positional)}"
        names += _leaf_names(base, a)
    for key, a in kwargs.items():
        names += _leaf_names(key, a)
    return names


def _leaf_names(base, tree):
    leaves = pytree.tree_flatten_with_path(tree)[0]
    if len(leaves) == 1 and not leaves[0][0]:
        return [base]
    out = []
    for path, _ in leaves:
        parts = [str(getattr(k, "idx", getattr(k, "key", getattr(k, "name", k)))) for k in path]
        out.append("_".join([base] + parts))
    return out


# ---- running the capture ----------------------------------------------------------------------
def _data_access_error(recorder):
    def on_data_access(kind, t):
        origin = "a tensor"
        if t is not None:
            v = recorder.values.get(id(t))
            producer = next((c for c in reversed(recorder.graph.calls) if v in c.outs), None)
            if producer is not None:
                origin = f"the result of aten.{producer.op.short_name}"
            elif v is not None:
                origin = f"the input '{v.name}'"
        raise GuardOnDataDependentSymNode(
            f"Could not guard on data-dependent expression: the program turns {origin} into "
            f"{kind}, so the captured graph would only hold for this value "
            "(data-dependent control flow). Compute it with tensor ops (ember.where) "
            "or pass the value as a constant.")
    return on_data_access


class _Decompose:
    """The dispatch mode run_decompositions pushes above the recorder: an op in the table
    runs its decomposition, whose op calls come through the modes again (and are recorded)."""

    def __init__(self, table):
        self.table = table

    def __call__(self, op, args, level):
        fn = self.table.get(op)
        if fn is not None:
            return fn(*args)
        return _dispatcher.call_in_modes(op, args, level - 1)


def capture(fn, inputs, decompositions=None):
    """Run fn() under the recorder with `inputs` ([(name, tensor)]) as the graph's inputs;
    returns (recorded graph, the recorder's tensor -> Value map, fn's result).
    `decompositions` ({OpOverload: function}) also decomposes the composite ops."""
    from ..backends import cudnn
    recorder = GraphRecorder(decompose=decompositions is not None)
    recorder.on_data_access = _data_access_error(recorder)
    decompose = _Decompose(decompositions) if decompositions else None
    cudnn_enabled, cudnn.enabled = cudnn.enabled, False   # as torch.export captures: the
    with recorder:                                       # graph records cudnn_enabled=False
        for name, t in inputs:
            recorder.add_input(t, name)
        if decompose is not None:
            _dispatcher._modes.append(decompose)
        try:
            result = fn()
        finally:
            if decompose is not None:
                _dispatcher._modes.remove(decompose)
            cudnn.enabled = cudnn_enabled
    return recorder.graph, recorder.values, result


def constant_names(mod, constants):
    """Names for the tensors a graph read that are neither inputs nor made by its calls: the
    module attribute holding the tensor, else `lifted_tensor_<i>`, as torch.export names them."""
    attrs = {}
    if mod is not None:
        for prefix, m in mod.named_modules():
            for k, v in vars(m).items():
                if isinstance(v, Tensor):
                    attrs.setdefault(id(v), f"{prefix}.{k}" if prefix else k)
    names, n = {}, 0
    for v, t in constants.items():
        target = attrs.get(id(t))
        if target is None:
            target, n = f"lifted_tensor_{n}", n + 1
        names[v] = target
    return names


# ---- functionalization (run_decompositions) ---------------------------------------------------
def functionalize(graph):
    """Rewrite the recorded calls so that none writes a graph input: an in-place op becomes
    its out-of-place twin (`add_` -> `add`), an op that writes other arguments (native_batch_norm
    updating its running statistics) writes fresh clones of them; later reads see the new
    values. Returns {input Value: Value of its final contents} for every input written."""
    clone = _dispatcher.lookup("clone")
    latest = {}
    calls = []
    new_states = set()    # Values that are an input's new contents (see _NEW_STATE_RESULTS)
    for c in graph.calls:
        args = [_latest(a, latest) for a in c.args]
        if c.op.schema.name == "copy_" and args[1] in new_states and type(args[0]) is Value:
            latest[args[0]] = args[1]       # the write becomes a mutation output
            continue
        new_states.update(c.outs[i] for i in _NEW_STATE_RESULTS.get(c.op.schema.name, ()))
        written = [i for i, a in enumerate(c.op.schema.arguments)
                   if a.mutable and type(args[i]) is Value]
        if written and not _CONDITIONAL_WRITES.get(c.op.schema.name, bool)(args):
            written = []
        if not written:
            calls.append(Call(c.op, tuple(args), c.outs))
            continue
        for i in written:
            _refuse_view_write(c, args[i], calls)
        outs = list(c.outs)
        if c.op.functional is not None and written == [0]:
            target = args[0]
            fresh = graph.new_value(_Shape(target))
            outs = [fresh if o is c.outs[0] else o for o in outs]
            calls.append(Call(c.op.functional, tuple(args), tuple(outs)))
            latest[target] = fresh
            continue
        for i in written:
            target = args[i]
            fresh = graph.new_value(_Shape(target))
            calls.append(Call(clone, (target, None), (fresh,)))
            outs = [fresh if o is target else o for o in outs]
            args[i] = fresh
            latest[target] = fresh
        calls.append(Call(c.op, tuple(args), tuple(outs)))
    graph.calls = calls
    graph.outputs = [_latest(o, latest) for o in graph.outputs]
    return {v: _latest(v, latest) for v in graph.inputs if _latest(v, latest) is not v}


# results that are the new value of an input, which the decomposition copies into it
# (decomp_utils._batch_norm): that copy_ is left out and the input's value is the result
_NEW_STATE_RESULTS = {"_native_batch_norm_legit_functional": (3, 4)}

# ops whose schema marks arguments written that they write only sometimes: batch norm
# updates its running statistics in training mode only
_CONDITIONAL_WRITES = {"native_batch_norm": lambda args: bool(args[5])}


class _Shape:
    """What Graph.new_value reads from a tensor, taken from a Value."""
    def __init__(self, v):
        self._size, self.dtype = v.shape, v.dtype


def _latest(a, latest):
    if type(a) is Value:
        while a in latest:
            a = latest[a]
        return a
    if type(a) is list:
        return [_latest(x, latest) for x in a]
    return a


def _refuse_view_write(call, target, calls):
    producer = next((c for c in reversed(calls) if target in c.outs), None)
    if producer is not None and producer.op._is_view:
        raise NotImplementedError(
            f"run_decompositions: aten.{call.op.short_name} writes into a view made by "
            f"aten.{producer.op.short_name}; ember's functionalization does not propagate "
            "writes through views to their base")


# ---- the fx graph ---------------------------------------------------------------------------
def _meta_tensor(v):
    from .._core.device import device
    from .._bindings.factories import empty
    return empty(tuple(v.shape), dtype=v.dtype, device=device("meta"))


def _same_as_default(value, arg):
    if not arg.has_default or isinstance(value, (Value, list)) and any(
            type(x) is Value for x in (value if type(value) is list else [value])):
        return False
    default = arg.default
    if isinstance(default, (int, float)) and not isinstance(default, bool) and \
            isinstance(value, (list, tuple)) and value:
        return all(x == default for x in value)
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return list(default) == list(value)
    return type(value) is type(default) and value == default or value is default


def call_arguments(op, args):
    """The positional args and kwargs a node records: trailing defaults left out."""
    schema_args = op.schema.arguments
    args = [_fixed_size_list(a.type, list(v) if type(v) is tuple and "[" in a.type else v)
            for a, v in zip(schema_args, args)]
    positional = [(a, v) for a, v in zip(schema_args, args) if not a.kwarg_only]
    while positional and _same_as_default(positional[-1][1], positional[-1][0]):
        positional.pop()
    kwargs = {a.name: v for a, v in zip(schema_args, args)
              if a.kwarg_only and not _same_as_default(v, a)}
    return [v for _, v in positional], kwargs


_FIXED_SIZE = re.compile(r"^(?:Sym)?[Ii]nt\[(\d+)\]$")


def _fixed_size_list(type_, v):
    """An `int[2]` argument given as one int (or a one-int list) as the N ints PyTorch's
    argument parser makes of it (`avg_pool2d(x, [2, 2])` for `kernel_size=2`)."""
    m = _FIXED_SIZE.match(type_)
    if m is None or int(m.group(1)) < 2:
        return v
    if type(v) is int:
        return [v] * int(m.group(1))
    if type(v) is list and len(v) == 1 and type(v[0]) is int:
        return v * int(m.group(1))
    return v


def to_fx(graph, inputs, outputs, sym=None, dead_code=False):
    """The fx Graph of recorded calls. inputs: (placeholder name, Value) in placeholder order,
    the Value None for an input that is no tensor; outputs: the flat output Values/constants
    in order. sym: for dynamic dims, ({Value: symbolic shape}, {(call index, arg position,
    list position): SymExpr}, {Symbol: (placeholder name, dim)}) from
    dynamic_shapes.generalize -- the sizes a call records as functions of the dims become
    nodes computing them from the inputs' sizes (`sym_size_int = x.size(0)`, `mul`, `add`).
    dead_code: keep calls nothing reads and every result's `getitem`, as torch.export's graph
    before run_decompositions keeps them (the decomposed graph drops them).
    Returns (fx graph, {Value: Node})."""
    shapes, sym_args, sources = sym or ({}, {}, {})
    by_call = {}
    for (k, j, m), e in sym_args.items():
        by_call.setdefault(k, []).append((j, m, e))
    g = FxGraph()
    env, placeholders, size_nodes = {}, {}, {}

    def node_meta(node, v):
        node.meta["val"] = _meta_tensor(v)
        if v in shapes:
            node.meta["sym_shape"] = shapes[v]

    for name, v in inputs:
        node = placeholders[name] = g.placeholder(name)
        if node.name != name:   # an argument named like a builtin (`input`) keeps its name
            node.name = name
            g._graph_namespace._used_names.add(name)
        if v is not None:
            node_meta(node, v)
            env[v] = node

    def size_of(symbol):
        if symbol not in size_nodes:
            name, dim = sources[symbol]
            node = g.create_node("call_method", "size", (placeholders[name], dim),
                                 name="sym_size_int")
            node.meta["sym_expr"] = symbol
            size_nodes[symbol] = node
        return size_nodes[symbol]

    def expression(e):
        node, terms = None, {}
        for symbol, c in e.coeffs.items():
            terms[symbol] = c
            term = size_of(symbol)
            if c != 1:
                term = g.call_function(operator.mul, (term, c))
                term.meta["sym_expr"] = SymExpr(0, {symbol: c})
            if node is not None:
                term = g.call_function(operator.add, (node, term))
                term.meta["sym_expr"] = SymExpr(0, dict(terms))
            node = term
        if e.const:
            node = g.call_function(operator.add, (node, e.const))
            node.meta["sym_expr"] = e
        return node

    def arg(a):
        if type(a) is Value:
            return env[a]
        if type(a) is list or type(a) is tuple and any(type(x) is SymExpr for x in a):
            return [arg(x) for x in a]
        if type(a) is SymExpr:
            return expression(a)
        return a

    for k, c in enumerate(graph.calls):
        call_args = list(c.args)
        for j, m, e in by_call.get(k, ()):
            if m is None:
                call_args[j] = e
            else:
                items = list(call_args[j])
                items[m] = e
                call_args[j] = items
        args, kwargs = call_arguments(c.op, call_args)
        args = tuple(arg(a) for a in args)
        kwargs = {key: arg(v) for key, v in kwargs.items()}
        node = g.call_function(c.op, args, kwargs, name=c.op.schema.name)
        returns = c.op.schema.returns
        if len(returns) == 1 and "[]" not in returns[0]:
            if c.outs and c.outs[0] is not None:
                node_meta(node, c.outs[0])
                if c.op._mutates:   # later reads of the written tensor read this node
                    env[c.outs[0]] = node
                else:
                    env.setdefault(c.outs[0], node)
            continue
        node.meta["val"] = tuple(None if o is None else _meta_tensor(o) for o in c.outs)
        for i, o in enumerate(c.outs):
            if o is None:
                continue
            item = g.call_function(operator.getitem, (node, i))
            node_meta(item, o)
            env.setdefault(o, item)
    g.output(tuple(arg(o) for o in outputs))
    if not dead_code:
        g.eliminate_dead_code()
    return g, env


def input_specs(lifted, constant_targets, user_names, user_leaves):
    specs = [InputSpec(x.kind, TensorArgument(x.name), x.target, x.persistent) for x in lifted]
    for name, target in constant_targets:
        specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(name), target))
    for name, leaf in zip(user_names, user_leaves):
        a = TensorArgument(name) if isinstance(leaf, Tensor) else ConstantArgument(name, leaf)
        specs.append(InputSpec(InputKind.USER_INPUT, a, None))
    return specs


def output_specs(fx_graph, mutations, n_user):
    """Specs for the output node's values: [(kind, target)] for the mutations, then user ones."""
    out_node = next(n for n in fx_graph.nodes if n.op == "output")
    values = out_node.args[0]
    specs = []
    for (kind, target), v in zip(mutations + [(OutputKind.USER_OUTPUT, None)] * n_user, values):
        if hasattr(v, "op"):
            specs.append(OutputSpec(kind, TensorArgument(v.name), target))
        else:
            specs.append(OutputSpec(kind, ConstantArgument("", v), target))
    return specs
