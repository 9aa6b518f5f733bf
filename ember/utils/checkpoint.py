"""torch.utils.checkpoint: trade compute for memory by recomputing a forward in backward.

Normally every op of the forward keeps what its backward needs (inputs, outputs, masks)
until backward runs, so the memory of training grows with depth. A checkpointed region
keeps only its inputs: its forward results come without the region's saved tensors, and
when backward reaches the region it runs the forward again, this time recording, and
backpropagates through that fresh graph. One extra forward per region buys activations for
only one region at a time.

                   forward                           backward
    x --[ f: no saved tensors ]--> y      dy --> rerun f(x) with grad --> dx, dparams

Recomputing must reproduce the forward exactly: with `preserve_rng_state=True` (default) the
CPU random state at the start of the region is saved and restored for the rerun (inside
`fork_rng`, so the outer random stream is untouched), hence dropout draws the same mask.

Two variants, as in PyTorch:

- `use_reentrant=True`: a `CheckpointFunction` whose forward runs the region under no_grad
  with the tensor arguments as its only inputs, and whose backward reruns it and calls
  `autograd.backward` on the new graph (a backward inside a backward: "reentrant"). Gradients
  reach parameters used inside by accumulating into their `.grad` directly, so at least one
  argument must require grad and `autograd.grad` does not see them.

- `use_reentrant=False` (recommended): every tensor the region depends on from outside -- its
  tensor arguments and the leaves it reaches, typically parameters -- becomes an input of the
  checkpoint node, found by walking the region's graph once after its forward; that graph
  (with its saved tensors) is then dropped. In backward the rerun's gradients flow into those
  inputs through the ordinary engine, so `autograd.grad(loss, params)`, hooks and arguments
  that need no grad all work. (PyTorch implements this variant with saved-tensor hooks, which
  record the forward normally but keep no saved tensors; ember records the graph and discards
  it instead: the same memory after forward, the region's activations held only while it
  runs.)
"""
import contextlib
import enum
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import ember
from ember.autograd import Function
from ember._dispatch import dispatcher as _dispatcher
from ember.autograd.variable_type import autograd_kernel as _autograd_kernel

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts"]


class CheckpointError(RuntimeError):
    """The recomputation did not reproduce the forward (tensors of other shapes or dtypes)."""


