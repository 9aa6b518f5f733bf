"""The recorder behind ember.onnx.export: run the model once and keep every op call as a node of
a flat graph, as PyTorch's TorchScript exporter does with torch.jit.trace.

The recorder is a dispatch mode (`_dispatcher._modes`): it sees each op call with its arguments
and results, and names each tensor by the `id` of the object (every tensor seen is kept alive, so
an id is never reused). A tensor that comes from none of the recorded calls is a model input, a
parameter or buffer (named by its state-dict key), or a constant; an op none of whose tensors
depends on an input or a parameter is not recorded at all -- its results are constants (masks
and zeros built inside forward), the tracer's form of constant folding.

Which calls become nodes: an op the exporter has a symbolic function for is one node, and the
ops its kernel calls are not recorded; a composite op without one is looked through (its ops are
recorded); any other op is a node too, and export then reports it as unsupported. An
autograd.Function with a `symbolic` static method is one node as well (recorded through
`function._apply_observers`); one without is recorded through the ops its forward calls.

Converting a traced tensor to a Python value (`bool(t)`, `t.item()`, `t.tolist()`, `t.numpy()`)
means the trace took a branch, a size or a result from data it cannot follow: a TracerWarning
says so, as PyTorch's tracer does.
"""
import sys
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .._core.math_bits import resolved_values
from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from ..autograd import function as _function
from ..jit._trace import TracerWarning  # one warning class for every tracer, as torch.jit's


def _values(t):
    """A copy of the values of a tensor the graph holds as a constant or parameter."""
    return resolved_values(t.detach())._np.copy()


class TracedValue:
    """One tensor of the trace. kind: "input", "param" (name = state-dict key), "const" or "op"
    (produced by a node); `const` holds the array of a param or const."""
    __slots__ = ("kind", "name", "shape", "dtype", "const")

    def __init__(self, kind, name, tensor, const=None):
        self.kind, self.name, self.const = kind, name, const
        self.shape, self.dtype = tuple(tensor.shape), tensor.dtype

    def __repr__(self):
        return f"<{self.kind} {self.name} {list(self.shape)} {self.dtype}>"


class TracedNode:
    """One recorded call. `target` is an OpOverload, or the Function class when kind is
    "function"; args/kwargs hold TracedValues where the call had tensors; outputs has a
    TracedValue per tensor result (None for other results)."""
    __slots__ = ("kind", "target", "args", "kwargs", "outputs")

    def __init__(self, kind, target, args, kwargs, outputs):
        self.kind, self.target, self.args, self.kwargs, self.outputs = \
            kind, target, args, kwargs, outputs

    @property
    def name(self):
        if self.kind == "function":
            return self.target.__qualname__
        return self.target.name.split(".")[0]  # aten::add.Tensor -> aten::add


