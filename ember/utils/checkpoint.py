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

- `use_reentrant=False` (recommended): the region's forward records its graph as usual, but
  inside saved-tensor hooks that keep an empty holder in place of every tensor an op saves
  for backward. The first unpack of a holder in a backward pass reruns the region and hands
  out what the rerun saved (see Note [Non-reentrant checkpoint]). Gradients flow through the
  ordinary graph, so `autograd.grad(loss, params)`, hooks and arguments that need no grad all
  work, and a mismatch between the two runs is reported (CheckpointError).
"""
import collections
import contextlib
import enum
import uuid
import warnings
import weakref
from ember._core._warnings import user_stacklevel as _user_stacklevel

import ember
from ember.autograd import Function
from ember._dispatch import dispatcher as _dispatcher
from ember.autograd.graph import SavedTensor as _SavedTensor
from ember.autograd.saved_tensor_hooks import saved_tensors_hooks
from ember.utils._python_dispatch import TorchDispatchMode
from ember.utils._pytree import tree_leaves

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "DefaultDeviceType", "get_device_states", "set_device_states",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts", "GraphExecGroup"]


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


class DefaultDeviceType:
    """The device type whose random state checkpoint saves when no argument is on a device
    other than the CPU: the current accelerator's, else "cpu" (settable)."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            acc = ember.accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc is not None else "cpu"
        return DefaultDeviceType._default_device_type


def _tensor_leaves(args):
    return [x for x in tree_leaves(args) if isinstance(x, ember.Tensor)]


def _infer_device_type(*args):
    """The one non-CPU device type among the tensors in `args` (a pytree) whose random state
    matters; with several, "cuda" if present, else the first met (warning that the others'
    random states are not preserved); with none, DefaultDeviceType's."""
    types = [t.device.type for t in _tensor_leaves(args) if t.device.type != "cpu"]
    distinct = set(types)
    if len(distinct) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of "
            "devices. Device state will only be saved for devices of a single device type, and "
            "the remaining devices will be ignored. Consequently, if any checkpointed functions "
            "involve randomness, this may result in incorrect gradients. (Note that if CUDA "
            "devices are among the devices detected, it will be prioritized; otherwise, the "
            "first device encountered will be selected.)"
            f"\nDevice types: {sorted(distinct)} first device type: {types[0]}", stacklevel=2)
    if not types:
        return DefaultDeviceType.get_device_type()
    return "cuda" if "cuda" in distinct else types[0]


def get_device_states(*args):
    """(device indices, random states) of the accelerator devices the tensors in `args` live
    on, in the order met; CPU and meta tensors add nothing."""
    ids = [t.get_device() for t in _tensor_leaves(args) if t.device.type not in ("cpu", "meta")]
    if not ids:
        return [], []
    module = getattr(ember, _infer_device_type(*args))
    states = []
    for index in ids:
        with module.device(index):
            states.append(module.get_rng_state())
    return ids, states


def set_device_states(devices, states, *, device_type=None):
    """Restore the random states `get_device_states` returned."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = getattr(ember, device_type)
    for index, state in zip(devices, states):
        with module.device(index):
            module.set_rng_state(state)


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
# Note [Non-reentrant checkpoint]
# The region's forward runs and records its graph as usual, inside a pair of saved-tensor hooks
# (`_checkpoint_hook`): every tensor an op of the region saves for backward is replaced, in the
# graph, by an empty `_Holder`, so the graph keeps no activations. The frame remembers the
# holders in save order, with each saved tensor's shape/dtype/device, and the region's inputs.
#
# The first time backward unpacks one of those holders, the unpack hook reruns the region from
# its saved inputs (same RNG state and autocast settings) inside another pair of hooks
# (`_recomputation_hook`) whose pack hook, instead of building a graph for later, files the
# k-th tensor saved by the rerun under the k-th holder. The rerun stops as soon as the last
# holder is filled ("early stop"). The unpack then hands out the tensor filed under its holder,
# and every later unpack in the same backward pass takes its tensor from the same rerun.
#
#     forward:   op saves t  --pack-->    holder_k  (t dropped, t's metadata noted)
#     backward:  unpack holder_k  --> first time in this pass: rerun region, file its saves
#                                     as recomputed[pass][handle_k]  --> recomputed tensor
#
# Recomputations are kept per backward pass (graph task id; outside a backward pass each
# unpack gets a pass of its own; `GraphExecGroup` makes several backward calls one pass), and
# each recomputed tensor is handed out once: it is dropped once read. If the rerun saves a
# different number of tensors, or tensors of another shape/dtype/device, the region was not
# deterministic and CheckpointError says so (with `debug=True`, with the ops of both runs).

class _Handle:
    pass


class _Holder:
    """What the graph keeps for one saved tensor: per backward pass, the handle its
    recomputed tensor is filed under (None once handed out)."""

    def __init__(self):
        self.handles = {}


class _StopRecomputation(Exception):
    """Raised by the rerun's pack hook once every holder is filled."""


