"""Graph nodes: Node (PyTorch's torch::autograd::Node), AccumulateGrad, saved tensors, hooks.

Every differentiable op's result gets `grad_fn`, a Node whose `next_functions` are the edges
(node, input_nr) to the producers of its inputs; a leaf that requires grad is reached through
its AccumulateGrad node, which writes `.grad`.

    x (leaf) --> AccumulateGrad <--+
                                    \\
    y = x * w ---------------> MulBackward0 --> AccumulateGrad --> w (leaf)
"""
import abc
import itertools
import re
import weakref
from collections import OrderedDict
from typing import Any, NamedTuple

from .._core.dtype import TENSOR_TYPE_NAMES
from .._core.grad_mode import _grad_state
from .._core.mode_stack import torch_dispatch_modes
from .._core.python_key import PYTHON_KEY
from .._core.memory_format import contiguous_format, is_non_overlapping_and_dense
from .._core.layout import strided, sparse_coo
from .._core.sparse import make_sparse
from .._core.tensor import OWN_DTYPE, Tensor, _alias
from .._dispatch.dispatcher import cached_lookup
from . import saved_tensor_hooks as _saved_hooks
from .saved_tensor_hooks import (disable_saved_tensors_hooks, save_on_cpu,  # noqa: F401
                                 saved_tensors_hooks)
from .multi_grad_hook import register_multi_grad_hook  # noqa: F401
from .mutation_on_saved import allow_mutation_on_saved_tensors  # noqa: F401

_seq = itertools.count()


class RemovableHandle:
    """Returned by every register_*hook: `handle.remove()` takes the hook out again (public as
    `torch.utils.hooks.RemovableHandle`).

    It holds its hooks dict by weak reference (an OrderedDict: a plain dict cannot be weakly
    referenced), so a handle never keeps a graph's hooks alive; `extra_dict` (a dict or a list
    of them, e.g. a module's with_kwargs / always_call flags) loses the same key on remove.
    Pickling and deep copying carry the dicts themselves, so the handles of a copied module
    refer to the copy's dicts.
    """
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict or ())

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        # a dict already gone is restored as a dead reference
        self.hooks_dict_ref = weakref.ref(state[0] if state[0] is not None else OrderedDict())
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extra = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Node:
    """A function of the backward graph. Subclasses implement `apply(grads) -> grads`.
    (Public as `Node`, a virtual base class: see the end of this module.)

    Only the edges and the sequence number are set per node; hooks, anomaly traces and
    metadata are rare, so they default at class level and land in the instance's __dict__
    when set (`_hooked` tells the engine a node has any hook, one check per node).
    """
    __slots__ = ("next_functions", "_seq", "__dict__", "__weakref__")
    _pre_hooks = None
    _hooks = None
    _tensor_pre_hooks = None
    _retain_grad_hooks = None
    _hooked = False
    _anomaly_trace = None
    metadata_ = None
    _num_outputs = 1  # how many gradients the node takes (its forward op's outputs)

    def __init__(self):
        self.next_functions = ()
        self._seq = next(_seq)

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
        if len(grads) != self._num_outputs:
            raise TypeError(f"expected {self._num_outputs} arguments, got {len(grads)} instead")
        return self.apply(grads)

    def _sequence_nr(self):
        return self._seq

    def _set_sequence_nr(self, sequence_nr):
        """Reorder the node: among ready nodes, the engine runs the highest number first."""
        self._seq = sequence_nr

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None, before the node runs."""
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
            self._hooked = True
        return _add_hook(self._pre_hooks, fn)

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None, after the node runs."""
        if self._hooks is None:
            self._hooks = OrderedDict()
            self._hooked = True
        return _add_hook(self._hooks, fn)

    def _register_tensor_pre_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
            self._hooked = True
        hooks = self._tensor_pre_hooks.get(output_nr)
        if hooks is None:
            hooks = self._tensor_pre_hooks[output_nr] = OrderedDict()
        return _add_hook(hooks, fn)

    def _release_saved(self):
        pass

    def __repr__(self):  # the class's name: AccumulateGrad's name() is its C++ name
        return f"<{type(self).__name__} object at {hex(id(self))}>"