class Trace:
    """Run `fn(*args)` once and record it. `params` maps id(tensor) -> state-dict name;
    `is_node(op)` says whether an op is recorded as one node (it has a symbolic function)."""

    def __init__(self, params, is_node):
        self.params, self.is_node = params, is_node
        self.values = {}       # id(tensor) -> TracedValue
        self.nodes = []
        self.inputs = []
        self._alive = []
        self._inside = 0      # > 0 while a recorded node's own calls run
        self._read = []       # traced values the model read into Python (int(n), n.item())

    def run(self, fn, args, inputs, input_names):
        """fn(*args), with the tensors `inputs` (found in args) as the graph's inputs."""
        for name, t in zip(input_names, inputs):
            if id(t) in self.values:
                raise ValueError(f"ember.onnx.export: input {name} is the same tensor as an "
                                 "earlier input; pass distinct tensors")
            self.inputs.append(self._value(t, "input", name))
        patched = {name: getattr(Tensor, name) for name in (*_CONVERSIONS, "detach")}
        for name, message in _CONVERSIONS.items():
            setattr(Tensor, name, self._warning(patched[name], message))
        Tensor.detach = self._same_value(patched["detach"])
        _dispatcher._modes.append(self._on_op)
        _function._apply_observers.append(self._on_function)
        try:
            return fn(*args)
        finally:
            _function._apply_observers.remove(self._on_function)
            _dispatcher._modes.remove(self._on_op)
            for name, method in patched.items():
                setattr(Tensor, name, method)

    def value_of(self, t):
        """The TracedValue of a tensor met as an argument or a result of the model."""
        v = self.values.get(id(t))
        if v is not None:
            return v
        name = self.params.get(id(t))
        if name is not None:
            return self._value(t, "param", name, _values(t))
        return self._value(t, "const", f"const_{len(self.values)}", _values(t))

    def inputs_read(self):
        """The names of the inputs a value the model read into Python was computed from."""
        producer = {id(o): n for n in self.nodes for o in n.outputs if o is not None}
        stack, seen, names = list(self._read), set(), set()
        while stack:
            v = stack.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            if v.kind == "input":
                names.add(v.name)
            node = producer.get(id(v))
            if node is not None:
                stack.extend(_traced_in(node.args) + _traced_in(node.kwargs))
        return names

    # ---- recording ------------------------------------------------------------------------
    def _on_op(self, op, args, level):
        if (not self._inside and _draws_random(op)
                and op.name.split(".")[0] not in _SAMPLED_IN_GRAPH):
            raise RuntimeError(
                f"ember.onnx.export: the model draws random numbers ({op.short_name}) while it is "
                "traced (dropout in training mode?); the draw would be baked into the graph as "
                "a constant. Export in eval mode (training=TrainingMode.EVAL)")
        if self._inside or not self._depends_on_trace(args):
            return _dispatcher.call_in_modes(op, args, level - 1)
        if op._composite is not None and not self.is_node(op):
            return _dispatcher.call_in_modes(op, args, level - 1)
        if op._mutates and isinstance(args[0], Tensor) and args[0]._base is not None:
            return self._write_into_view(op, args, level)
        traced_args = self._arguments(args)
        out = self._run_inside(_dispatcher.call_in_modes, op, args, level - 1)
        self._record("op", op, traced_args, {}, out)
        return out

    def _write_into_view(self, op, args, level):
        """An in-place op on a view (`x[:, 2:] = 0`, `state[0] += y`): the op is recorded on
        the view's values, then a write-back node puts the view's new values into its base at
        the flat positions the view's strides address; the base's name then means the written
        tensor. Positions are the example's, so the written region has static sizes."""
        view, base = args[0], args[0]._base
        if not base.is_contiguous():
            raise RuntimeError(f"ember.onnx.export: the in-place op {op.short_name} writes into a "
                               "view of a non-contiguous tensor, which the traced graph cannot "
                               "express; write it out of place")
        traced_args = self._arguments(args)
        base_value = self.value_of(base)
        out = self._run_inside(_dispatcher.call_in_modes, op, args, level - 1)
        self._record("op", op, traced_args, {}, out)
        self._record("op", _WRITE_INTO_VIEW,
                     (base_value, self.values[id(view)], _view_positions(view, base)), {}, base)
        return out

    def _on_function(self, cls, args, kwargs):
        has_symbolic = callable(getattr(cls, "symbolic", None))
        if self._inside or not self._depends_on_trace(args):
            return self._apply(cls, args, kwargs)
        if has_symbolic:
            traced_args, traced_kwargs = self._arguments(args), self._arguments(kwargs)
            out = self._run_inside(self._apply, cls, args, kwargs)
            self._record("function", cls, traced_args, traced_kwargs, out)
            return out
        out = self._apply(cls, args, kwargs)
        for t in _tensors(out):
            if id(t) not in self.values:
                raise RuntimeError(
                    f"ember.onnx.export: autograd.Function {cls.__qualname__} has no symbolic "
                    "method and its forward computes a result outside ember's ops (e.g. through "
                    "NumPy), so the trace cannot see it; define "
                    f"{cls.__qualname__}.symbolic(g, *inputs) to say which ONNX ops it is")
        return out

    def _apply(self, cls, args, kwargs):
        observer = _function._apply_observers.pop()
        try:
            return cls.apply(*args, **kwargs)
        finally:
            _function._apply_observers.append(observer)

    def _run_inside(self, fn, *args, **kwargs):
        self._inside += 1
        try:
            return fn(*args, **kwargs)
        finally:
            self._inside -= 1

    def _record(self, kind, target, args, kwargs, out):
        outputs = []
        for k, t in enumerate(out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, Tensor):
                # an in-place op's result is its input object: the name now means the new value
                self.values.pop(id(t), None)
                outputs.append(self._value(t, "op", f"{kind}_{len(self.nodes)}_{k}"))
            else:
                outputs.append(None)
        self.nodes.append(TracedNode(kind, target, args, kwargs, outputs))

    def _depends_on_trace(self, args):
        for t in _tensors(args):
            if id(t) in self.params:
                return True
            v = self.values.get(id(t))
            if v is not None and v.kind != "const":
                return True
        return False

    def _arguments(self, args):
        if isinstance(args, dict):
            return {k: self._arguments(v) for k, v in args.items()}
        if isinstance(args, (tuple, list)):
            return type(args)(self._arguments(a) for a in args)
        return self.value_of(args) if isinstance(args, Tensor) else args

    def _value(self, t, kind, name, const=None):
        v = TracedValue(kind, name, t, const)
        self.values[id(t)] = v
        self._alive.append(t)
        return v

    def _same_value(self, method):
        """`t.detach()` is not an op call: its result stands for the same traced value."""
        trace = self

        def detach(t):
            out = method(t)
            v = trace.values.get(id(t))
            if v is not None:
                trace.values[id(out)] = v
                trace._alive.append(out)
            return out
        return detach

    def _warning(self, method, message):
        trace = self

        def converting(t, *args, **kwargs):
            v = trace.values.get(id(t))
            if not trace._inside and v is not None and v.kind in ("input", "op"):
                if _read_by_an_op_argument():
                    trace._read.append(v)
                warnings.warn(f"Converting a tensor to {message} might cause the trace "
                              "to be incorrect. We can't record the data flow of Python values, "
                              "so this value will be treated as a constant in the future. This "
                              "means that the trace might not generalize to other inputs!",
                              TracerWarning, stacklevel=_user_stacklevel())
            return trace._run_inside(method, t, *args, **kwargs)
        return converting


