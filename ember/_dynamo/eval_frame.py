"""`ember.compile`: capture a call at the op level, compile it with a backend, guard it.

PyTorch's Dynamo reads the Python bytecode of a frame to build an FX graph, guarded by checks on
the inputs it specialised on. ember captures at the dispatcher instead: the first call with a
new input signature runs once under the graph recorder (ember/_dispatch/recorder.py) -- the
forward, and when gradients are needed the backward through `autograd.grad` (AOT autograd's
joint graph) -- with composites decomposed into the ops they call. The backend compiles the
captured graph; later calls with the same signature run the compiled code directly.

Guards. The signature a compiled graph is valid for: grad mode, every input tensor's shape,
dtype, device and requires_grad, the non-tensor arguments' values, and for a module the
training flag of every submodule and each parameter's and buffer's identity, shape, dtype and
requires_grad. A call whose signature has no compiled entry compiles again (a recompilation,
counted and shown by `ember.explain`); after `recompile_limit` entries the function runs eagerly.

Graph breaks. Python that reads a tensor's value (`.item()`, `if t > 0:`, `.tolist()`,
`.numpy()`), an op returning a Python value, a non-CPU tensor, or a backend that cannot take the
graph ends the capture. Without bytecode analysis ember cannot resume the capture after the
break, so the call's own Python runs eagerly for that signature; for a module, each direct
submodule is compiled on its own (recursively, at their own breaks), so the captured parts are
the submodules around the break, where Dynamo would compile the bytecode on either side of it.
`fullgraph=True` raises `ember._dynamo.exc.Unsupported` instead. An optimizer's `step()`
breaks the capture too (its update writes NumPy arrays the recorder does not see); the call
then runs eagerly with the steps it calls compiled on their own, as `ember.compile(opt.step)`
compiles one (optimizer.py). What the guards do not see: Python values the forward reads that are not arguments (a module
attribute such as `self.scale`, a global) are constants of the graph, as in `jit.trace`;
after changing one, call `ember.compiler.reset()` (Dynamo guards on them). Tensors the function
closes over are read afresh on every call. The capture run's
side effects (buffers written in place, random numbers drawn) are undone before the compiled
code runs, so every call has the effects of exactly one eager call.
"""
import functools
import time
import warnings

from .._core._warnings import user_stacklevel as _user_stacklevel
from .._core.tensor import Tensor
from .._core.grad_mode import _grad_state
from .._core.generator import get_rng_state, set_rng_state
from .._dispatch.recorder import GraphRecorder, Graph, flatten, unflatten
from .._dispatch import explain as _explain
from ..nn.modules.module import Module
from .exc import Unsupported, BackendCompilerFailed
from .registry import lookup_backend
from .utils import counters
from .optimizer import compiled_region

_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_compiling = [False]
_caches = []  # every _CompiledCall's cache, for reset()


class _GraphBreak(Exception):
    pass


class _Input:
    """An output that is input number `index` itself."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class CapturedGraph:
    """What a backend is given: the forward Graph, the backward Graph (or None), and how they
    meet: which outputs receive gradients, which inputs the gradients are for, and the capture
    run's tensors (Value -> Tensor) for passes that need to know what shares memory."""

    def __init__(self, forward, backward, diff_outputs, grad_inputs, out_meta, tensors):
        self.forward, self.backward = forward, backward
        self.diff_outputs, self.grad_inputs = diff_outputs, grad_inputs
        self.out_meta, self.tensors = out_meta, tensors
        self.compiled = None

    def __call__(self, *inputs):
        return self.forward.run(*inputs)


class CacheEntry:
    def __init__(self, signature, fn, captured, reason, compile_time):
        self.signature, self.fn, self.captured = signature, fn, captured
        self.reason, self.compile_time = reason, compile_time
        self.calls = 0


def _tensor_guard(t):
    """What a compiled graph is specialised to, as Dynamo's tensor guard checks it: sizes,
    strides (a channels_last input takes other kernel routes and gives channels_last
    results), dtype, device, requires_grad."""
    return (t._size, t.stride(), t.dtype, t._device.type, t._rg)


_GUARD_FIELDS = ("shape", "stride", "dtype", "device", "requires_grad")


def _guard_field_changed(old, new):
    """' (stride)' when two tensor guards differ in their strides, and so on."""
    if not (type(old) is type(new) is tuple and len(old) == len(new) == 5 and
            type(old[0]) is tuple):
        return ""
    return " (" + ", ".join(f for f, a, b in zip(_GUARD_FIELDS, old, new) if a != b) + ")"


