"""`jit.trace`: run a function or module on example inputs and keep the ops it called.

As PyTorch's tracer, the trace is what the example run did: Python control flow is not recorded
(the branch taken is baked in), and reading a tensor's value in Python (`.item()`, `if t:`) makes
a constant of it -- the tracer warns with a `TracerWarning` each time. The result replays the
recorded ops through the dispatcher, so autograd works on it as on the original; the module's
parameters and buffers are inputs of the graph, read afresh on every call.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .._core.tensor import Tensor
from .._dispatch.recorder import Graph, GraphRecorder, Value, flatten, unflatten
from ..autograd.grad_mode import no_grad
from .._bindings import indexing as _indexing

_tracing = _indexing.tracing_slices  # indexing keeps whole-dim slices while tracing


class TracerWarning(Warning):
    """A construct the trace cannot record; the trace may not generalise to other inputs."""

    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="ember.(?!jit)")


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error
        if tensor_compare_error is not None:
            self.message += tensor_compare_error
        super().__init__(self.message)


def is_tracing():
    return _tracing[0]


def _warn_data_access(kind, t):
    warnings.warn(
        f"Converting a tensor to {kind} might cause the trace to be incorrect. We can't record "
        "the data flow of Python values, so this value will be treated as a constant in the "
        "future. This means that the trace might not generalize to other inputs!",
        TracerWarning, stacklevel=_user_stacklevel())


def record(fn, args, named_state=()):
    """Run `fn(*args)` recording its ops: the Graph (inputs: the tensor args, then the named
    state tensors) and the output spec."""
    recorder = GraphRecorder(on_data_access=lambda kind, t: _warn_data_access(kind, t))
    leaves, in_spec = flatten(list(args))
    for i, a in enumerate(leaves):
        if isinstance(a, Tensor):
            recorder.add_input(a, f"input_{i}" if len(leaves) > 1 else "input")
    for name, t in named_state:
        if id(t) not in recorder.values:
            recorder.add_input(t, name)
    _tracing[0] = True
    try:
        with recorder:
            out = fn(*args)
    finally:
        _tracing[0] = False
    out_leaves, out_spec = flatten(out)
    graph = recorder.graph
    graph.outputs = [recorder.value_of(o) if isinstance(o, Tensor) else o for o in out_leaves]
    return graph, out_spec, out


class ScriptModule(Module):
    """A module whose forward is a recorded graph (TorchScript's ScriptModule role)."""

    def __init__(self):
        super().__init__()
        self.__dict__["_graph"] = None
        self.__dict__["_out_spec"] = None
        self.__dict__["_state_names"] = []
        self.__dict__["_n_args"] = 0

    @property
    def graph(self):
        return self._graph

    @property
    def code(self):
        from ._codegen import python_code
        return python_code(self._graph, self._n_args)

    def forward(self, *args):
        leaves, _ = flatten(list(args))
        tensors = [a for a in leaves if isinstance(a, Tensor)]
        if len(tensors) != self._n_args:
            raise RuntimeError(f"forward() expected {self._n_args} tensor argument(s) as "
                               f"traced, got {len(tensors)}")
        state = dict(self.named_parameters())
        state.update(self.named_buffers())
        if "_signature" in self.__dict__:
            from ._script import check_signature
            check_signature(self, tensors)
        inputs = tensors + [state[n] for n in self._state_names]
        return unflatten(self._graph.run(*inputs), self._out_spec)

    def save(self, f, **kwargs):
        from ._serialization import save
        save(self, f, **kwargs)


class TracedModule(ScriptModule):
    pass


class TopLevelTracedModule(TracedModule):
    pass


class ScriptMethod:
    """torch.ScriptMethod, a TorchScript-compiled method of a ScriptModule. ember's scripted and
    traced modules keep their Python methods, so nothing is one (code asks `isinstance`)."""


class ScriptFunction(ScriptModule):
    """A traced free function (it holds no parameters)."""

    def __init__(self, name="forward"):
        super().__init__()
        self.__dict__["name"] = name

    def __repr__(self):
        return f"<ember.jit.ScriptFunction {self.name}>"


def _adopt_state(traced, module):
    """Give `traced` the parameters and buffers of `module` under the same dotted names."""
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        owner = traced
        *path, leaf = name.split(".")
        for p in path:
            if p not in owner._modules:
                owner.add_module(p, Module())
            owner = owner._modules[p]
        if isinstance(t, Parameter):
            owner.register_parameter(leaf, t)
        else:
            owner.register_buffer(leaf, t)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Trace `func` (a function or a Module) on `example_inputs`; see the module docstring."""
    if example_kwarg_inputs is not None:
        raise NotImplementedError("ember.jit.trace: example_kwarg_inputs is not supported; pass "
                                  "the inputs positionally as example_inputs")
    if example_inputs is None:
        raise RuntimeError("ember.jit.trace needs example_inputs (a tensor or a tuple of them)")
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    if isinstance(func, Module):
        state = list(func.named_parameters()) + list(func.named_buffers())
        traced = TopLevelTracedModule()
        _adopt_state(traced, func)
        traced.train(func.training)
        name = type(func).__name__
    elif callable(func):
        state = []
        traced = ScriptFunction(getattr(func, "__name__", "forward"))
        name = traced.name
    else:
        raise TypeError(f"ember.jit.trace expects a Module or a function, got "
                        f"{type(func).__name__}")
    graph, out_spec, expected = record(func, args, state)
    in_leaves, _ = flatten(list(args))
    traced.__dict__.update(_graph=graph, _out_spec=out_spec, _n_args=sum(
        isinstance(a, Tensor) for a in in_leaves), _state_names=[n for n, _ in state if any(
            v.name == n for v in graph.inputs)], _original_name=name)
    if check_trace:
        for inputs in (check_inputs or [args]):
            inputs = inputs if isinstance(inputs, tuple) else (inputs,)
            _check(func, traced, inputs, check_tolerance)
    return traced


def _check(func, traced, inputs, tol):
    """Compare the trace's replay with the Python function on `inputs` (PyTorch's check_trace)."""
    with no_grad():
        want, _ = flatten(func(*inputs))
        got, _ = flatten(traced(*inputs))
    for i, (w, g) in enumerate(zip(want, got)):
        if isinstance(w, Tensor) and isinstance(g, Tensor):
            if w.shape != g.shape or not bool(_close(g, w, tol)):
                warnings.warn(f"Output nr {i + 1}. of the traced function does not match the "
                              "corresponding output of the Python function. Detailed error:\n"
                              "Tensor-likes are not close!", TracerWarning, stacklevel=_user_stacklevel())


def _close(a, b, tol):
    import numpy as np
    return np.allclose(a.numpy(force=True), b.numpy(force=True), rtol=tol, atol=tol, equal_nan=True)


def trace_module(mod, inputs, **kwargs):
    if set(inputs) != {"forward"}:
        raise NotImplementedError(f"ember.jit.trace_module traces forward only; asked for "
                                  f"{sorted(inputs)}")
    return trace(mod, inputs["forward"], **kwargs)


__all__ = ["trace", "trace_module", "is_tracing", "TracerWarning", "TracingCheckError",
           "ScriptModule", "TracedModule", "TopLevelTracedModule", "ScriptFunction", "Graph",
           "Value"]
