"""torch._lazy: the lazy device (PyTorch's LazyTensor core, as PyTorch/XLA uses it).

Tensors on `device="lazy"` record the ops applied to them instead of running them
(ember/_lazy/tensor.py); the pending graph runs -- compiled by ember.compile's code generation
and cached by its structure -- when a value is needed (`.item()`, `.tolist()`, `bool()`,
printing, `.cpu()`) or at `mark_step()` (ember/_lazy/graph_executor.py):

    model = Net().to("lazy")
    for x, y in loader:
        loss = F.cross_entropy(model(x.to("lazy")), y.to("lazy"))
        opt.zero_grad(); loss.backward(); opt.step()
        ember._lazy.mark_step()      # the step's graph: compiled once, then only run
"""
from .._dispatch.recorder import flatten, unflatten
from . import metrics, ts_backend, debug
from . import tensor as _tensor  # registers the Lazy key's kernel
from .graph_executor import executor as _executor

_step_closures = []


def mark_step(device="", wait=False):
    """End a step: run the pending graph, making every live lazy tensor device data (the
    graph is compiled the first time its structure is seen), then run the step closures."""
    metrics._count("MarkStep")
    _executor.sync()
    run_step_closures()


def wait_device_ops(devices=None):
    """Wait for the lazy device's work: ember runs a graph to its end inside mark_step."""


def sync_multi(tensors, devices):
    """Run the pending graph so that `tensors` hold their values (it computes all live ones)."""
    _executor.sync()


def get_tensor_id(tensor):
    """A number identifying the lazy tensor (shared by the tensors that are the same data)."""
    if tensor._lazy is None:
        raise RuntimeError(f"get_tensor_id: expected a lazy tensor, got a {tensor.device} one")
    return id(tensor._lazy)


def to_cpu(tensors, devices=None):
    """The lazy tensors of a nested list/tuple/dict copied to CPU, after one graph run."""
    leaves, spec = flatten(tensors)
    _executor.sync()
    return unflatten([t.to("cpu") for t in leaves], spec)


def save(tensors, *args, **kwargs):
    """ember.save of `to_cpu(tensors)`."""
    from ..serialization import save as _save
    _save(to_cpu(tensors), *args, **kwargs)


def add_step_closure(closure, args=(), run_async=False):
    """Run `closure(*args)` after the next mark_step's graph has run (to log or save values
    without running the graph in the middle of a step)."""
    _step_closures.append((closure, args))


def run_step_closures():
    closures = list(_step_closures)
    _step_closures.clear()
    for closure, args in closures:
        closure(*args)


__all__ = ["mark_step", "wait_device_ops", "sync_multi", "get_tensor_id", "to_cpu", "save",
           "add_step_closure", "run_step_closures", "metrics", "ts_backend", "debug"]
