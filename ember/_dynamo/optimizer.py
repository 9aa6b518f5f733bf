"""A compiled optimizer step: `ember.compile(opt.step)`, and `opt.step()` inside a compiled
function (PyTorch 2.x compiles the step's foreach update into fused kernels).

ember's optimizers update NumPy arrays directly (ember/optim/_foreach.py), so the graph
recorder never sees their arithmetic; a capture that reaches `step()` breaks there. The step is
compiled on its own instead: `CompiledOptimizerStep` generates, per parameter group, one NumPy
function running the update block by block (ember/_inductor/optimizer_codegen.py), with views of
the parameters and their state made once. A compiled function whose capture broke at `step()`
runs eagerly, and the steps it calls run compiled (`compiled_region`).

Guards, checked on every call: the optimizer's class and update, each group's hyperparameters
other than the learning rate (momentum, dampening, nesterov, weight decay, maximize, betas, eps,
amsgrad), which parameters have gradients, and the identity of every parameter's and state
tensor's array (`p.data = ...` or `load_state_dict` replace them). A call whose guards match no
entry compiles again (a recompilation, kept in `history` with its reason). The learning rate and
the step count are read at call time, so an LR scheduler's changes take effect without
recompiling. Steps the generated code does not cover run the eager step (the first step, which
creates the state; optimizers other than SGD, Adam and AdamW; closures; non-contiguous or lazy
parameters; sparse gradients), recorded in `eager_reasons`. Hooks run as for `opt.step()`.
"""
import time

import numpy as np

from .._core.tensor import Tensor
from .utils import counters

RECOMPILE_LIMIT = 8
_active = []                          # the CompiledOptimizerStep running its optimizer's step
_region = [0]                         # > 0 while a compiled function runs eagerly after a break


def current(opt):
    """The compiled step that should run `opt`'s update now, or None (the eager update)."""
    if _active and _active[-1].opt is opt:
        return _active[-1]
    if _region[0]:  # kept on the optimizer (not in its __getstate__: never pickled)
        c = opt.__dict__.get("_compiled_in_region")
        if c is None:
            c = opt.__dict__["_compiled_in_region"] = CompiledOptimizerStep(opt)
        return c
    return None


class compiled_region:
    """While a compiled function runs eagerly (its capture broke), optimizer steps compile."""

    def __enter__(self):
        _region[0] += 1

    def __exit__(self, *exc):
        _region[0] -= 1


def _kind(opt):
    from ..optim.sgd import SGD
    from ..optim.adam import Adam
    cls = type(opt)
    if isinstance(opt, SGD) and cls._step_group is SGD._step_group:
        return "sgd"
    if isinstance(opt, Adam) and cls._step_group is Adam._step_group:
        return "adam"
    return None


def _get_value(x):
    return x.item() if isinstance(x, Tensor) else x  # optim.optimizer._get_value


def _hyper(kind, group):
    """The group's hyperparameters the generated code bakes in (all but lr), as
    ((name, value), ...)."""
    if kind == "sgd":
        return (("momentum", group["momentum"]), ("dampening", group["dampening"]),
                ("nesterov", group["nesterov"]), ("maximize", group["maximize"]),
                ("weight_decay", _get_value(group["weight_decay"])))
    beta1, beta2 = group["betas"]
    return (("beta1", _get_value(beta1)), ("beta2", _get_value(beta2)), ("eps", group["eps"]),
            ("weight_decay", group["weight_decay"]), ("amsgrad", group["amsgrad"]),
            ("maximize", group["maximize"]),
            ("decoupled_weight_decay", group["decoupled_weight_decay"]))


def _state_names(kind, group):
    if kind == "sgd":
        return ("momentum_buffer",) if group["momentum"] != 0 else ()
    return ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())


class _Entry:
    """One compiled step: per group, its functions (one per dtype) with their blocks."""

    def __init__(self, key, groups, code, reason, compile_time):
        self.key, self.groups, self.code = key, groups, code
        self.reason, self.compile_time = reason, compile_time
        self.calls = 0


