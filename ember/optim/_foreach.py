"""The elementwise arithmetic of PyTorch's optimizers on NumPy arrays, in PyTorch's order, and the
block loop that applies one update to a whole parameter with few NumPy calls.

PyTorch's CPU optimizers (the default single-tensor path) update a parameter with a short chain of
in-place tensor ops: `exp_avg.lerp_(grad, 1 - beta1)`, `exp_avg_sq.mul_(beta2).addcmul_(grad,
grad, value=1 - beta2)`, `param.addcdiv_(exp_avg, denom, value=-step_size)`. ember runs the same
chain on the NumPy arrays behind the tensors (`t._np`), without the dispatcher or autograd, so a
step costs a few NumPy calls per parameter.

Note [rounding]
    Each NumPy call rounds its result to float32 once, and the calls follow PyTorch's order of
    operations exactly: `addcmul_` is (value * t1) * t2 added to x, `addcdiv_` is (value * t1) / t2
    added to x, `lerp_` with a weight below 0.5 is x + w * (end - x) and end - (1 - w) * (end - x)
    above. Scalars round as in PyTorch without help: NumPy treats a Python float as a "weak"
    scalar, so `float32_array * 0.9` is computed in float32 with 0.9 rounded to float32, which is
    what PyTorch's kernel does with the scalar.

    Two things keep the results from being bit-identical. PyTorch's vectorized kernels fuse the
    last multiply and add of `add_(alpha=)`, `lerp_` and `addcmul_` into one fma instruction (one
    rounding where NumPy has two), and its float32 `sqrt` goes through MKL's vector math, which is
    within 0.75 ulp but not correctly rounded. So parameters and state agree with PyTorch's to
    float32 rounding, steps apart drifting by a few ulps. (An exact fma is possible in NumPy,
    float32(float64(a) * b + c), but the casts make the step about twice as slow.)

Note [blocks]
    Run on whole arrays, each op of the chain is a pass over memory: an Adam step on 11M
    parameters would stream ~20 arrays of 44 MB through the cache. PyTorch's fused optimizers
    avoid this by computing the whole update per element in one kernel. ember gets most of that
    effect by running the chain block by block: `apply` cuts the parameter, its gradient and its
    state into aligned pieces of BLOCK elements and runs the update on one piece at a time, so the
    temporaries and the piece's data stay in cache between ops. Arrays that are not contiguous
    are updated whole (NumPy handles any strides), with temporaries of their shape.

Complex parameters are updated through their real view, as PyTorch's optimizers do with
`torch.view_as_real`: with real hyperparameters every op acts on real and imaginary parts alike.
"""
import math

import numpy as np
from .._core.float8 import as_strided
from .._core.grad_mode import no_grad
from .._core.math_bits import MathBits, resolved_values

BLOCK = 1 << 15  # elements per block: a block's arrays and temporaries fit in L2 cache


# ---- PyTorch's in-place ops, written on arrays -------------------------------------------------
# `x` is updated in place; `tmp` is a scratch array of x's shape and dtype.

def add(x, y, alpha, out, tmp):
    """x.add(y, alpha=alpha) into `out` (which may be x, not tmp)."""
    if alpha == 1:
        return np.add(x, y, out=out)
    if alpha == -1:
        return np.subtract(x, y, out=out)
    np.multiply(y, alpha, out=tmp)
    return np.add(x, tmp, out=out)


def lerp_(x, end, weight, tmp):
    """x.lerp_(end, weight) for a scalar weight."""
    diff = np.subtract(end, x, out=tmp)
    if abs(weight) < 0.5:
        np.multiply(diff, weight, out=diff)
        return np.add(x, diff, out=x)
    np.multiply(diff, 1 - x.dtype.type(weight), out=diff)  # 1 - w after w is rounded
    return np.subtract(end, diff, out=x)