def sum_grads(a, b):
    """Two gradients for one input, added; a dense one first when the other is sparse
    (PyTorch adds sparse to dense, not dense to sparse)."""
    return b + a if _is_sparse_layout(a) and not _is_sparse_layout(b) else a + b


def summed_to(node, k, g, shape):
    """A gradient broadcast beyond its input's shape, summed back to it (PyTorch's engine
    validates every gradient so); any other shape is a bug of the backward, as in PyTorch.
    k counts the node's edges: a Function's tensor inputs, whatever comes between them."""
    try:
        return g.sum_to_size(shape)
    except RuntimeError:
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {k} - "
                           f"got {list(g._size)} but expected shape compatible with "
                           f"{list(shape)}") from None


def _is_sparse_layout(t):
    """COO or compressed (a conjugate view's or a Python-key tensor's mark is strided)."""
    return t._sparse is not None and t.layout is not strided


def _add_hook(hooks, fn):
    h = RemovableHandle(hooks)
    hooks[h.id] = fn
    return h


class AccumulateGrad(_Node):
    """The sink for a leaf: adds the incoming gradient into `variable.grad`."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        _Node.__init__(self)
        self.variable = variable
        self._seq = float("inf")  # PyTorch runs accumulators as soon as they are ready

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads):
        accumulate_grad(self.variable, grads[0])
        return ()


def accumulate_grad(variable, grad):
    """AccumulateGrad's body: `.grad = grad` the first time, `.grad += grad` after.

    The first gradient is stored as is when nobody else can hold it; a gradient buffer that
    is already some other leaf's `.grad` (an add's backward hands one tensor to both inputs)
    or that the caller passed in is copied, so two `.grad`s never share memory. A stored
    gradient keeps PyTorch's gradient layout contract: it has the strides of a
    non-overlapping and dense leaf (a channels_last parameter gets a channels_last `.grad`),
    else it is contiguous; one that does not is copied so.
    """
    if variable._size != grad._size:
        grad = grad.sum_to_size(variable._size)
    if grad.dtype is not variable.dtype or variable._grad_dtype is not OWN_DTYPE:
        wanted = variable.grad_dtype  # None: any dtype
        if wanted is not None and grad.dtype is not wanted:
            grad = grad.to(wanted)
    old = variable._grad
    if old is None and type(grad._sparse) is tuple:
        # a COO gradient has no layout to obey: a copy under create_graph, else a new sparse
        # tensor over the same entries (PyTorch's shallow copy)
        variable._grad = grad.clone() if _grad_state.enabled else \
            make_sparse(*grad._sparse[:2], grad._size, grad._sparse[2])
    elif old is None:
        if _grad_state.enabled:  # create_graph: always a copy (CopyBackwards), as PyTorch's
            new = clone_obey_contract(grad, variable)
        else:
            st = grad._storage_()
            if st._grad_claimed or not obeys_layout_contract(grad, variable):
                new = clone_obey_contract(grad.detach(), variable)
            else:
                new = grad.detach()  # aten.detach, as a TorchDispatchMode sees it
            new._storage_()._grad_claimed = True
        variable._grad = new
    elif _is_sparse_layout(old) and not _is_sparse_layout(grad):  # dense + sparse, not reverse
        variable._grad = grad + old
    elif _grad_state.enabled:
        variable._grad = old + grad
    else:
        old.add_(grad)
    hooks = variable._post_acc_hooks
    if hooks:
        for fn in list(hooks.values()):
            if fn(variable) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def obeys_layout_contract(grad, variable):
    """PyTorch's gradient layout contract: a dense leaf's gradient has the leaf's strides
    (size-1 dims aside, unless broadcast with stride 0); any other leaf's is contiguous."""
    if variable.layout not in (strided, sparse_coo):
        return True  # a compressed leaf has no strides: its gradient is kept as it comes
    gst = grad.stride()
    vst = variable.stride()
    if gst == vst:
        return True
    if not is_non_overlapping_and_dense(variable._size, vst):
        return grad.is_contiguous()
    for size, g, v in zip(grad._size, gst, vst):
        if g != v if size != 1 else g == 0:
            return False
    return True


