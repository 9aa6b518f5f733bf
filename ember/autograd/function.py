"""autograd.Function: user-defined ops with a hand-written backward.

`Function.apply` runs `forward` with grad mode off, then makes one backward node for the call
(an instance of `<Name>Backward`, which is also the `ctx` the user saw) and attaches it to the
outputs. The node's backward calls the user's `backward(ctx, *grad_outputs)`.
"""
import functools
import inspect
import warnings
import weakref
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .._core.grad_mode import _grad_state, no_grad
from .._dispatch import vmap_state as _vmap_state
from .graph import _Node as Node, SavedTensor, freed_error, summed_to, zeros
from .views import gradient_edge, rebase_view_history, rebased_recipe
from . import forward_ad as _forward_ad
from .._core.tensor import Tensor, _alias, _require_grad


class FunctionCtx:
    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one Function call; it is also that call's `ctx`."""
    __slots__ = ()  # Node's __dict__ holds what the user's forward stores on ctx
    _is_function_node = True

    def apply(self, grads):
        cls = self._forward_cls
        if self.materialize_grads:  # not for non-Tensor outputs (dt None), nor non-diff ones
            skip = () if self.__dict__.get("_materialize_non_diff_grads", True) else self._nondiff
            grads = [g if g is not None or dt is None or k in skip else zeros(shape, dt, dev)
                     for k, (g, (shape, dt, dev)) in enumerate(zip(grads, self._out_meta))]
        if cls.vjp is Function.vjp:
            backward_fn = cls.backward
        elif cls.backward is Function.backward:
            backward_fn = cls.vjp
        else:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        result = backward_fn(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = self._num_forward_inputs
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect "
                                   f"number of gradients (expected {n}, got {len(result)})")
        out = [result[pos] for pos in self._tensor_positions]
        nexts = self.next_functions
        for k, (g, (shape, dtype)) in enumerate(zip(out, self._in_meta)):
            if g is None:
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"function {cls.__name__}Backward returned a gradient of type "
                                f"{type(g).__name__} at position {k}, expected Tensor or None")
            if nexts[k][0] is None:  # an input without grad: PyTorch's engine does not look
                out[k] = None
            elif g._size != shape:
                out[k] = summed_to(self, k, g, shape)
        return out

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            if self._released:
                if self._released == "accessed":
                    raise RuntimeError(
                        "saved_tensors can only be accessed once when "
                        "clear_saved_tensors_on_access=True is set on the autograd.Function. "
                        "Either access saved_tensors only once, or set "
                        "clear_saved_tensors_on_access=False.")
                raise freed_error()
            return ()
        out = tuple(s.unpack(self) if isinstance(s, SavedTensor) else s for s in saved)
        if self._forward_cls.clear_saved_tensors_on_access:
            self._saved, self._released = None, "accessed"
        return out

    @property
    def _raw_saved_tensors(self):
        saved = self._saved
        if saved is None:
            if self._released:
                raise freed_error()
            return ()
        return tuple(s if isinstance(s, SavedTensor) else SavedTensor._of_none() for s in saved)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    def _release_saved(self):
        if self._saved:  # a Function that saved nothing can run backward again
            self._saved = None
            self._released = True

    def name(self):
        return type(self).__name__

    def __repr__(self):  # a Python class, printed as Python prints objects (unlike C++ nodes)
        cls = type(self)
        return f"<{cls.__module__}.{cls.__qualname__} object at {hex(id(self))}>"


