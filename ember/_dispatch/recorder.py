"""Recording op calls into a graph: the capture step under `jit.trace` and `ember.compile`.

PyTorch records at two levels: TorchScript's tracer hooks the dispatcher (every aten op a traced
call runs becomes a node), and AOT autograd traces the joint forward + backward with a dispatch
mode. ember does the same with one dispatch mode: `GraphRecorder` sits on the mode stack, lets
each op run as usual, and appends a `Call` to a `Graph` whose operands name the tensors the op
read and wrote. The backward engine's derivative formulas are ember ops too, so recording a
`autograd.grad` call gives the backward graph in the same form.

The recorded graph is a small, plain data structure (the format other consumers -- the compile
backends, `jit.save`, an exporter -- read):

    Graph
      inputs     [Value]            placeholders, in call order (a name each: "x", "fc1.weight")
      calls      [Call]             in execution order
      outputs    [Value | constant] the flat results
      constants  {Value: Tensor}    tensors the calls read that no call made and no input is
    Call
      op         OpOverload         the ember op (`aten::addmm`), called with full positional args
      args       tuple              each argument as the op received it, a tensor replaced by its
                                    Value, a tensor list by a list of Values
      outs       tuple[Value|None]  the tensors it returned (an in-place op returns its target's
                                    Value again: Values name tensors, the calls run in order)
    Value
      index, name, shape, dtype     one tensor (`v12`), its recorded metadata

Replaying the calls in order on fresh inputs recomputes the outputs (`Graph.run`). Reading a
tensor's data in Python (`.item()`, `bool(t)`, `.tolist()`, `.numpy()`) is a value the graph
cannot hold: the recorder reports it to `on_data_access` (jit.trace warns, as PyTorch's tracer
does; ember.compile treats it as a graph break).
"""
from .._core.tensor import Tensor
from . import dispatcher as _dispatcher

_DATA_ACCESS = {  # Tensor method -> what PyTorch's tracer says the conversion makes
    "item": "a Python number", "__bool__": "a Python boolean", "tolist": "a Python list",
    "numpy": "a NumPy array", "__index__": "a Python index",
}


class Value:
    """One tensor of a recorded graph."""
    __slots__ = ("index", "name", "shape", "dtype")

    def __init__(self, index, name, shape, dtype):
        self.index, self.name, self.shape, self.dtype = index, name, shape, dtype

    def __repr__(self):
        return f"%{self.name}"


class Call:
    """One op call of a recorded graph."""
    __slots__ = ("op", "args", "outs")

    def __init__(self, op, args, outs):
        self.op, self.args, self.outs = op, args, outs

    def values_read(self):
        for a in self.args:
            if type(a) is Value:
                yield a
            elif type(a) is list:
                yield from (x for x in a if type(x) is Value)

    def __repr__(self):
        outs = ", ".join(repr(o) for o in self.outs) or "_"
        return f"{outs} = {self.op.short_name}({', '.join(_fmt(a) for a in self.args)})"


def _fmt(a):
    if type(a) is list:
        return "[" + ", ".join(_fmt(x) for x in a) + "]"
    return repr(a)


class Graph:
    """Op calls over tensor Values (see the module docstring)."""

    def __init__(self):
        self.inputs = []
        self.calls = []
        self.outputs = []
        self.constants = {}
        self._count = 0

    def new_value(self, t, name=None):
        v = Value(self._count, name or f"v{self._count}", tuple(t._size), t.dtype)
        self._count += 1
        return v

    def __str__(self):
        lines = [f"graph({', '.join(f'%{v.name}: {_meta(v)}' for v in self.inputs)}):"]
        lines += [f"    {c!r}" for c in self.calls]
        lines.append(f"    return ({', '.join(_fmt(o) for o in self.outputs)})")
        return "\n".join(lines)

    def run(self, *inputs):
        """Replay the calls through the dispatcher (autograd records them as in eager mode)."""
        env = dict(zip(self.inputs, inputs))
        env.update(self.constants)
        for c in self.calls:
            args = [_load(env, a) for a in c.args]
            out = c.op(*args)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for v, o in zip(c.outs, outs):
                if v is not None:
                    env[v] = o
        return [_load(env, o) for o in self.outputs]

    def run_list(self, inputs):
        return self.run(*inputs)


def _meta(v):
    return f"{str(v.dtype).removeprefix('torch.')}{list(v.shape)}"


def _load(env, a):
    if type(a) is Value:
        return env[a]
    if type(a) is list:
        return [_load(env, x) for x in a]
    return a


