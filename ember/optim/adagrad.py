"""optim.Adagrad: per-coordinate learning rates from the running sum of squared gradients.

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    g = g + wd * p
    clr = lr / (1 + (t - 1) * lr_decay)
    sum = sum + g^2
    p = p - clr * g / (sqrt(sum) + eps)
"""
import numpy as np

from . import _foreach as F
from . import _implementations as I
from .optimizer import (_ElementwiseOptimizer, _check_fused, _check_hyperparameters, _full_like,
                        _get_value, _increment, _scalar_tensor, _to_scalar)

__all__ = ["Adagrad", "adagrad"]


def _adagrad_update(s, param, grad, state_sum, *, weight_decay, eps, maximize, clr):
    g = F.decayed_grad(s, param, grad, maximize, weight_decay)
    F.addcmul_(state_sum, g, g, 1, s.b)
    std = np.sqrt(state_sum, out=s.b)
    np.add(std, eps, out=std)
    F.addcdiv_(param, g, std, -clr, s.c)


class Adagrad(_ElementwiseOptimizer):
    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, fused=None)
    _scalar_state = ("step",)

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

    _takes_sparse_grads = True

    def _step_group(self, group, params, grads, has_sparse_grad):
        states = [self._init_state(p) for p in params]
        adagrad(params, grads, [state["sum"] for state in states],
                [state["step"] for state in states], fused=group["fused"], **self._amp_args(),
                has_sparse_grad=has_sparse_grad, foreach=group["foreach"],
                differentiable=group["differentiable"],
                has_complex=any(p.is_complex() for p in params), lr=group["lr"],
                weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                eps=group["eps"], maximize=group["maximize"])


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr,
            weight_decay, lr_decay, eps, maximize):
    """Functional Adagrad: one step on `params`, their sums and step counts. See `Adagrad`."""
    I.check_state_steps(state_steps)
    kind = I.implementation(params, foreach, fused, differentiable)
    if kind == "fused" and params and (has_sparse_grad or has_complex):
        raise RuntimeError("`fused` does not support sparse grad or complex param")
    I.check(kind, params, differentiable=differentiable, grad_scale=grad_scale,
            found_inf=found_inf, fused_name="adagrad")
    if kind == "fused" and not I.unscale(grads, grad_scale, found_inf):
        return
    lr = _get_value(_to_scalar(lr))
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step = _increment(step_t)
        clr = lr / (1 + (step - 1) * lr_decay)
        if grad.is_sparse:
            _sparse_update(param, grad, state_sum, weight_decay=weight_decay, eps=eps,
                           maximize=maximize, clr=clr)
        else:
            I.update(_adagrad_update, param, grad, (state_sum,), dict(
                weight_decay=weight_decay, eps=eps, maximize=maximize, clr=clr))


def _make_sparse(grad, grad_indices, values):
    """A sparse tensor of `grad`'s size with these indices and values."""
    from .._bindings.sparse import sparse_coo_tensor
    return sparse_coo_tensor(grad_indices, values, grad.size())


def _sparse_update(param, grad, state_sum, *, weight_decay, eps, maximize, clr):
    """PyTorch's update for a sparse gradient (an nn.Embedding(sparse=True)'s), on the rows it
    stores: sum += g^2 there, then p -= clr * g / (sqrt(sum) + eps) there."""
    grad = -grad if maximize else grad
    if weight_decay != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    grad = grad.coalesce()  # the update is not linear in g: one entry per row
    indices, values = grad._indices(), grad._values()
    state_sum.add_(_make_sparse(grad, indices, values.pow(2)))
    std = state_sum.sparse_mask(grad)._values().sqrt_().add_(eps)
    param.add_(_make_sparse(grad, indices, values / std), alpha=-clr)
