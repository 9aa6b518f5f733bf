"""Graph nodes: Node (PyTorch's torch::autograd::Node), AccumulateGrad, saved tensors, hooks.

Every differentiable op's result gets `grad_fn`, a Node whose `next_functions` are the edges
(node, input_nr) to the producers of its inputs; a leaf that requires grad is reached through
its AccumulateGrad node, which writes `.grad`.

    x (leaf) --> AccumulateGrad <--+
                                    \\
    y = x * w ---------------> MulBackward0 --> AccumulateGrad --> w (leaf)
"""
import itertools
import weakref

from .grad_mode import _grad_state

_seq = itertools.count()


class RemovableHandle:
    """Returned by every register_*hook: `handle.remove()` takes the hook out again."""
    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Node:
    """A function of the backward graph. Subclasses implement `apply(grads) -> grads`."""
    __slots__ = ("next_functions", "_seq", "_pre_hooks", "_hooks", "_tensor_pre_hooks",
                 "_retain_grad_hooks", "_anomaly_trace", "metadata_", "__weakref__")

    def __init__(self):
        self.next_functions = ()
        self._seq = next(_seq)
        self._pre_hooks = None
        self._hooks = None
        self._tensor_pre_hooks = None
        self._retain_grad_hooks = None
        self._anomaly_trace = None
        self.metadata_ = None

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        if self.metadata_ is None:
            self.metadata_ = {}
        return self.metadata_

    def apply(self, grads):
        raise NotImplementedError

    def __call__(self, *grads):
        return self.apply(grads)

    def _sequence_nr(self):
        return self._seq

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None, before the node runs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = fn
        return h

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None, after the node runs."""
        if self._hooks is None:
            self._hooks = {}
        h = RemovableHandle(self._hooks)
        self._hooks[h.id] = fn
        return h

    def _register_tensor_pre_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.setdefault(output_nr, {})
        h = RemovableHandle(hooks)
        hooks[h.id] = fn
        return h

    def _release_saved(self):
        pass

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient into `variable.grad`."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        Node.__init__(self)
        self.variable = variable
        self._seq = float("inf")  # PyTorch runs accumulators as soon as they are ready

    def apply(self, grads):
        from .engine import accumulate_grad
        accumulate_grad(self.variable, grads[0])
        return ()


def grad_accumulator(t):
    """The one AccumulateGrad of leaf `t` (kept alive by the graph, looked up by weakref)."""
    ref = t._grad_acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_acc = weakref.ref(acc)
    return acc


def gradient_edge(t):
    """(node, input_nr) that a gradient for `t` flows into, or (None, 0) if none."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._rg:
        return (grad_accumulator(t), 0)
    return (None, 0)


class SavedTensor:
    """A tensor saved for backward, with the version it had then (PyTorch's SavedVariable).

    An output saved by its own node is stored as a plain alias (no grad_fn), so the output does
    not keep its node alive through a reference cycle; unpacking gives it its grad_fn back.
    """
    __slots__ = ("_t", "_version", "_is_output", "_output_nr", "_fn_name")

    def __init__(self, t, is_output=False, output_nr=0):
        from .._tensor import _alias
        self._version = t._storage_()._version
        self._is_output = is_output
        self._output_nr = output_nr
        if is_output:
            self._t = _alias(t)
            self._fn_name = None
        else:
            self._t = t
            self._fn_name = t.grad_fn.name() if t.grad_fn is not None else None

    def unpack(self, node):
        t = self._t
        if t._storage_()._version != self._version:
            producer = node.name() if self._is_output else self._fn_name
            where = f", which is output {self._output_nr} of {producer}," if producer else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{_type_name(t)} {list(t._size)}]{where} is at version "
                f"{t._storage_()._version}; expected version {self._version} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True).")
        if self._is_output and _grad_state.enabled:
            from .._tensor import _alias
            t = _alias(t)
            t._rg = True
            t.grad_fn = node
            t._output_nr = self._output_nr
        return t


def _type_name(t):
    names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
             "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
             "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
             "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
             "complex128": "ComplexDoubleTensor"}
    return "torch." + names.get(t.dtype.name, "Tensor")


# ---- tensor hooks ---------------------------------------------------------------------------
def register_tensor_hook(t, hook):
    """hook(grad) -> new grad or None, run when the gradient for `t` is computed."""
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = t.grad_fn if t.grad_fn is not None else grad_accumulator(t)
    # a leaf's hooks live on its accumulator; keep it alive as long as the tensor
    if t.grad_fn is None:
        t._acc_keepalive = node
    return node._register_tensor_pre_hook(t._output_nr if t.grad_fn is not None else 0, hook)


def retain_grad(t):
    if not t._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None or t._retains_grad:
        return
    node = t.grad_fn
    ref = weakref.ref(t)

    def store(grad):
        var = ref()
        if var is None:
            return
        from .._tensor import _alias
        if var._grad is None:
            var._grad = _alias(grad) if not _grad_state.enabled else grad
            if not _grad_state.enabled:
                var._grad = grad.clone()
        else:
            var._grad = var._grad + grad
    if node._retain_grad_hooks is None:
        node._retain_grad_hooks = {}
    node._retain_grad_hooks[t._output_nr] = store
    t._retains_grad = True


def register_post_accumulate_grad_hook(t, hook):
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if t._post_acc_hooks is None:
        t._post_acc_hooks = {}
    h = RemovableHandle(t._post_acc_hooks)
    t._post_acc_hooks[h.id] = hook
    return h