_early_stop = [None]   # set_checkpoint_early_stop's override (None: checkpoint's argument)
_debug = [None]        # set_checkpoint_debug_enabled's override
_graph_exec_group = [None]


def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. "
                             "Please report this bug by filing an issue to PyTorch.")


_DEBUG_TIP = ("\nTip: To see a more detailed error message, either pass `debug=True` to "
              "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block with "
              "`with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to enable "
              "checkpoint-debug mode globally.\n")


def _default_meta(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_DETERMINISM_CHECKS = {"default": _default_meta, "none": lambda x: None}


class _CheckpointFrame:
    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn = metadata_fn
        self.saved_args = []
        self.weak_holders = []
        self.x_metadatas = []
        self.recomputed = collections.defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = collections.defaultdict(int)
        self.is_recomputed = collections.defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        # saved as any op saves its inputs: an in-place change before backward is detected
        self.saved_args = [_SavedTensor(a) if isinstance(a, ember.Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack() if isinstance(a, _SavedTensor) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.weak_holders)}\nNumber of tensors saved during recomputation: "
                f"{self.recomp_counter[gid]}.\n{_DEBUG_TIP}")
        mismatched = ""
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(holder.handles.get(gid) in self.recomputed[gid])
            recomputed = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if self.x_metadatas[idx] != recomputed:
                mismatched += (f"tensor at position {idx}:\nsaved metadata: "
                               f"{self.x_metadatas[idx]}\nrecomputed metadata: {recomputed}\n")
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{mismatched}.\n{_DEBUG_TIP}")


