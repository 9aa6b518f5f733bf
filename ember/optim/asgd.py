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
from . import _implementations as I
from .optimizer import (_ElementwiseOptimizer, _check_hyperparameters, _get_value, _increment,
                        _lr, _to_scalar)

__all__ = ["ASGD", "asgd"]


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

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_hyperparameters(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group, params, grads, has_sparse_grad):
        state = self._state_lists(params, "ax", eta=_lr(group), mu=1.0)
        asgd(params, grads, state["ax"], state["mu"], state["eta"], state["step"],
             foreach=group["foreach"], maximize=group["maximize"],
             differentiable=group["differentiable"], capturable=group["capturable"],
             lambd=group["lambd"], lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
             weight_decay=group["weight_decay"])


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay):
    """Functional ASGD: one step on `params`, their averages `axs`, and the 0-d `etas` and
    `mus` (this step uses their values; the next step's are written back). See `ASGD`."""
    kind = I.implementation(params, foreach, differentiable=differentiable)
    I.check(kind, params, differentiable=differentiable, capturable=capturable,
            capturable_tensors="params, mus, etas, and state_steps")
    lr = _get_value(_to_scalar(lr))
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        eta, mu = etas[i], mus[i]
        I.update(_asgd_update, param, grads[i], (axs[i],), dict(
            lambd=lambd, eta=float(eta._np), mu=float(mu._np), weight_decay=weight_decay,
            maximize=maximize))
        eta._np[()] = lr / ((1 + lambd * lr * step) ** alpha)
        mu._np[()] = 1 / max(1, step - t0)
        eta._bump_version()
        mu._bump_version()
