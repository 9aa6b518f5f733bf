"""Batch normalization kernels (CPU and Meta): PyTorch's `native_batch_norm` and its backward.

Statistics are per channel (dim 1) over every other dim. The kernels view the input as
(N, C, L) and reduce with `einsum`, which sums over N and L in one pass without temporaries.
Training mode normalizes with the batch's mean and biased variance, returns the mean and
1/sqrt(var + eps) for the backward (`save_mean`, `save_invstd`), and updates the running
statistics in place: running = (1 - momentum) * running + momentum * batch statistic, with the
*unbiased* variance, as PyTorch does (without bumping their version counters: PyTorch's don't
either, and the op's own backward reads them). Evaluation mode normalizes with the running
statistics.

float16/bfloat16 inputs are computed in float32; the saved statistics stay float32.
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import _wrap, _meta
from .conv import compute_dtype
from .elementwise import not_implemented

_FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)


def _check(input, weight, bias, running_mean, running_var, training):
    if input.dtype not in _FLOATS:
        raise not_implemented("batch_norm", input.dtype)
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm(): Expected 2D or more input, but got input of size "
                           f"{list(input.shape)}")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    return c


def _ncl(a):
    return a.reshape(a.shape[0], a.shape[1], -1)


def _per_channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _channel_sum(a3):
    return np.einsum("ncl->c", a3)


def _channel_dot(a3, b3):
    return np.einsum("ncl,ncl->c", a3, b3)


def _stat(t, dt):
    return t._np.astype(dt, copy=False)


def batch_stats(x3, eps):
    """Mean and 1/sqrt(biased var + eps) per channel of x (N, C, L), two passes; and x - mean."""
    n = x3.shape[0] * x3.shape[2]
    mean = _channel_sum(x3) / max(n, 1)
    centered = x3 - mean[:, None]
    var = _channel_dot(centered, centered) / max(n, 1)
    return mean, 1 / np.sqrt(var + eps), centered, var


@impl("native_batch_norm", "CPU")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    c = _check(input, weight, bias, running_mean, running_var, training)
    x = input._np
    dt = compute_dtype(x)
    x3 = _ncl(x.astype(dt, copy=False))
    if training:
        n = x3.shape[0] * x3.shape[2]
        if n <= 1 and x.size:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        mean, invstd, centered, var = batch_stats(x3, eps)
        _update_running(running_mean, running_var, mean, var, n, momentum)
        save_mean, save_invstd = mean, invstd
    else:
        mean = _stat(running_mean, dt)
        invstd = 1 / np.sqrt(_stat(running_var, dt) + eps)
        centered = x3 - mean[:, None]
        save_mean = save_invstd = np.empty((0,), dt)
    scale = invstd if weight is None else invstd * _stat(weight, dt)
    out = centered
    out *= scale[:, None]
    if bias is not None:
        out += _stat(bias, dt)[:, None]
    return (_wrap(out.reshape(x.shape).astype(x.dtype, copy=False)), _wrap(save_mean),
            _wrap(save_invstd))


def _update_running(running_mean, running_var, mean, var, n, momentum):
    if running_mean is not None:
        rm = running_mean._np
        rm[...] = (1 - momentum) * rm + momentum * mean
    if running_var is not None:
        rv = running_var._np
        unbiased = var * n / (n - 1) if n > 1 else np.full_like(var, np.inf)
        rv[...] = (1 - momentum) * rv + momentum * unbiased


@impl("native_batch_norm", "Meta")
def native_batch_norm_meta(input, weight, bias, running_mean, running_var, training, momentum,
                           eps):
    c = _check(input, weight, bias, running_mean, running_var, training)
    stat_dt = D.float32 if input.dtype in (D.float16, D.bfloat16) else input.dtype
    stats = (c,) if training else (0,)
    return (_meta(input.shape, input.dtype, device=input.device),
            _meta(stats, stat_dt, device=input.device), _meta(stats, stat_dt, device=input.device))


@impl("native_batch_norm_backward", "CPU")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps):
    """(grad_input, grad_weight, grad_bias). With x_hat = (x - mean) * invstd:
    grad_bias = sum(g), grad_weight = sum(g * x_hat) and, in training (mean and invstd depend
    on x), grad_input = w * invstd * (g - mean(g) - x_hat * mean(g * x_hat))."""
    x = input._np
    dt = compute_dtype(x)
    x3 = _ncl(x.astype(dt, copy=False))
    g3 = _ncl(grad_out._np.astype(dt, copy=False))
    if train:
        mean, invstd = _stat(save_mean, dt), _stat(save_invstd, dt)
    else:
        mean = _stat(running_mean, dt)
        invstd = 1 / np.sqrt(_stat(running_var, dt) + eps)
    n = max(x3.shape[0] * x3.shape[2], 1)
    centered = x3 - mean[:, None]
    grad_bias = _channel_sum(g3)
    dot = _channel_dot(g3, centered)
    grad_weight = dot * invstd
    w = _stat(weight, dt) if weight is not None else np.ones_like(invstd)
    if train:
        centered *= (dot * invstd * invstd / n)[:, None]
        gi = g3 - centered
        gi -= (grad_bias / n)[:, None]
        gi *= (invstd * w)[:, None]
    else:
        gi = g3 * (invstd * w)[:, None]
    wdt = weight._np.dtype if weight is not None else x.dtype
    return (_wrap(gi.reshape(x.shape).astype(x.dtype, copy=False)),
            _wrap(grad_weight.astype(wdt, copy=False)), _wrap(grad_bias.astype(wdt, copy=False)))


@impl("native_batch_norm_backward", "Meta")
def native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var,
                                    save_mean, save_invstd, train, eps):
    c = input.shape[1]
    wdt = weight.dtype if weight is not None else input.dtype
    return (_meta(input.shape, input.dtype, device=input.device),
            _meta((c,), wdt, device=input.device), _meta((c,), wdt, device=input.device))
