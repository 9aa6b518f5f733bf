"""The nodes of torch._C._functions, autograd nodes that PyTorch's C++ side hands to Python.

`DelayedError(msg, num_inputs)(*tensors)` returns the tensors (sharing memory) with an `Error`
node as grad_fn: using them forward is fine, differentiating through them raises `msg`
(`once_differentiable` uses it so that a second backward fails loudly). `UndefinedGrad()(*t)`
does the same with a node whose backward returns undefined (None) gradients.
"""
from .._core.grad_mode import _grad_state
from .graph import _Node as Node
from .graph import Node as _PublicNode
from .views import gradient_edge


class Error(Node):
    def __init__(self, msg):
        Node.__init__(self)
        self.msg = msg

    def apply(self, grads):
        raise RuntimeError(self.msg)


class UndefinedGradBackward(Node):
    def apply(self, grads):
        return [None] * len(self.next_functions)


def _wrap_outputs(inputs, node):
    """The inputs as new tensors on the same memory; with grad mode on and an input requiring
    grad, `node` is their grad_fn and its edges lead to the inputs' (None for a None input)."""
    outs = [t.detach() if t is not None else None for t in inputs]
    if _grad_state.enabled and any(t is not None and t.requires_grad for t in inputs):
        node.next_functions = tuple(gradient_edge(t) if t is not None else (None, 0)
                                    for t in inputs)
        node._num_outputs = len(outs)
        for k, o in enumerate(outs):
            if o is not None:
                o._rg = True
                o.grad_fn = node
                o._output_nr = k
    return outs[0] if len(outs) == 1 else tuple(outs)


class DelayedError:
    def __init__(self, msg, num_inputs):
        self.msg = msg.decode() if isinstance(msg, bytes) else msg
        self.num_inputs = num_inputs

    def __call__(self, *inputs):
        if len(inputs) != self.num_inputs:
            raise TypeError(f"DelayedError expected {self.num_inputs} inputs, got {len(inputs)}")
        return _wrap_outputs(inputs, Error(self.msg))


class UndefinedGrad:
    def __call__(self, *inputs):
        return _wrap_outputs(inputs, UndefinedGradBackward())


# node factories in PyTorch's torch._C._functions, where they are Node subclasses
_PublicNode.register(DelayedError)
_PublicNode.register(UndefinedGrad)
