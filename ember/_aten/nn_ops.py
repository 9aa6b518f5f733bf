"""Neural-network kernels (CPU and Meta): softmax, log_softmax and their backward, nll_loss,
mse_loss, embedding (and its backward and max_norm renormalisation), one_hot, and constant,
reflection and replication padding, and pixel (un)shuffle. Losses follow PyTorch's reduction
codes: 0 none, 1 mean, 2 sum. Convolution, pooling and batch norm have their own files
(conv.py, pooling.py, norm.py)."""
import numpy as np

from .._dispatch.dispatcher import impl, lookup as _op
from .._core.tensor import _wrap, _meta, _wrap_dim
from .._core import dtype as D
from .._core import complex32 as _c32
from .add_at import index_sum
from .._core.memory_format import (contiguous_format, suggest_memory_format, format_strides,
                                   copy_in_format)
from .elementwise import broadcast_shape, not_implemented, _OPMATH, _scalar_type_name
from .tensor_iterator import empty_strided


def _softmax_np(a, dim, log):
    """(log-)softmax with the maximum subtracted first; each pass writes into an array it owns
    (one temporary fewer per pass matters at these sizes)."""
    m = np.max(a, axis=dim, keepdims=True) if a.size else a
    z = a - m
    e = np.exp(z)
    if log:
        with np.errstate(divide="ignore"):
            z -= np.log(np.sum(e, axis=dim, keepdims=True))
        return z
    e /= np.sum(e, axis=dim, keepdims=True)
    return e


def _softmax_kernel(log):
    def cpu(self, dim, half_to_float):
        if not self.dtype.is_floating_point:
            raise not_implemented(f"{'log_' if log else ''}softmax_lastdim_kernel_impl",
                                  self.dtype)
        a = self._np
        d = _wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return _wrap(np.zeros((), a.dtype) if log else np.ones((), a.dtype))
        mdt = _OPMATH.get(self.dtype, self.dtype)._np
        r = _softmax_np(a.astype(mdt, copy=False), d, log)
        # contiguous whatever the input's layout, as PyTorch's CPU kernels (and backward) give
        return _wrap(np.ascontiguousarray(r, np.float32 if half_to_float else a.dtype))
    return cpu


impl("_softmax", "CPU")(_softmax_kernel(False))
impl("_log_softmax", "CPU")(_softmax_kernel(True))


@impl("_softmax_backward_data", "CPU")
def softmax_backward(grad_output, output, dim, input_dtype):
    """y * (g - sum(g * y)): the Jacobian-vector product of softmax, from its output y."""
    g, y = _math_arrays(grad_output, output)
    if y.ndim == 0:
        return _wrap(np.zeros_like(grad_output._np))
    d = _wrap_dim(dim, y.ndim)
    return _wrap(np.ascontiguousarray(y * (g - np.sum(g * y, axis=d, keepdims=True)),
                                      grad_output._np.dtype))


def _math_arrays(grad_output, output):
    mdt = _OPMATH.get(grad_output.dtype, grad_output.dtype)._np
    return grad_output._np.astype(mdt, copy=False), output._np.astype(mdt, copy=False)


@impl("_log_softmax_backward_data", "CPU")
def log_softmax_backward(grad_output, output, dim, input_dtype):
    """g - exp(y) * sum(g): the Jacobian-vector product of log_softmax, from its output y."""
    g, y = _math_arrays(grad_output, output)
    if y.ndim == 0:
        return _wrap(np.zeros_like(grad_output._np))
    d = _wrap_dim(dim, y.ndim)
    r = np.exp(y)
    r *= np.sum(g, axis=d, keepdims=True)
    np.subtract(g, r, out=r)
    return _wrap(np.ascontiguousarray(r, grad_output._np.dtype))


for _n in ("_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data"):
    impl(_n, "Meta")(lambda x, *rest: _meta(x._size, x.dtype, device=x._device))


