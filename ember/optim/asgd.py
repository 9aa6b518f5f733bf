"""optim.ASGD: averaged stochastic gradient descent (Polyak & Juditsky, 1992).

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    g = g + wd * p
    p = p * (1 - lambd * eta) - eta * g
    ax = ax + mu * (p - ax)        (ax = p while mu == 1)       the running average
    eta = lr / (1 + lambd * lr * t)^alpha;   mu = 1 / max(1, t - t0)

`eta` and `mu` are float32 0-d state tensors in PyTorch, so the update uses their rounded values.
"""
import numpy as np

from . import _foreach as F
from .optimizer import _ElementwiseOptimizer, _check_hyperparameters, _increment, _lr

__all__ = ["ASGD"]


def _asgd_update(s, param, grad, ax, *, lambd, eta, mu, weight_decay, maximize):
    g = F.decayed_grad(s, param, grad, maximize, weight_decay)
    np.multiply(param, 1 - lambd * eta, out=param)
    F.add(param, g, -eta, param, s.b)
    if mu != 1:
        diff = np.subtract(param, ax, out=s.b)
        np.multiply(diff, mu, out=diff)
        np.add(ax, diff, out=ax)
    else:
        np.copyto(ax, param)


class ASGD(_ElementwiseOptimizer):
    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _scalar_state = ("step", "eta", "mu")
    _update = staticmethod(_asgd_update)

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_hyperparameters(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _prepare(self, p, group):
        lr, lambd = _lr(group), group["lambd"]
        state = self._state_of(p, "ax", eta=lr, mu=1.0)
        step = _increment(state["step"])
        eta, mu = state["eta"], state["mu"]
        scalars = dict(lambd=lambd, eta=float(eta._np), mu=float(mu._np),
                       weight_decay=group["weight_decay"], maximize=group["maximize"])
        # this step uses the current eta and mu; the next one, these
        eta._np[()] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        mu._np[()] = 1 / max(1, step - group["t0"])
        eta._bump_version()
        mu._bump_version()
        return (state["ax"],), scalars
