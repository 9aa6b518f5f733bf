"""optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov, weight decay.

PyTorch's update, per parameter (g = grad, or -grad when maximizing):

    g = g + weight_decay * p                        if weight_decay
    b = g  (first step)  or  momentum * b + (1 - dampening) * g
    g = g + momentum * b  (nesterov)  or  b
    p = p - lr * g
"""
import numpy as np

from . import _foreach as F
from . import _implementations as I
from .._core.tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from .optimizer import (_ElementwiseOptimizer, _check_fused, _check_hyperparameters, _get_value,
                        _empty_like, _to_scalar, _zeros_like)

__all__ = ["SGD", "sgd"]


def _sgd_update(s, param, grad, buf=None, *, lr, weight_decay, momentum, dampening, nesterov,
                maximize, first):
    g = F.decayed_grad(s, param, grad, maximize, weight_decay)
    if buf is not None:
        if first:
            F.start_buffer(buf, g)
        else:
            np.multiply(buf, momentum, out=buf)
            F.add(buf, g, 1 - dampening, buf, s.b)
        g = F.add(g, buf, momentum, s.a, s.b) if nesterov else buf
    F.add(param, g, -lr, param, s.b)


class SGD(_ElementwiseOptimizer):
    _group_defaults = dict(nesterov=False, maximize=False, foreach=None, differentiable=False,
                           fused=False)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        _check_hyperparameters(lr=lr, momentum=momentum, weight_decay=weight_decay)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    _takes_sparse_grads = True

    def _step_group(self, group, params, grads, has_sparse_grad):
        momentum = group["momentum"]
        buffers = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 \
            else [None] * len(params)
        sgd(params, grads, buffers, has_sparse_grad, foreach=group["foreach"],
            fused=group["fused"], **self._amp_args(), weight_decay=group["weight_decay"],
            momentum=momentum, lr=group["lr"], dampening=group["dampening"],
            nesterov=group["nesterov"], maximize=group["maximize"])
        if momentum != 0:  # plain SGD keeps no state at all
            for p, buf in zip(params, buffers):
                self.state[p]["momentum_buffer"] = buf


def _differentiable_value(x):
    """A hyperparameter for the update: a tensor that autograd should reach stays a tensor
    (SGD(differentiable=True) with a tensor lr), anything else is read out."""
    if isinstance(x, Tensor) and x.requires_grad and is_grad_enabled():
        return x
    return _get_value(x)


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize):
    """Functional SGD: one step on `params`; a None in `momentum_buffer_list` (the first step)
    is replaced by the new buffer. See `SGD`."""
    kind = I.implementation(params, foreach, fused)
    if kind == "fused" and params and has_sparse_grad:
        raise RuntimeError("`_fused_sgd` does not support sparse gradients")
    I.check(kind, params, grad_scale=grad_scale, found_inf=found_inf)
    if kind == "fused" and not I.unscale(d_p_list, grad_scale, found_inf):
        if momentum != 0 and all(b is None for b in momentum_buffer_list):
            momentum_buffer_list[:] = [_zeros_like(g) for g in d_p_list]
        return
    lr, weight_decay = _differentiable_value(_to_scalar(lr)), _differentiable_value(weight_decay)
    hyper = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, dampening=dampening,
                 nesterov=nesterov, maximize=maximize)
    for i, param in enumerate(params):
        grad = d_p_list[i]
        if grad.is_sparse:
            momentum_buffer_list[i] = _sparse_update(param, grad, momentum_buffer_list[i], **hyper)
            continue
        if momentum == 0:
            I.update(_sgd_update, param, grad, (), dict(hyper, first=False))
            continue
        buf = momentum_buffer_list[i]
        first = buf is None
        if first:  # the first step starts the buffer at the gradient itself (grad.clone())
            buf = momentum_buffer_list[i] = _empty_like(grad)
        I.update(_sgd_update, param, grad, (buf,), dict(hyper, first=first))


def _sparse_update(param, grad, buf, *, lr, weight_decay, momentum, dampening, nesterov,
                   maximize):
    """The update for a sparse gradient (an nn.Embedding(sparse=True)'s), written with tensor
    ops so that only the rows it stores move; the momentum buffer is then sparse too, as in
    PyTorch. (A weight decay raises PyTorch's error from `add(sparse, dense)`.) Returns the
    buffer."""
    grad = -grad if maximize else grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    if momentum != 0:
        if buf is None:
            buf = grad.clone().detach()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    param.add_(grad, alpha=-lr)
    return buf