class FunctionMeta(type):
    """Gives every Function subclass its own node class, named `<Name>Backward` -- or, for
    ember's internal Functions that fuse an aten op, the op's node name (`_backward_name`), so
    `grad_fn` reads as it does in PyTorch."""

    def __init__(cls, name, bases, attrs):
        node_name = attrs.get("_backward_name", name + "Backward")
        cls._backward_cls = type(node_name, (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": __name__})
        super().__init__(name, bases, attrs)


# Code that must see each Function call pushes a callable fn(cls, args, kwargs) here; the last
# one runs instead of apply (ember.onnx's tracer, which records a Function with a `symbolic` as
# the one node it names; see ember/onnx/tracer.py).
_apply_observers = []


class Function(metaclass=FunctionMeta):
    generate_vmap_rule = False
    clear_saved_tensors_on_access = False  # True: saved_tensors frees them on the first read

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=_user_stacklevel())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if _apply_observers:
            return _apply_observers[-1](cls, args, kwargs)
        if _grad_state.transforms:
            return _vmap_state.RULES["function"](cls, args, kwargs)
        return cls._apply_plain(*args, **kwargs)

    @classmethod
    def _apply_plain(cls, *args, **kwargs):
        uses_setup = cls.setup_context is not Function.setup_context
        if uses_setup:  # setup_context sees the forward's defaults among `inputs`
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = cls._backward_cls()
        Node.__init__(ctx)
        ctx.to_save = ()
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
        ctx.materialize_grads = True
        ctx._saved = None
        ctx._released = False
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        is_executable = _grad_state.enabled and any(ctx.needs_input_grad)
        tangents, call_args = _forward_ad_split(cls, args)
        fwd_enabled = _forward_ad._fwd_grad_enabled
        prev_fwd, fwd_enabled[0] = fwd_enabled[0], False   # forward AD is off in forward, as
        try:                                                # PyTorch's: its jvp gives tangents
            with no_grad():
                if uses_setup:
                    output = cls.forward(*call_args, **kwargs)
                else:
                    output = cls.forward(ctx, *call_args, **kwargs)
        finally:
            fwd_enabled[0] = prev_fwd
        if uses_setup:
            cls.setup_context(ctx, args, output)
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        out_tangents = None
        if tangents is not None:
            output, outputs = _dirty_duals(ctx, args, call_args, output, outputs)
        if uses_setup:
            _check_saved_input_returned(ctx, args, call_args, outputs)
        if tangents is not None:
            out_tangents = _jvp_tangents(cls, ctx, args, tangents, outputs)

        if ctx.dirty_tensors and not {id(t) for t in ctx.dirty_tensors} <= {id(o) for o in outputs}:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must "
                               "all be outputs of the Function.")
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not is_executable:
            ctx.to_save = ()
            for o in outputs:   # PyTorch's IN_CUSTOM_FUNCTION views: no in-place writes later
                if isinstance(o, Tensor) and o._base is not None and o.grad_fn is None:
                    o._creation_meta = "custom_function"
            if out_tangents is not None:
                _set_tangents(outputs, out_tangents)
            return output
        ctx._tensor_positions = tensor_positions
        ctx._num_forward_inputs = len(args)
        ctx.next_functions = tuple(gradient_edge(args[i]) for i in tensor_positions)
        ctx._in_meta = [(args[i]._size, args[i].dtype) for i in tensor_positions]
        ctx._num_outputs = len(outputs)
        dirty = {id(t) for t in ctx.dirty_tensors}
        dirty_view = None
        nondiff = {id(t) for t in ctx.non_differentiable}
        input_ids = {id(args[i]) for i in tensor_positions} | {id(call_args[i]) for i in tensor_positions}
        if dirty:
            _check_dirty(ctx.dirty_tensors, input_ids)
            if len(outputs) > 1 and any(t._base is not None for t in ctx.dirty_tensors):
                raise RuntimeError(
                    "If your Function modifies inplace an input that is a view of another "
                    "Tensor, your Function cannot return more than one Tensor. This is not "
                    "supported by the current autograd engine. You should either make sure the "
                    "input is not a view (using .clone() for example) or make your Function "
                    "only return one Tensor (potentially splitting it into two Functions: one "
                    "doing the inplace that returns a single Tensor and a second one that does "
                    "the other operations). You can ask on the forum "
                    "https://discuss.pytorch.org/ if you need help to do this change.")
        new_outputs = []
        out_meta = []
        ctx._nondiff = ()
        for k, o in enumerate(outputs):
            if not isinstance(o, Tensor):
                new_outputs.append(o)
                out_meta.append(((), None, None))
                continue
            o_nondiff = id(o) in nondiff   # before an input returned as is is aliased
            if id(o) in dirty:
                if o.grad_fn is None and o._rg:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
                o._bump_version()  # forward wrote it under no_grad; saved copies must notice
                if o._base is not None and len(outputs) == 1 and args[tensor_positions[0]] is o:
                    dirty_view = o  # in place on a view: rebased like an op's (CopySlices)
                    out_meta.append((o._size, o.dtype, o._device))
                    continue
            elif id(o) in input_ids:
                # an input returned as is becomes a view of it with its own history
                src = o
                o = _alias(src)
                o._base = src._base if src._base is not None else src
                o._view_fn = src._view_fn  # remade from the base as `src` is
                o._view_version = o._storage_()._version
            elif o._base is not None:
                # a view made inside forward: its history (this node) is current as of now
                o._view_version = o._storage_()._version
            out_meta.append((o._size, o.dtype, o._device))
            if o_nondiff or not (o.dtype.is_floating_point or o.dtype.is_complex):
                new_outputs.append(o)
                ctx._nondiff += (k,)
                continue
            o._rg = True
            o.grad_fn = ctx
            o._output_nr = k
            new_outputs.append(o)
        ctx._out_meta = out_meta
        if dirty_view is not None:
            edges = list(ctx.next_functions)
            edges[0] = gradient_edge(dirty_view._base)
            ctx.next_functions = tuple(edges)
            rebase_view_history(dirty_view, ctx)
            new_outputs.insert(0, dirty_view)
        saved = []
        out_ids = {id(o): k for k, o in enumerate(new_outputs) if isinstance(o, Tensor)}
        orig_out_ids = {id(o): k for k, o in enumerate(outputs) if isinstance(o, Tensor)}
        for t in ctx.to_save:
            if t is None or not isinstance(t, Tensor):
                saved.append(t)
            elif id(t) in out_ids and t.grad_fn is ctx:
                saved.append(SavedTensor(t, is_output=True, output_nr=out_ids[id(t)]))
            elif t is dirty_view:
                # saved as an output (no reference back to its own history, which holds this
                # node): it unpacks as that view of its base's rebased history
                s = SavedTensor(t, is_output=True, output_nr=0)
                s._view_of = (weakref.ref(t._base), rebased_recipe(t))
                saved.append(s)
            elif id(t) in orig_out_ids and id(t) not in input_ids:
                saved.append(SavedTensor(t, is_output=True, output_nr=orig_out_ids[id(t)]))
            else:
                saved.append(SavedTensor(t))
        ctx._saved = saved
        del ctx.to_save
        ctx.dirty_tensors = ctx.non_differentiable = ()   # no references from the node to them
        if out_tangents is not None:
            _set_tangents(new_outputs, out_tangents)
        from . import anomaly_mode
        if anomaly_mode._enabled:
            anomaly_mode.record_forward_trace(ctx)
        return new_outputs[0] if single else tuple(new_outputs)


