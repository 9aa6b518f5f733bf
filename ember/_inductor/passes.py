"""Graph passes over a recorded graph (ember/_dispatch/recorder.py): common-subexpression
elimination, constant folding and dead-code elimination.

The calls run in order on tensors that can be written in place, so a pass may only move or drop
a call whose result cannot be told apart: a call is *pure* when it draws no random numbers,
writes none of its arguments, allocates no uninitialised memory, and reads no tensor that some
call writes (or that shares memory with one). Only pure calls are merged or folded; every impure
call is kept, in place.
"""
from .._core.tensor import Tensor
from .._dispatch.recorder import Value
from ..autograd.grad_mode import no_grad

_RANDOM_WORDS = ("rand", "dropout", "bernoulli", "normal", "multinomial", "poisson", "uniform",
                 "exponential", "geometric", "cauchy")


def is_random(op):
    return (any("Generator" in a.type for a in op.schema.arguments)
            or any(w in op.schema.name for w in _RANDOM_WORDS))


def writes(op):
    return any(a.mutable for a in op.schema.arguments)


def written_values(graphs, aliases):
    """Values some call writes in place, with every Value sharing memory with them."""
    out = set()
    for g in graphs:
        for c in g.calls:
            if writes(c.op):
                for a, v in zip(c.op.schema.arguments, c.args):
                    if a.mutable and type(v) is Value:
                        out.add(v)
    return {w for v in out for w in aliases.get(v, (v,))} | out


def is_pure(call, written):
    op = call.op
    if is_random(op) or writes(op) or op.schema.name.startswith(("empty", "new_empty")):
        return False
    return not any(v in written for v in call.values_read()) and \
        not any(v in written for v in call.outs if v is not None)


def _key(a):
    if type(a) is list:
        return ("list",) + tuple(_key(x) for x in a)
    if type(a) is Value:
        return ("v", a.index)
    if isinstance(a, float) and a != a:
        return ("nan",)
    return (type(a).__name__, a if _hashable(a) else repr(a))


def _hashable(a):
    try:
        hash(a)
        return True
    except TypeError:
        return False


def _substitute(a, rename):
    if type(a) is Value:
        return rename.get(a, a)
    if type(a) is list:
        return [rename.get(x, x) if type(x) is Value else x for x in a]
    return a


def rename_reads(graph, rename):
    for c in graph.calls:
        c.args = tuple(_substitute(a, rename) for a in c.args)
    graph.outputs = [_substitute(o, rename) for o in graph.outputs]


def cse(graph, written):
    """Merge pure calls with the same op and arguments; returns {dropped Value: kept Value}."""
    seen, rename, kept = {}, {}, []
    for c in graph.calls:
        c.args = tuple(_substitute(a, rename) for a in c.args)
        if is_pure(c, written):
            key = (c.op.name,) + tuple(_key(a) for a in c.args)
            first = seen.get(key)
            if first is not None:
                for old, new in zip(c.outs, first.outs):
                    if old is not None:
                        rename[old] = new
                continue
            seen[key] = c
        kept.append(c)
    graph.calls = kept
    graph.outputs = [_substitute(o, rename) for o in graph.outputs]
    return rename


def fold_constants(graph, written):
    """Run now the pure calls that read nothing or only what such calls made (`ones(3) * 4`);
    their results become constants. A tensor the graph merely refers to (a closed-over tensor)
    is not folded through: its owner may change it between calls."""
    kept, folded = [], set()
    for c in graph.calls:
        reads = list(c.values_read())
        if is_pure(c, written) and all(v in folded for v in reads) and \
                all(v is not None for v in c.outs):
            args = [_load(graph.constants, a) for a in c.args]
            with no_grad():
                out = c.op(*args)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            if all(isinstance(o, Tensor) for o in outs):
                for v, o in zip(c.outs, outs):
                    graph.constants[v] = o
                    folded.add(v)
                continue
        kept.append(c)
    graph.calls = kept


def _load(env, a):
    if type(a) is Value:
        return env[a]
    if type(a) is list:
        return [env[x] if type(x) is Value else x for x in a]
    return a


def dce(graph, roots, written):
    """Drop calls whose results nothing needs: walk the calls backwards from `roots` (the
    Values that leave the graph), keeping impure calls always."""
    live = {v for v in roots if type(v) is Value}
    kept = []
    for c in reversed(graph.calls):
        if not is_pure(c, written) or any(v in live for v in c.outs if v is not None):
            kept.append(c)
            live.update(c.values_read())
    kept.reverse()
    graph.calls = kept