def clone_obey_contract(grad, variable):
    """A copy of `grad` laid out by the gradient layout contract (the leaf's strides when it
    is non-overlapping and dense, else contiguous)."""
    from .. import empty_strided
    vst = variable.stride()
    if is_non_overlapping_and_dense(variable._size, vst):
        return empty_strided(variable._size, vst, dtype=grad.dtype, device=grad.device).copy_(
            grad)
    return grad.clone(memory_format=contiguous_format)


def reset_grad_accumulator(t):
    """After set_ changes what a leaf is, PyTorch gives it a new AccumulateGrad: graphs recorded
    before feed the old one, so grad() w.r.t. the leaf no longer reaches them (a GradientEdge
    taken before still does). The tensor's hooks move to the new accumulator."""
    old = t._grad_acc() if t._grad_acc is not None else None
    if t.grad_fn is not None or old is None:
        return
    t._grad_acc = None
    if old._tensor_pre_hooks:
        new = t._acc_keepalive = grad_accumulator(t)
        new._tensor_pre_hooks, new._hooked = old._tensor_pre_hooks, True


def grad_accumulator(t):
    """The one AccumulateGrad of leaf `t` (kept alive by the graph, looked up by weakref)."""
    ref = t._grad_acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_acc = weakref.ref(acc)
    return acc