class GraphRecorder:
    """The dispatch mode that records each outermost op call into `self.graph`.

    `decompose=True` records what a CompositeImplicitAutograd op calls instead of the op itself
    (PyTorch's decomposition of composites). `on_data_access(kind, tensor)` is called when Python
    reads a tensor's data while recording.
    """

    def __init__(self, graph=None, decompose=False, on_data_access=None, before_write=None):
        self.graph = graph if graph is not None else Graph()
        self.decompose = decompose
        self.on_data_access = on_data_access
        self.before_write = before_write  # called with each tensor an op is about to write
        self.values = {}     # id(tensor) -> Value
        self._keep = []      # the recorded tensors, so their ids stay theirs
        self._depth = 0
        self._saved_methods = {}

    # ---- naming tensors ---------------------------------------------------------------------
    def add_input(self, t, name=None):
        v = self.graph.new_value(t, name)
        self.graph.inputs.append(v)
        self._bind(t, v)
        return v

    def value_of(self, t):
        """The Value naming tensor `t`; a tensor no call made becomes a constant of the graph."""
        v = self.values.get(id(t))
        if v is None:
            v = self.values.get(("np", id(t._np))) if t._np is not None else None
            if v is None:
                v = self.graph.new_value(t, f"c{len(self.graph.constants)}")
                self.graph.constants[v] = t
                self._bind(t, v)
        return v

    def _bind(self, t, v):
        self.values[id(t)] = v
        if t._np is not None:
            self.values[("np", id(t._np))] = v
        self._keep.append(t)

    def _operand(self, a):
        if isinstance(a, Tensor):
            return self.value_of(a)
        if type(a) in (list, tuple) and any(isinstance(x, Tensor) for x in a):
            return [self.value_of(x) if isinstance(x, Tensor) else x for x in a]
        return a

    # ---- the mode -----------------------------------------------------------------------------
    def __enter__(self):
        _dispatcher._modes.append(self._on_op)
        for name in _DATA_ACCESS:
            self._saved_methods[name] = original = getattr(Tensor, name)
            setattr(Tensor, name, self._watch(name, original))
        return self

    def __exit__(self, *exc):
        _dispatcher._modes.remove(self._on_op)
        for name, original in self._saved_methods.items():
            setattr(Tensor, name, original)
        self._saved_methods = {}

    def _watch(self, name, original):
        recorder = self

        def method(t, *args, **kwargs):
            if recorder._depth == 0 and recorder.on_data_access is not None:
                recorder.on_data_access(_DATA_ACCESS[name], t)
            recorder._depth += 1  # bool(t) calls t.item(): one conversion, one report
            try:
                return original(t, *args, **kwargs)
            finally:
                recorder._depth -= 1
        method.__name__ = name
        return method

    def _on_op(self, op, args, level):
        if self._depth or (self.decompose and op._composite is not None):
            return _dispatcher.call_in_modes(op, args, level - 1)
        operands = tuple(self._operand(a) for a in args)
        if self.before_write is not None and _writes(op):
            for a, t in zip(op.schema.arguments, args):
                if a.mutable and isinstance(t, Tensor):
                    self.before_write(t)
        self._depth += 1
        try:
            out = _dispatcher.call_in_modes(op, args, level - 1)
        finally:
            self._depth -= 1
        outs = out if isinstance(out, (tuple, list)) else (out,)
        values = []
        for o in outs:
            if isinstance(o, Tensor):
                known = self.values.get(id(o)) if op._mutates or _writes(op) else None
                v = known if known is not None else self.graph.new_value(o)
                self._bind(o, v)
                values.append(v)
            elif o is None:
                values.append(None)
            else:
                values.append(None)
                if self.on_data_access is not None:
                    self.on_data_access(f"a Python value ({op.short_name} returned "
                                        f"{type(o).__name__})", None)
        self.graph.calls.append(Call(op, operands, tuple(values)))
        return out


def _writes(op):
    return any(a.mutable for a in op.schema.arguments)


def flatten(obj):
    """The tensors and constants of a nested tuple/list/dict result, and the spec to rebuild it."""
    if isinstance(obj, (tuple, list)):
        leaves, specs = [], []
        for x in obj:
            lv, s = flatten(x)
            leaves += lv
            specs.append((len(lv), s))
        kind = type(obj) if type(obj) in (tuple, list) else ("namedtuple", type(obj))
        return leaves, (kind, specs)
    if isinstance(obj, dict):
        leaves, specs = flatten(list(obj.values()))
        return leaves, (("dict", list(obj)), specs[1])
    return [obj], None


def unflatten(leaves, spec):
    if spec is None:
        return leaves[0]
    kind, specs = spec
    parts, i = [], 0
    for n, s in specs:
        parts.append(unflatten(leaves[i:i + n], s))
        i += n
    if kind is tuple or kind is list:
        return kind(parts)
    if kind[0] == "dict":
        return dict(zip(kind[1], parts))
    cls = kind[1]
    return cls(*parts) if hasattr(cls, "_fields") else cls(parts)


def is_recording():
    """Whether a GraphRecorder is capturing ops (torch.export, ONNX export): code that takes
    a different path in eager mode (the MultiheadAttention fast path) keeps to the traceable
    one, as PyTorch does under make_fx."""
    return any(isinstance(getattr(mode, "__self__", None), GraphRecorder)
               for mode in _dispatcher._modes)