def addcmul_(x, t1, t2, value, tmp):
    """x.addcmul_(t1, t2, value=value)."""
    if value != 1:
        t1 = np.multiply(t1, value, out=tmp)
    np.multiply(t1, t2, out=tmp)
    return np.add(x, tmp, out=x)


def addcdiv_(x, t1, t2, value, tmp):
    """x.addcdiv_(t1, t2, value=value)."""
    if value != 1:
        t1 = np.multiply(t1, value, out=tmp)
    np.divide(t1, t2, out=tmp)
    return np.add(x, tmp, out=x)


def start_buffer(buf, g):
    """The first step's momentum buffer, a copy of the gradient (PyTorch: `grad.detach().clone()`,
    so with differentiable=True the buffer starts outside the graph)."""
    np.copyto(buf, g)


def decayed_grad(s, param, grad, maximize, weight_decay):
    """The gradient most updates start from: -grad when maximizing, then `grad.add(param,
    alpha=weight_decay)` (L2 weight decay); in scratch `s.a` unless it is `grad` itself."""
    g = np.negative(grad, out=s.a) if maximize else grad
    if weight_decay != 0:
        g = add(g, param, weight_decay, s.a, s.b)
    return g


# ---- the block loop -----------------------------------------------------------------------------

class Scratch:
    """Temporaries for one block: `a`, `b`, `c`, in the parameter's shape and dtype."""
    __slots__ = ("a", "b", "c")

    def __init__(self, shape, dtype):
        self.a, self.b, self.c = (np.empty(shape, dtype) for _ in range(3))

    def view(self, shape):
        """The first prod(shape) elements of these (flat) temporaries, shaped `shape`."""
        v = Scratch.__new__(Scratch)
        n = math.prod(shape)
        v.a, v.b, v.c = (t[:n].reshape(shape) for t in (self.a, self.b, self.c))
        return v


_scratch = {}  # dtype -> Scratch of BLOCK elements, reused by every step


def _block_scratch(dtype):
    s = _scratch.get(dtype)
    if s is None:
        s = _scratch[dtype] = Scratch((BLOCK,), dtype)
    return s


def real_view(t):
    """The NumPy array behind tensor `t`; complex tensors through their real view."""
    a = t._np
    if a.dtype.kind == "c":
        # (re, im) as a last axis of length 2, for any strides (a transposed parameter too)
        re = a.real
        a = as_strided(re, a.shape + (2,), a.strides + (re.itemsize,))
    return a


def apply(update, param, grad, states, **hyper):
    """Run `update(scratch, param, grad, *states, **hyper)` on NumPy arrays over the whole
    parameter, block by block (Note [blocks]), then bump the versions of the tensors it wrote
    (the parameter and its state; `grad` is only read).

    A parameter or gradient with the conjugate or negative bit (ember/_dispatch/math_bits.py)
    has arrays that hold its memory, not its values: the update runs on its values, and a
    parameter's new values go back through its bits, as PyTorch's in-place ops on it do."""
    written = param
    if type(param._sparse) is MathBits:
        param = resolved_values(param)
    if type(grad._sparse) is MathBits:
        grad = resolved_values(grad)
    arrays = [real_view(param), real_view(grad)] + [real_view(s) for s in states]
    shape, dtype = arrays[0].shape, arrays[0].dtype
    n = arrays[0].size
    if n <= BLOCK:
        update(_block_scratch(dtype).view(shape), *arrays, **hyper)
    elif all(a.flags.c_contiguous for a in arrays):
        flat = [a.reshape(-1) for a in arrays]
        scratch = _block_scratch(dtype)
        for start in range(0, n - BLOCK + 1, BLOCK):
            update(scratch, *[a[start:start + BLOCK] for a in flat], **hyper)
        rest = n % BLOCK
        if rest:
            update(scratch.view((rest,)), *[a[n - rest:] for a in flat], **hyper)
    else:
        update(Scratch(shape, dtype), *arrays, **hyper)
    if written is not param:
        with no_grad():
            written.copy_(param)
    else:
        param._bump_version()
    for s in states:
        s._bump_version()
