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
from . import _implementations as I
from .adam import update_moments
from .optimizer import (_ElementwiseOptimizer, _check_hyperparameters, _get_value, _increment,
                        _to_scalar)

__all__ = ["NAdam", "nadam"]


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

    def _step_group(self, group, params, grads, has_sparse_grad):
        state = self._state_lists(params, "exp_avg", "exp_avg_sq", mu_product=1.0)
        beta1, beta2 = group["betas"]
        nadam(params, grads, state["exp_avg"], state["exp_avg_sq"], state["mu_product"],
              state["step"], decoupled_weight_decay=group["decoupled_weight_decay"],
              foreach=group["foreach"], capturable=group["capturable"],
              differentiable=group["differentiable"], maximize=group["maximize"], beta1=beta1,
              beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
              momentum_decay=group["momentum_decay"], eps=group["eps"])


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay,
          eps):
    """Functional NAdam: one step on `params` and their state, the 0-d `mu_products`
    included. See `NAdam`."""
    I.check_state_steps(state_steps)
    I.check_state_steps(mu_products, "mu_products")
    kind = I.implementation(params, foreach, differentiable=differentiable)
    I.check(kind, params, differentiable=differentiable, capturable=capturable,
            capturable_tensors="params, mu_products and state_steps")
    lr = _get_value(_to_scalar(lr))
    hyper = dict(lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                 decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # mu_product is a float32 0-d tensor in PyTorch: the product rounds to its dtype
        mu_products[i]._np *= mu
        mu_products[i]._bump_version()
        mu_product = float(mu_products[i]._np)
        I.update(_nadam_update, param, grads[i], (exp_avgs[i], exp_avg_sqs[i]), dict(
            hyper, bias_correction2=1 - beta2 ** step,
            grad_coef=-lr * (1.0 - mu) / (1.0 - mu_product),
            exp_avg_coef=(-lr * mu_next) / (1.0 - mu_product * mu_next)))
