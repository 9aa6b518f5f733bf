"""The "onnxrt" compile backend (torch._dynamo.backends.onnxrt): the captured forward graph,
exported by ember.onnx and run by an ONNX Runtime session.

ONNX Runtime runs inference graphs. A graph that needs gradients (a training step) is compiled
by the default "ember" backend instead, with a warning, so `ember.compile(model,
backend="onnxrt")` works in both modes; the guards, recompilations and graph breaks are the same
as for every backend (ember/_dynamo/eval_frame.py). The graph's inputs are the call's tensors
followed by the module's parameters and buffers, so a parameter updated between calls is seen
by the next one.
"""
import warnings

import numpy as np


class _Replay:
    """The captured forward as a callable the exporter can trace (it replays the recorded ops
    through the dispatcher, where the exporter's tracer sees them)."""

    def __init__(self, graph):
        self.graph = graph
        self.training = False

    def train(self, mode=True):
        return self

    def __call__(self, *inputs):
        return tuple(self.graph.run(*inputs))


def compile_onnxrt(graph, example_inputs):
    from ..onnx.utils import export, _require_onnx
    if graph.backward is not None:
        warnings.warn("ember.compile(backend='onnxrt'): ONNX Runtime runs inference graphs; "
                      "this graph needs gradients, so the 'ember' backend compiles it")
        from .registry import lookup_backend
        return lookup_backend("ember")(graph, example_inputs)
    _require_onnx()
    import onnxruntime as ort
    from .. import from_numpy, get_num_threads

    inputs = [graph.tensors[v] for v in graph.forward.inputs]  # the capture run's values
    names = [f"input_{i}" for i in range(len(inputs))]
    model = export(_Replay(graph.forward), tuple(inputs), None, input_names=names,
                   do_constant_folding=False)
    options = ort.SessionOptions()
    options.intra_op_num_threads = get_num_threads()
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    used = {i.name for i in session.get_inputs()}  # inputs the graph does not read are pruned

    def run(tensors):
        feed = {n: np.ascontiguousarray(t.numpy(force=True)) for n, t in zip(names, tensors)
                if n in used}
        return [from_numpy(np.asarray(o)) for o in session.run(None, feed)]

    run.onnx_model = model
    return run
