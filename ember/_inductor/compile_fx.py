"""The "ember" backend's pipeline over a captured graph (torch._inductor.compile_fx's role):
passes (CSE, constant folding, DCE) over the forward and backward graphs, the rewrites across
them (convolution columns kept for backward, conv_columns.py; the ReLU mask in front of max
pooling's scatter, pool_backward.py), the saved Values between them, then generated NumPy code
for each (codegen.py) joined by AOT autograd's runtime."""
from .._functorch.aot_autograd import CompiledFunction
from .._core.storage import _root_array
from .._dispatch.recorder import Value, Graph
from .codegen import CompiledGraph
from .passes import written_values, cse, rename_reads, fold_constants, dce
from .conv_columns import keep_conv_columns
from .pool_backward import mask_before_scatter


def memory_aliases(tensors):
    """Value -> the Values whose tensors share its memory (from the capture run's arrays)."""
    by_root = {}
    for v, t in tensors.items():
        a = t._np
        if a is None:
            continue
        by_root.setdefault(id(_root_array(a)), []).append(v)
    aliases = {}
    for group in by_root.values():
        if len(group) > 1:
            s = frozenset(group)
            for v in group:
                aliases[v] = s
    return aliases


def merge_renamed(aliases, rename):
    """After CSE replaced each Value `old` by `new`: whatever shared memory with `old` (a view
    the capture run took of it) shares it with `new` now."""
    groups = {v: set(s) for v, s in aliases.items()}
    for old, new in rename.items():
        merged = groups.get(old, {old}) | groups.get(new, {new})
        for v in merged:
            groups[v] = merged
    out = {}
    for v, g in groups.items():
        if len(g) > 1:
            out[v] = frozenset(g)
    return out


def _closure(values, aliases):
    out = set()
    for v in values:
        if type(v) is Value:
            out.update(aliases.get(v, (v,)))
    return out


def saved_values(fwd, bwd, constants):
    defined = set(fwd.inputs)
    for c in fwd.calls:
        defined.update(v for v in c.outs if v is not None)
    saved, seen = [], set()
    reads = [v for c in bwd.calls for v in c.values_read()]
    reads += [o for o in bwd.outputs if type(o) is Value]
    for v in reads:
        if v in defined and v not in seen and v not in constants:
            seen.add(v)
            saved.append(v)
    return saved


class Replay:
    """A graph's calls replayed through the dispatcher, returning `results` (aot_eager)."""

    def __init__(self, graph, inputs, results, constants, name):
        self.graph, self.name, self.code, self.fusion = Graph(), name, "", []
        self.graph.inputs, self.graph.calls = list(inputs), graph.calls
        self.graph.outputs, self.graph.constants = list(results), constants

    def __call__(self, inputs):
        return self.graph.run(*inputs)


def compile_fx(captured, example_inputs, generate_code=True):
    fwd, bwd = captured.forward, captured.backward
    aliases = memory_aliases(captured.tensors)
    graphs = [fwd] + ([bwd] if bwd is not None else [])
    written = written_values(graphs, aliases)
    rename = cse(fwd, written)
    for g in graphs[1:]:
        rename_reads(g, rename)
        rename.update(cse(g, written))
    aliases = merge_renamed(aliases, rename)
    for g in graphs:
        fold_constants(g, written)
    constants = {}
    for g in graphs:
        constants.update(g.constants)
    saved = []
    if bwd is not None:
        dce(bwd, bwd.outputs, written)
        if generate_code:
            keep_conv_columns(fwd, bwd, captured.tensors)
            mask_before_scatter(fwd, bwd, written, captured.tensors)
        saved = saved_values(fwd, bwd, constants)
    dce(fwd, list(fwd.outputs) + saved, written)
    constants = {}
    for g in graphs:
        constants.update(g.constants)
    n = len(fwd.outputs)
    results = list(fwd.outputs) + saved
    if not generate_code:
        forward = Replay(fwd, fwd.inputs, results, constants, "forward")
        backward = bwd and Replay(bwd, list(bwd.inputs) + saved, bwd.outputs, constants,
                                  "backward")
    else:
        forward = CompiledGraph(fwd, fwd.inputs, results, constants, aliases,
                                _closure(results, aliases), "forward", captured.tensors)
        backward = None
        if bwd is not None:
            backward = CompiledGraph(bwd, list(bwd.inputs) + saved, bwd.outputs, constants,
                                     aliases, _closure(bwd.outputs, aliases), "backward",
                                     captured.tensors)
    captured.compiled = (forward, backward)
    return CompiledFunction(forward, backward, n, captured.diff_outputs, captured.grad_inputs,
                            captured.out_meta)