class _recomputation_hook(saved_tensors_hooks):
    """The rerun's hooks: file each saved tensor under the holder of the same rank."""

    def __init__(self, frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            _internal_assert(frame is not None)
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:
                    # backward inside the region's own forward: its saves are not the region's
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    f"than during the original forward pass.\n{_DEBUG_TIP}")
            holder = frame.weak_holders[idx]()
            if holder is not None:  # else that part of the graph is gone already
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputation
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    """The forward's hooks: a holder instead of each saved tensor; unpacking it reruns the
    region once per backward pass and hands out the tensor filed under it."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with ember.no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = _graph_exec_group[0]
            if gid is None:
                gid = ember._C._current_graph_task_id()
                if gid == -1:   # read outside a backward pass: a pass of its own
                    gid = int(uuid.uuid4())
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), ember.enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputation:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                extra = ("Performing two backward calls that overlap (i.e. require the same "
                         "saved activation in order to compute gradients) is not allowed while "
                         "under the torch.utils.checkpoint.GraphExecGroup context. "
                         if _graph_exec_group[0] is not None else "")
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    f"already unpacked once. {extra}If you are calling ctx.saved_tensors in "
                    "backward, make sure to do so only once. Otherwise please open an issue "
                    "with details on your use case.")
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            out = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return out

        if frame.unpack_error_cb is not None:
            def checked_unpack_hook(holder):
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)
            super().__init__(pack_hook, checked_unpack_hook)
        else:
            super().__init__(pack_hook, unpack_hook)


class _OpLog:
    """A dispatch mode listing the ops that ran (the debug log of a checkpointed region)."""

    def __init__(self):
        self.ops = []

    def __enter__(self):
        self.ops = []
        _dispatcher._modes.append(self._call)
        return self

    def __exit__(self, *exc):
        _dispatcher._modes.remove(self._call)
        return False

    def _call(self, op, args, level):
        self.ops.append(op.name)
        return _dispatcher.call_in_modes(op, args, level - 1)


def _debug_context_and_error_cb():
    forward_log, recompute_log = _OpLog(), _OpLog()

    def unpack_error_cb(e):
        raise CheckpointError(
            "An error happened while unpacking tensors; these are the operators of the latest "
            "computation, because you passed `debug=True` to `torch.utils.checkpoint."
            "checkpoint()`.\n\nOperations executed during the original forward:\n\n"
            + "\n".join(forward_log.ops) + "\n\nOperations executed during recomputation:\n\n"
            + "\n".join(recompute_log.ops) + "\n\n ERROR: Detected non-determinism while "
            "running activation checkpointing\n\n You are seeing this error because you passed "
            "`debug=True` to checkpoint and tensors to be saved during the original forward "
            "and differ between those saved during recomputation. This can happen if different "
            "operators were ran in the original forward and in the recomputation.\n") from e

    return (lambda: (forward_log, recompute_log)), unpack_error_cb


def _autocast_state():
    return {"enabled": ember.is_autocast_enabled("cpu"),
            "dtype": ember.get_autocast_dtype("cpu"),
            "cache_enabled": ember.is_autocast_cache_enabled()}


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check,
                                  debug, early_stop, *args, **kwargs):
    if not ember.is_grad_enabled():
        return function(*args, **kwargs)   # nothing is recorded, so nothing is saved
    unpack_error_cb = None
    if _debug[0] if _debug[0] is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_error_cb()
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    rng_state = ember.get_rng_state() if preserve_rng_state else None
    autocast_state = _autocast_state()

    def recompute_fn(*inputs):
        with _replayed_rng(rng_state), ember.autocast("cpu", **autocast_state), \
                recompute_context:
            function(*inputs, **kwargs)

    frame = _CheckpointFrame(recompute_fn, early_stop if _early_stop[0] is None else _early_stop[0],
                             unpack_error_cb, _DETERMINISM_CHECKS[determinism_check])
    frame.save_inputs(*args)
    with _checkpoint_hook(frame), forward_context:
        result = function(*args, **kwargs)
    frame.forward_completed = True
    return result


class GraphExecGroup:
    """Backward calls made inside one of these contexts count as a single backward pass for
    non-reentrant checkpoints: each region is recomputed at most once for all of them. Their
    regions of the graph must not overlap (each saved activation is handed out once)."""

    def __enter__(self):
        if _graph_exec_group[0] is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_graph_exec_group[0]}")
        _graph_exec_group[0] = self
        return self

    def __exit__(self, *exc):
        _graph_exec_group[0] = None

    @classmethod
    def _get_current_group(cls):
        return _graph_exec_group[0]


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True,
               preserve_rng_state=True, **kwargs):
    """Run `function(*args, **kwargs)` without keeping its intermediate results for backward;
    recompute them when backward needs them.

    Args:
        function: what to run (a module, or any function of tensors).
        use_reentrant: which variant (see the module docstring). Pass it explicitly; None
            warns and uses True, as PyTorch does.
        preserve_rng_state: replay the forward's random state in the recomputation.
        context_fn: returns two context managers, entered around the forward and around
            its recomputation (use_reentrant=False); see create_selective_checkpoint_contexts.
        determinism_check: "default" compares the shapes, dtypes and devices of the tensors
            the recomputation saves with the forward's (CheckpointError if they differ);
            "none" does not.
        debug: on such an error, list the ops of the forward and of the recomputation.
        early_stop: stop the recomputation once it has every tensor backward needs.
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
    return _checkpoint_without_reentrant(function, preserve_rng_state, context_fn,
                                         determinism_check, debug, early_stop, *args, **kwargs)


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints made inside stop recomputing once they have every
    tensor backward needs (the default); it matters while the forward runs."""
    previous = _early_stop[0]
    _early_stop[0] = enable
    try:
        yield
    finally:
        _early_stop[0] = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides every checkpoint's `debug` argument inside (None: leave them alone)."""
    previous = _debug[0]
    _debug[0] = enabled
    try:
        yield
    finally:
        _debug[0] = previous



