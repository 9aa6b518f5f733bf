"""The lazy device's graph executor (torch/csrc/lazy/core/lazy_graph_executor.cpp's role): the
pending graph of recorded ops, and running it when a value is needed.

A lazy tensor is a `LazyTensor` (PyTorch's LazyTensor::Data): either a Value of the pending graph
(the ops that compute it are recorded, not run) or device data (a CPU tensor holding its values).
Ops on lazy tensors append Calls to one pending `Graph` (ember/_dispatch/recorder.py's format);
device data a call reads enters the graph as an input.

`sync()` (mark_step, `.item()`, `.cpu()`, printing...) runs the whole pending graph:

    outputs   the pending tensors that are still alive (weakly tracked), in creation order
    key       the graph's structure: each call's op and arguments (Values by number, scalars by
              value), the inputs' shapes, dtypes, strides and which of them share memory, the
              output Values. Equal keys mean the same computation on different data.
    compile   on a miss (counter UncachedCompile): dead-code elimination, then ember/_inductor's
              generated NumPy code with fused elementwise chains and a static memory plan (no
              CSE or constant folding: two live tensors must never come back as one buffer,
              and a recorded call always reads a lazy tensor, so nothing folds). A hit
              (CachedCompile) reuses the compiled graph, so a training loop compiles its step
              once and then only runs it.
    run       on the inputs' device data; each output tensor keeps its result as device data,
              and the next graph starts empty.

Note [in-place ops and views]
    The graph is not functionalised. A view op is recorded as a call whose result shares memory
    with its input, an in-place op as a call that writes its argument's Value, and the calls run
    in recorded order on real CPU tensors, so a write through a view reaches its base as in eager
    mode. The passes know which Values share memory (`aliases`, from the lazy tensors' storages
    at record time and from the device data's arrays) and never move or drop a call across a
    write. One case is left to a plain replay: the generated code turns a fused or lowered
    result into a tensor by copying it into an allocator block, which would cut a write off
    from the views of the same memory; a graph that writes memory shared by several Values,
    unless that memory is an input's allocator block, therefore runs its calls one by one
    through their CPU kernels (ember/_inductor/compile_fx.Replay).
"""
import weakref

import numpy as np

from .._core.caching_allocator import in_block
from .._core.grad_mode import _grad_state
from .._core.storage import _root_array
from .._core.tensor import Tensor, _wrap_external
from .._dispatch.recorder import Graph, Value
from .._inductor.codegen import CompiledGraph
from .._inductor.compile_fx import Replay
from .._inductor.passes import written_values, dce
from . import metrics


class LazyTensor:
    """What a lazy tensor holds: `value`, its Value in the pending graph (valid while `epoch` is
    the executor's), and `data`, its device data once computed. Tensors that are the same
    data (`detach()`, `.data`, a Parameter made from it) share one LazyTensor."""
    __slots__ = ("value", "epoch", "data", "__weakref__")

    def __init__(self, data=None):
        self.value, self.epoch, self.data = None, -1, data


