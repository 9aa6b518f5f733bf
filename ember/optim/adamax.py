"""optim.Adamax: Adam with the infinity norm in place of the second moment.

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    g = g + wd * p
    m = lerp(m, g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)                         exp_inf
    p = p - lr / (1 - beta1^t) * m / u
"""
import numpy as np

from . import _foreach as F
from .optimizer import _ElementwiseOptimizer, _check_hyperparameters, _increment, _lr

__all__ = ["Adamax"]


def _adamax_update(s, param, grad, exp_avg, exp_inf, *, beta1, beta2, eps, weight_decay,
                   maximize, clr):
    g = F.decayed_grad(s, param, grad, maximize, weight_decay)
    F.lerp_(exp_avg, g, 1 - beta1, s.b)
    np.multiply(exp_inf, beta2, out=exp_inf)
    norm = np.abs(g, out=s.b)
    np.add(norm, eps, out=norm)
    np.maximum(exp_inf, norm, out=exp_inf)
    F.addcdiv_(param, exp_avg, exp_inf, -clr, s.c)


class Adamax(_ElementwiseOptimizer):
    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _scalar_state = ("step",)
    _update = staticmethod(_adamax_update)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _prepare(self, p, group):
        state = self._state_of(p, "exp_avg", "exp_inf")
        step = _increment(state["step"])
        beta1, beta2 = group["betas"]
        return (state["exp_avg"], state["exp_inf"]), dict(
            beta1=beta1, beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"],
            maximize=group["maximize"], clr=_lr(group) / (1 - beta1 ** step))
