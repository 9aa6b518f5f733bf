"""torch._C's role for what ember has of it: the `__torch_function__` switches and stack
(ember/_core/torch_function.py holds them), the autograd nodes of `_functions` and switches of
`_autograd` (kept in ember/autograd), the `__torch_dispatch__` switches and stack
(ember/_dispatch/python_dispatch.py), a weak tensor reference, the view-replay flag."""
import weakref

from . import _autograd, _fft, _functions, _functorch, _nn  # noqa: F401  (torch._C._autograd, ...)
from ._tags import Tag  # noqa: F401
from ._dispatch_keys import (  # noqa: F401
    DispatchKey, DispatchKeySet, _ExcludeDispatchKeyGuard, _IncludeDispatchKeyGuard,
    _dispatch_tls_local_exclude_set, _dispatch_tls_local_include_set)

from .._core.torch_function import (  # noqa: F401
    DisableTorchFunction, DisableTorchFunctionSubclass, _disabled_torch_function_impl,
    is_torch_function_enabled as _is_torch_function_enabled,
    is_torch_function_all_disabled as _is_torch_function_all_disabled,
    is_torch_function_mode_enabled as _is_torch_function_mode_enabled,
    mode_stack_len as _len_torch_function_stack, mode_at as _get_function_stack_at,
    push_mode as _push_on_torch_function_stack, pop_mode as _pop_torch_function_stack)
from .._core.python_key import _disabled_torch_dispatch_impl  # noqa: F401
from .._core.grad_mode import is_grad_enabled  # noqa: F401
from .._aten.conv import (ConvBackend as _ConvBackend,  # noqa: F401
                          select_conv_backend as _select_conv_backend)
from .._dispatch.python_dispatch import (  # noqa: F401
    DisableTorchDispatch as _DisableTorchDispatch, push_mode as _push_on_torch_dispatch_stack,
    pop_mode as _pop_torch_dispatch_stack)
from ..overrides import (  # noqa: F401
    has_torch_function as _has_torch_function,
    has_torch_function_unary as _has_torch_function_unary,
    has_torch_function_variadic as _has_torch_function_variadic)


from .._dispatch.schema import parse_schema  # noqa: F401,E402


def _is_alias_of(self, other):
    """torch._C._is_alias_of: whether two tensors share one storage (the same memory)."""
    a, b = self._storage_(), other._storage_()
    return a is b or (a.nbytes() > 0 and a.data_ptr() == b.data_ptr())


class _WeakTensorRef:
    """A weak reference to a tensor; `expired()` once the tensor is gone."""

    def __init__(self, tensor):
        self._ref = weakref.ref(tensor)

    def expired(self):
        return self._ref() is None


def _is_view_replay_enabled():
    from ..autograd.grad_mode import _view_replay
    return _view_replay[0]


def _set_view_replay_enabled(mode):
    from ..autograd.grad_mode import _view_replay
    _view_replay[0] = bool(mode)


def _dispatch_find_schema_or_throw(name, overload_name):
    """The dispatcher's handle on an operator by name and overload ("" for the default): here
    the OpOverload itself."""
    from .._dispatch.dispatcher import lookup
    return lookup(f"{name}.{overload_name}" if overload_name else name)


def _dispatch_call_boxed(handle, *args, **kwargs):
    """Call an operator found by _dispatch_find_schema_or_throw."""
    return handle(*args, **kwargs)


def _dispatch_isTensorSubclassLike(tensor):
    """Whether ops on `tensor` go to Python (a `__torch_dispatch__` subclass) rather than
    straight to a backend's kernels."""
    from .._core.python_key import PYTHON_KEY
    return tensor._sparse is PYTHON_KEY


class _EnablePythonDispatcher:
    """A guard that switches PyTorch from its C++ dispatcher to its Python one while it lives.
    ember's one dispatcher is already written in Python, so the guard changes nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def _len_torch_dispatch_stack():
    from .._dispatch.python_dispatch import mode_stack
    return len(mode_stack())


def _get_dispatch_stack_at(index):
    from .._dispatch.python_dispatch import mode_stack
    return mode_stack()[index]


# the build flag PyTorch's tests read before a LAPACK-backed op: ember's LAPACK is NumPy's and
# SciPy's, always present
has_lapack = True


def _get_privateuse1_backend_name():
    """The name of PyTorch's out-of-tree device slot; ember has no such device, so it keeps
    PyTorch's default name."""
    return "privateuseone"