class _CompiledCall:
    """The callable ember.compile returns for a function; OptimizedModule wraps one."""

    def __init__(self, fn, module, backend, fullgraph, dynamic, recompile_limit, name):
        self.fn, self.module = fn, module
        self.backend = lookup_backend(backend)
        self.fullgraph = fullgraph
        self.recompile_limit = recompile_limit
        self.name = name
        self.cache = {}
        self.breaks = {}     # signature -> the reason the call ran eagerly
        self.history = []    # CacheEntry per compilation, in order
        self.children = None  # name -> compiled submodule, made at a module's graph break
        self._tree = None     # [(submodule, its children)] of the last walk (_module_state)
        _caches.append(self)
        functools.update_wrapper(self, fn)

    # ---- guards --------------------------------------------------------------------------
    def _state(self):
        m = self.module
        if m is None:
            return []
        return list(m.named_parameters()) + list(m.named_buffers())

    def _module_state(self):
        """(training flags, tensors): every submodule's training flag and the module's
        parameters then buffers, in named_parameters()/named_buffers() order, without their
        names -- what each call's guard reads. The walk over submodules is cached and made
        again when some submodule's children change."""
        tree = self._tree
        if tree is None or any(tuple(m._modules.values()) != kids for m, kids in tree):
            tree = self._tree = [(m, tuple(m._modules.values())) for m in self.module.modules()]
        flags, tensors, seen = [], [], set()
        for m, _ in tree:
            flags.append(m.training)
            for p in m._parameters.values():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    tensors.append(p)
        seen = set()
        for m, _ in tree:
            for b in m._buffers.values():
                if b is not None and id(b) not in seen:
                    seen.add(id(b))
                    tensors.append(b)
        return tuple(flags), tensors

    def signature(self, leaves, state, flags=None):
        """`state`: the module's tensors (from _module_state, or (name, tensor) pairs)."""
        sig = [_grad_state.enabled]
        for a in leaves:
            sig.append(_tensor_guard(a) if isinstance(a, Tensor) else (type(a), a)
                       if _hashable(a) else (type(a), id(a)))
        if self.module is not None:
            if flags is None:
                flags = tuple(m.training for m in self.module.modules())
                state = [t for _, t in state]
            sig.append(flags)
            sig.extend((id(t), _tensor_guard(t)) for t in state)
        return tuple(sig)

    def describe_guards(self, signature):
        out = [f"grad mode enabled == {signature[0]}"]
        for i, g in enumerate(signature[1:]):
            if isinstance(g, tuple) and len(g) == 5 and isinstance(g[0], tuple):
                out.append(f"input {i}: shape {list(g[0])}, stride {list(g[1])}, dtype {g[2]}, "
                           f"device {g[3]}, requires_grad {g[4]}")
            elif isinstance(g, tuple) and g and type(g[0]) is bool:
                out.append(f"training flags of {len(g)} modules == {g}")
        if self.module is not None:
            out.append(f"{len(self._state())} parameters/buffers: same objects, shapes, strides, "
                       "dtypes, requires_grad")
        return out

    # ---- calls ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _compiling[0]:  # a compiled call inside a capture is captured as its ops
            return self.fn(*args, **kwargs)
        leaves, spec = flatten([list(args), kwargs])
        flags, tensors = self._module_state() if self.module is not None else ((), [])
        sig = self.signature(leaves, tensors, flags)
        entry = self.cache.get(sig)
        if entry is None:
            if sig in self.breaks or len(self.cache) >= self.recompile_limit:
                if sig not in self.breaks:
                    warnings.warn(f"ember.compile: {self.name} hit recompile_limit "
                                  f"({self.recompile_limit}); running it eagerly")
                    self.breaks[sig] = "recompile_limit reached"
                    return self.fn(*args, **kwargs)
                return self._run_around_break(args, kwargs)
            state = self._state()
            if len(state) != len(tensors) or any(a is not b for (_, a), b in zip(state, tensors)):
                raise RuntimeError("ember.compile: internal error: the guard's walk over the "
                                   "module's tensors disagrees with named_parameters()/"
                                   "named_buffers()")
            entry = self._compile(sig, leaves, spec, state, args, kwargs)
            if entry is None:
                return self._run_around_break(args, kwargs)
        entry.calls += 1
        inputs = [a for a in leaves if isinstance(a, Tensor)] + tensors
        inputs += entry.captured.extra_inputs
        outs = entry.fn(inputs)
        out_leaves = entry.out_leaves
        results = [outs[i] if i is not None else inputs[c.index] if type(c) is _Input else c
                   for i, c in out_leaves]
        for ex in _explain._active:
            ex.compiled_calls.append(self.name)
        return unflatten(results, entry.out_spec)

    def _run_around_break(self, args, kwargs):
        """Run a call that broke the graph: its own Python eagerly, and for a module each
        direct submodule compiled on its own, so only the part that broke runs eagerly."""
        m = self.module
        if m is None or not m._modules:
            with compiled_region():  # optimizer steps it calls run compiled
                return self.fn(*args, **kwargs)
        if self.children is None:
            self.children = {name: compile(child, backend=self.backend,
                                           fullgraph=self.fullgraph,
                                           recompile_limit=self.recompile_limit,
                                           name=f"{self.name}.{name}")
                             for name, child in m._modules.items() if child is not None and
                             not isinstance(child, OptimizedModule)}
        originals = dict(m._modules)
        m._modules.update(self.children)
        try:
            with compiled_region():
                return self.fn(*args, **kwargs)
        finally:
            m._modules.update(originals)

    def _compile(self, sig, leaves, spec, state, args, kwargs):
        reason = "first call" if not self.history else self._why_recompile(sig)
        t0 = time.perf_counter()
        try:
            captured, out_leaves, out_spec = self._capture(leaves, spec, state, args, kwargs)
        except _GraphBreak as e:
            counters["stats"]["graph_breaks"] += 1
            if self.fullgraph:
                raise Unsupported(f"ember.compile(fullgraph=True): graph break in {self.name}: "
                                  f"{e}") from None
            self.breaks[sig] = str(e)
            for ex in _explain._active:
                ex.graph_breaks.append((self.name, str(e)))
            return None
        try:
            fn = self.backend(captured, [a for a in leaves if isinstance(a, Tensor)])
        except Exception as e:
            raise BackendCompilerFailed(self.backend, e) from e
        entry = CacheEntry(sig, fn, captured, reason, time.perf_counter() - t0)
        entry.out_leaves, entry.out_spec = out_leaves, out_spec
        entry.guards = self.describe_guards(sig)
        self.cache[sig] = entry
        self.history.append(entry)
        counters["stats"]["unique_graphs"] += 1
        for ex in _explain._active:
            ex.compiles.append((self.name, entry))
        return entry

    def _why_recompile(self, sig):
        prev = self.history[-1].signature
        names = ["grad mode"] + [f"input {i}" for i in range(len(sig) - 1)]
        if len(prev) != len(sig):
            return "the number of arguments changed"
        diffs = [n + _guard_field_changed(a, b) for n, a, b in zip(names, prev, sig) if a != b]
        if self.module is not None and len(diffs) and diffs[-1].startswith("input"):
            pass
        return "guard failed: " + ", ".join(diffs) + " changed" if diffs else "guard failed"

    # ---- capture -------------------------------------------------------------------------
    def _capture(self, leaves, spec, state, args, kwargs):
        tensors = [a for a in leaves if isinstance(a, Tensor)]
        for t in tensors + [t for _, t in state]:
            if t._device.type != "cpu":
                raise _GraphBreak(f"a {t._device.type} tensor (ember.compile's backends "
                                  "run on CPU)")

        def data_access(kind, t):
            raise _GraphBreak(f"Python reads a tensor as {kind} (data-dependent control flow "
                              "or value)")

        snapshots = {}

        def before_write(t):  # a tensor from outside the capture: restore it afterwards
            v = rec.values.get(id(t))
            made_here = v is not None and v not in rec.graph.inputs and \
                v not in rec.graph.constants
            if not made_here and id(t) not in snapshots and t._np is not None:
                snapshots[id(t)] = (t, t._np.copy())

        rec = GraphRecorder(decompose=True, on_data_access=data_access,
                            before_write=before_write)
        names = _arg_names(self.fn, len(tensors))
        for t, n in zip(tensors, names):
            rec.add_input(t, n)
        for n, t in state:
            if id(t) in rec.values:
                raise _GraphBreak(f"parameter {n} is also passed as an argument")
            rec.add_input(t, n)
        rng = get_rng_state()
        _compiling[0] = True
        try:
            with rec:
                out = self.fn(*args, **kwargs)
            fwd = rec.graph
            out_leaves, out_spec = flatten(out)
            fwd.outputs, positions = [], []
            outs = []
            for o in out_leaves:
                v = rec.value_of(o) if isinstance(o, Tensor) else None
                if v is not None and v not in fwd.inputs:
                    positions.append((len(fwd.outputs), None))
                    fwd.outputs.append(v)
                    outs.append(o)
                elif v is not None:  # an input returned as it is: returned as it is
                    positions.append((None, _Input(fwd.inputs.index(v))))
                else:
                    positions.append((None, o))
            extra = [(v, t) for v, t in fwd.constants.items() if t.requires_grad]
            for v, t in extra:  # a closed-over parameter: an input, so gradients reach it
                del fwd.constants[v]
                fwd.inputs.append(v)
            input_tensors = tensors + [t for _, t in state] + [t for _, t in extra]
            bwd, diff, wrt, meta = self._capture_backward(rec, fwd, outs, input_tensors)
        finally:
            _compiling[0] = False
            set_rng_state(rng)
            for t, saved in snapshots.values():
                t._np[...] = saved
        tensors_by_value = {v: t for t in rec._keep
                            for v in [rec.values.get(id(t))] if v is not None}
        captured = CapturedGraph(fwd, bwd, diff, wrt, meta, tensors_by_value)
        captured.extra_inputs = [t for _, t in extra]
        return captured, positions, out_spec

    def _capture_backward(self, rec, fwd, outs, inputs):
        from ..autograd import grad as autograd_grad
        from .. import ones_like
        diff = [i for i, o in enumerate(outs) if o.requires_grad]
        wrt = [i for i, v in enumerate(fwd.inputs)
               if inputs[i].requires_grad and _is_float(inputs[i])]
        if not (_grad_state.enabled and diff and wrt):
            return None, [], [], []
        grads_in = [ones_like(outs[i]).detach() for i in diff]
        bwd = rec.graph = Graph()
        bwd._count = fwd._count
        for i, g in zip(diff, grads_in):
            rec.add_input(g, f"tangent_{i}")
        with rec:
            grads = autograd_grad([outs[i] for i in diff], [inputs[i] for i in wrt],
                                  grads_in, retain_graph=True, allow_unused=True)
            # retain_graph: the inputs' own history (earlier layers) must stay usable
        bwd.outputs = [None if g is None else rec.value_of(g) for g in grads]
        fwd._count = bwd._count
        meta = [(outs[i]._size, outs[i].dtype._np) for i in diff]
        return bwd, diff, wrt, meta