class LazyGraphExecutor:
    """The pending graph, the data of its inputs, and the cache of compiled graphs."""

    def __init__(self):
        self.epoch = 0
        self.cache = {}
        self._new_graph()

    def _new_graph(self):
        self.graph = Graph()
        self.input_data = []        # device data of graph.inputs, in order
        self.memory = {}            # Value -> key of the memory it lives in
        self.block_inputs = set()   # memory keys of inputs whose arrays are allocator blocks
        self.pending = weakref.WeakSet()  # LazyTensors whose value this graph computes

    # ---- recording -----------------------------------------------------------------------
    def value_of(self, lt, t):
        """The Value of lazy tensor `t` (LazyTensor `lt`) in the pending graph."""
        if lt.epoch == self.epoch:
            return lt.value
        if lt.data is None:
            raise RuntimeError("this lazy tensor has no value: the graph that was computing it "
                               "failed to run")
        lt.value, lt.epoch = self.add_input(lt.data, t), self.epoch
        return lt.value

    def add_input(self, data, t):
        v = self.graph.new_value(t)
        self.graph.inputs.append(v)
        self.input_data.append(data)
        arr = data._np
        key = ("input", id(_root_array(arr)))
        self.memory[v] = key
        if arr.base is not None and in_block(arr):
            self.block_inputs.add(key)
        return v

    def new_pending(self, t, view_of=None):
        """A LazyTensor for op result `t`, computed by the pending graph; `view_of` is the
        Value whose memory it shares, if it is a view."""
        lt = LazyTensor()
        v = self.graph.new_value(t)
        self.memory[v] = self.memory[view_of] if view_of is not None else ("value", v.index)
        lt.value, lt.epoch = v, self.epoch
        self.pending.add(lt)
        return lt

    # ---- running -------------------------------------------------------------------------
    def sync(self):
        """Run the pending graph (see the module docstring)."""
        if not self.graph.calls:
            return
        live, compiled = self._compiled()
        inputs = self.input_data
        self.epoch += 1
        self._new_graph()  # before running: a failing kernel leaves an empty graph behind
        prev = _grad_state.enabled
        _grad_state.enabled = False
        try:
            results = compiled(inputs)
        finally:
            _grad_state.enabled = prev
        for lt, r in zip(live, results):
            lt.data = r if isinstance(r, Tensor) else _wrap_external(np.asarray(r))
        metrics._count("SyncedTensorsWithIR", len(live))

    def _compiled(self):
        """The live pending LazyTensors, and the compiled graph computing them (from the cache,
        or compiled now)."""
        live = sorted((lt for lt in self.pending if lt.epoch == self.epoch and lt.data is None),
                      key=lambda lt: lt.value.index)
        outputs = [lt.value for lt in live]
        key = self._key(outputs)
        compiled = self.cache.get(key)
        if compiled is None:
            metrics._count("UncachedCompile")
            compiled = self.cache[key] = self._compile(outputs)
        else:
            metrics._count("CachedCompile")
        return live, compiled

    def generated_code(self):
        """The code the pending graph runs as (compiled and cached now if it was not)."""
        return self._compiled()[1].code if self.graph.calls else ""

    def _key(self, outputs):
        graph = self.graph
        numbering = {}
        parts = []
        for v, data in zip(graph.inputs, self.input_data):
            mem = self.memory[v]
            shared = numbering.setdefault(mem, len(numbering))  # inputs sharing memory
            parts.append((v.shape, v.dtype, data.stride(), shared, mem in self.block_inputs))
        for c in graph.calls:
            parts.append((c.op, tuple(_arg_key(a) for a in c.args),
                          tuple(None if o is None else o.index for o in c.outs)))
        parts.append(tuple(v.index for v in outputs))
        return tuple(parts)

    def _compile(self, outputs):
        graph = Graph()  # a copy: dump_ir and the key keep seeing the calls as recorded
        graph.inputs, graph.calls, graph.outputs = list(self.graph.inputs), \
            list(self.graph.calls), list(outputs)
        groups = {}
        for v, mem in self.memory.items():
            groups.setdefault(mem, []).append(v)
        aliases = {}
        for group in groups.values():
            if len(group) > 1:
                s = frozenset(group)
                for v in group:
                    aliases[v] = s
        written = written_values([graph], aliases)
        dce(graph, outputs, written)
        shared_write = any(len(aliases.get(v, ())) > 1 and self.memory[v] not in
                           self.block_inputs for v in _values_written(graph))
        if shared_write:
            return Replay(graph, graph.inputs, outputs, {}, "lazy_graph")
        escaping = {w for v in outputs for w in aliases.get(v, (v,))}
        return CompiledGraph(graph, graph.inputs, outputs, {}, aliases, escaping, "lazy_graph")


def _values_written(graph):
    for c in graph.calls:
        for a, v in zip(c.op.schema.arguments, c.args):
            if a.mutable and type(v) is Value:
                yield v


def _arg_key(a):
    t = type(a)
    if t is Value:
        return ("v", a.index)
    if t is list or t is tuple:
        return (t.__name__,) + tuple(_arg_key(x) for x in a)
    if t is float:
        return ("float", repr(a))  # -0.0 and nan are arguments of their own
    try:
        hash(a)
    except TypeError:
        return (t.__name__, repr(a))
    return (t.__name__, a)


executor = LazyGraphExecutor()
