"""The backward engine: runs the graph of Nodes in dependency order, without recursion.

How a backward pass goes (PyTorch's Engine::execute, on one thread):

1. Discover the graph reachable from the roots with an explicit stack, counting for every node
   how many edges point at it (its *dependencies*).
2. If only some gradients are wanted (`autograd.grad(outputs, inputs)` or `backward(inputs=)`),
   mark which nodes lie on a path to a wanted one; the others are skipped. grad() captures the
   gradient flowing into each input's edge; backward(inputs=) instead runs the inputs' own nodes
   (a leaf's AccumulateGrad fills its .grad, with its hooks), as PyTorch's engine does.
3. Seed the roots' input buffers with the initial gradients. A node whose dependency count falls
   to zero is *ready*: all gradients for it have arrived and have been summed in its buffer.
   Ready nodes run highest sequence number first (the most recently created op first), like
   PyTorch's CPU ready queue.
4. Running a node: tensor pre-hooks and retain_grad hooks on its inputs, node pre-hooks, the
   node itself, node post-hooks; then each output gradient goes along its edge into the next
   node's buffer, and that node's dependency count drops by one.
5. Unless `retain_graph`, each node frees its saved tensors after it runs, so a second backward
   through the same graph raises PyTorch's "Trying to backward through the graph a second time"
   (a node that saved no tensor can run again, as in PyTorch).

Gradients are computed with grad mode off, unless `create_graph=True`: then the formulas (written
with differentiable ops) record a graph of their own, which is what higher-order gradients use.
"""
import heapq
import itertools
import threading

from .._core.grad_mode import _grad_state
from .graph import AccumulateGrad, sum_grads
from . import anomaly_mode

_observer = None  # fn(node, buffer) -> grads, set while ember.explain() records

# .running: per backward pass running on this thread (nested when reentrant), a pair
# (its final callbacks, whether it computes only some gradients)
_tasks = threading.local()


class _ImperativeEngine:
    """`Variable._execution_engine`: PyTorch's handle on its engine. `queue_callback(fn)` runs
    `fn()` once the backward pass running now has finished all its nodes (a callback may queue
    more; those run too)."""

    def queue_callback(self, callback):
        running = getattr(_tasks, "running", None)
        if not running:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        running[-1][0].append(callback)


def _is_checkpoint_valid():
    """False inside a backward pass that computes only some gradients (`autograd.grad`,
    `backward(inputs=)`): the reentrant checkpoint cannot run its inner backward there."""
    running = getattr(_tasks, "running", None)
    return not running or not running[-1][1]


def _run_final_callbacks(callbacks):
    i = 0
    while i < len(callbacks):
        callbacks[i]()
        i += 1


def apply_node(node, buffer):
    """Run one node's backward; under detect_anomaly, check its outputs for NaN."""
    if anomaly_mode._enabled:
        return anomaly_mode.run_node_checked(node, buffer)
    return node.apply(buffer)


def _run_tensor_pre_hooks(node, buffer):
    hooks = node._tensor_pre_hooks
    if hooks:
        for nr, fns in hooks.items():
            for fn in list(fns.values()):
                r = fn(buffer[nr])  # None when no gradient reached this output, as PyTorch's
                if r is not None:
                    buffer[nr] = r
    rg = node._retain_grad_hooks
    if rg:
        for nr, fn in rg.items():
            if buffer[nr] is not None:
                fn(buffer[nr])


# A backward pass started by a node of another (reentrant backward: a custom Function's
# backward calling .backward(), the reentrant checkpoint) runs nested on the same thread, its
# frames on top of the outer pass's. Past this many nested passes, the next one runs on a new
# thread that the current one waits for, as PyTorch's engine hands deep reentrant work to a
# pool of threads: each thread has a Python recursion budget of its own, so a chain of
# thousands of reentrant calls does not overflow the stack.
MAX_REENTRANT_DEPTH = 10


