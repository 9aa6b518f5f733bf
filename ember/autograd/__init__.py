"""torch.autograd: backward(), grad(), grad modes, Function, gradcheck, anomaly detection."""
import collections.abc
from math import prod

from .grad_mode import (_force_original_view_tracking, _unsafe_preserve_version_counter,  # noqa: F401
                        is_view_replay_enabled)
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                        is_grad_enabled, is_inference_mode_enabled, is_multithreading_enabled,
                        set_multithreading_enabled)
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from .graph import Node, SavedTensor, full, zeros  # noqa: F401
from .._core.tensor import _require_grad
from .._dispatch.dispatcher import lookup
from .views import gradient_edge
from .engine import execute, _is_checkpoint_valid  # noqa: F401
from . import graph, engine, variable_type
from . import saved_tensor_hooks as _saved_hooks
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck, gradgradcheck
from . import forward_ad, functional, profiler, profiler_util
from .profiler import _profiler_enabled  # noqa: F401
from .._core.flags import warn_once
from .._core import torch_function as _tf
from .._core.tensor import Tensor, Size

from .._core.mode_stack import torch_dispatch_modes
from .._core.python_key import PYTHON_KEY
from .._core.memory_format import preserve_format
from .variable import Variable


def _calculate_shape(output, grad, is_grads_batched):
    """(output's shape, grad's shape) as _make_grads compares them; a batched grad's first dim
    is the batch."""
    if isinstance(output, graph.GradientEdge):
        if is_grads_batched:
            raise RuntimeError("Batched grads are not supported with GradientEdge")
        return graph.edge_metadata(output)[0], grad.shape
    return output.shape, grad.shape[1:] if is_grads_batched else grad.shape


def kineto_available():
    """Whether the profiler can use Kineto (PyTorch's tracing library): ember has none."""
    return False


def _ones_for(out):
    """The implicit gradient of a scalar output; PyTorch's ones_like(out), so that a Tensor
    subclass's handler or a TorchDispatchMode sees it (ember's ones_like is full_like)."""
    if out._sparse is PYTHON_KEY or torch_dispatch_modes:
        return lookup("ones_like")(out, memory_format=preserve_format)
    return full(out._size, 1, out.dtype, out._device)


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    grads = []
    for out, g in zip(outputs, grad_outputs):
        if isinstance(out, graph.GradientEdge):  # the gradient flowing into an edge
            size, dtype, device = graph.edge_metadata(out)
            size, rg = Size(size), True
        else:
            size, dtype, device, rg = out._size, out.dtype, out._device, out._rg
        if g is None:
            if rg:
                if prod(size) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not dtype.is_floating_point:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                       f"outputs but got {dtype}")
                # fresh: not claimed by a .grad
                g = _ones_for(out) if isinstance(out, Tensor) else full(size, 1, dtype, device)
            grads.append(g)
        else:
            if not isinstance(g, Tensor):
                g = lookup("_tensor_from_data")(g, dtype, device)
            if g._size != size:
                raise RuntimeError(f"Mismatch in shape: grad_output[{len(grads)}] has a shape of "
                                   f"{g.shape} and output[{len(grads)}] has a shape of "
                                   f"{Size(size)}.")
            if g.dtype.is_complex != dtype.is_complex:
                raise RuntimeError("For complex Tensors, both grad_output and output are "
                                   "required to have the same dtype.")
            g._storage_()._grad_claimed = True
            grads.append(g)
    return grads


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return (x,)
    return tuple(x)