# ---- selective activation checkpointing ---------------------------------------------------
# Note [Selective checkpointing]
# A policy says, per op call in the region, whether to keep its result (MUST/PREFER_SAVE) or to
# recompute it (MUST/PREFER_RECOMPUTE). Both contexts are TorchDispatchModes, so they sit below
# autograd: the graph is recorded as usual and only the computation under it is kept or
# replayed. The forward context (_CachingTorchDispatchMode) runs every op, numbers the calls of
# each op (its n-th call), asks the policy once (it sees the result, `ctx.op_output`) and
# stores either the result, detached, with its version, or the marker _RECOMPUTE. The recompute
# context (_CachedTorchDispatchMode) numbers the calls again from 0 each time it is entered and
# looks each call up: _RECOMPUTE runs the op; a stored result is handed back once and replaced
# by _CONSUMED (a second backward through the region is refused), after checking it was not
# modified in place since (unless allow_cache_entry_mutation).
class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a policy function receives first. It is called in the forward only (the recompute
    replays by call number), so `is_recompute` is always False; `op_output` is the result."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


def _policy_from_bool(b):
    # PyTorch still accepts the old True/False answers
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


_SAC_IGNORED_OPS = (ember.ops.aten.detach.default,)   # checkpoint adds detaches in one run only
_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = ("This can happen if the operations in the checkpointed region are "
                     "nondeterministic or depend on global state that changed between forward "
                     "and backward.")


class _VersionWrapper:
    """A kept result and its version when stored: a later in-place change is an error."""

    def __init__(self, val):
        self.val = val
        self.version = val._version if isinstance(val, ember.Tensor) else None

    def get_val(self, allow_cache_entry_mutation):
        if self.version is not None and not allow_cache_entry_mutation and \
                self.val._version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been "
                               "mutated")
        return self.val


def _tree_map(fn, out):
    if isinstance(out, (tuple, list)):
        return type(out)(fn(o) for o in out)
    return fn(out)


def _detach(x):
    # detached: the stored tensor must not keep the graph (and so this storage) alive
    return x.detach() if isinstance(x, ember.Tensor) else x


class _CachingTorchDispatchMode(TorchDispatchMode):
    """The forward context of selective checkpointing (Note [Selective checkpointing])."""

    def __init__(self, policy_fn, storage):
        super().__init__()
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter = collections.defaultdict(int)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        out = func(*args, **kwargs)
        if func in _SAC_IGNORED_OPS:
            return out
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            self.storage[func][idx] = _tree_map(lambda x: _VersionWrapper(_detach(x)), out)
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(TorchDispatchMode):
    """The recompute context of selective checkpointing (Note [Selective checkpointing]).
    `policy_fn` is accepted and not used, as in PyTorch."""

    def __init__(self, policy_fn, storage, allow_cache_entry_mutation=False):
        super().__init__()
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter = collections.defaultdict(int)

    def __enter__(self):
        # a second recompute (retain_graph=True) meets _CONSUMED, not a missing index
        self.func_counter.clear()
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        if func in _SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        func_storage = self.storage.get(func)
        if func_storage is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH_MSG}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but "
                               f"not found in storage. {_SAC_MISMATCH_MSG}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        func_storage[idx] = _CONSUMED
        return _tree_map(lambda x: x.get_val(self.allow_cache_entry_mutation), entry)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) contexts for `checkpoint(..., context_fn=...)` that keep the
    results of the ops a policy names: a list of ops (`ember.ops.aten.mm.default`, ...) is
    saved, everything else recomputed; or a function `policy(ctx, op, *args, **kwargs)`
    returning a CheckpointPolicy."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, _dispatcher.OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload."
                         "For example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`."
                         if isinstance(op, _dispatcher.OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. {extra}")
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = collections.defaultdict(dict)
    return (_CachingTorchDispatchMode(policy_fn, storage),
            _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation))


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
