"""torch.autograd.graph.register_multi_grad_hook: one hook over several tensors' gradients.

mode="all": called once per backward pass with the gradients of all the tensors (None for
those the pass does not compute), after the last of them is computed. mode="any": called once
per pass with the first gradient computed. Each tensor gets an ordinary tensor hook; a pass is
told apart from a concurrent one (other threads) by its graph-task id, and "all" asks the
engine how many of the tensors' nodes the pass will run.
"""
import functools
import threading
from collections import defaultdict

__all__ = ["register_multi_grad_hook"]


class _MultiHandle:
    """The handles of the per-tensor hooks, removed together."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def _grad_fn_or_grad_acc(t):
    from .graph import grad_accumulator
    return t.grad_fn if t.grad_fn is not None else grad_accumulator(t)


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Register `fn` over the gradients of `tensors`; returns a handle with `remove()`."""
    from . import engine  # (engine imports graph, which re-exports this function)
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    tensors = tuple(tensors)
    if mode == "all":
        count, buffer = {}, {}
        nodes = [_grad_fn_or_grad_acc(t) for t in tensors]

        def inner_hook(idx, grad):
            task = engine.current_graph_task_id()
            with lock:
                seen = count.get(task, 0)
                count[task] = seen + 1
                grads = buffer.setdefault(task, [None] * len(tensors))
                if seen == 0:
                    buffer[task, "calls"] = sum(map(engine.will_engine_execute_node, nodes))
                calls = buffer[task, "calls"]
            grads[idx] = grad
            if seen == calls - 1:
                with lock:
                    del count[task], buffer[task], buffer[task, "calls"]
                fn(grads)

        handles = tuple(t.register_hook(functools.partial(inner_hook, i))
                        for i, t in enumerate(tensors))
    else:
        ran = defaultdict(bool)

        @functools.wraps(fn)
        def wrapped(grad):
            task = engine.current_graph_task_id()
            with lock:
                before, ran[task] = ran[task], True
            if not before:
                fn(grad)

        handles = tuple(t.register_hook(wrapped) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
