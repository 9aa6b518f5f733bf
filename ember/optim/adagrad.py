"""optim.Adagrad: per-coordinate learning rates from the running sum of squared gradients.

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    g = g + wd * p
    clr = lr / (1 + (t - 1) * lr_decay)
    sum = sum + g^2
    p = p - clr * g / (sqrt(sum) + eps)
"""
import numpy as np

from . import _foreach as F
from .optimizer import (_ElementwiseOptimizer, _check_fused, _check_hyperparameters, _full_like,
                        _increment, _lr, _scalar_tensor, _sparse_like)

__all__ = ["Adagrad"]


def _adagrad_update(s, param, grad, state_sum, *, weight_decay, eps, maximize, clr):
    g = F.decayed_grad(s, param, grad, maximize, weight_decay)
    F.addcmul_(state_sum, g, g, 1, s.b)
    std = np.sqrt(state_sum, out=s.b)
    np.add(std, eps, out=std)
    F.addcdiv_(param, g, std, -clr, s.c)


class Adagrad(_ElementwiseOptimizer):
    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, fused=None)
    _scalar_state = ("step",)
    _update = staticmethod(_adagrad_update)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_hyperparameters(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                               initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        # Unlike the other optimizers, Adagrad creates its state up front.
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0)
            init = self.defaults["initial_accumulator_value"]
            state["sum"] = _full_like(p, complex(init, init) if p.is_complex() else init)
        return state

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _check_sparse(self, group):
        if group["fused"]:
            raise RuntimeError("`fused` does not support sparse grad or complex param")

    def _sparse_update(self, p, group):
        """PyTorch's update for a sparse gradient (an nn.Embedding(sparse=True)'s), on the rows
        it stores: sum += g^2 there, then p -= clr * g / (sqrt(sum) + eps) there."""
        state = self._init_state(p)
        step = _increment(state["step"])
        grad = -p.grad if group["maximize"] else p.grad
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        clr = _lr(group) / (1 + (step - 1) * group["lr_decay"])
        grad = grad.coalesce()  # the update is not linear in g: one entry per row
        values = grad._values()
        state_sum = state["sum"]
        state_sum.add_(_sparse_like(grad, values.pow(2)))
        std = state_sum.sparse_mask(grad)._values().sqrt().add_(group["eps"])
        p.add_(_sparse_like(grad, values / std), alpha=-clr)

    def _prepare(self, p, group):
        state = self._init_state(p)
        step = _increment(state["step"])
        return (state["sum"],), dict(weight_decay=group["weight_decay"], eps=group["eps"],
                                     maximize=group["maximize"],
                                     clr=_lr(group) / (1 + (step - 1) * group["lr_decay"]))