def execute(roots, grads, keep_graph, create_graph, capture=None, accumulate=False):
    """Run backward from `roots` (list of (node, input_nr)) seeded with `grads`.

    capture: optional list of (node, input_nr) whose incoming gradients are returned (what
    autograd.grad asks for); then only the nodes on a path to them run. With accumulate=True
    (backward(inputs=)) the capture edges' nodes run as well and nothing is returned.
    """
    stack = getattr(_tasks, "stack", None)
    if stack is not None and len(stack) >= MAX_REENTRANT_DEPTH:
        return _execute_on_new_thread(roots, grads, keep_graph, create_graph, capture, accumulate)
    return _execute(roots, grads, keep_graph, create_graph, capture, accumulate)


def _execute_on_new_thread(*args):
    outcome = []

    def work():
        try:
            outcome.append((True, _execute(*args)))
        except BaseException as e:  # handed to the waiting thread, which raises it
            outcome.append((False, e))
    worker = threading.Thread(target=work, name="ember-reentrant-backward")
    worker.start()
    worker.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _execute(roots, grads, keep_graph, create_graph, capture=None, accumulate=False):
    deps = _dependencies(roots)

    # 2. which nodes are needed, when only some gradients are wanted
    needed = None
    captured = None
    targets = None
    if capture is not None:
        targets = {}
        for i, (node, nr) in enumerate(capture):
            targets.setdefault(node, []).append((i, nr))
        needed = _needed_nodes(roots, deps, targets)
        if accumulate:  # backward(inputs=): the inputs' nodes run, nothing is captured
            needed.update(targets)
            targets = {}
        else:
            captured = [None] * len(capture)

    # 3. seed and run
    buffers = {}
    ready = []
    order = itertools.count()  # ties (the accumulators) in push order: the same every run
    for (node, nr), g in zip(roots, grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs
        buf[nr] = g if buf[nr] is None else sum_grads(buf[nr], g)
    for node in buffers:
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, next(order), node))

    # nodes without hooks, outside anomaly mode, explain() and partial backward run plainly
    observer = _observer
    observed = observer is not None or capture is not None
    heappop, heappush = heapq.heappop, heapq.heappush
    prev = _grad_state.enabled
    _grad_state.enabled = create_graph
    running = getattr(_tasks, "running", None)
    if running is None:
        running = _tasks.running = []
    callbacks = []
    running.append((callbacks, capture is not None))
    tasks = _tasks.__dict__.setdefault("stack", [])
    tasks.append((next(_task_ids), keep_graph, deps, roots, needed, targets))
    try:
        while ready:
            node = heappop(ready)[2]
            buffer = buffers.pop(node, None)
            if buffer is None:
                continue
            if observed or node._hooked or anomaly_mode._enabled:
                outs = _run_node(node, buffer, targets, captured, needed, observer)
                if outs is None:  # not on a path to a wanted gradient: not run, so its saved
                    continue      # tensors stay (PyTorch frees only the nodes that ran)
            else:
                outs = node.apply(buffer)
            if not keep_graph:
                node._release_saved()
            for (nxt, nr), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        if nxt._num_outputs == 1:
                            buffers[nxt] = [g]
                        else:
                            buf = buffers[nxt] = [None] * nxt._num_outputs
                            buf[nr] = g
                    else:
                        buf[nr] = g if buf[nr] is None else sum_grads(buf[nr], g)
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    if nxt in buffers:
                        heappush(ready, (-nxt._seq, next(order), nxt))
                    else:
                        _skip_subgraph(nxt, deps, buffers, ready, order, needed, targets)
        if callbacks:
            _grad_state.enabled = prev
            _run_final_callbacks(callbacks)
    finally:
        _grad_state.enabled = prev
        running.pop()
        tasks.pop()
    return captured


# _tasks.stack: the backward passes now running on this thread, innermost last (a reentrant
# backward, run by a node of another, nests): (id, keep_graph, deps, roots, needed, targets),
# PyTorch's "current graph task" that hooks may ask about.
_task_ids = itertools.count()


def _current_task():
    stack = getattr(_tasks, "stack", None)
    return stack[-1] if stack else None


def current_graph_task_id():
    """torch._C._current_graph_task_id: the running backward's id, -1 outside one."""
    task = _current_task()
    return -1 if task is None else task[0]


