"""optim.Adamax: Adam with the infinity norm in place of the second moment.

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    g = g + wd * p
    m = lerp(m, g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)                         exp_inf
    p = p - lr / (1 - beta1^t) * m / u
"""
import numpy as np

from . import _foreach as F
from . import _implementations as I
from .optimizer import (_ElementwiseOptimizer, _check_hyperparameters, _get_value, _increment,
                        _to_scalar)

__all__ = ["Adamax", "adamax"]


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

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group, params, grads, has_sparse_grad):
        state = self._state_lists(params, "exp_avg", "exp_inf")
        beta1, beta2 = group["betas"]
        adamax(params, grads, state["exp_avg"], state["exp_inf"], state["step"],
               foreach=group["foreach"], maximize=group["maximize"],
               differentiable=group["differentiable"], capturable=group["capturable"],
               eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"],
               weight_decay=group["weight_decay"])


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2, lr,
           weight_decay):
    """Functional Adamax: one step on `params` and their state. See `Adamax`."""
    I.check_state_steps(state_steps)
    kind = I.implementation(params, foreach, differentiable=differentiable)
    I.check(kind, params, differentiable=differentiable, capturable=capturable)
    lr = _get_value(_to_scalar(lr))
    hyper = dict(beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay, maximize=maximize)
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        I.update(_adamax_update, param, grads[i], (exp_avgs[i], exp_infs[i]),
                 dict(hyper, clr=lr / (1 - beta1 ** step)))