def _infer_size(a, b):
    """The broadcast of two sizes (torch._C._infer_size)."""
    from .._core.tensor import Size
    from .._refs.shape import broadcast_shapes
    if not isinstance(a, Size):
        raise RuntimeError("expected a torch.Size as argument 1")
    if not isinstance(b, Size):
        raise RuntimeError("expected a torch.Size as argument 2")
    return Size(broadcast_shapes(a, b))


def _is_fwd_grad_enabled():
    from ..autograd.forward_ad import _is_fwd_grad_enabled
    return _is_fwd_grad_enabled()


def _set_fwd_grad_enabled(mode):
    from ..autograd.forward_ad import _set_fwd_grad_enabled_flag
    _set_fwd_grad_enabled_flag(mode)


def _is_multithreading_enabled():
    from ..autograd.grad_mode import is_multithreading_enabled
    return is_multithreading_enabled()


def _set_multithreading_enabled(mode):
    from ..autograd.grad_mode import _multithreading
    _multithreading[0] = bool(mode)


def _current_graph_task_id():
    from ..autograd.engine import current_graph_task_id
    return current_graph_task_id()


# torch._C's cached-tensor set (CUDA graph trees mark the tensors a graph's memory pool keeps
# alive): membership by identity, and only while enabled.
_cached_tensors = {}
_cached_tensors_enabled = [False]


def _set_cached_tensors_enabled(enabled):
    _cached_tensors_enabled[0] = bool(enabled)


def _check_cached_tensors_enabled():
    if not _cached_tensors_enabled[0]:
        raise RuntimeError("cached_tensorimpls_enabled INTERNAL ASSERT FAILED: cached tensors "
                           "are not enabled (torch._C._set_cached_tensors_enabled(True))")


def _add_cached_tensor(t):
    import weakref
    _check_cached_tensors_enabled()
    _cached_tensors[id(t)] = weakref.ref(t)


def _remove_cached_tensor(t):
    _check_cached_tensors_enabled()
    _cached_tensors.pop(id(t), None)


def _is_cached_tensor(t):
    ref = _cached_tensors.get(id(t))
    return _cached_tensors_enabled[0] and ref is not None and ref() is t


def _will_engine_execute_node(node):
    from ..autograd.engine import will_engine_execute_node
    from ..autograd.graph import Node
    if not isinstance(node, Node):
        raise RuntimeError(f"_will_engine_execute_node expects an grad_fn, node, got "
                           f"{type(node).__module__}.{type(node).__qualname__}")
    return will_engine_execute_node(node, leaf_in_grad_raises=True)


def _warn():
    """torch._C._warn: a test hook that raises TORCH_WARN's warning (a UserWarning)."""
    import warnings
    warnings.warn("Test message for TORCH_WARN", UserWarning, stacklevel=2)


def _warn_deprecation():
    """torch._C._warn_deprecation: TORCH_WARN_DEPRECATION's test warning."""
    import warnings
    warnings.warn("Test message for TORCH_WARN_DEPRECATION", DeprecationWarning, stacklevel=2)


def _dispatch_key_set(tensor):
    """The dispatch keys PyTorch gives `tensor`: its backend's, Python for a subclass with
    `__torch_dispatch__`, ADInplaceOrView and Autograd<backend> unless it is an inference
    tensor, Autocast<backend> where autocast exists (ember picks kernels by its own rules;
    this reports what PyTorch's set would hold)."""
    from .._core.python_key import PYTHON_KEY
    backend = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "xpu": "XPU", "mps": "MPS",
               "lazy": "Lazy"}.get(tensor.device.type, "PrivateUse1")
    python = getattr(tensor, "_sparse", None) is PYTHON_KEY
    names = [backend] + (["Python"] if python else [])
    if not tensor.is_inference():
        names += ["ADInplaceOrView", "Autograd" + backend]
    if backend in ("CPU", "CUDA", "XPU", "MPS"):
        names.append("Autocast" + backend)
    if python:
        names.append("PythonTLSSnapshot")
    return DispatchKeySet([DispatchKey[n] for n in names])