# ---- losses -----------------------------------------------------------------------------------
def _nll_check(self, target, weight):
    if not self.dtype.is_floating_point:
        raise not_implemented("nll_loss_out_frame", self.dtype)
    if self.dim() not in (1, 2) and self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    n = self._size[0] if self.dim() > 1 else 1
    tn = target._size[0] if target.dim() else 1
    if self.dim() > 1 and tn != n:
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({tn}).")
    c = self._size[1] if self.dim() > 1 else self._size[0]
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight._size)}")
    return c


@impl("nll_loss", "CPU")
def nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
    """-w[t] * x[t] per sample (x holds log-probabilities); "mean" divides by the summed weight
    of the samples that are not ignored. float16/bfloat16 accumulate in float32."""
    c = _nll_check(self, target, weight)
    dt = self.dtype
    mdt = _OPMATH.get(dt, dt)._np
    x = self._np.astype(mdt, copy=False)
    t = target._np.astype(np.int64, copy=False)
    # move the class dim last: (N, C, d1, ...) -> (N, d1, ..., C)
    xc = np.moveaxis(x, 1, -1) if x.ndim > 1 else x[None]
    tt = t if x.ndim > 1 else t.reshape(1)
    valid = tt != ignore_index
    safe_t = np.where(valid, tt, 0)
    bad = (safe_t < 0) | (safe_t >= c)
    if bad.any():
        raise IndexError(f"Target {int(tt[bad].reshape(-1)[0])} is out of bounds.")
    picked = np.take_along_axis(xc, safe_t[..., None], -1)[..., 0]
    w = weight._np.astype(mdt, copy=False)[safe_t] if weight is not None else np.ones((), mdt)
    w = np.where(valid, w, 0).astype(mdt, copy=False)
    losses = -picked * w
    if reduction == 0:
        r = losses.reshape(t.shape)
    elif reduction == 2:
        r = np.sum(losses)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.sum(losses) / np.sum(np.broadcast_to(w, losses.shape))
    return _wrap(np.asarray(r).astype(dt._np, copy=False))


@impl("_nll_loss_backward", "CPU")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index):
    """The gradient of nll_loss in one kernel: zeros, except -w[t] * g at each sample's target
    class (divided by the summed weight for "mean"; nothing for ignored samples)."""
    _nll_check(self, target, weight)
    mdt = _OPMATH.get(self.dtype, self.dtype)._np
    out = np.zeros(self.shape, mdt)
    t = target._np.astype(np.int64, copy=False)
    valid = t != ignore_index
    safe_t = np.where(valid, t, 0)
    w = weight._np.astype(mdt)[safe_t] if weight is not None else np.ones(t.shape, mdt)
    w = np.where(valid, w, 0).astype(mdt, copy=False)
    g = grad_output._np.astype(mdt, copy=False)
    if reduction == 1:
        with np.errstate(invalid="ignore", divide="ignore"):
            g = g / np.sum(w)
    coef = -w * g
    if self.dim() == 1:
        out[safe_t] = coef
    else:  # the class dim last: every sample's row, its target column
        np.put_along_axis(np.moveaxis(out, 1, -1), safe_t[..., None], coef[..., None], -1)
    return _wrap(out.astype(self.dtype._np, copy=False))


@impl("_nll_loss_backward", "Meta")
def nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index):
    _nll_check(self, target, weight)
    return _meta(self.shape, self.dtype, device=self.device)


@impl("nll_loss", "Meta")
def nll_loss_meta(self, target, weight=None, reduction=1, ignore_index=-100):
    _nll_check(self, target, weight)
    shape = target._size if reduction == 0 else ()
    return _meta(shape, self.dtype, device=self._device)


def _mse_check(self, target):
    if not self.dtype.is_floating_point:
        raise not_implemented("mse_cpu", self.dtype)
    return broadcast_shape(self._size, target._size)


@impl("mse_loss", "CPU")
def mse_loss(self, target, reduction=1):
    _mse_check(self, target)
    dt = self.dtype
    mdt = _OPMATH.get(dt, dt)._np
    d = self._np.astype(mdt, copy=False) - target._np.astype(mdt, copy=False)
    sq = d * d
    r = sq if reduction == 0 else np.sum(sq) if reduction == 2 else np.mean(sq)
    return _wrap(np.asarray(r).astype(dt._np, copy=False))