def _check_saved_input_returned(ctx, args, call_args, outputs):
    """With setup_context, an input the forward returned as is (not marked dirty) may not be
    saved, for backward or for forward, as PyTorch refuses it."""
    saved = [t for t in tuple(ctx.to_save) + tuple(getattr(ctx, "saved_for_forward", ()))
             if isinstance(t, Tensor)]
    if not saved:
        return
    # under forward AD the forward ran on the primals: an input is its dual or its primal
    same = {id(a): id(c) for a, c in zip(args, call_args) if isinstance(a, Tensor)}
    inputs = set(same.values())
    returned = {same.get(id(o), id(o)) for o in outputs if isinstance(o, Tensor)} & inputs
    returned -= {same.get(id(t), id(t)) for t in ctx.dirty_tensors}
    if any(same.get(id(t), id(t)) in returned for t in saved):
        raise RuntimeError("An input that has been returned as-is as output is being saved for "
                           "backward. This is not supported if you override setup_context. You "
                           "should return and save a view of the input instead, e.g. with "
                           "x.view_as(x) or setup ctx inside the forward function itself.")


def _check_dirty(dirty, input_ids):
    """What PyTorch checks of ctx.mark_dirty's tensors: inputs only, each one a tensor an
    in-place op may modify under autograd (not a leaf or a view of one that requires grad, not
    an output of a multi-view op, ...)."""
    from .variable_type import _check_inplace
    for t in dirty:
        if id(t) not in input_ids:
            # a fresh tensor's history is simply the Function's (a warning); a view would need
            # its base's history rewritten, which only an input's can be
            msg = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                   "that have been mutated should be passed to ctx.mark_dirty().")
            if t._base is not None:
                raise RuntimeError(msg)
            warnings.warn(msg, stacklevel=_user_stacklevel())
            continue
        if t._base is None and t.grad_fn is None and t._rg:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")
        _check_inplace(t)


