"""optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov, weight decay.

PyTorch's update, per parameter (g = grad, or -grad when maximizing):

    g = g + weight_decay * p                        if weight_decay
    b = g  (first step)  or  momentum * b + (1 - dampening) * g
    g = g + momentum * b  (nesterov)  or  b
    p = p - lr * g
"""
import numpy as np

from . import _foreach as F
from .optimizer import (_ElementwiseOptimizer, _check_fused, _check_hyperparameters, _get_value,
                        _lr, _empty_like, _to_scalar)

__all__ = ["SGD"]


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
    _update = staticmethod(_sgd_update)

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

    def _prepare(self, p, group):
        if group["differentiable"]:  # tensor hyperparameters stay tensors: grads reach them
            lr, weight_decay = _to_scalar(group["lr"]), _to_scalar(group["weight_decay"])
        else:
            lr, weight_decay = _lr(group), _get_value(group["weight_decay"])
        scalars = dict(lr=lr, weight_decay=weight_decay,
                       momentum=group["momentum"], dampening=group["dampening"],
                       nesterov=group["nesterov"], maximize=group["maximize"], first=False)
        if group["momentum"] == 0:
            return (), scalars  # plain SGD keeps no state at all
        state = self.state[p]
        if state.get("momentum_buffer") is None:
            # the first step starts the buffer at the gradient itself (torch: grad.clone())
            state["momentum_buffer"] = _empty_like(p.grad)
            scalars["first"] = True
        return (state["momentum_buffer"],), scalars

    def _check_sparse(self, group):
        if group["fused"]:
            raise RuntimeError("`_fused_sgd` does not support sparse gradients")

    def _sparse_update(self, p, group):
        """A sparse gradient (an nn.Embedding(sparse=True)'s) takes PyTorch's single-tensor
        update written with tensor ops, so only the rows it stores move; the momentum buffer is
        then sparse too, as in PyTorch. (A weight decay raises PyTorch's error from
        `add(sparse, dense)`.)"""
        grad = -p.grad if group["maximize"] else p.grad
        weight_decay = _get_value(group["weight_decay"])
        if weight_decay != 0:
            grad = grad.add(p, alpha=weight_decay)
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.clone().detach()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-_lr(group))