class SavedTensor:
    """A tensor saved for backward, with the version it had then (PyTorch's SavedVariable).

    An output saved by its own node is stored as a plain alias (no grad_fn), so the output does
    not keep its node alive through a reference cycle; unpacking gives it its grad_fn back.
    """
    __slots__ = ("_t", "_version", "_is_output", "_output_nr", "_hooks", "_view_of")

    def __init__(self, t=None, is_output=False, output_nr=0):
        if t is None:
            raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
        if t._inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or "
                "use `torch.no_grad()` instead of `torch.inference_mode()`.")
        # a tensor without a storage object yet (a fresh kernel result) has never been
        # written in place: its version is 0, and reading it creates no storage
        storage = t._storage
        self._version = 0 if storage is None else storage._version
        self._is_output = is_output
        self._output_nr = output_nr
        self._hooks = None  # (packed, unpack_hook, ...) once saved_tensor_hooks.pack ran
        self._view_of = None  # (weakref to the base, view_recipe): an in-place op's view output
        if _saved_hooks.default_hooks:
            _saved_hooks.pack(self, t, _saved_hooks.default_hooks[-1])
        else:
            self._t = t.detach() if is_output else t  # (aten.detach, as a dispatch mode sees it)

    @classmethod
    def _of_none(cls):
        """What a node shows for a None it was given to save (`_raw_saved_tensors`)."""
        saved = object.__new__(cls)
        saved._t = saved._hooks = saved._version = None   # no version: nothing was saved
        saved._is_output, saved._output_nr = False, 0
        return saved

    def register_hooks(self, *hooks):
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError("register_hooks(): incompatible function arguments. The following "
                            "argument types are supported:\n    1. (self: SavedTensor, "
                            "pack_hook: Callable, unpack_hook: Callable) -> None")
        pack_hook, unpack_hook = hooks
        if self._version is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        _saved_hooks.register(self, pack_hook, unpack_hook)

    @property
    def data(self):
        """What is stored: the pack hook's result, else the tensor (an output: its alias)."""
        return self._t if self._hooks is None else self._hooks[0]

    @property
    def unpack_hook(self):
        return None if self._hooks is None else self._hooks[1]

    def unpack(self, node=None):
        if self._hooks is not None:
            return _saved_hooks.unpack(self, node)
        t = self._t
        storage = t._storage
        if (0 if storage is None else storage._version) != self._version:
            self._raise_modified(node)
        if not self._is_output and t.grad_fn is None and not t._rg and \
                "_detached_inplace" in t.__dict__:
            raise RuntimeError("Trying to use a saved tensor that has been detached in-place, "
                               "i.e. with .detach_().This is not supported, please use "
                               "out-of-place `.detach()` instead")
        if self._is_output and _grad_state.enabled:
            fw = t.__dict__.get("_fw_grad")  # forward AD's tangent (forward over reverse)
            t = _alias(t)
            if fw is not None:
                t.__dict__["_fw_grad"] = fw
            t._rg = True
            t.grad_fn = node
            t._output_nr = self._output_nr
            if self._view_of is not None:
                # the output of an in-place op on a view is that view of the base written by
                # the op (PyTorch's SavedVariable keeps the view's grad_fn for it): its gradient
                # goes to the base's history, of which `node` is a part behind CopySlices
                base = self._view_of[0]()
                if base is not None:
                    from .views import view_node
                    t.grad_fn = view_node(base, self._view_of[1])
                    t._output_nr = 0
        elif self._is_output and (torch_dispatch_modes or t._sparse is PYTHON_KEY):
            t = t.detach()   # what PyTorch's unpacking dispatches, for its handlers to see
        return t

    def _raise_modified(self, node):
        from . import anomaly_mode
        t = self._t
        producer = node if self._is_output else t.grad_fn  # a saved input: its grad_fn now
        producer = producer and short_name(producer)
        where = f", which is output {self._output_nr} of {producer}," if producer else ""
        hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!" if anomaly_mode._enabled else
                "Hint: enable anomaly detection to find the operation that failed to compute "
                "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{_type_name(t)} {list(t._size)}]{where} is at version "
            f"{t._storage_()._version}; expected version {self._version} instead. {hint}")


def freed_error():
    """What reading a saved tensor after backward freed it raises."""
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward.")


def short_name(node):
    """A node's name as PyTorch's error messages give it: MulBackward0 -> Mul."""
    return re.sub(r"Backward\d*$", "", node.name())


def _type_name(t):
    return "torch." + TENSOR_TYPE_NAMES.get(t.dtype, "Tensor")


# ---- tensor hooks ---------------------------------------------------------------------------
def register_tensor_hook(t, hook):
    """hook(grad) -> new grad or None, run when the gradient for `t` is computed."""
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is None:
        # a leaf's hooks live on its accumulator; keep it alive as long as the tensor
        node = t._acc_keepalive = grad_accumulator(t)
        return node._register_tensor_pre_hook(0, hook)
    node, nr = _current_edge(t)
    return node._register_tensor_pre_hook(nr, hook)


def _current_edge(t):
    """A non-leaf's (grad_fn, output_nr) now: a view whose base was written in place since
    gets its regenerated grad_fn first, as reading .grad_fn does in PyTorch."""
    from .views import gradient_edge
    return gradient_edge(t)


def _tensor_hooks(t):
    """The hooks registered on `t` by register_hook (PyTorch's `tensor._backward_hooks`)."""
    node = t.grad_fn if t.grad_fn is not None else t._acc_keepalive
    if node is None or not node._tensor_pre_hooks:
        return []
    hooks = node._tensor_pre_hooks.get(t._output_nr if t.grad_fn is not None else 0)
    return list(hooks.values()) if hooks else []


