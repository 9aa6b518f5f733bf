"""Loss kernels (CPU and Meta) that have a backward kernel of their own, as in PyTorch's
Loss.cpp: binary cross-entropy, binary cross-entropy with logits, and the fused softmax
cross-entropy of (N, C) logits and class indices. Reduction codes: 0 none, 1 mean, 2 sum.

Each backward kernel is an op as well, with derivatives of its own (see
autograd/derivatives/nn.py), so double backward works. What a backward kernel needs it reads
from the op's saved arguments, recomputes, or (the fused cross-entropy) reads from the
forward's second output.

Note [Fused softmax cross-entropy]
----------------------------------
PyTorch computes cross_entropy as log_softmax then nll_loss: two ops and two backward nodes,
each a few passes over the logits. For the common case -- (N, C) float32/float64 logits and
class indices -- `_softmax_cross_entropy` does both in one pass: the loss is
logsumexp(x) - x[t] per sample, weighted by w[t], and the softmax it computed on the way is
returned as a second output. The backward op reads that output (`result1`) instead of
computing the softmax again:

    grad_input = (softmax(x) - onehot(t)) * grad * w[t]  (divided by sum(w[t]) for "mean")

Its node is named NllLossBackward0, the name PyTorch's graph has at that place. The second
output is not differentiable (nothing downstream may use it as a value of the graph).
Label smoothing ls is folded in as well (PyTorch adds two composite terms; its node there is
AddBackward0): loss = (1 - ls) * nll + ls / C * sum_c w_c (logsumexp(x) - x_c), and the
gradient gains ls / C * (sum(w) softmax - w) per sample, both scaled as the nll term is.
"""
import math

import numpy as np

from .._dispatch.dispatcher import impl
from .._core.caching_allocator import empty
from .._core.tensor import _wrap, _meta
from .elementwise import broadcast_shape, not_implemented, _OPMATH
from .nn_ops import _nll_check


def _math(t):
    """The tensor's array in the dtype losses are computed in (float32 for half precision)."""
    return t._np.astype(_OPMATH.get(t.dtype, t.dtype)._np, copy=False)


def _result(a, dtype, shape=None):
    """A kernel's result (NumPy gives scalars for 0-d operands) as a fresh, writable array in
    `dtype`, broadcast to `shape` if given."""
    a = np.asarray(a, dtype._np)
    if shape is not None and a.shape != tuple(shape):
        a = np.broadcast_to(a, shape)
    return _wrap(a if a.flags.writeable else a.copy())


def _reduce(loss, reduction, dtype):
    with np.errstate(invalid="ignore"):  # the mean of nothing is nan, quietly
        r = loss if reduction == 0 else loss.sum() if reduction == 2 else loss.mean()
    return _result(r, dtype)


def _elementwise_loss_check(name, self, *others):
    """The shape of an elementwise loss's terms: its arguments broadcast together."""
    if not self.dtype.is_floating_point:
        raise not_implemented(name, self.dtype)
    return broadcast_shape(self._size, *(t._size for t in others if t is not None))


def _check_bce_logits_shapes(self, target, weight, pos_weight):
    """PyTorch computes this loss in place on a tensor of the target's shape, (1 - target) *
    input - log_sigmoid(input) * pos_weight term, then * weight: each step must fit in it."""
    steps = [(target._size, self._size)]
    if pos_weight is not None:
        steps.append((self._size, broadcast_shape(pos_weight._size, target._size)))
    if weight is not None:
        steps.append((target._size, weight._size))
    for written, other in steps:
        _fits(written, other)


def _reduced_meta(self, shape, reduction):
    return _meta(shape if reduction == 0 else (), self.dtype, device=self.device)


def _mean_scale(shape, reduction):
    """The factor "mean" applies to every element's gradient."""
    n = math.prod(shape)
    return 1 / n if reduction == 1 and n else 1


