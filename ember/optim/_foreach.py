"""The elementwise arithmetic of PyTorch's optimizers on NumPy arrays, rounded as PyTorch rounds,
and the block loop that applies one update to a whole parameter with few NumPy calls.

PyTorch's CPU optimizers (the default single-tensor path) update a parameter with a short chain of
in-place tensor ops: `exp_avg.lerp_(grad, 1 - beta1)`, `exp_avg_sq.mul_(beta2).addcmul_(grad,
grad, value=1 - beta2)`, `param.addcdiv_(exp_avg, denom, value=-step_size)`. ember runs the same
chain on the NumPy arrays behind the tensors (`t._np`), without the dispatcher or autograd, so a
step costs a few NumPy calls per parameter.

Note [rounding like PyTorch]
    Getting PyTorch's trajectory to float32 rounding means getting each op's rounding right, and
    PyTorch's vectorized CPU kernels do not always round after every multiply and add:

      op                              PyTorch computes                     roundings
      x.add_(y, alpha=a)              fma(y, a, x)                         one
      x.lerp_(y, w), |w| < 0.5        fma(w, y - x, x)                     two
      x.lerp_(y, w), |w| >= 0.5       fma(w - 1, y - x, y)                 two
      x.addcmul_(s, t, value=v)       fma(v * s, t, x)                     two
      x.addcdiv_(s, t, value=v)       x + (v * s) / t                      three
      x.mul_(c), x.div_(c), x.add_(c) as written, c rounded to float32     one

    NumPy has no fused multiply-add, but a product of two float32 numbers is exact in float64, so
    `fma(a, b, c)` for float32 is `float32(float64(a) * float64(b) + float64(c))`: exact up to a
    double rounding that changes the last bit about once in 2**29 operations. Every fma above
    goes through `_fma_into` that way; its scalars are rounded to float32 first (`scalar`), as
    PyTorch converts a Python scalar to the tensor's compute type before the kernel runs. Plain
    ops need no help: NumPy treats a Python float as a "weak" scalar and computes
    `float32_array * 0.9` in float32 with 0.9 rounded to float32, which is PyTorch's rounding.
    For float64 parameters the fma path rounds once more than PyTorch (no wider type at hand).

Note [blocks]
    Run on whole arrays, each op of the chain is a pass over memory: an Adam step on 11M
    parameters would stream ~20 arrays of 44 MB through the cache. PyTorch's fused optimizers
    avoid this by computing the whole update per element in one kernel. ember gets most of that
    effect by running the chain block by block: `apply` cuts the parameter, its gradient and its
    state into aligned pieces of BLOCK elements and runs the update on one piece at a time, so the
    temporaries and the piece's data stay in cache between ops. Arrays that are not contiguous
    are updated whole (NumPy handles any strides), with temporaries of their shape.

Complex parameters are updated through their real view, as PyTorch's optimizers do with
`torch.view_as_real`: with real hyperparameters every op above acts on real and imaginary parts
alike. (PyTorch runs SGD, and most optimizers' L2 weight-decay add, on the complex tensor itself,
where add-with-alpha is not fused: there ember's result can differ in the last bit.)
"""
import numpy as np

BLOCK = 1 << 15  # elements per block: a block's arrays and temporaries fit in L2 cache

_COMPUTE = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float32,
            np.dtype(np.float64): np.float64}


def scalar(value, dtype):
    """A Python scalar as PyTorch's kernel sees it for a tensor of `dtype`: rounded to the
    compute type (float32 for float32 and half tensors), returned as a Python float."""
    return float(_COMPUTE.get(dtype, np.float64)(value))


def _fma_into(out, a, b, c, wide):
    """out = fma(a, b, c): the product and sum in float64 (`wide`), one rounding at the end."""
    np.multiply(a, b, out=wide, dtype=wide.dtype)
    np.add(c, wide, out=out, dtype=wide.dtype)
    return out


# ---- PyTorch's in-place ops, written on arrays ---------------------------------------------------
# `x` is updated in place; `tmp` (x's dtype) and `wide` (float64) are scratch arrays of x's shape.

def add(x, y, alpha, out, wide):
    """x.add(y, alpha=alpha) into `out` (which may be x)."""
    if alpha == 1:
        return np.add(x, y, out=out)
    if alpha == -1:
        return np.subtract(x, y, out=out)
    return _fma_into(out, y, scalar(alpha, x.dtype), x, wide)


def lerp_(x, end, weight, tmp, wide):
    """x.lerp_(end, weight) for a scalar weight."""
    weight = scalar(weight, x.dtype)
    diff = np.subtract(end, x, out=tmp)
    if abs(weight) < 0.5:
        return _fma_into(x, diff, weight, x, wide)
    return _fma_into(x, diff, scalar(weight - 1, x.dtype), end, wide)


def addcmul_(x, t1, t2, value, tmp, wide):
    """x.addcmul_(t1, t2, value=value)."""
    if value != 1:
        t1 = np.multiply(t1, scalar(value, x.dtype), out=tmp)
    return _fma_into(x, t1, t2, x, wide)


def addcdiv_(x, t1, t2, value, tmp):
    """x.addcdiv_(t1, t2, value=value)."""
    if value != 1:
        np.multiply(t1, scalar(value, x.dtype), out=tmp)
        np.divide(tmp, t2, out=tmp)
    else:
        np.divide(t1, t2, out=tmp)
    return np.add(x, tmp, out=x)


def decayed_grad(s, param, grad, maximize, weight_decay):
    """The gradient most updates start from: -grad when maximizing, then `grad.add(param,
    alpha=weight_decay)` (L2 weight decay); in scratch `s.a` unless it is `grad` itself."""
    g = np.negative(grad, out=s.a) if maximize else grad
    if weight_decay != 0:
        g = add(g, param, weight_decay, s.a, s.wide)
    return g


# ---- the block loop -------------------------------------------------------------------------------

class Scratch:
    """Temporaries for one block: `a`, `b`, `c` in the parameter's dtype, `wide` in float64."""
    __slots__ = ("a", "b", "c", "wide")

    def __init__(self, shape, dtype):
        self.a, self.b, self.c = (np.empty(shape, dtype) for _ in range(3))
        self.wide = np.empty(shape, np.float64)

    def view(self, shape):
        """The first prod(shape) elements of these (flat) temporaries, shaped `shape`."""
        v = Scratch.__new__(Scratch)
        n = int(np.prod(shape))
        v.a, v.b, v.c, v.wide = (t[:n].reshape(shape) for t in (self.a, self.b, self.c, self.wide))
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
        a = a.view(a.real.dtype).reshape(a.shape + (2,))
    return a


def apply(update, param, grad, states, **hyper):
    """Run `update(scratch, param, grad, *states, **hyper)` on NumPy arrays over the whole
    parameter, block by block (Note [blocks]), then bump the versions of the tensors it wrote
    (the parameter and its state; `grad` is only read)."""
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
    param._bump_version()
    for s in states:
        s._bump_version()