def _is_float(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _hashable(a):
    try:
        hash(a)
        return True
    except TypeError:
        return False


def _arg_names(fn, n):
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None and isinstance(fn, Module):
        code = getattr(type(fn).forward, "__code__", None)
        skip = 1
    else:
        skip = 1 if hasattr(fn, "__self__") else 0
    names = list(code.co_varnames[skip:code.co_argcount]) if code is not None else []
    names = [f"L_{a}" for a in names]
    return [names[i] if i < len(names) else f"L_arg{i}" for i in range(n)]


class OptimizedModule(Module):
    """A module whose calls go through ember.compile (torch._dynamo's OptimizedModule): it
    holds the original as `_orig_mod` and shares its parameters and state_dict keys."""

    def __init__(self, mod, compiled_call):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_call"] = compiled_call

    def __call__(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)

    def state_dict(self, *args, **kwargs):
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self._orig_mod.load_state_dict(*args, **kwargs)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="ember", mode=None,
            options=None, name=None, disable=False, recompile_limit=None, isolate_recompiles=False,
            shapes_spec=None):
    """Compile `model` (a function or Module): see the module docstring."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, name=name, disable=disable,
                                 recompile_limit=recompile_limit)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not callable(model):
        raise RuntimeError(f"ember.compile expects a callable, got {type(model).__name__}")
    if dynamic:
        warnings.warn("ember.compile(dynamic=True): ember specialises every graph to its input "
                      "shapes; a new shape recompiles", stacklevel=_user_stacklevel())
    if disable:
        return model
    if backend is None:
        from . import registry
        backend = registry.default_backend
    limit = 8 if recompile_limit is None else recompile_limit
    step_of = getattr(model, "__self__", None)
    if getattr(model, "__name__", None) == "step" and _is_optimizer(step_of):
        from .optimizer import CompiledOptimizerStep
        return CompiledOptimizerStep(step_of, model, fullgraph)
    if isinstance(model, Module):
        call = _CompiledCall(model, model, backend, fullgraph, dynamic, limit,
                             name or type(model).__name__)
        return OptimizedModule(model, call)
    return _CompiledCall(model, None, backend, fullgraph, dynamic, limit,
                         name or getattr(model, "__name__", "fn"))


def _is_optimizer(obj):
    from ..optim.optimizer import Optimizer
    return isinstance(obj, Optimizer)


def compile_forward(module, *, fullgraph=False, dynamic=None, backend="ember", mode=None,
                    options=None, **kwargs):
    """`Module.compile()`: the module's own forward, compiled and guarded on the module."""
    compile(lambda: None, mode=mode, options=options)  # the same argument checks
    forward = type(module).forward.__get__(module)
    return _CompiledCall(forward, module, backend, fullgraph, dynamic,
                         kwargs.get("recompile_limit") or 8, type(module).__name__)


def reset():
    """Forget every compiled graph (torch.compiler.reset)."""
    for c in _caches:
        c.cache.clear()
        c.breaks.clear()
        c.history.clear()
    counters.clear()


def graph_break(msg=""):
    """torch._dynamo.graph_break: end the capture here (the call runs eagerly, see Graph
    breaks above); outside a capture it does nothing. Code that changes tensors without going
    through the dispatcher (the optimizers' NumPy updates) calls it, since the recorded graph
    would not contain what it does."""
    if _compiling[0]:
        raise _GraphBreak(msg or "graph_break() called")


def is_compiling():
    return _compiling[0]