# ---- fused softmax cross-entropy ----------------------------------------------------------
def _check_class_logits(self, target, weight):
    if not self.dtype.is_floating_point:
        raise not_implemented("_softmax_cross_entropy", self.dtype)
    if self.dim() == 2 and target.dim() == 0:  # as nll_loss's check
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target "
                         f"batch_size (0).")
    if self.dim() != 2 or target.dim() != 1:
        raise RuntimeError(f"_softmax_cross_entropy: expected (N, C) logits and (N,) targets, "
                           f"got logits of size {list(self.shape)} and targets of size "
                           f"{list(target.shape)}")
    return _nll_check(self, target, weight)


def _sample_weights(target, weight, ignore_index, classes, dt):
    """Every sample's target class (0 where ignored), and its weight w[t] (0 where ignored);
    the weights are None when every sample counts once (no class weights, and no target equal
    to ignore_index), the common case, which then costs one reduction: seen as unsigned, a
    negative target is out of range too."""
    t = target._np
    if t.dtype != np.int64:
        t = t.astype(np.int64)
    if weight is None and t.size and not 0 <= ignore_index < classes:
        if t.view(np.uint64).max() < classes:
            return t, None
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    if safe.size and safe.view(np.uint64).max() >= classes:
        raise IndexError(f"Target {int(safe[(safe < 0) | (safe >= classes)][0])} is out of "
                         f"bounds.")
    if weight is None:
        return safe, valid.astype(dt)
    w = weight._np[safe].astype(dt, copy=False)
    w *= valid
    return safe, w


@impl("_softmax_cross_entropy", "CPU")
def softmax_cross_entropy(self, target, weight, reduction, ignore_index, label_smoothing=0.0):
    """(loss, softmax(self, 1)); see Note [Fused softmax cross-entropy]."""
    classes = _check_class_logits(self, target, weight)
    x = _math(self)
    n = x.shape[0]
    safe, w = _sample_weights(target, weight, ignore_index, classes, x.dtype)
    m = x.max(1, keepdims=True) if x.size else np.zeros((n, 1), x.dtype)
    p = empty(x.shape, x.dtype)  # the softmax, made in an allocator block: no copy at _wrap
    np.exp(np.subtract(x, m, out=p), out=p)
    total = p.sum(1, keepdims=True)
    lse = np.log(total[:, 0]) + m[:, 0]
    loss = lse - x[np.arange(n), safe]
    if w is not None:
        loss *= w
    if label_smoothing:
        loss = _smoothed(loss, x, lse, target, weight, ignore_index, label_smoothing, w)
    # "mean" divides by the summed weight; with every sample ignored the loss is nan (0 / 0),
    # quietly (NumPy's warnings are off: quiet_floating_point in _parallel.py)
    out = (loss if reduction == 0 else loss.sum() if reduction == 2
           else loss.sum() / (x.dtype.type(n) if w is None else w.sum()))
    p /= total
    dt = self.dtype._np
    return _result(out, self.dtype), _wrap(p.astype(dt, copy=False))


def _smoothed(loss, x, lse, target, weight, ignore_index, ls, w):
    """(1 - ls) * loss + ls / C * sum_c w_c (lse - x_c) per sample (0 where ignored): the
    label-smoothed loss, whose "mean" divides by the same summed weight as the plain one."""
    classes = x.shape[1]
    if weight is None:
        smooth = classes * lse - x @ np.ones(classes, x.dtype)
    else:
        wc = weight._np.astype(x.dtype, copy=False)
        smooth = wc.sum() * lse - x @ wc
    if w is not None:
        smooth = np.where(target._np != ignore_index, smooth, 0)
    return (1 - ls) * loss + (ls / classes) * smooth


@impl("_softmax_cross_entropy", "Meta")
def softmax_cross_entropy_meta(self, target, weight, reduction, ignore_index,
                               label_smoothing=0.0):
    _check_class_logits(self, target, weight)
    return (_meta(target.shape if reduction == 0 else (), self.dtype, device=self.device),
            _meta(self.shape, self.dtype, device=self.device))


