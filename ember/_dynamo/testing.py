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