def detach_variable(inputs):
    """Detached copies of the tensors in a tuple that keep their requires_grad (new leaves)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, ember.Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, ember.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=_user_stacklevel())


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def _replayed_rng(state):
    """Run the body with the random state the forward started from, then put the outer
    stream back as it was (state None: leave the generator alone)."""
    with ember.random.fork_rng(enabled=state is not None):
        if state is not None:
            ember.set_rng_state(state)
        yield


class CheckpointFunction(Function):
    """The reentrant checkpoint: see the module docstring."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng_state = ember.get_rng_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, ember.Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, ember.Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, ember.Tensor)])
        with ember.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if not ember.autograd._is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible "
                               "with .grad() or passing an `inputs` parameter to .backward(). To "
                               "resolve this error, you can either set use_reentrant=False, or "
                               "call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _replayed_rng(ctx.rng_state):
            detached_inputs = detach_variable(tuple(inputs))
            with ember.enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, ember.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, ember.Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        ember.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(inp.grad if isinstance(inp, ember.Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


# ---- the non-reentrant variant ----------------------------------------------------------

def _flatten(tree):
    """The tensors of a nested tuple/list/dict, in order, and a function rebuilding the tree
    from replacements for them."""
    leaves = []

    def collect(x):
        if isinstance(x, ember.Tensor):
            leaves.append(x)
        elif isinstance(x, (tuple, list)):
            for v in x:
                collect(v)
        elif isinstance(x, dict):
            for v in x.values():
                collect(v)

    def rebuild(new_leaves):
        it = iter(new_leaves)

        def build(x):
            if isinstance(x, ember.Tensor):
                return next(it)
            if isinstance(x, tuple):
                items = [build(v) for v in x]
                return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
            if isinstance(x, list):
                return [build(v) for v in x]
            if isinstance(x, dict):
                return type(x)((k, build(v)) for k, v in x.items())
            return x
        return build(tree)

    collect(tree)
    return leaves, rebuild


def _external_leaves(outputs, own_leaves):
    """The leaves (tensors with an AccumulateGrad node) that `outputs` depend on, in the order
    first reached, other than `own_leaves` (the region's detached arguments). The walk is an
    explicit stack, not recursion: graphs can be deep."""
    own = {id(t) for t in own_leaves}
    found, seen = [], set()
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    stack.reverse()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:  # AccumulateGrad: a leaf
            if id(variable) not in own:
                found.append(variable)
            continue
        stack.extend(next_node for next_node, _ in reversed(node.next_functions))
    return found


class _NonReentrantCheckpoint(Function):
    """The checkpoint node: its inputs are the region's tensor arguments and the outside leaves
    it reads; its forward hands out the region's results computed by the discovery run; its
    backward reruns the region and differentiates it with respect to all of those inputs."""

    @staticmethod
    def forward(ctx, frame, *boundary):
        ctx.frame = frame
        # saved, the arguments are version-checked: modifying one in place before backward
        # raises instead of silently recomputing from the new values
        ctx.save_for_backward(*boundary[:len(frame.tensor_indices)])
        outputs, frame.outputs = frame.outputs, None  # the frame keeps no results alive
        return tuple(o.detach() for o in outputs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        frame = ctx.frame
        args = list(frame.args)
        detached = detach_variable(ctx.saved_tensors)
        for i, t in zip(frame.tensor_indices, detached):
            args[i] = t
        with _replayed_rng(frame.rng_state), ember.enable_grad(), frame.recompute_context:
            outputs, _ = _flatten(frame.function(*args, **frame.kwargs))
        outputs = [outputs[i] for i in frame.differentiable if i < len(outputs)]
        recomputed = [(o.shape, o.dtype) for o in outputs]
        if frame.check and recomputed != frame.metadata:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass: forward {frame.metadata}, "
                f"recomputed {recomputed}")
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None and o.requires_grad]
        wrt = [t for t in detached if t.requires_grad] + frame.leaves
        if not pairs or not wrt:
            return (None,) + (None,) * (len(detached) + len(frame.leaves))
        # retain_graph: a region that reads an outside non-leaf tensor backpropagates here
        # through that tensor's node too, which the outer backward still has to run later
        grads = iter(ember.autograd.grad([o for o, _ in pairs], wrt, [g for _, g in pairs],
                                         retain_graph=True, allow_unused=True))
        arg_grads = tuple(next(grads) if t.requires_grad else None for t in detached)
        return (None,) + arg_grads + tuple(grads)


class _Frame:
    """What a non-reentrant region needs to run again."""

    def __init__(self, function, args, kwargs, rng_state):
        self.function, self.args, self.kwargs, self.rng_state = function, args, kwargs, rng_state
        self.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, ember.Tensor)]
        self.outputs = None
        self.differentiable = []
        self.leaves = []


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, check, *args,
                                  **kwargs):
    if not ember.is_grad_enabled():
        return function(*args, **kwargs)  # nothing is recorded, so there is nothing to save
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs,
                   ember.get_rng_state() if preserve_rng_state else None)
    frame.recompute_context, frame.check = recompute_context, check
    run_args = list(args)
    tensor_args = tuple(args[i] for i in frame.tensor_indices)
    detached = detach_variable(tensor_args)
    for i, t in zip(frame.tensor_indices, detached):
        run_args[i] = t
    with forward_context:
        result = function(*run_args, **kwargs)
    outputs, rebuild = _flatten(result)
    frame.differentiable = [k for k, o in enumerate(outputs) if o.requires_grad]
    grad_outputs = [outputs[k] for k in frame.differentiable]
    frame.metadata = [(o.shape, o.dtype) for o in grad_outputs]
    frame.leaves = _external_leaves(grad_outputs, detached)
    if not grad_outputs:
        return result
    frame.outputs = grad_outputs
    frame.args = [None if isinstance(a, ember.Tensor) else a for a in args]  # ctx saves them
    new = _NonReentrantCheckpoint.apply(frame, *tensor_args, *frame.leaves)
    replaced = list(outputs)
    for k, o in zip(frame.differentiable, new):
        replaced[k] = o
    # outputs that need no grad are returned as computed: they hold no graph
    return rebuild(replaced)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """Run `function(*args, **kwargs)` without keeping its intermediate results for backward;
    recompute them when backward needs them.

    Args:
        function: what to run (a module, or any function of tensors).
        use_reentrant: which variant (see the module docstring). Pass it explicitly; None
            warns and uses True, as PyTorch does.
        preserve_rng_state: replay the forward's random state in the recomputation.
        context_fn: returns two context managers, entered around the forward and around
            its recomputation (use_reentrant=False); see create_selective_checkpoint_contexts.
        determinism_check: "default" compares the shapes and dtypes of the recomputed
            results with the forward's (CheckpointError if they differ); "none" does not.
        debug: accepted as PyTorch's flag (ember's CheckpointError has no op trace to add).
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=_user_stacklevel())
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    return _checkpoint_without_reentrant(function, preserve_rng_state, context_fn,
                                         determinism_check == "default", *args, **kwargs)


def set_checkpoint_early_stop(enable):
    """PyTorch's flag for stopping a recomputation once it has every saved tensor it needs;
    ember's recomputation runs the region to the end either way (its results are what
    backward differentiates), so the flag changes nothing."""
    return contextlib.nullcontext()


def set_checkpoint_debug_enabled(enabled):
    return contextlib.nullcontext()


# ---- selective activation checkpointing ---------------------------------------------------
# Note [Selective checkpointing]
# A policy says, per op call in the region, whether to keep its result (MUST/PREFER_SAVE) or to
# recompute it (MUST/PREFER_RECOMPUTE). The forward context is a dispatch mode that stores the
# results of the calls to keep, in call order per op; the recompute context is a mode that,
# for those calls, hands the stored results back instead of running the kernel. So that
# backward still flows through such a call, its Autograd kernel runs as usual (recording the
# node and what its formula saves) and only the backend kernel below it is replaced, by the
# "SelectiveCheckpointCache" fallback that returns the stored result. Composite and in-place
# ops are always recomputed.
class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)


class SelectiveCheckpointContext:
    """What a policy function receives first: whether this call is the recomputation."""

    def __init__(self, *, is_recompute):
        self.is_recompute = is_recompute


class _SelectiveMode:
    """A dispatch mode for the time it is entered (see Note [Selective checkpointing])."""

    def __init__(self, policy_fn, storage, is_recompute):
        self.policy_fn, self.storage = policy_fn, storage
        self.ctx = SelectiveCheckpointContext(is_recompute=is_recompute)

    def __enter__(self):
        _dispatcher._modes.append(self._call)
        return self

    def __exit__(self, *exc):
        _dispatcher._modes.remove(self._call)
        return False

    def _keeps(self, op, args):
        if op._composite is not None or op._mutates:
            return False
        policy = self.policy_fn(self.ctx, op, *args)
        if isinstance(policy, bool):  # PyTorch still accepts the old True/False answers
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        return policy in _SAVE

    def _call(self, op, args, level):
        keep = self._keeps(op, args)
        if not self.ctx.is_recompute:
            out = _dispatcher.call_in_modes(op, args, level - 1)
            if keep:
                self.storage.setdefault(op, []).append(_detached(out))
            return out
        stored = self.storage.get(op)
        if not keep or not stored:
            return _dispatcher.call_in_modes(op, args, level - 1)
        _replaying.append(stored.pop(0))
        try:
            key, grad = op._key_and_grad(args)
            if grad and ember.is_grad_enabled():
                return _autograd_kernel(op, "SelectiveCheckpointCache", args)
            return _replay_stored(op, key, args)
        finally:
            _replaying.pop()


def _detached(out):
    if isinstance(out, (tuple, list)):
        return type(out)(o.detach() if isinstance(o, ember.Tensor) else o for o in out)
    return out.detach() if isinstance(out, ember.Tensor) else out


_replaying = []  # the stored result the SelectiveCheckpointCache fallback hands back


def _replay_stored(op, key, args):
    return _replaying[-1]


_dispatcher.register_fallback("SelectiveCheckpointCache", _replay_stored)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) contexts for `checkpoint(..., context_fn=...)` that keep the
    results of the ops a policy names: a list of ops (`ember.ops.aten.mm.default`, ...) is
    saved, everything else recomputed; or a function `policy(ctx, op, *args, **kwargs)`
    returning a CheckpointPolicy."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, _dispatcher.OpOverload):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. ")
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = {}
    return (_SelectiveMode(policy_fn, storage, is_recompute=False),
            _SelectiveMode(policy_fn, storage, is_recompute=True))


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint a sequence of modules (or an nn.Sequential) in `segments` chunks: every
    chunk but the last is checkpointed; the last runs normally (its backward comes first)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                      "should be passed explicitly. In version 2.9 we will raise an exception if "
                      "use_reentrant is not passed. use_reentrant=False is recommended, but if "
                      "you need to preserve the current default behavior, you can pass "
                      "use_reentrant=True. Refer to docs for more details on the differences "
                      "between the two variants.", stacklevel=_user_stacklevel())
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, ember.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