@impl("_softmax_cross_entropy_backward", "CPU")
def softmax_cross_entropy_backward(grad_output, self, target, weight, reduction, ignore_index,
                                   softmax, label_smoothing=0.0):
    """(softmax - onehot(t)) * grad * w[t], divided by sum(w[t]) for "mean" (where all samples
    are ignored the gradient is zero, as in PyTorch). With label smoothing ls the terms are
    (1 - ls) times that plus ls / C * (sum(w) softmax - w) * grad (divided likewise)."""
    classes = _check_class_logits(self, target, weight)
    p = _math(softmax)
    n = p.shape[0]
    safe, w = _sample_weights(target, weight, ignore_index, classes, p.dtype)
    if w is None:  # every sample's weight is 1 (and "mean" divides by n, not 0 when n is 0)
        w = p.dtype.type(1)
        w_sum = p.dtype.type(n)
    else:
        w_sum = w.sum()
    divide = reduction == 1 and w_sum != 0
    scale = w / w_sum if divide else w
    grad = _math(grad_output)
    coef = (grad * scale).astype(p.dtype, copy=False)  # (n,) or one for all
    if not label_smoothing:
        g = np.multiply(p, coef[:, None] if coef.ndim else coef, out=empty(p.shape, p.dtype))
        g[np.arange(n), safe] -= coef
        return _wrap(g.astype(self.dtype._np, copy=False))
    # a = (1 - ls) grad w[t] / D and b = ls / C grad valid / D per sample (D: the summed
    # weight for "mean", else 1): g = softmax * (a + b sum(w)) - a onehot(t) - b w
    a = coef * p.dtype.type(1 - label_smoothing)
    valid = (target._np != ignore_index).astype(p.dtype)
    b = (grad * (valid / w_sum if divide else valid) *
         (label_smoothing / classes)).astype(p.dtype, copy=False)
    b = np.broadcast_to(b, (n,))
    a = np.broadcast_to(a, (n,))
    wc = None if weight is None else weight._np.astype(p.dtype, copy=False)
    total_w = p.dtype.type(classes) if wc is None else wc.sum()
    g = np.multiply(p, (a + b * total_w)[:, None], out=empty(p.shape, p.dtype))
    g[np.arange(n), safe] -= a
    g -= b[:, None] if wc is None else b[:, None] * wc
    return _wrap(g.astype(self.dtype._np, copy=False))


@impl("_softmax_cross_entropy_backward", "Meta")
def softmax_cross_entropy_backward_meta(grad_output, self, target, weight, reduction,
                                        ignore_index, softmax, label_smoothing=0.0):
    _check_class_logits(self, target, weight)
    return _meta(self.shape, self.dtype, device=self.device)


# ---- binary cross-entropy -----------------------------------------------------------------
# -(y log x + (1 - y) log(1 - x)) with both logarithms clamped to >= -100, as PyTorch does;
# the input's gradient is (x - y) / max(x (1 - x), 1e-12), finite where the clamp makes the
# loss flat. Target and weight broadcast against the input, as in PyTorch's kernels (F.* checks
# that the shapes are equal).
_BCE_EPS = 1e-12


@impl("binary_cross_entropy", "CPU")
def binary_cross_entropy(self, target, weight=None, reduction=1):
    _elementwise_loss_check("binary_cross_entropy", self, target, weight)
    x, y = _math(self), _math(target)
    for name, a in (("input", x), ("target", y)):
        if not ((a >= 0) & (a <= 1)).all():
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    with np.errstate(divide="ignore"):
        loss = (y - 1) * np.maximum(np.log1p(-x), -100) - y * np.maximum(np.log(x), -100)
    if weight is not None:
        loss = loss * _math(weight)
    return _reduce(loss, reduction, self.dtype)


@impl("binary_cross_entropy", "Meta")
def binary_cross_entropy_meta(self, target, weight=None, reduction=1):
    shape = _elementwise_loss_check("binary_cross_entropy", self, target, weight)
    return _reduced_meta(self, shape, reduction)


def _check_bce_backward(grad_output, self, target, weight):
    """PyTorch's kernel: an input-shaped result, the terms computed on the squeezed grad_output,
    input and target (broadcast together), then * weight in place. Returns the squeezed terms'
    broadcast shape."""
    _elementwise_loss_check("binary_cross_entropy_backward", self, target)
    shape = broadcast_shape(*(_squeezed(t._size) for t in (grad_output, self, target)))
    if weight is not None:
        _fits(self._size, weight._size)
    return shape