def _forward_ad_split(cls, args):
    """Under forward AD, with inputs carrying tangents: (the inputs' tangents, the inputs without
    them). As in PyTorch, the forward then runs on primals (its own ops carry no tangents) and
    the Function's `jvp` gives the outputs' tangents; a Function without one raises. Otherwise
    (None, args)."""
    from . import forward_ad
    if forward_ad._current_level < 0 or not forward_ad._fwd_grad_enabled[0]:
        return None, args
    tangents = [forward_ad._tangent(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return None, args
    return tangents, tuple(forward_ad._primal(a) if t is not None else a
                           for a, t in zip(args, tangents))


def _dirty_duals(ctx, args, call_args, output, outputs):
    """A forward that modified an input in place returns (and marks dirty) the input's primal
    it was given; the caller gets its own dual input back, as PyTorch returns the input."""
    back = {id(c): a for a, c in zip(args, call_args) if c is not a}
    if not back or not ctx.dirty_tensors:
        return output, outputs
    # setup_context marks the dual input it was given, a forward(ctx, ...) the primal
    ctx.dirty_tensors = tuple(back.get(id(t), t) for t in ctx.dirty_tensors)
    dirty = {id(t) for t in ctx.dirty_tensors}
    outputs = tuple(back[id(o)] if id(o) in back and id(back[id(o)]) in dirty else o
                    for o in outputs)
    return (outputs if isinstance(output, tuple) else outputs[0]), outputs


def _jvp_tangents(cls, ctx, args, tangents, outputs):
    """Call the Function's `jvp` with the inputs' tangents (zeros for a differentiable input
    without one) and check what it returns as PyTorch does: one tangent per output, None for a
    non-differentiable output, the input's own tangent modified in place for an input the
    forward modified in place, and a view of the input's tangent for a view of the input (an
    input returned as is counts as its view)."""
    grads = [t if t is not None else
             (zeros(a._size, a.dtype, a._device) if isinstance(a, Tensor) and ctx.materialize_grads
              and (a.dtype.is_floating_point or a.dtype.is_complex) else None)
             for a, t in zip(args, tangents)]
    versions = [g._version if isinstance(g, Tensor) else None for g in grads]
    saved, ctx._saved = ctx._saved, list(getattr(ctx, "saved_for_forward", ()))
    try:   # inside jvp, ctx.saved_tensors are the tensors given to save_for_forward
        with no_grad():
            out_tangents = cls.jvp(ctx, *grads)
    finally:
        ctx._saved = saved
    if not isinstance(out_tangents, tuple):
        out_tangents = (out_tangents,)
    if len(out_tangents) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outputs)} but got {len(out_tangents)})")
    dirty = {id(t) for t in ctx.dirty_tensors}
    nondiff = {id(t) for t in ctx.non_differentiable}
    position = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
    base_position = {}
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            base_position.setdefault(id(a if a._base is None else a._base), i)
    for k, (o, t) in enumerate(zip(outputs, out_tangents)):
        if t is None or not isinstance(o, Tensor):
            continue
        if id(o) in nondiff or not (o.dtype.is_floating_point or o.dtype.is_complex):
            raise RuntimeError(
                f"Function's jvp returned a gradient at position {k}, but  the corresponding "
                "forward output is not a differentiable Tensor.You should return None at that "
                "position instead.")
        if id(o) in dirty and id(o) in position:
            i = position[id(o)]
            if t is not grads[i] or t._version == versions[i]:
                raise RuntimeError(
                    "An inplace custom Function is not modifying the forward mode gradients "
                    "inplace. If the forward is modifying an input inplace, then the jvp "
                    "function must modify the corresponding gradient inplace.")
        elif o._base is not None and id(o._base) in base_position:
            _check_view_tangent(t, grads[base_position[id(o._base)]])
    return out_tangents


def _check_view_tangent(t, grad_input):
    if not t._is_view():
        raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) "
                           "but the jvp is not returning a view.")
    if grad_input is None:
        return
    if grad_input._base is not None:
        if t._base is not grad_input._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the same base as the given grad input.")
    elif t._base is not grad_input:
        raise RuntimeError("A custom Function is returning a view but the jvp is not returning "
                           "a view of the given grad input.")


def _set_tangents(outputs, out_tangents):
    from . import forward_ad
    for o, t in zip(outputs, out_tangents):
        if isinstance(o, Tensor) and isinstance(t, Tensor):
            if t._size != o._size:
                raise RuntimeError(
                    "Trying to set a forward gradient that has a different size than that of "
                    "the original Tensor, this is not supported. Tensor is of size "
                    f"{list(o._size)} while the given forward gradient is of size "
                    f"{list(t._size)}.")
            forward_ad._set_tangent(o, t)


def once_differentiable(fn):
    """Run a Function's backward with grad mode off (its result is not differentiable again)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not (_grad_state.enabled and any(isinstance(a, Tensor) and a._rg for a in args)):
            return outputs
        # create_graph: the results join the graph through a node that raises if reached
        from .delayed_error import DelayedError
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        err = DelayedError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable", len(outs))
        wrapped = err(*[_require_grad(o.detach()) if isinstance(o, Tensor) else None
                        for o in outs])
        return wrapped if isinstance(wrapped, tuple) else (wrapped,)
    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
