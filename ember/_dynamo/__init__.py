"""ember's Dynamo (torch._dynamo): ember.compile's capture, guards, graph breaks and the
backend registry. See eval_frame.py."""
from . import exc, utils, testing
from .registry import register_backend, lookup_backend, list_backends
from .eval_frame import OptimizedModule, reset, is_compiling, graph_break


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """torch._dynamo.disable: leave `fn` uncompiled (ember's capture records its ops like any
    others); without `fn`, a decorator."""
    return fn if fn is not None else (lambda f: f)


def allow_in_graph(fn):
    """torch._dynamo.allow_in_graph: put `fn` in the graph as one call rather than tracing into
    it; ember's capture records the ops `fn` runs like any others, so `fn` is returned as is."""
    return fn


def optimize(backend="ember", nopython=False, **kwargs):
    from .eval_frame import compile
    return lambda fn: compile(fn, backend=backend, fullgraph=nopython)


class ExplainOutput:
    """What `explain(fn)(*args)` found: the graphs captured, the graph breaks and why."""

    def __init__(self, graphs, break_reasons):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.op_count = sum(len(g.calls) for g in graphs)

    def __str__(self):
        out = [f"Graph Count: {self.graph_count}", f"Graph Break Count: "
               f"{self.graph_break_count}", f"Op Count: {self.op_count}"]
        if self.break_reasons:
            out.append("Break Reasons:")
            out += [f"  {r}" for r in self.break_reasons]
        return "\n".join(out)


def explain(f, *extra_args, **extra_kwargs):
    """torch._dynamo.explain: `explain(fn)(*args)` compiles and runs `fn` once, reporting the
    graphs it captured and the graph breaks."""
    from .eval_frame import compile
    from .._dispatch.explain import explain as watch

    def inner(*args, **kwargs):
        graphs = []

        def backend(graph, example_inputs):
            graphs.append(graph.forward)
            return graph.forward.run_list
        with watch() as ex:
            compile(f, backend=backend)(*args, **kwargs)
        return ExplainOutput(graphs, [reason for _, reason in ex.graph_breaks])
    return inner
