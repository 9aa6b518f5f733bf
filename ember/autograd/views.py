"""Autograd for in-place ops on views: CopySlices, and grad_fns regenerated from a view's base.

When an in-place op writes through a view, the base's history must change too (PyTorch's
`rebase_history`); the Note below explains how. `gradient_edge` lives here because an edge to a
view may first need the view's grad_fn regenerated from its rebased base.
"""
import numpy as np

from .._core.tensor import _wrap
from .._dispatch.ops import ops
from .graph import _Node as Node, grad_accumulator, zeros
from .._core.grad_mode import _grad_state, enable_grad, no_grad


# Note [Views made in no_grad mode]
# A view of a tensor that requires grad, made while grad mode is off (`with no_grad(): w[0]`),
# reports requires_grad=True like its base, as PyTorch's views do, yet it has no grad_fn and is
# a leaf without a gradient accumulator: ops on it later record a graph, and the gradient that
# reaches it is dropped (neither it nor its base gets a .grad). Writing it in place with grad
# mode back on is refused (variable_type._check_inplace): which history would the write join?
# So is using it with grad mode on once its memory was written in place since it was made.
# Asked to require grad itself (`v.requires_grad_()`, as OpInfo samples made under no_grad
# are), it is a leaf of its own: it gets an accumulator and its .grad, as in PyTorch.


def gradient_edge(t):
    """(node, input_nr) that a gradient for `t` flows into, or (None, 0) if none.

    A view whose storage was written in place since its grad_fn was made may be out of date
    (its base's history was rebased): it gets a grad_fn regenerated from the base first.
    """
    fn = t.grad_fn
    if fn is not None:
        if t._base is not None and t._storage._version != t.__dict__.get("_view_version"):
            refresh_view(t)
            fn = t.grad_fn
        return (fn, t._output_nr)
    if t._rg and (not t._nograd_view or t.__dict__.get("_own_rg")):
        return (grad_accumulator(t), 0)
    if t._nograd_view and t._storage._version != t.__dict__.get("_view_version"):
        raise RuntimeError(nograd_view_error(t, "its base or another view of its base has been"))
    return (None, 0)


def nograd_view_error(view, what, meta=None):
    """PyTorch's message for an in-place write, with grad mode on, to a view made under no_grad
    or inference_mode (or inside a custom Function that recorded nothing), or to a view of such
    a view; `what` is "is being" or "its base or another view of its base has been"."""
    meta = meta or view._nograd_view
    fn = view.grad_fn
    if fn is not None:
        from .graph import short_name
        prefix = f"Output {view._output_nr} of {short_name(fn)} is a view of a view which was created in"
    else:
        prefix = "A view was created in"
    if meta == "inference_mode":
        msg = f"{prefix} inference mode and {what} modified inplace in normal mode."
    else:
        msg = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    if meta == "custom_function":
        return msg + CUSTOM_FUNCTION_VIEW
    block = "inference_mode" if meta == "inference_mode" else "no_grad"
    return (f"{msg} Given that this use case is ambiguous and error-prone, it is forbidden. You "
            f"can clarify your code by moving both the view and the inplace either both inside "
            f"the {block} block (if you don't want the inplace to be tracked) or both outside (if "
            "you want the inplace to be tracked).")


CUSTOM_FUNCTION_VIEW = (
    " This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function.")


