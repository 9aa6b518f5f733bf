"""Generated NumPy code for a compiled optimizer step: the fused foreach kernels Inductor makes of
`torch.compile(opt.step)`.

One Python function per parameter group, with the group's hyperparameters written into it as
literals (the guards of ember/_dynamo/optimizer.py recompile when one changes). The learning
rate, Adam's bias corrections and AdamW's decay factor are arguments read at call time. The
function runs the update's whole chain of ufuncs on one block of every parameter at a time
(`out=` into the state and into three scratch blocks allocated once), so the parameter, its
gradient and its state stream through memory once per step where whole-array ufuncs would
stream them once per op:

    for i, lo, hi, p, buf, a, b, c in blocks:     # views made once, at compile time
        g = grads[i][lo:hi]
        np.multiply(buf, 0.9, out=buf)            # SGD(momentum=0.9)
        np.add(buf, g, out=buf)
        np.multiply(buf, neg_lr, out=b)
        np.add(p, b, out=p)

The statements are the ones the eager update (ember/optim/_foreach.py, sgd.py, adam.py) runs, in
its order, with the same scalars (Python floats stay weak scalars: Note [rounding] there), so a
compiled step gives the eager step's results bit for bit. `print(compiled.code)` shows it.
"""
import numpy as np

BLOCK = 1 << 16  # elements per block: a block of the parameter, gradient, state and scratch
                 # stays in L2 cache through the chain


def _literal(value, env):
    """How a baked hyperparameter appears in the code: a Python int/float as its repr (the
    same weak scalar the eager step passes), anything else (a NumPy scalar) by name."""
    if type(value) in (int, float, bool):
        return repr(value)
    name = f"k{len(env)}"
    env[name] = value
    return name


class _Emitter:
    """The statements of _foreach.py's in-place ops, as source lines over names."""

    def __init__(self, env):
        self.lines, self.env = [], env

    def __call__(self, line):
        self.lines.append("        " + line)

    def add(self, x, y, alpha, out, tmp, runtime=False):
        """x.add(y, alpha=alpha) into out (_foreach.add); a `runtime` alpha is a name whose
        value is known only at call time, so the code branches as add() does."""
        if runtime:
            self(f"if {alpha} == 1:")
            self(f"    np.add({x}, {y}, out={out})")
            self(f"elif {alpha} == -1:")
            self(f"    np.subtract({x}, {y}, out={out})")
            self("else:")
            self(f"    np.multiply({y}, {alpha}, out={tmp})")
            self(f"    np.add({x}, {tmp}, out={out})")
        elif alpha == 1:
            self(f"np.add({x}, {y}, out={out})")
        elif alpha == -1:
            self(f"np.subtract({x}, {y}, out={out})")
        else:
            self(f"np.multiply({y}, {_literal(alpha, self.env)}, out={tmp})")
            self(f"np.add({x}, {tmp}, out={out})")
        return out

    def decayed_grad(self, maximize, weight_decay):
        g = "g"
        if maximize:
            self("np.negative(g, out=a)")
            g = "a"
        if weight_decay != 0:
            g = self.add(g, "p", weight_decay, "a", "b")
        return g

    def lerp_(self, x, end, weight, tmp, dtype):
        self(f"np.subtract({end}, {x}, out={tmp})")
        if abs(weight) < 0.5:
            self(f"np.multiply({tmp}, {_literal(weight, self.env)}, out={tmp})")
            self(f"np.add({x}, {tmp}, out={x})")
        else:
            rest = 1 - dtype.type(weight)  # as _foreach.lerp_: 1 - w after w is rounded
            self(f"np.multiply({tmp}, {_literal(rest, self.env)}, out={tmp})")
            self(f"np.subtract({end}, {tmp}, out={x})")


def sgd_body(emit, hyper, dtype):
    """_sgd_update's statements; names: p, g, s0 (momentum buffer), a, b; `neg_lr`."""
    g = emit.decayed_grad(hyper["maximize"], hyper["weight_decay"])
    if hyper["momentum"] != 0:
        emit(f"np.multiply(s0, {_literal(hyper['momentum'], emit.env)}, out=s0)")
        emit.add("s0", g, 1 - hyper["dampening"], "s0", "b")
        g = emit.add(g, "s0", hyper["momentum"], "a", "b") if hyper["nesterov"] else "s0"
    emit.add("p", g, "neg_lr", "p", "b", runtime=True)


def adam_body(emit, hyper, dtype):
    """_adam_update's statements; names: p, g, s0 (exp_avg), s1 (exp_avg_sq), s2
    (max_exp_avg_sq), a, b, c; `decay` (1 - lr * weight_decay), `neg_step_size[i]`,
    `bias_correction2_sqrt[i]`."""
    decoupled = hyper["decoupled_weight_decay"]
    if decoupled and hyper["weight_decay"] != 0:
        emit("np.multiply(p, decay, out=p)")
    g = emit.decayed_grad(hyper["maximize"], 0 if decoupled else hyper["weight_decay"])
    emit.lerp_("s0", g, 1 - hyper["beta1"], "b", dtype)
    emit(f"np.multiply(s1, {_literal(hyper['beta2'], emit.env)}, out=s1)")
    value = 1 - hyper["beta2"]
    if value != 1:  # _foreach.addcmul_
        emit(f"np.multiply({g}, {_literal(value, emit.env)}, out=b)")
        emit(f"np.multiply(b, {g}, out=b)")
    else:
        emit(f"np.multiply({g}, {g}, out=b)")
    emit("np.add(s1, b, out=s1)")
    second = "s1"
    if hyper["amsgrad"]:
        emit("np.maximum(s2, s1, out=s2)")
        second = "s2"
    emit(f"np.sqrt({second}, out=b)")
    emit("np.divide(b, bias_correction2_sqrt[i], out=b)")
    emit(f"np.add(b, {_literal(hyper['eps'], emit.env)}, out=b)")
    emit("np.multiply(s0, neg_step_size[i], out=c)")  # addcdiv_: -step_size is never 1
    emit("np.divide(c, b, out=c)")
    emit("np.add(p, c, out=p)")


BODIES = {"sgd": sgd_body, "adam": adam_body}


def generate(kind, hyper, n_states, dtype, name):
    """(source, namespace) of `name(blocks, grads, neg_lr, decay, neg_step_size,
    bias_correction2_sqrt)` running the update of `kind` over blocks of one dtype."""
    env = {"np": np}
    emit = _Emitter(env)
    BODIES[kind](emit, hyper, dtype)
    states = "".join(f"s{k}, " for k in range(n_states))
    head = [f"def {name}(blocks, grads, neg_lr, decay, neg_step_size, bias_correction2_sqrt):",
            f"    for i, lo, hi, p, {states}a, b, c in blocks:",
            "        g = grads[i][lo:hi]"]
    return "\n".join(head + emit.lines) + "\n", env


def blocks_of(index, param, states, scratch):
    """(index, lo, hi, param block, state blocks..., scratch a, b, c) for the flat arrays of one
    parameter; `scratch` holds three flat arrays of BLOCK elements."""
    n = param.size
    out = []
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        out.append((index, lo, hi, param[lo:hi]) + tuple(s[lo:hi] for s in states) +
                   tuple(t[:hi - lo] for t in scratch))
    return out
