"""optim.Adadelta: step sizes from running averages of squared gradients and squared updates.

PyTorch's update, per parameter (g = grad, or -grad when maximizing):

    g = g + wd * p
    v = rho * v + (1 - rho) * g^2                         square_avg
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta^2                     acc_delta
    p = p - lr * delta
"""
import numpy as np

from . import _foreach as F
from . import _implementations as I
from .optimizer import (_ElementwiseOptimizer, _check_hyperparameters, _get_value, _increment,
                        _to_scalar)

__all__ = ["Adadelta", "adadelta"]


def _adadelta_update(s, param, grad, square_avg, acc_delta, *, lr, rho, eps, weight_decay,
                     maximize):
    g = F.decayed_grad(s, param, grad, maximize, weight_decay)
    np.multiply(square_avg, rho, out=square_avg)
    F.addcmul_(square_avg, g, g, 1 - rho, s.b)
    std = np.add(square_avg, eps, out=s.b)
    np.sqrt(std, out=std)
    delta = np.add(acc_delta, eps, out=s.c)
    np.sqrt(delta, out=delta)
    np.divide(delta, std, out=delta)
    np.multiply(delta, g, out=delta)
    np.multiply(acc_delta, rho, out=acc_delta)
    F.addcmul_(acc_delta, delta, delta, 1 - rho, s.b)
    F.add(param, delta, -lr, param, s.b)


class Adadelta(_ElementwiseOptimizer):
    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _scalar_state = ("step",)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_hyperparameters(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_hyperparameters(eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group, params, grads, has_sparse_grad):
        state = self._state_lists(params, "square_avg", "acc_delta")
        adadelta(params, grads, state["square_avg"], state["acc_delta"], state["step"],
                 capturable=group["capturable"], foreach=group["foreach"],
                 differentiable=group["differentiable"], lr=group["lr"], rho=group["rho"],
                 eps=group["eps"], weight_decay=group["weight_decay"],
                 maximize=group["maximize"])


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    """Functional Adadelta: one step on `params` and their state. See `Adadelta`."""
    I.check_state_steps(state_steps)
    kind = I.implementation(params, foreach, differentiable=differentiable)
    I.check(kind, params, differentiable=differentiable, capturable=capturable,
            supports_xla=False)
    hyper = dict(lr=_get_value(_to_scalar(lr)), rho=rho, eps=eps, weight_decay=weight_decay,
                 maximize=maximize)
    for i, param in enumerate(params):
        _increment(state_steps[i])
        I.update(_adadelta_update, param, grads[i], (square_avgs[i], acc_deltas[i]), hyper)