# Note [In-place ops on views: CopySlices]
# ----------------------------------------
# `y = x.clone(); y[1:].mul_(w)` writes into y's memory through a view. Autograd must now see
# *y* as computed by the mul: every later use of y, and every view of y, has to back-propagate
# through it. Recording the mul on the view alone is not enough: the view is a temporary, and
# y's grad_fn would still say "clone of x", which is no longer how y's values were made.
#
# So, like PyTorch's `rebase_history`, the op's node `fn` (MulBackward0) is wrapped in a
# CopySlices node that becomes the *base's* grad_fn:
#
#     y.grad_fn = CopySlices --next_functions--> (y's old history, w's producer)
#                     |
#                     +-- fn = MulBackward0 (gradient w.r.t. the view's old value and w)
#
# Given the gradient of the whole new y, CopySlices cuts out the view's region, runs `fn` on
# it, and writes fn's gradient for the view's old value back into that region: what flows to
# y's old history is "grad outside the view, fn's input gradient inside it". The other inputs
# (w) get fn's gradients unchanged. The region is a list of positions: for each element of the
# view, its index in the base's row-major order, worked out once from sizes, strides and
# offsets, so any view (slices, selects, transposes, diagonals) is one gather and one scatter.
#
# The view itself then gets a fresh grad_fn that regenerates it from the new base (PyTorch
# names it AsStridedBackward0): its gradient is scattered into the base's positions and flows
# into CopySlices. Other views of the same base may still hold a grad_fn from before; they
# notice through the version counter (each view remembers the storage version its grad_fn was
# made at) and regenerate theirs the same way when they are next used (`gradient_edge`).
#
# A base that did not require grad starts to: `x = zeros(3); x[0] = w` makes x a non-leaf
# whose CopySlices has no edge for x's old value, only for w.
#
# A view that changed the dtype (view_as_real / view_as_complex, or a view of one) has no such
# positions: it carries instead the steps that make it again from its base (Note [Views autograd
# replays] in _aten/shape.py, PyTorch's view_fn). Its CopySlices replays them on a gradient laid
# out as the base, and the view's fresh grad_fn is what replaying them on the new base records
# (ViewAsRealBackward0, say), as in PyTorch.
def rebase_view_history(view, fn):
    base = view._base
    recipe = view_recipe(view, base)
    node = CopySlices()
    node.fn = fn
    node.next_functions = fn.next_functions
    node._num_outputs = 1
    node._positions = recipe
    node._view_shape = view._size
    node._base_shape = base._size
    node._base_stride = base.stride()
    base.grad_fn = node
    base._rg = True
    base._output_nr = 0
    _regenerate_view(view, recipe)


def view_recipe(view, base=None):
    """How autograd remakes `view` from its base: replay steps, or positions (Note above)."""
    if view._view_fn is not None:
        return view._view_fn
    base = base if base is not None else view._base
    if view.dtype is not base.dtype:  # a dtype-changing view made without replay steps
        raise NotImplementedError(
            f"autograd of an in-place operation on a {view.dtype} view of a {base.dtype} "
            "tensor made without view_as_real / view_as_complex is not supported in ember")
    return _view_positions(view, base)


def rebased_recipe(view):
    """The recipe rebase_view_history just gave `view`'s grad_fn (for a saved output)."""
    return view._view_fn if view._view_fn is not None else view.grad_fn._positions


def replay_view(recipe, base):
    """Run a view's replay steps on `base` (or a tensor laid out as it). With grad mode on, an
    as_strided step gets the node of a view told as positions (below), not the as_strided
    op's own, which would save the tensor it reads, whose memory is about to be written."""
    t = base
    start = base.storage_offset() * base.dtype.itemsize
    for step in recipe:
        if step == "view_as_real":
            t = ops.aten.view_as_real(t)
        elif step == "view_as_complex":
            t = ops.aten.view_as_complex(t)
        else:
            _, size, stride, past = step
            offset = (start + past) // t.dtype.itemsize
            if not (_grad_state.enabled and t._rg):
                t = ops.aten.as_strided(t, size, stride, offset)
                continue
            with no_grad():
                v = ops.aten.as_strided(t, size, stride, offset)
            for made_without_grad in ("_creation_meta", "_nograd_view"):
                v.__dict__.pop(made_without_grad, None)
            v.grad_fn = _positions_node(t, _view_positions(v, t))
            v._rg = True
            v._output_nr = 0
            v._view_version = v._storage._version
            t = v
    return t


def view_node(base, recipe):
    """The node of a view read from `base`'s current history (PyTorch regenerates a view's
    grad_fn so, as an AsStridedBackward0 or by replaying its view_fn, after its base was
    written in place)."""
    if type(recipe) is not tuple:
        return _positions_node(base, recipe)
    with enable_grad():
        return replay_view(recipe, base).grad_fn


def _positions_node(base, positions):
    node = AsStridedBackward0()
    node.next_functions = (gradient_edge(base),)
    node._num_outputs = 1
    node._positions = positions
    node._base_shape = base._size
    return node


def _regenerate_view(view, recipe):
    view.grad_fn = view_node(view._base, recipe)
    view._rg = True
    view._output_nr = 0
    view._view_version = view._storage._version