# Note [retain_grad across in-place ops]
# A tensor that retains its gradient gets the gradient that flows into its *current* history.
# Plain tensor hooks stay with the node they were registered on (they see the value from before
# a later in-place op), but an in-place op moves the retains_grad hook to the new grad_fn, as
# PyTorch's does. ember does not move it at the in-place op (that would cost every op a check);
# instead every retaining tensor is kept in `_retaining`, and each backward pass first puts its
# hook on the tensor's grad_fn of the moment. A hook left on a node the tensor has moved away
# from checks that and stores nothing.
_retaining = weakref.WeakSet()


class _RetainGradHook:
    __slots__ = ("ref", "node", "nr")

    def __init__(self, t, node, nr):
        self.ref, self.node, self.nr = weakref.ref(t), node, nr

    def __call__(self, grad):
        var = self.ref()
        if var is None or var.grad_fn is not self.node or var._output_nr != self.nr:
            return
        var._grad = grad.clone() if var._grad is None else sum_grads(var._grad, grad)


def _install_retain_grad_hook(t):
    node, nr = _current_edge(t)
    hooks = node._retain_grad_hooks
    if hooks is None:
        hooks = node._retain_grad_hooks = {}
        node._hooked = True
    old = hooks.get(nr)
    if old is None or old.ref() is not t:
        hooks[nr] = _RetainGradHook(t, node, nr)


def move_retain_grad_hooks():
    """Before a backward pass: each retaining tensor's hook on its grad_fn of the moment."""
    for t in list(_retaining):
        if t.grad_fn is not None:
            _install_retain_grad_hook(t)


def retain_grad(t):
    if not t._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None or t._retains_grad:
        return
    _install_retain_grad_hook(t)
    _retaining.add(t)
    t._retains_grad = True


def register_post_accumulate_grad_hook(t, hook):
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if t._post_acc_hooks is None:
        t._post_acc_hooks = OrderedDict()
    return _add_hook(t._post_acc_hooks, hook)


def full(shape, value, dtype, device):
    """A filled tensor made through the dispatcher (implicit and zero gradients)."""
    return cached_lookup("full")(shape, value, dtype, device)


def zeros(shape, dtype, device):
    return full(shape, 0, dtype, device)


class GradientEdge(NamedTuple):
    """An edge of the graph: the node a gradient flows into and which of its inputs it is;
    `autograd.grad`/`backward` take it in place of a tensor input."""
    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor):
    """The edge `autograd.grad(loss, tensor)` would read: grad(loss, get_gradient_edge(t))
    equals grad(loss, t), and still reaches the same place after `t` is modified in place."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    from .views import gradient_edge
    node, nr = gradient_edge(tensor)
    # what a gradient flowing into the edge looks like, for the edge as an output of grad()
    # (PyTorch reads it from the node's input metadata; ember's nodes do not keep it per op)
    node.__dict__.setdefault("_edge_meta", {})[nr] = (tensor._size, tensor.dtype,
                                                        tensor._device)
    return GradientEdge(node, nr)


def edge_metadata(edge):
    """(size, dtype, device) of the gradient that flows into `edge`."""
    meta = edge.node.__dict__.get("_edge_meta", {}).get(edge.output_nr)
    if meta is None:
        out_meta = getattr(edge.node, "_out_meta", None)
        meta = out_meta[edge.output_nr] if out_meta else None
    if meta is None:
        raise RuntimeError("ember: the gradient's shape for this GradientEdge is unknown; make "
                           "the edge with torch.autograd.graph.get_gradient_edge(tensor)")
    return meta


def increment_version(tensor):
    """Bump the version counter of a tensor (or of each tensor of an iterable), as an in-place
    write does: saved copies of it then refuse to be used in backward."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._bump_version()


class Node(abc.ABC):
    """torch.autograd.graph.Node: every node of the backward graph (built-in op nodes,
    AccumulateGrad, a custom Function's ctx) is an instance, as in PyTorch, where it is a
    virtual base class: `isinstance` / `issubclass` say yes without Node being in their MRO."""

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node:
            return issubclass(subclass, _Node) or NotImplemented
        return NotImplemented