@impl("mse_loss", "Meta")
def mse_loss_meta(self, target, reduction=1):
    shape = _mse_check(self, target) if reduction == 0 else ()
    return _meta(shape, self.dtype, device=self._device)


# smooth_l1_loss and huber_loss: kernels of their own (not composites) so that the loss's node
# is SmoothL1LossBackward0 / HuberLossBackward0, as print(loss) shows in PyTorch. smooth_l1's
# result has the promoted dtype of self and target; huber's is written in self's dtype.
def _robust_loss_check(self, target, name, kernel, param, bad):
    if bad:
        raise RuntimeError(f"{name} does not support {param} values for "
                           f"{'beta' if name == 'smooth_l1_loss' else 'delta'}.")
    dt = D.promote_types(self.dtype, target.dtype)
    if not dt.is_floating_point:
        raise not_implemented(kernel, dt)
    return broadcast_shape(self._size, target._size), dt


def _robust_loss(self, target, reduction, threshold, quadratic_scale, linear_scale, out_dt):
    mdt = _OPMATH.get(out_dt, out_dt)._np
    d = self._np.astype(mdt, copy=False) - target._np.astype(mdt, copy=False)
    ad = np.abs(d)
    with np.errstate(all="ignore"):
        loss = np.where(ad < threshold, 0.5 * d * d * quadratic_scale,
                        linear_scale * (ad - 0.5 * threshold))
    r = loss if reduction == 0 else np.sum(loss) if reduction == 2 else np.mean(loss)
    return _wrap(np.asarray(r).astype(out_dt._np, copy=False))


@impl("smooth_l1_loss", "CPU")
def smooth_l1_loss(self, target, reduction=1, beta=1.0):
    _, dt = _robust_loss_check(self, target, "smooth_l1_loss", "smooth_l1_cpu", "negative",
                               beta < 0)
    return _robust_loss(self, target, reduction, beta, 1 / beta if beta else 0.0, 1.0, dt)


@impl("smooth_l1_loss", "Meta")
def smooth_l1_loss_meta(self, target, reduction=1, beta=1.0):
    shape, dt = _robust_loss_check(self, target, "smooth_l1_loss", "smooth_l1_cpu", "negative",
                                   beta < 0)
    return _meta(shape if reduction == 0 else (), dt, device=self._device)


@impl("huber_loss", "CPU")
def huber_loss(self, target, reduction=1, delta=1.0):
    _robust_loss_check(self, target, "huber_loss", "huber_cpu", "non-positive", delta <= 0)
    return _robust_loss(self, target, reduction, delta, 1.0, delta, self.dtype)


def _soft_margin_check(self, target):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_scalar_type_name(self.dtype)}")
    shape = broadcast_shape(self._size, target._size)
    if shape != self._size:  # the kernel writes into a tensor of self's shape
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                           f"shape {list(shape)}")


@impl("soft_margin_loss", "CPU")
def soft_margin_loss(self, target, reduction=1):
    """log(1 + exp(-self * target)), written in self's dtype (its own node, as in PyTorch)."""
    _soft_margin_check(self, target)
    dt = D.promote_types(self.dtype, target.dtype)
    mdt = _OPMATH.get(dt, dt)._np
    with np.errstate(all="ignore"):
        loss = np.log1p(np.exp(-self._np.astype(mdt, copy=False) *
                               target._np.astype(mdt, copy=False)))
    r = loss if reduction == 0 else np.sum(loss) if reduction == 2 else np.mean(loss)
    return _wrap(np.asarray(r).astype(self.dtype._np, copy=False))


@impl("soft_margin_loss", "Meta")
def soft_margin_loss_meta(self, target, reduction=1):
    _soft_margin_check(self, target)
    return _meta(self._size if reduction == 0 else (), self.dtype, device=self._device)