def _input_edges(inputs):
    """The edges the engine captures gradients at: a tensor's own, or a GradientEdge as given."""
    edges = []
    for t in inputs:
        if isinstance(t, graph.GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(gradient_edge(t))
    return edges


def _roots(outputs):
    roots = []
    for i, out in enumerate(outputs):
        if isinstance(out, graph.GradientEdge):
            roots.append((out.node, out.output_nr))
            continue
        if not out._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        roots.append(gradient_edge(out))
    return roots


def _overriding(tensors, inputs):
    """The tensor-like arguments of backward / grad when one of their types (or a mode)
    overrides `__torch_function__`, else (): PyTorch hands both functions to it."""
    args = tensors if inputs is None else tensors + _as_tuple(inputs)
    fast = _tf.FAST_TYPES   # (empty while a mode is on the stack)
    for a in args:
        if type(a) not in fast:
            break
    else:
        return ()
    args = tuple(a for a in args if type(a) is Tensor or hasattr(a, "__torch_function__"))
    return args if _tf.has_torch_function(args, skip_exact=Tensor) else ()


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Compute the gradients of `tensors` w.r.t. the graph leaves and accumulate into .grad."""
    tensors = _as_tuple(tensors)
    overriding = _overriding(tensors, inputs)
    if overriding:
        return _tf.handle_torch_function(
            backward, overriding, tensors, grad_tensors=grad_tensors, retain_graph=retain_graph,
            create_graph=create_graph, inputs=_as_tuple(inputs) if inputs is not None else None)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grad_tensors = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    roots = _roots(tensors)
    if graph._retaining:
        graph.move_retain_grad_hooks()
    if create_graph:
        warn_once("Using backward() with create_graph=True will create a reference cycle between "
                  "the parameter and its gradient which can cause a memory leak. We recommend "
                  "using autograd.grad when creating the graph to avoid this. If you have to use "
                  "this function, make sure to reset the .grad fields of your parameters to None "
                  "after use to break the cycle and avoid the leak.")
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        capture = _input_edges(inputs)
        for t in inputs:  # a non-leaf input's gradient lands in its .grad, as PyTorch's
            if isinstance(t, Tensor) and not t.is_leaf:
                t.retain_grad()
        with _saved_hooks._backward_scope():
            execute(roots, grads, retain_graph, create_graph, capture=capture, accumulate=True)
        return
    with _saved_hooks._backward_scope():
        execute(roots, grads, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated)."""
    keys = None
    if type(inputs) is dict:  # a dict of inputs gives a dict of gradients, by the same keys
        keys, inputs = tuple(inputs.keys()), tuple(inputs.values())
    elif isinstance(inputs, collections.abc.Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    overriding = _overriding(outputs, inputs)
    if overriding:
        result = _tf.handle_torch_function(
            grad, overriding, outputs, inputs, grad_outputs=grad_outputs,
            retain_graph=retain_graph, create_graph=create_graph, only_inputs=only_inputs,
            allow_unused=allow_unused, is_grads_batched=is_grads_batched,
            materialize_grads=materialize_grads)
        return result if keys is None else dict(zip(keys, result))
    if is_grads_batched:
        result = _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                               allow_unused, materialize_grads)
        return result if keys is None else dict(zip(keys, result))
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    grad_outputs = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} "
                           f"for {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grad_outputs)
    roots = _roots(outputs)
    if graph._retaining:
        graph.move_retain_grad_hooks()
    capture = _input_edges(inputs)
    with _saved_hooks._backward_scope():
        got = execute(roots, grads, retain_graph, create_graph, capture=capture)
    result = []
    for i, (t, g) in enumerate(zip(inputs, got)):
        edge = isinstance(t, graph.GradientEdge)
        if g is None:
            if materialize_grads:
                if edge:
                    raise RuntimeError("materialize_grads cannot be used when the given input "
                                       "is a GradientEdge")
                g = _require_grad(zeros(t._size, t.dtype, t._device), create_graph)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
        elif not edge and g._size != t._size:
            g = g.sum_to_size(t._size)
        result.append(g)
    return tuple(result) if keys is None else dict(zip(keys, result))


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """grad(is_grads_batched=True): the first dim of each grad_output indexes independent
    vector-Jacobian products, whose results are stacked. PyTorch vmaps the backward pass; ember's
    vmap lives above autograd, so this runs one backward per index (same results)."""
    grad_outputs = _as_tuple(grad_outputs)
    if not grad_outputs or any(g is None for g in grad_outputs):
        raise RuntimeError("grad(is_grads_batched=True) needs a batched grad_output for every "
                           "output")
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        out_shape, grad_shape = _calculate_shape(out, g, True)
        if out_shape != grad_shape:
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of "
                               "each grad_output as the batch dimension. The sizes of the "
                               "remaining dimensions are expected to match the shape of "
                               "corresponding output, but a mismatch was detected: "
                               f"grad_output[{i}] has a shape of {grad_shape} and output[{i}] "
                               f"has a shape of {out_shape}. If you only want some tensors in "
                               "`grad_output` to be considered batched, consider using vmap.")
    size = grad_outputs[0].shape[0]
    if any(g.shape[0] != size for g in grad_outputs):
        raise RuntimeError("grad(is_grads_batched=True): every grad_output must have the same "
                           f"size in dim 0, got {[tuple(g.shape) for g in grad_outputs]}")
    per_index = []
    for b in range(size):
        keep = True if b < size - 1 else retain_graph
        per_index.append(grad(outputs, inputs, [g[b] for g in grad_outputs], retain_graph=keep,
                              create_graph=create_graph, allow_unused=allow_unused,
                              materialize_grads=materialize_grads))
    stack = lookup("stack")
    return tuple(None if any(r[k] is None for r in per_index) else
                 stack([r[k] for r in per_index], 0) for k in range(len(inputs)))


def __getattr__(name):
    if name == "torch":  # PyTorch's torch.autograd imports torch, so `torch.autograd.torch` works
        import ember
        return ember
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