def current_graph_task_keep_graph():
    """Whether the innermost running backward keeps its graph (True outside any, as
    PyTorch's torch._C._autograd._get_current_graph_task_keep_graph)."""
    task = _current_task()
    return True if task is None else task[1]


def will_engine_execute_node(node, leaf_in_grad_raises=False):
    """torch._C._will_engine_execute_node: whether the running backward reaches `node` and
    runs it (or captures its gradient, for grad()). PyTorch's binding refuses to answer for a
    leaf's accumulator whose gradient grad() captures (leaf_in_grad_raises)."""
    task = _current_task()
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    _, _, deps, roots, needed, targets = task
    reached = node in deps or any(node is r for r, _ in roots)
    if not reached or needed is None:
        return reached
    if leaf_in_grad_raises and node in targets and isinstance(node, AccumulateGrad):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    return node in needed or node in targets


def _dependencies(roots):
    """1. How many edges point at each node reachable from the roots (one iterative walk)."""
    deps = {}
    root_nodes = {node for node, _ in roots if node is not None}
    stack = list(root_nodes)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            count = deps.get(nxt)
            if count is None:
                deps[nxt] = 1
                if nxt not in root_nodes:
                    stack.append(nxt)
            else:
                deps[nxt] = count + 1
    return deps


def _run_node(node, buffer, targets, captured, needed, observer):
    """Step 4 with everything around the node: its inputs' tensor pre-hooks and retain_grad
    hooks, capturing wanted gradients, node pre-hooks, the node (observed by explain() or
    checked by anomaly mode), node post-hooks. None if the node is not needed."""
    if node._tensor_pre_hooks or node._retain_grad_hooks:
        _run_tensor_pre_hooks(node, buffer)
    if targets is not None:
        if node in targets:
            for i, nr in targets[node]:
                captured[i] = buffer[nr]
        if node not in needed:
            return None
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(buffer))
            if r is not None:
                buffer = list(r)
    if observer is not None:
        outs = observer(node, buffer)
    elif anomaly_mode._enabled:
        outs = anomaly_mode.run_node_checked(node, buffer)
    else:
        outs = node.apply(buffer)
    if node._hooks:
        for fn in list(node._hooks.values()):
            r = fn(tuple(outs), tuple(buffer))
            if r is not None:
                outs = r
    if targets is not None:  # gradients go only to nodes that run or capture, as PyTorch's
        outs = [g if nxt in needed or nxt in targets else None    # (so the others' tensor
                for (nxt, _), g in zip(node.next_functions, outs)]  # hooks do not run)
    return outs


def _skip_subgraph(node, deps, buffers, ready, order, needed=None, targets=None):
    """A node that received no gradient at all: count down what it feeds (it does not run,
    so it keeps its saved tensors, as in PyTorch).

    PyTorch does run such a node, with undefined gradients, which its formulas pass on as
    undefined: the visible difference is its tensor hooks, which see None. So they are called
    here (for a node the pass would run); ember drops a gradient one of them makes up."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n._tensor_pre_hooks and (needed is None or n in needed or n in targets):
            _run_tensor_pre_hooks(n, [None] * n._num_outputs)
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                if nxt in buffers:
                    heapq.heappush(ready, (-nxt._seq, next(order), nxt))
                else:
                    stack.append(nxt)


def _needed_nodes(roots, deps, targets):
    """Nodes from which a target is reachable: the only ones worth running (no recursion).

    Kahn's algorithm orders the graph from the roots down; walking that order backwards, a node
    is needed if one of its next nodes is needed or is a target. Accumulators never are: with
    wanted gradients, the caller decides what is written to `.grad`.
    """
    remaining = dict(deps)
    order = []
    frontier = list(dict.fromkeys(n for n, _ in roots if n is not None and not deps.get(n)))
    while frontier:
        n = frontier.pop()
        order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            remaining[nxt] -= 1
            if remaining[nxt] == 0:
                frontier.append(nxt)
    needed = set()
    for n in reversed(order):
        if isinstance(n, AccumulateGrad):
            continue
        if any(nxt in needed or nxt in targets for nxt, _ in n.next_functions):
            needed.add(n)
    return needed