@impl("huber_loss", "Meta")
def huber_loss_meta(self, target, reduction=1, delta=1.0):
    shape, _ = _robust_loss_check(self, target, "huber_loss", "huber_cpu", "non-positive",
                                  delta <= 0)
    return _meta(shape if reduction == 0 else (), self.dtype, device=self._device)



# ---- embedding --------------------------------------------------------------------------------
def _check_indices(indices, what="indices"):
    if indices.dtype not in (D.int64, D.int32):
        name = D.TENSOR_TYPE_NAMES[indices.dtype]
        raise RuntimeError(f"Expected tensor for argument #1 '{what}' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{name} instead "
                           f"(while checking arguments for embedding)")


@impl("embedding", "CPU")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by `indices`: output shape indices.shape + (embedding_dim,)."""
    _check_indices(indices)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = indices._np
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    return _wrap(np.take(weight._np, idx, axis=0))


@impl("embedding", "Meta")
def embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    _check_indices(indices)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    return _meta(tuple(indices.shape) + (weight.shape[1],), weight.dtype, device=weight.device)


@impl("embedding_dense_backward", "CPU")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The gradient of every row of the weight: the sum of the gradients of the outputs that
    picked it (divided by how often it was picked with scale_grad_by_freq); none for
    padding_idx."""
    g = grad_output._np
    dim = g.shape[-1]
    keys = indices._np.reshape(-1).astype(np.int64, copy=False)
    rows = g.reshape(keys.size, dim)
    if padding_idx >= 0:
        kept = keys != padding_idx
        keys, rows = keys[kept], rows[kept]
    # summed in the gradient's own dtype, half precision too, as PyTorch's CPU kernel does
    out = index_sum(keys, rows, num_weights)
    if scale_grad_by_freq:
        counts = np.bincount(keys, minlength=num_weights)
        picked = np.flatnonzero(counts)
        out[picked] /= counts[picked, None].astype(g.dtype)
    return _wrap(out)


@impl("embedding_dense_backward", "Meta")
def embedding_dense_backward_meta(grad_output, indices, num_weights, padding_idx,
                                  scale_grad_by_freq):
    return _meta((num_weights, grad_output.shape[-1]), grad_output.dtype,
                 device=grad_output.device)