def _squeezed(shape):
    return tuple(n for n in shape if n != 1)


def _fits(written, other):
    """An in-place op on a tensor of shape `written` with an operand of shape `other`."""
    shape = broadcast_shape(written, other)
    if tuple(shape) != tuple(written):
        raise RuntimeError(f"output with shape {list(written)} doesn't match the broadcast "
                           f"shape {list(shape)}")


def _leading(a, shape):
    """`a` given `shape`. Note: where PyTorch's squeezed terms broadcast to more elements than
    the input has, its kernel resizes the squeezed view of the result, which shares the
    result's storage, so the result holds the leading elements (zeros if there are fewer)."""
    n = math.prod(shape)
    flat = np.ravel(a)
    if flat.size < n:
        flat = np.concatenate([flat, np.zeros(n - flat.size, flat.dtype)])
    return flat[:n].reshape(shape)


@impl("binary_cross_entropy_backward", "CPU")
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=1):
    _check_bce_backward(grad_output, self, target, weight)
    x, y = (_math(t).reshape(_squeezed(t._size)) for t in (self, target))
    g = (x - y) / np.maximum((1 - x) * x, _BCE_EPS)
    g = _leading(g * _math(grad_output).reshape(_squeezed(grad_output._size)), self._size)
    if weight is not None:
        g = g * _math(weight)
    return _result(g * _mean_scale(self._size, reduction), self.dtype, self._size)


@impl("binary_cross_entropy_backward", "Meta")
def binary_cross_entropy_backward_meta(grad_output, self, target, weight=None, reduction=1):
    _check_bce_backward(grad_output, self, target, weight)
    return _meta(self._size, self.dtype, device=self.device)


# ---- binary cross-entropy with logits -----------------------------------------------------
# loss = (1 - y) x - (1 + (pos_weight - 1) y) log(sigmoid(x)), times the weight. PyTorch's kernel
# builds it inside 1 - y in place, so the inputs may mix float dtypes and the loss has the
# target's. With e = exp(-|x|), -log(sigmoid(x)) = log1p(e) - min(x, 0), without overflow.
# Reduced losses without a weight are summed term by term, (sum(x) - y.x) + sum(softplus(-x))
# + (pos_weight - 1).(y.softplus(-x)), in read-only passes instead of building the loss. The
# backward is PyTorch's formula, (pos_weight y + 1 - y) sigmoid(x) - pos_weight y.
def _exp_neg_abs(x):
    e = np.abs(x, out=np.empty_like(x))
    np.negative(e, out=e)
    return np.exp(e, out=e)


def _log1p_unit(e):
    """log1p(e) for e in [0, 1], in e's buffer. NumPy's float32 log1p has no vector loop (it
    takes 5x its log's time), so float32 is log(1 + e) corrected for the rounding of 1 + e:
    log1p(e) = log(u) - (u - 1 - e) / u, within a few ulp."""
    if e.dtype != np.float32:
        return np.log1p(e, out=e)
    u = e + 1
    c = u - 1
    c -= e
    c /= u
    np.log(u, out=e)
    e -= c
    return e


def _subtract_into(a, b):
    """a - b, written into a where a is an array of the result's shape."""
    if isinstance(a, np.ndarray) and a.shape == np.broadcast_shapes(a.shape, np.shape(b)):
        return np.subtract(a, b, out=a)
    return a - b


def _pos_weight_scale(pos_weight, y):
    """1 + (pos_weight - 1) y: the weight of the positive term."""
    return (_math(pos_weight) - 1) * y + 1


def _bce_logits_summed(x, y, softplus, pos_weight):
    """sum((1 - y) x + (1 + (pos_weight - 1) y) softplus) over x's shape (y's, pos_weight's
    broadcast to it: the caller checked)."""
    xf, yf, sf = x.reshape(-1), y.reshape(-1), softplus.reshape(-1)
    total = xf.sum() - xf @ yf + sf.sum()
    if pos_weight is not None:
        pw = _math(pos_weight).reshape(-1)
        c = pw.shape[0]
        total += (pw - 1) @ np.einsum("nc,nc->c", yf.reshape(-1, c), sf.reshape(-1, c))
    return total