def refresh_view(view):
    """Give a view whose base was written in place a grad_fn that reads the base's history."""
    base = view._base
    fn = view.grad_fn
    if getattr(fn, "_is_function_node", False):
        # a custom Function's view output (PyTorch's IN_CUSTOM_FUNCTION): regenerating it
        # from the base would bypass the Function's backward
        from .graph import short_name
        raise RuntimeError(f"Output {view._output_nr} of {short_name(fn)} is a view and its base "
                           "or another view of its base has been modified inplace."
                           f"{CUSTOM_FUNCTION_VIEW}")
    view._view_version = view._storage._version
    if base._rg and fn is not None:
        _regenerate_view(view, view_recipe(view, base))


def _view_positions(view, base):
    """For each element of `view`, the index of the same memory in `base`'s row-major order.

    With a contiguous base, memory order is row-major order: the position of view element
    (i, j, ...) is its offset from the base's start, sum(index * stride), built by broadcasting
    one arange per dim (work proportional to the view). Otherwise every memory element of the
    base is labelled with its row-major index first, and the view reads the labels.
    """
    if base.is_contiguous():
        pos = np.full((1,) * view.dim(), view.storage_offset() - base.storage_offset(),
                      dtype=np.int64)
        for d, (n, st) in enumerate(zip(view._size, view.stride())):
            shape = [1] * view.dim()
            shape[d] = n
            pos = pos + (np.arange(n, dtype=np.int64) * st).reshape(shape)
        pos = np.broadcast_to(pos, view._size).reshape(-1)
    else:
        as_strided = np.lib.stride_tricks.as_strided

        def extent(t):
            return t.storage_offset() + sum((n - 1) * s for n, s in zip(t._size, t.stride())) + 1
        lin = np.full(max(extent(base), extent(view)), -1, dtype=np.int64)
        as_strided(lin[base.storage_offset():], base._size, [8 * s for s in base.stride()])[...] \
            = np.arange(base.numel()).reshape(base._size)
        pos = as_strided(lin[view.storage_offset():], view._size,
                         [8 * s for s in view.stride()]).reshape(-1)
    if pos.size and (pos.min() < 0 or pos.max() >= base.numel()):
        raise RuntimeError("in-place operation on a view that reaches outside its base's "
                           "elements is not supported by autograd")
    pos = _wrap(np.ascontiguousarray(pos))
    return pos if base._lazy is None else pos.to(base.device)  # a lazy base: lazy indices


class CopySlices(Node):
    """The base's grad_fn after an in-place op on one of its views (see the Note above)."""
    __slots__ = ("fn", "_positions", "_view_shape", "_base_shape", "_base_stride",
                 "_num_outputs")

    def name(self):
        return "torch::autograd::CopySlices"

    def apply(self, grads):
        if type(self._positions) is tuple:
            return self._apply_replayed(grads[0])
        flat = grads[0].reshape(-1)
        grad_slice = flat.index_select(0, self._positions).reshape(self._view_shape)
        res = self.fn.apply([grad_slice])
        if res[0] is not None:
            res[0] = ops.aten.index_put(flat, [self._positions], res[0].reshape(-1), False) \
                .reshape(self._base_shape)
        return res

    def _apply_replayed(self, grad):
        """The view's region of a gradient laid out as the base is the view replayed on it:
        fn's gradient is written through it (zeros where fn gives none)."""
        result = ops.aten.empty_strided(self._base_shape, self._base_stride, dtype=grad.dtype,
                                        device=grad.device)
        result.copy_(grad)
        grad_slice = replay_view(self._positions, result)
        res = self.fn.apply([grad_slice.clone()])
        if res[0] is None:
            grad_slice.zero_()
        else:
            grad_slice.copy_(res[0])
        res[0] = result
        return res

    def _release_saved(self):
        self.fn._release_saved()


class AsStridedBackward0(Node):
    """A view's grad_fn regenerated from its base: scatter the gradient into the base's shape."""
    __slots__ = ("_positions", "_base_shape", "_num_outputs")

    def apply(self, grads):
        grad = grads[0]
        n = 1
        for s in self._base_shape:
            n *= s
        out = zeros((n,), grad.dtype, grad.device)
        return [ops.aten.index_put(out, [self._positions], grad.reshape(-1), True)
                .reshape(self._base_shape)]
