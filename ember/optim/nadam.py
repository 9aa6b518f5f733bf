"""optim.NAdam: Adam with Nesterov momentum and a momentum schedule (Dozat, 2016).

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    p = p * (1 - lr * wd)  (decoupled)   or   g = g + wd * p
    mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));   mu_product *= mu_t
    m = lerp(m, g, 1 - beta1);   v = beta2 * v + (1 - beta2) * g^2
    denom = sqrt(v / (1 - beta2^t)) + eps
    p = p - lr (1 - mu_t) / (1 - mu_product) * g / denom
          - lr mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom
"""
import numpy as np

from . import _foreach as F
from .adam import update_moments
from .optimizer import _ElementwiseOptimizer, _check_hyperparameters, _increment, _lr

__all__ = ["NAdam"]


def _nadam_update(s, param, grad, exp_avg, exp_avg_sq, *, eps, bias_correction2, grad_coef,
                  exp_avg_coef, **moments):
    g = update_moments(s, param, grad, exp_avg, exp_avg_sq, **moments)
    denom = np.divide(exp_avg_sq, bias_correction2, out=s.b)
    np.sqrt(denom, out=denom)
    np.add(denom, eps, out=denom)
    F.addcdiv_(param, g, denom, grad_coef, s.c)
    F.addcdiv_(param, exp_avg, denom, exp_avg_coef, s.c)


class NAdam(_ElementwiseOptimizer):
    _group_defaults = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                           decoupled_weight_decay=False)
    _scalar_state = ("step", "mu_product")
    _update = staticmethod(_nadam_update)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay,
                               momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _prepare(self, p, group):
        state = self._state_of(p, "exp_avg", "exp_avg_sq", mu_product=1.0)
        step = _increment(state["step"])
        lr, (beta1, beta2) = _lr(group), group["betas"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * group["momentum_decay"])))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * group["momentum_decay"])))
        # mu_product is a float32 0-d tensor in PyTorch: the product rounds to its dtype
        state["mu_product"]._np *= mu
        state["mu_product"]._bump_version()
        mu_product = float(state["mu_product"]._np)
        return (state["exp_avg"], state["exp_avg_sq"]), dict(
            lr=lr, beta1=beta1, beta2=beta2, eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"],
            bias_correction2=1 - beta2 ** step, grad_coef=-lr * (1.0 - mu) / (1.0 - mu_product),
            exp_avg_coef=(-lr * mu_next) / (1.0 - mu_product * mu_next))
