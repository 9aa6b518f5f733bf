"""AOT autograd: compile the forward and the backward of a captured call ahead of time.

The capture (ember/_dynamo/eval_frame.py) records the forward ops and then the ops of the
derivative formulas that `autograd.grad` runs over them -- the joint graph, in two parts:

    forward graph    inputs (args, parameters, buffers) -> outputs + saved Values
    backward graph   grad_outputs + saved Values        -> one gradient per input that
                                                           requires grad

The saved Values are the forward tensors the backward formulas read: the partition falls out of
the recording. Both parts are optimised and compiled; at run time the compiled forward runs
under no_grad and returns its outputs with one autograd node, `CompiledFunctionBackward`, whose
`apply` runs the compiled backward. The engine sees one node for the whole call, as PyTorch's
engine sees one for a torch.compile'd region. The compiled backward is not itself
differentiable (create_graph=True through it raises), as PyTorch's is not by default.
"""
import numpy as np

from .._core.math_bits import math_bits, set_math_bits
from .._core.tensor import Tensor, _wrap_any, _wrap_external
from .._core.grad_mode import _grad_state
from ..autograd.graph import _Node as Node
from ..autograd.views import gradient_edge


def _as_tensor(r):
    """A tensor over an array the generated code returned: a block it allocated, or a view
    of a tensor's memory, wrapped without a copy (a read-only broadcast view is copied)."""
    if type(r) is np.ndarray and r.flags.writeable:
        return _wrap_external(r)
    return _wrap_any(r)


class CompiledFunctionBackward(Node):
    __slots__ = ("_backward", "_saved", "_out_meta", "_num_outputs", "_retain")

    def name(self):
        return "CompiledFunctionBackward"

    def apply(self, grads):
        if _grad_state.enabled:
            raise RuntimeError("ember.compile: the compiled backward is not differentiable "
                               "(create_graph=True through a compiled call is not supported)")
        arrays = []
        for g, (shape, dt) in zip(grads, self._out_meta):
            arrays.append(_wrap_any(np.zeros(shape, dt)) if g is None else g)
        if self._saved is None:
            raise RuntimeError("Trying to backward through the graph a second time (or directly "
                               "access saved tensors after they have already been freed).")
        result = self._backward(arrays + self._saved)
        return [None if r is None else (r if isinstance(r, Tensor) else _as_tensor(r))
                for r in result]


    def _release_saved(self):
        self._saved = None


class CompiledFunction:
    """The runtime of a compiled joint graph: forward, then one backward node."""

    def __init__(self, forward, backward, n_outputs, diff_outputs, grad_inputs, out_meta):
        self.forward = forward          # inputs -> outputs + saved
        self.backward = backward        # grads + saved -> grads of grad_inputs
        self.n_outputs = n_outputs
        self.diff_outputs = diff_outputs  # positions of outputs that get gradients
        self.grad_inputs = grad_inputs    # positions of inputs that receive them
        self.out_meta = out_meta          # (shape, numpy dtype) of each differentiable output

    def __call__(self, inputs):
        prev = _grad_state.enabled
        _grad_state.enabled = False
        try:
            result = self.forward(inputs)
        finally:
            _grad_state.enabled = prev
        n = self.n_outputs
        outs = [r if isinstance(r, Tensor) or not hasattr(r, "dtype") else _as_tensor(r)
                for r in result[:n]]
        if not (prev and self.backward is not None and
                any(inputs[i].requires_grad for i in self.grad_inputs)):
            return outs
        node = CompiledFunctionBackward()
        node.next_functions = tuple(gradient_edge(inputs[i]) for i in self.grad_inputs)
        node._backward = self.backward
        node._saved = [r if isinstance(r, Tensor) else _as_tensor(r) for r in result[n:]]
        node._out_meta = self.out_meta
        node._num_outputs = len(self.diff_outputs)
        for k, pos in enumerate(self.diff_outputs):
            o = outs[pos]
            if any(o is inputs[i] for i in range(len(inputs))):
                bits = math_bits(o)   # (a conjugate/negative view stays one)
                o = outs[pos] = _wrap_any(o._np)
                if bits is not None:
                    set_math_bits(o, bits.conj, bits.neg)
            o._rg = True
            o.grad_fn = node
            o._output_nr = k
        return outs