class CompiledOptimizerStep:
    """What `ember.compile(opt.step)` returns: call it as `opt.step(closure=None)`."""

    def __init__(self, opt, step=None, fullgraph=False):
        self.opt = opt
        self._step = step if step is not None else opt.step
        self.kind = _kind(opt)
        if fullgraph and self.kind is None:
            from .exc import Unsupported
            raise Unsupported(f"ember.compile(fullgraph=True): {type(opt).__name__}.step() has "
                              "no compiled update (SGD, Adam and AdamW have)")
        self.cache = {}
        self.history = []         # _Entry per compilation, in order
        self.eager_reasons = []   # why steps ran eagerly, in order (consecutive repeats once)
        self.compiled_calls = 0
        self.__wrapped__ = self._step

    @property
    def code(self):
        """The generated source of the last compilation."""
        return self.history[-1].code if self.history else ""

    def __call__(self, closure=None):
        _active.append(self)
        try:
            return self._step(closure) if closure is not None else self._step()
        finally:
            _active.pop()

    # ---- run by _ElementwiseOptimizer.step ------------------------------------------------
    def run(self, closure):
        """The optimizer's update, compiled; None when this step must run eagerly."""
        why = self._eager_reason(closure)
        if why is not None:
            self._eager(why)
            return None
        key, work = self._guard()
        if key is None:
            self._eager(work)
            return None
        entry = self.cache.get(key)
        if entry is None:
            if len(self.cache) >= RECOMPILE_LIMIT:
                self._eager(f"recompile_limit ({RECOMPILE_LIMIT}) reached")
                return None
            if not all(a.flags.c_contiguous for _, items in work for p, _, states in items
                       for a in [p._np] + [t._np for t in states]):
                self._eager("a parameter or its state is not contiguous")
                return None
            entry = self._compile(key, work)
        entry.calls += 1
        self.compiled_calls += 1
        self._update(entry, work)
        return True

    def _eager(self, why):
        if not self.eager_reasons or self.eager_reasons[-1] != why:
            self.eager_reasons.append(why)

    def _eager_reason(self, closure):
        if self.kind is None:
            return f"{type(self.opt).__name__} has no compiled update (SGD, Adam, AdamW have)"
        if closure is not None:
            return "a closure re-evaluates the model inside step()"
        if any(g.get("differentiable") for g in self.opt.param_groups):
            return "differentiable=True"
        return None

    def _guard(self):
        """(key, work) for this call, or (None, why the step runs eagerly). work: per group,
        [(group, [(param, grad, states)])]. The key holds the ids of the arrays, which the
        compiled entry keeps alive (its views), so an id cannot be reused while it matters."""
        opt, kind, state_of = self.opt, self.kind, self.opt.state
        key, work = [type(opt)], []
        for group in opt.param_groups:
            names = _state_names(kind, group)
            key.append(_hyper(kind, group))
            items = []
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if p._lazy is not None or grad._np is None or grad._sparse is not None:
                    return None, "a lazy parameter or a sparse gradient"
                states = ()
                if names:
                    state = state_of.get(p)
                    states = [None] if state is None else [state.get(n) for n in names]
                    if any(t is None for t in states):
                        return None, "optimizer state not created yet (the first step)"
                    key.append((id(p._np),) + tuple([id(t._np) for t in states]))
                else:
                    key.append((id(p._np),))
                items.append((p, grad, states))
            work.append((group, items))
        return tuple(key), work

    def _why_recompile(self, key):
        if not self.history:
            return "first call"
        prev = self.history[-1].key
        if len(prev) != len(key):
            return "guard failed: the set of parameters with gradients changed"
        diffs = [a for a, b in zip(prev, key) if a != b]
        if any(type(d) is tuple and d and type(d[0]) is tuple for d in diffs):
            return "guard failed: hyperparameters changed"
        return "guard failed: the parameters with gradients or their arrays changed"

    def _compile(self, key, work):
        from .._inductor import optimizer_codegen as G
        from ..optim._foreach import real_view
        t0 = time.perf_counter()
        groups, sources = [], []
        for gi, (group, items) in enumerate(work):
            hyper = dict(_hyper(self.kind, group))
            n_states = len(_state_names(self.kind, group))
            by_dtype = {}
            for i, (p, _, states) in enumerate(items):
                by_dtype.setdefault(real_view(p).dtype, []).append((i, p, states))
            fns = []
            for dt, members in by_dtype.items():
                name = f"{self.kind}_group{gi}_{dt.name}"
                src, env = G.generate(self.kind, hyper, n_states, dt, name)
                exec(compile(src, f"<ember.compile {name}>", "exec"), env)
                scratch = [np.empty(G.BLOCK, dt) for _ in range(3)]
                blocks = []
                for i, p, states in members:
                    blocks += G.blocks_of(i, real_view(p).reshape(-1),
                                          [real_view(s).reshape(-1) for s in states], scratch)
                fns.append((env[name], blocks, [i for i, _, _ in members]))
                sources.append(src)
            groups.append(fns)
        entry = _Entry(key, groups, "\n".join(sources), self._why_recompile(key),
                       time.perf_counter() - t0)
        self.cache[key] = entry
        self.history.append(entry)
        counters["stats"]["unique_graphs"] += 1
        return entry

    def _update(self, entry, work):
        from ..optim._foreach import real_view
        from ..optim.optimizer import _lr, _increment
        adam = self.kind == "adam"
        for fns, (group, items) in zip(entry.groups, work):
            lr = _lr(group)
            grads = [real_view(g).reshape(-1) for _, g, _ in items]
            neg_step_size = bias_correction2_sqrt = decay = None
            if adam:
                beta1, beta2 = (_get_value(b) for b in group["betas"])
                neg_step_size, bias_correction2_sqrt = [], []
                for p, _, _ in items:
                    step = _increment(self.opt.state[p]["step"])
                    neg_step_size.append(-(lr / (1 - beta1 ** step)))
                    bias_correction2_sqrt.append((1 - beta2 ** step) ** 0.5)
                decay = 1 - lr * group["weight_decay"]
            for fn, blocks, _ in fns:
                fn(blocks, grads, -lr, decay, neg_step_size, bias_correction2_sqrt)
            for p, _, states in items:
                p._bump_version()
                for s in states:
                    s._bump_version()