@impl("binary_cross_entropy_with_logits", "CPU")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    _elementwise_loss_check("binary_cross_entropy_with_logits", self, target, weight,
                            pos_weight)
    _check_bce_logits_shapes(self, target, weight, pos_weight)
    x, y = _math(self), _math(target)
    softplus = _log1p_unit(_exp_neg_abs(x))   # -log(sigmoid(x))
    softplus -= np.minimum(x, 0)
    if (reduction and weight is None and x.shape == y.shape and x.dtype == y.dtype and
            x.size and
            (pos_weight is None or pos_weight.dim() <= 1 and x.ndim >= 1 and
             pos_weight.numel() == x.shape[-1])):
        total = _bce_logits_summed(x, y, softplus, pos_weight)
        return _result(total / x.size if reduction == 1 else total, target.dtype)
    if pos_weight is not None:
        softplus = softplus * _pos_weight_scale(pos_weight, y)
    loss = (1 - y) * x
    if isinstance(loss, np.ndarray) and loss.shape == np.broadcast_shapes(loss.shape,
                                                                          softplus.shape):
        loss += softplus
    else:
        loss = loss + softplus
    if weight is not None:
        loss = loss * _math(weight)
    return _reduce(loss, reduction, target.dtype)


@impl("binary_cross_entropy_with_logits", "Meta")
def binary_cross_entropy_with_logits_meta(self, target, weight=None, pos_weight=None,
                                          reduction=1):
    shape = _elementwise_loss_check("binary_cross_entropy_with_logits", self, target, weight,
                                    pos_weight)
    _check_bce_logits_shapes(self, target, weight, pos_weight)
    return _reduced_meta(target, shape, reduction)


def _sigmoid(x):
    """1 / (1 + exp(-x)), in a new allocator block (exp's overflow gives the limit 0)."""
    s = np.negative(x, out=empty(x.shape, x.dtype))
    np.exp(s, out=s)
    s += 1
    return np.reciprocal(s, out=s)


@impl("_binary_cross_entropy_with_logits_backward", "CPU")
def binary_cross_entropy_with_logits_backward(grad_output, self, target, weight, pos_weight,
                                              reduction):
    """The input's gradient: grad * w * ((pos_weight y + 1 - y) sigmoid(x) - pos_weight y),
    summed to the input's shape, "mean" dividing by the input's size (PyTorch composes it of
    ops on the broadcast terms, and autograd sums them to the input's shape)."""
    _elementwise_loss_check("binary_cross_entropy_with_logits", self, target, weight,
                            pos_weight)
    _check_bce_logits_shapes(self, target, weight, pos_weight)
    x, y = _math(self), _math(target)
    g = _sigmoid(x)
    if pos_weight is None:
        g = _subtract_into(g, y)
    else:
        t = _math(pos_weight) * y
        u = t + 1
        u -= y
        g = _subtract_into(_multiply_into(u, g), t)
    g = _multiply_into(g, _math(grad_output) * _mean_scale(self._size, reduction))
    if weight is not None:
        g = _multiply_into(g, _math(weight))
    return _result(_summed_to(g, self._size), self.dtype, self._size)


def _multiply_into(a, b):
    """a * b, written into a where a is an array of the result's shape."""
    if isinstance(a, np.ndarray) and a.shape == np.broadcast_shapes(a.shape, np.shape(b)):
        return np.multiply(a, b, out=a)
    return a * b


def _summed_to(a, shape):
    """`a` (broadcast from `shape`) summed back to `shape`, as autograd reduces a gradient."""
    a = np.asarray(a)
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=axes, keepdims=True).reshape(shape) if axes else a


@impl("_binary_cross_entropy_with_logits_backward", "Meta")
def binary_cross_entropy_with_logits_backward_meta(grad_output, self, target, weight,
                                                   pos_weight, reduction):
    _elementwise_loss_check("binary_cross_entropy_with_logits", self, target, weight,
                            pos_weight)
    _check_bce_logits_shapes(self, target, weight, pos_weight)
    return _meta(self._size, self.dtype, device=self.device)