@impl("embedding_renorm_", "CPU")
def embedding_renorm_(self, indices, max_norm, norm_type):
    """Rescale, in place, the rows named by `indices` whose norm exceeds max_norm."""
    _check_indices(indices)
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_type_name(self.dtype)} instead.")
    rows = np.unique(indices._np)
    w = self._np
    picked = w[rows].astype(np.float64)
    if norm_type == np.inf:
        norms = np.abs(picked).max(axis=1)
    else:
        norms = (np.abs(picked) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    big = norms > max_norm
    scale = max_norm / (norms[big] + 1e-7)
    w[rows[big]] = (picked[big] * scale[:, None]).astype(w.dtype)
    return self


# ---- one_hot ----------------------------------------------------------------------------------
@impl("one_hot", "CPU")
def one_hot(self, num_classes=-1):
    if self.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = self._np
    if num_classes == -1:
        if not idx.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size:
        if idx.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if idx.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return _wrap((idx[..., None] == np.arange(num_classes)).astype(np.int64))


# ---- padding ----------------------------------------------------------------------------------
def _pad_pairs(pad, ndim):
    """F.pad's flat list (last dim first) as {dim: (before, after)}."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)}while the input "
                           f"has {ndim}dimensions.")  # sic: PyTorch's text has no spaces there
    return {ndim - 1 - i: (pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)}


def _constant_pad_shape(self, pad):
    shape = list(self.shape)
    pairs = _pad_pairs(pad, self.dim())
    for d, (lo, hi) in pairs.items():
        new = shape[d] + lo + hi
        if new < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {lo} and {hi} "
                               f"resulted in a negative output size, which is invalid. Check "
                               f"dimension {d} of your input.")
        shape[d] = new
    return tuple(shape), pairs


@impl("constant_pad_nd", "CPU")
def constant_pad_nd(self, pad, value=0):
    """Pad with `value`; a negative pad crops."""
    shape, pairs = _constant_pad_shape(self, pad)
    out = empty_strided(shape, _pad_strides(self, shape), self.dtype._np)
    out.fill(value if self.dtype is not D.complex32 else _c32.narrow(value))
    src, dst = [slice(None)] * self.dim(), [slice(None)] * self.dim()
    for d, (lo, hi) in pairs.items():
        n = self.shape[d]
        src[d] = slice(max(0, -lo), n - max(0, -hi))
        dst[d] = slice(max(0, lo), max(0, lo) + max(0, n - max(0, -lo) - max(0, -hi)))
    out[tuple(dst)] = self._np[tuple(src)]
    return _wrap(out)


@impl("constant_pad_nd", "Meta")
def constant_pad_nd_meta(self, pad, value=0):
    shape = _constant_pad_shape(self, pad)[0]
    return _meta(shape, self.dtype, _pad_strides(self, shape), device=self.device)


def _pad_strides(self, shape):
    """The result's strides: in the input's suggest_memory_format, as PyTorch's (None for
    contiguous)."""
    fmt = suggest_memory_format(self)
    return None if fmt is contiguous_format else format_strides(shape, fmt)


def _in_input_format(self, arr):
    """`arr` laid out as the padding kernels lay out their results: in the input's
    suggest_memory_format (a channels-last input pads to, and takes its gradient in,
    channels last)."""
    strides = _pad_strides(self, arr.shape)
    if strides is None:
        return np.ascontiguousarray(arr)
    out = empty_strided(arr.shape, strides, arr.dtype)
    out[...] = arr
    return out


# Reflection and replication padding are gathers: along each padded dim, output position i reads
# input position map[i] (reflect: 2, 1 | 0, 1, 2, 3 | 2, 1; replicate: 0, 0 | 0, 1, 2, 3 | 3, 3).
# Their backward sums the gradients of the outputs that read each input: per dim, the middle of
# the gradient, whose outputs read the input one to one, plus the padded outputs added where they
# read (a product with the one-hot matrix of the map would cost length squared: a second of audio
# is 16000 samples).
def _pad_map(n, lo, hi, mode):
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        i = np.abs(i)
        return np.where(i >= n, 2 * (n - 1) - i, i)
    return np.clip(i, 0, n - 1)


def _gather_backward(g, index, n, lo, hi, axis):
    """The adjoint of taking `index` = _pad_map(n, lo, hi, mode) along axis."""
    g = np.moveaxis(g, axis, -1)
    out = np.zeros(g.shape[:-1] + (n,), dtype=g.dtype)
    first, end = max(0, -lo), n - max(0, -hi)  # the inputs read once, in order
    out[..., first:end] = g[..., first + lo:end + lo]
    padded = np.r_[0:max(lo, 0), g.shape[-1] - max(hi, 0):g.shape[-1]]
    np.add.at(out, (Ellipsis, index[padded]), g[..., padded])  # an input may be read again
    return np.moveaxis(out, -1, axis)


def _check_index_pad(self, padding, nd, mode):
    if len(padding) != 2 * nd:
        got = f", but got: {len(padding)}" if mode == "reflect" else ""  # PyTorch's two texts
        raise RuntimeError(f"padding size is expected to be {2 * nd}{got}")
    if self.dim() not in (nd + 1, nd + 2) or 0 in self.shape[self.dim() - nd - 1:]:
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    pairs = _pad_pairs(padding, self.dim())
    shape = list(self.shape)
    for d, (lo, hi) in pairs.items():
        n, k = shape[d], self.dim() - 1 - d  # k: the pair's place in `padding`, last dim first
        if mode == "reflect" and (lo >= n or hi >= n):  # PyTorch numbers the pair's first arg
            raise RuntimeError(f"Argument #{4 + 2 * k}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) at "
                               f"dimension {d} of input {list(self.shape)}")
        if n + lo + hi < 1:
            name = "WHD"[k]
            raise RuntimeError(f"input ({name}: {n}) is too small. Calculated output {name}: "
                               f"{n + lo + hi}")
        shape[d] = n + lo + hi
    return tuple(shape), pairs


def _index_pad_kernels(mode, nd):
    name = f"{'reflection' if mode == 'reflect' else 'replication'}_pad{nd}d"

    def forward(self, padding):
        shape, pairs = _check_index_pad(self, padding, nd, mode)
        if self.dtype is D.bool:
            raise not_implemented(name, self.dtype)
        out = self._np
        for d, (lo, hi) in pairs.items():
            out = np.take(out, _pad_map(self.shape[d], lo, hi, mode), axis=d)
        return _wrap(_in_input_format(self, out))

    def backward(grad_output, self, padding):
        shape, pairs = _check_index_pad(self, padding, nd, mode)
        g = grad_output._np
        mdt = _OPMATH.get(grad_output.dtype, grad_output.dtype)._np
        g = g.astype(mdt, copy=False)
        for d, (lo, hi) in pairs.items():
            g = _gather_backward(g, _pad_map(self.shape[d], lo, hi, mode), self.shape[d], lo, hi,
                                 d)
        return _wrap(_in_input_format(self, g.astype(grad_output.dtype._np, copy=False)))

    def meta(self, padding):  # PyTorch's meta kernels give contiguous results here
        return _meta(_check_index_pad(self, padding, nd, mode)[0], self.dtype, device=self.device)

    impl(name, "CPU")(forward)
    impl(name, "Meta")(meta)
    impl(name + "_backward", "CPU")(backward)
    impl(name + "_backward", "Meta")(
        lambda grad_output, self, padding: _meta(self.shape, grad_output.dtype,
                                                 device=self.device))


for _mode in ("reflect", "replicate"):
    for _nd in (1, 2, 3):
        _index_pad_kernels(_mode, _nd)


# ---- pixel shuffle --------------------------------------------------------------------------
def _shuffle_shape(self, r, shuffle):
    """PyTorch's checks and output shape: (*, C r^2, H, W) -> (*, C, H r, W r) for
    pixel_shuffle, the other way for pixel_unshuffle -- which returns an input without
    elements as it is (a copy), unreshaped, as PyTorch's does."""
    name, factor = ("pixel_shuffle", "upscale") if shuffle else ("pixel_unshuffle", "downscale")
    if self.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {self.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {factor}_factor, but got {r}")
    *batch, c, h, w = self._size
    if shuffle:
        if c % (r * r):
            raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                               f"divisible by the square of upscale_factor, but input.size(-3)="
                               f"{c} is not divisible by {r * r}")
        return tuple(batch) + (c // (r * r), h * r, w * r)
    for side, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by "
                               f"downscale_factor, but input.size({d})={n} is not divisible by "
                               f"{r}")
    if 0 in self._size:
        return self._size
    return tuple(batch) + (c * r * r, h // r, w // r)


@impl("pixel_shuffle", "CPU")
def pixel_shuffle(self, upscale_factor):
    r = upscale_factor
    shape = _shuffle_shape(self, r, True)
    a = self._np
    nb = a.ndim - 3
    c, h, w = a.shape[nb:]
    x = a.reshape(a.shape[:nb] + (c // (r * r), r, r, h, w))
    x = x.transpose(tuple(range(nb)) + (nb, nb + 3, nb + 1, nb + 4, nb + 2))
    return _wrap(_shuffled(self, np.ascontiguousarray(x).reshape(shape)))


def _shuffled(self, r):
    """A pixel (un)shuffle's result in the input's suggest_memory_format, as PyTorch's."""
    strides = _pad_strides(self, r.shape)
    return r if strides is None else copy_in_format(r, suggest_memory_format(self))


@impl("pixel_unshuffle", "CPU")
def pixel_unshuffle(self, downscale_factor):
    r = downscale_factor
    shape = _shuffle_shape(self, r, False)
    a = self._np
    if a.size == 0:
        return _wrap(a.copy())
    nb = a.ndim - 3
    c, h, w = a.shape[nb:]
    x = a.reshape(a.shape[:nb] + (c, h // r, r, w // r, r))
    x = x.transpose(tuple(range(nb)) + (nb, nb + 2, nb + 4, nb + 1, nb + 3))
    return _wrap(_shuffled(self, np.ascontiguousarray(x).reshape(shape)))


@impl("pixel_shuffle", "Meta")
def pixel_shuffle_meta(self, upscale_factor):
    shape = _shuffle_shape(self, upscale_factor, True)
    return _meta(shape, self.dtype, _pad_strides(self, shape), device=self.device)


@impl("pixel_unshuffle", "Meta")
def pixel_unshuffle_meta(self, downscale_factor):
    shape = _shuffle_shape(self, downscale_factor, False)
    return _meta(shape, self.dtype, _pad_strides(self, shape), device=self.device)


@impl("embedding_renorm_", "Meta")
def embedding_renorm_meta(self, indices, max_norm, norm_type):
    return self


@impl("one_hot", "Meta")
def one_hot_meta(self, num_classes=-1):
    if num_classes == -1:
        raise NotImplementedError("one_hot on the meta device needs num_classes: with -1 the "
                                  "number of classes depends on the data")
    return _meta(self._size + (num_classes,), D.int64, device=self._device)


# ---- native_dropout: the fused dropout torch.export lowers aten.dropout to --------------------
@impl("native_dropout", "CPU")
def native_dropout(input, p, train):
    """(input * mask / (1 - p), mask): mask drawn as Bernoulli(1 - p) over the input's elements
    in memory order (the stream `dropout`'s bernoulli_ draws), returned as bool. `train=False` gives a
    copy and an all-true mask; None counts as training, as in PyTorch."""
    from . import distributions
    from .factory import _gen, _gen_impl, _in_memory_order
    x = input._np
    if not x.size:     # PyTorch's early return: the mask in the input's dtype
        return _wrap(x.copy()), _wrap(np.empty(x.shape, x.dtype))
    if train is False:
        return _wrap(x.copy()), _wrap(np.ones(x.shape, np.bool_))
    if input.dtype.is_complex:
        raise not_implemented("native_dropout", input.dtype)
    if not input.dtype.is_floating_point:   # the float mask's product cannot go back in place
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_scalar_type_name(input.dtype)}")
    p1m = 1.0 - p
    noise = np.empty_like(x)        # laid out as the input: the stream fills it in memory order
    in_order = _in_memory_order(noise)
    in_order[...] = distributions.bernoulli(_gen_impl(_gen(None)), p1m, in_order.shape,
                                            x.dtype)
    opmath = np.float64 if x.dtype == np.float64 else np.float32    # the scale's precision
    out = np.multiply(x, noise).astype(opmath, copy=False)
    out *= opmath(0.0 if p1m == 0 else 1.0 / p1m)
    return _wrap(out.astype(x.dtype, copy=False)), _wrap(noise.astype(np.bool_))


@impl("native_dropout", "Meta")
def native_dropout_meta(input, p, train):
    return (_meta(input.shape, input.dtype, device=input.device),
            _meta(input.shape, D.bool if input.numel() else input.dtype, device=input.device))


@impl("native_dropout_backward", ("CPU", "Meta"))
def native_dropout_backward(grad_output, mask, scale):
    """The gradient of native_dropout's output: the kept elements' gradient, scaled. An op with
    its own derivative, as in PyTorch (so autograd refuses to record it for a complex result)."""
    grad_output = grad_output.detach()     # below autograd: its own node records the call
    return _op("mul.Tensor")(_op("mul.Tensor")(grad_output, mask), float(scale))


# ---- cdist's p-norm distances (the path that does not expand ||a - b||^2 into a matmul)
def check_cdist(x1, x2, p, mode):
    """PyTorch's checks of cdist and _cdist_forward, in its order."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_scalar_type_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if mode is not None and not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    if x1.dtype in (D.float16, D.bfloat16):
        raise not_implemented("cdist", x1.dtype)


def _cdist_differences(x1, x2):
    """x1 (*, P, M) and x2 (*, R, M), batch dims broadcast -> differences (*, P, R, M)."""
    batch = broadcast_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    a = np.broadcast_to(x1._np, batch + tuple(x1.shape[-2:]))
    b = np.broadcast_to(x2._np, batch + tuple(x2.shape[-2:]))
    return a[..., :, None, :] - b[..., None, :, :]


@impl("_cdist_forward", "CPU")
def cdist_forward(x1, x2, p, compute_mode):
    check_cdist(x1, x2, p, compute_mode)
    _check_same_dtype(x1, x2)
    diff = np.abs(_cdist_differences(x1, x2))
    if p == 0:
        dist = np.count_nonzero(diff, axis=-1).astype(diff.dtype)
    elif p == 1:
        dist = diff.sum(-1)
    elif p == 2:
        dist = np.sqrt((diff * diff).sum(-1))
    elif p == float("inf"):
        dist = diff.max(-1, initial=0)
    else:
        dist = (diff ** p).sum(-1) ** (1.0 / p)
    return _wrap(np.ascontiguousarray(dist, x1.dtype._np))


@impl("_cdist_forward", "Meta")
def cdist_forward_meta(x1, x2, p, compute_mode):
    check_cdist(x1, x2, p, compute_mode)
    batch = broadcast_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    return _meta(batch + (x1.shape[-2], x2.shape[-2]), x1.dtype, device=x1.device)


def _check_cdist_backward(x1, x2):
    """(the batch dims broadcast, whether there is nothing to compute)"""
    if not x1.dim() or not x2.dim():
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    batch = broadcast_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    empty = 0 in (x1.shape[-2], x2.shape[-2], x1.shape[-1]) or 0 in batch
    if not empty and x1.dtype not in (D.float32, D.float64):
        raise not_implemented("cdist_backward", x1.dtype)
    return batch, empty


def _check_same_dtype(x1, *others):
    for t in others:
        if t.dtype != x1.dtype:
            raise RuntimeError(f"expected scalar type {_scalar_type_name(x1.dtype)} but found "
                               f"{_scalar_type_name(t.dtype)}")


@impl("_cdist_backward", "CPU")
def cdist_backward(grad, x1, x2, p, cdist):
    """The gradient of x1 (with the batch dims broadcast, as PyTorch's: autograd sums it back):
    sum over x2's rows of grad * d dist / d diff, where a zero distance has zero slope."""
    _, empty = _check_cdist_backward(x1, x2)
    _check_same_dtype(x1, grad, x2, cdist)
    if empty:  # PyTorch's early return: zeros of x1's own shape
        return _wrap(np.zeros(tuple(x1.shape), x1.dtype._np))
    diff = _cdist_differences(x1, x2)
    g, dist = grad._np[..., None], cdist._np[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            slope = np.zeros_like(diff)
        elif p == 1:
            slope = np.sign(diff)
        elif p == float("inf"):
            slope = np.sign(diff) * (np.abs(diff) == dist)
        elif p < 2:
            slope = np.sign(diff) * np.abs(diff) ** (p - 1) / dist ** (p - 1)
            slope[(diff == 0) & (p < 1)] = 0
        else:
            slope = diff * np.abs(diff) ** (p - 2) / dist ** (p - 1)
        if p not in (0, 1, float("inf")):
            slope = np.where(dist == 0, 0, slope)
    out = (g * slope).sum(-2)
    return _wrap(np.ascontiguousarray(out, x1.dtype._np))


@impl("_cdist_backward", "Meta")
def cdist_backward_meta(grad, x1, x2, p, cdist):
    batch, empty = _check_cdist_backward(x1, x2)
    shape = tuple(x1.shape) if empty else batch + tuple(x1.shape[-2:])
    return _meta(shape, x1.dtype, device=x1.device)
