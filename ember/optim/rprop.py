"""optim.Rprop: resilient backpropagation, per-weight step sizes driven by gradient signs.

PyTorch's update, per parameter (g = grad, or -grad when maximizing):

    s = sign(g * prev) mapped to etaplus (> 0), etaminus (< 0), 1 (== 0)
    step_size = clamp(step_size * s, step_size_min, step_size_max)
    g = 0 where s == etaminus          (the sign flipped: skip this step, forget the gradient)
    p = p - sign(g) * step_size;   prev = g
"""
import numpy as np

from . import _foreach as F
from . import _implementations as I
from .optimizer import (_ElementwiseOptimizer, _check_hyperparameters, _full_like, _increment,
                        _lr, _scalar_tensor, _zeros_like)

__all__ = ["Rprop", "rprop"]


def _rprop_update(s, param, grad, prev, step_size, *, etaminus, etaplus, step_size_min,
                  step_size_max, maximize):
    g = s.a                                  # a copy: entries are zeroed below
    if maximize:
        np.negative(grad, out=g)
    else:
        np.copyto(g, grad)
    sign = np.multiply(g, prev, out=s.b)
    np.sign(sign, out=sign)
    positive, negative, zero = sign > 0, sign < 0, sign == 0
    sign[positive] = etaplus
    sign[negative] = etaminus
    sign[zero] = 1
    np.multiply(step_size, sign, out=step_size)
    np.clip(step_size, step_size_min, step_size_max, out=step_size)
    g[sign == etaminus] = 0
    F.addcmul_(param, np.sign(g, out=s.b), step_size, -1, s.c)
    np.copyto(prev, g)


class Rprop(_ElementwiseOptimizer):
    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _scalar_state = ("step",)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_hyperparameters(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _step_group(self, group, params, grads, has_sparse_grad):
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                lr = _lr(group)
                state["step"] = _scalar_tensor(0.0)
                state["prev"] = _zeros_like(p)
                state["step_size"] = _full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)
        states = [self.state[p] for p in params]
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        rprop(params, grads, [s["prev"] for s in states], [s["step_size"] for s in states],
              [s["step"] for s in states], foreach=group["foreach"],
              capturable=group["capturable"], maximize=group["maximize"],
              differentiable=group["differentiable"], step_size_min=step_size_min,
              step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus)


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    """Functional Rprop: one step on `params`, their previous gradients `prevs` and their
    per-element `step_sizes`. See `Rprop`."""
    I.check_state_steps(state_steps)
    kind = I.implementation(params, foreach, differentiable=differentiable)
    I.check(kind, params, differentiable=differentiable, capturable=capturable)
    hyper = dict(etaminus=etaminus, etaplus=etaplus, step_size_min=step_size_min,
                 step_size_max=step_size_max, maximize=maximize)
    for i, param in enumerate(params):
        _increment(state_steps[i])
        I.update(_rprop_update, param, grads[i], (prevs[i], step_sizes[i]), hyper)