def _storage_id(tensor):
    """An identity of `tensor`'s storage: equal for tensors that share one."""
    return id(tensor.untyped_storage())


def _set_conj(tensor, conj):
    """Set or clear `tensor`'s conjugate bit in place (its memory is read as conjugated)."""
    _set_bits(tensor, bool(conj), tensor.is_neg())


def _set_neg(tensor, neg):
    """Set or clear `tensor`'s negative bit in place."""
    _set_bits(tensor, tensor.is_conj(), bool(neg))


def _set_bits(tensor, conj, neg):
    from .._core.math_bits import set_math_bits
    setter = getattr(tensor, "_set_math_bits", None)   # a fake keeps its bits apart
    if setter is not None:
        setter(conj, neg)
    else:
        set_math_bits(tensor, conj, neg)
class _AutoDispatchBelowAutograd:
    """torch._C._AutoDispatchBelowAutograd: ops called while it lives skip the Autograd key and
    run their backend kernels (what an autograd.Function's forward does to call the op it
    wraps). ember's dispatcher takes the Autograd key only under grad mode, so the guard turns
    grad mode off -- from construction (PyTorch's RAII guard, released by `del`) or over a
    `with` block."""

    def __init__(self):
        from .._core.grad_mode import _grad_state
        self._prev = _grad_state.enabled
        _grad_state.enabled = False

    def _release(self):
        from .._core.grad_mode import _grad_state
        if self._prev is not None:
            _grad_state.enabled, self._prev = self._prev, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._release()

    def __del__(self):
        self._release()


def _flat_tensors(values):
    """The tensors among `values` and inside the lists/tuples among them (one level, as
    PyTorch's helpers look)."""
    from .._core.tensor import Tensor
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def _any_requires_grad(*args, **kwargs):
    """torch._C._any_requires_grad: whether a tensor argument (or one in a list argument)
    requires grad."""
    return any(t.requires_grad for t in _flat_tensors((*args, *kwargs.values())))


def _any_output_is_alias_to_input_or_output(args, kwargs, outputs):
    """torch._C._any_output_is_alias_to_input_or_output: whether an output tensor shares
    memory with an input or another output (tensors found at any depth of the structures)."""
    from .._library.utils import flat_tensors as flat
    inputs = flat(args) + flat(kwargs or {})
    outs = flat(outputs)

    def storage(t):
        s = t.untyped_storage()
        return s if s.nbytes() > 0 else None
    seen = {id(storage(t)) for t in inputs if storage(t) is not None}
    for o in outs:
        s = storage(o)
        if s is None:
            continue
        if id(s) in seen:
            return True
        seen.add(id(s))
    return False


def _jit_resolve_packet(qualname, *args, **kwargs):
    """torch._C._jit_resolve_packet: the name of the overload of `qualname` ('aten::sum')
    that a call with these arguments picks."""
    from .._core.tensor import Tensor
    from .._dispatch import dispatcher
    ns, _, name = qualname.partition("::")
    packet = dispatcher._packets[(ns, name)]
    # the default overload first, as PyTorch registers it first
    for overload, op in sorted(packet._overloads.items(), key=lambda kv: kv[0] != "default"):
        try:
            bound = op.schema.bind(args, kwargs, op.short_name)
        except RuntimeError:
            continue
        if dispatcher._matches(op.schema, bound) and not any(
                isinstance(v, Tensor) and not a.type.startswith(("Tensor", "Scalar"))
                for a, v in zip(op.schema.arguments, bound)):
            return overload
    raise RuntimeError(f"Overloaded torch operator invoked from Python failed to match any "
                       f"schema: {qualname}() with arguments {args}, {kwargs}")


def _register_opaque_type(type_name):
    """torch._C._register_opaque_type: a Python type an operator's schema may then name."""
    from ..library import _OPAQUE_TYPES
    _OPAQUE_TYPES.add(type_name)


def _unregister_opaque_type(type_name):
    from ..library import _OPAQUE_TYPES
    _OPAQUE_TYPES.discard(type_name)


def _is_opaque_type_registered(type_name):
    from ..library import _OPAQUE_TYPES
    return type_name in _OPAQUE_TYPES