def _read_by_an_op_argument():
    """Whether the tensor being converted is an op's int/float/Scalar argument (read by the
    bindings' argument parser, `torch.tril(x, diagonal=n)`) rather than by the model's own code
    (`int(n)`): PyTorch's trace records the first kind of read (aten::Int), so the input it
    came from stays a graph input; ember's graph holds the value read, with the warning."""
    frame = sys._getframe(2)
    for _ in range(6):
        if frame is None:
            return False
        if frame.f_globals.get("__name__") == "ember._bindings.arg_parser":
            return True
        frame = frame.f_back
    return False


class _WriteIntoView:
    """The target of a write-back node (see Trace._write_into_view)."""
    name = "ember::write_into_view"
    short_name = "write_into_view"


_WRITE_INTO_VIEW = _WriteIntoView()


def _view_positions(view, base):
    """The flat (C-order) positions in the contiguous `base` of each element of `view`."""
    import numpy as np
    positions = np.full(tuple(view.shape), view.storage_offset() - base.storage_offset(),
                        dtype=np.int64)
    for dim, (size, stride) in enumerate(zip(view.shape, view.stride())):
        shape = [1] * view.dim()
        shape[dim] = size
        positions = positions + np.arange(size, dtype=np.int64).reshape(shape) * stride
    return positions


_CONVERSIONS = {"__bool__": "a Python boolean", "item": "a Python number",
                "tolist": "a Python list", "numpy": "a NumPy array"}


_random_ops = {}  # op -> whether it takes a Generator (draws random numbers)

# random ops whose ONNX form draws in the graph (each run samples anew, as PyTorch exports them)
_SAMPLED_IN_GRAPH = {"aten::multinomial"}


def _draws_random(op):
    random = _random_ops.get(op)
    if random is None:
        random = _random_ops[op] = any("Generator" in a.type for a in op.schema.arguments)
    return random


def _traced_in(obj):
    """The TracedValues in a node's (nested) arguments."""
    stack, found = [obj], []
    while stack:
        x = stack.pop()
        if isinstance(x, TracedValue):
            found.append(x)
        elif isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return found


def _tensors(obj):
    """The tensors in a nest of tuples, lists and dicts, in order; a dict gives its tensor keys
    and its values, as torch.jit._flatten does (no recursion)."""
    stack, found = [obj], []
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            found.append(x)
        elif isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            for k, v in reversed(list(x.items())):
                stack.extend((v, k))
    return found
