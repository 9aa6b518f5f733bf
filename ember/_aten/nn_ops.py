"""Neural-network kernels (CPU and Meta): softmax, log_softmax and their backward, nll_loss,
mse_loss. Losses follow PyTorch's reduction codes: 0 none, 1 mean, 2 sum."""
import numpy as np

from .._dispatcher import impl
from .._tensor import _wrap, _meta, _wrap_dim
from .elementwise import broadcast_shape, not_implemented, _OPMATH


def _softmax_np(a, dim, log):
    m = np.max(a, axis=dim, keepdims=True) if a.size else a
    z = a - m
    if log:
        with np.errstate(divide="ignore"):
            return z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
    e = np.exp(z)
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
        return _wrap(r.astype(np.float32 if half_to_float else a.dtype, copy=False))
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
    return _wrap((y * (g - np.sum(g * y, axis=d, keepdims=True))).astype(
        grad_output._np.dtype, copy=False))


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
    return _wrap((g - np.exp(y) * np.sum(g, axis=d, keepdims=True)).astype(
        grad_output._np.dtype, copy=False))


for _n in ("_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data"):
    impl(_n, "Meta")(lambda x, *rest: _meta(x._size, x.dtype, device=x._device))


# ---- losses -----------------------------------------------------------------------------------
def _reduction_name(r):
    return {0: "none", 1: "mean", 2: "sum"}[r]


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
