"""Helpers for testing ember.compile (torch._dynamo.testing)."""


class CompileCounter:
    """A backend counting the graphs it is given and the ops in them; runs them eagerly."""

    def __init__(self):
        self.frame_count = 0
        self.op_count = 0

    def __call__(self, graph, example_inputs):
        self.frame_count += 1
        self.op_count += len(graph.forward.calls)
        return graph.forward.run_list

    def clear(self):
        self.frame_count = 0
        self.op_count = 0


class CompileCounterWithBackend(CompileCounter):
    """A CompileCounter that hands each graph on to a named backend ("eager", "aot_eager",
    ...) and keeps the graphs."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.graphs = []

    def __call__(self, graph, example_inputs):
        from .registry import lookup_backend
        super().__call__(graph, example_inputs)
        self.graphs.append(graph)
        return lookup_backend(self.backend)(graph, example_inputs)

    def clear(self):
        super().clear()
        self.graphs = []
