"""optim.RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019).

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    p = p * (1 - lr * wd)  (decoupled)   or   g = g + wd * p
    m = lerp(m, g, 1 - beta1);   v = beta2 * v + (1 - beta2) * g^2
    rho_inf = 2 / (1 - beta2) - 1;   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    if rho_t > 5:  p = p - m / (1 - beta1^t) * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * rect
                   rect = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
    else:          p = p - m / (1 - beta1^t) * lr
"""
import numpy as np

from . import _implementations as I
from .adam import update_moments
from .optimizer import (_ElementwiseOptimizer, _check_hyperparameters, _get_value, _increment,
                        _to_scalar)

__all__ = ["RAdam", "radam"]


def _radam_update(s, param, grad, exp_avg, exp_avg_sq, *, lr, eps, bias_correction1,
                  bias_correction2, rect, **moments):
    update_moments(s, param, grad, exp_avg, exp_avg_sq, lr=lr, **moments)
    update = np.divide(exp_avg, bias_correction1, out=s.b)
    np.multiply(update, lr, out=update)
    if rect is not None:
        # (bias_correction2 ** 0.5) / tensor is PyTorch's __rtruediv__: reciprocal, then multiply
        adaptive_lr = np.sqrt(exp_avg_sq, out=s.c)
        np.add(adaptive_lr, eps, out=adaptive_lr)
        np.reciprocal(adaptive_lr, out=adaptive_lr)
        np.multiply(adaptive_lr, bias_correction2 ** 0.5, out=adaptive_lr)
        np.multiply(update, adaptive_lr, out=update)
        np.multiply(update, rect, out=update)
    np.subtract(param, update, out=param)


class RAdam(_ElementwiseOptimizer):
    _group_defaults = dict(foreach=None, maximize=False, differentiable=False,
                           decoupled_weight_decay=False, capturable=False)
    _scalar_state = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group, params, grads, has_sparse_grad):
        state = self._state_lists(params, "exp_avg", "exp_avg_sq")
        beta1, beta2 = group["betas"]
        radam(params, grads, state["exp_avg"], state["exp_avg_sq"], state["step"],
              decoupled_weight_decay=group["decoupled_weight_decay"], foreach=group["foreach"],
              differentiable=group["differentiable"], capturable=group["capturable"],
              maximize=group["maximize"], beta1=beta1, beta2=beta2, lr=group["lr"],
              weight_decay=group["weight_decay"], eps=group["eps"])


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps):
    """Functional RAdam: one step on `params` and their state. See `RAdam`."""
    I.check_state_steps(state_steps)
    kind = I.implementation(params, foreach, differentiable=differentiable)
    I.check(kind, params, differentiable=differentiable, capturable=capturable)
    hyper = dict(lr=_get_value(_to_scalar(lr)), beta1=beta1, beta2=beta2, eps=eps,
                 weight_decay=weight_decay, decoupled_weight_decay=decoupled_weight_decay,
                 maximize=maximize)
    # the length of the approximated simple moving average; rectify once it exceeds 5
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        bias_correction2 = 1 - beta2 ** step
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        rect = None
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        I.update(_radam_update, param, grads[i], (exp_avgs[i], exp_avg_sqs[i]), dict(
            hyper, bias_correction1=1 - beta1 ** step, bias_correction2=bias_correction2,
            rect=rect))
