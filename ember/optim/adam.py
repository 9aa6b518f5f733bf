"""optim.Adam: adaptive moment estimation, with amsgrad and either weight-decay rule.

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing):

    p = p * (1 - lr * wd)            decoupled weight decay (AdamW), or else
    g = g + wd * p                   L2 weight decay, folded into the gradient
    m = lerp(m, g, 1 - beta1)        first moment
    v = beta2 * v + (1 - beta2) g^2  second moment  (amsgrad: v_max = max(v_max, v), used below)
    p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
"""
import numpy as np

from . import _foreach as F
from . import _implementations as I
from .._core.tensor import Tensor
from .optimizer import (_ElementwiseOptimizer, _check_fused, _check_hyperparameters, _get_value,
                        _increment, _to_scalar)

__all__ = ["Adam", "adam"]


def update_moments(s, param, grad, exp_avg, exp_avg_sq, *, lr, beta1, beta2, weight_decay,
                   decoupled_weight_decay, maximize):
    """The part of the update Adam, NAdam and RAdam share: weight decay (decoupled, on the
    parameter, or L2, on the gradient), then both moments. Returns the gradient used."""
    if decoupled_weight_decay and weight_decay != 0:
        np.multiply(param, 1 - lr * weight_decay, out=param)
    g = F.decayed_grad(s, param, grad, maximize, 0 if decoupled_weight_decay else weight_decay)
    F.lerp_(exp_avg, g, 1 - beta1, s.b)
    np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
    F.addcmul_(exp_avg_sq, g, g, 1 - beta2, s.b)
    return g


def _adam_update(s, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq=None, *, eps, step_size,
                 bias_correction2_sqrt, **moments):
    update_moments(s, param, grad, exp_avg, exp_avg_sq, **moments)
    if max_exp_avg_sq is not None:
        second = np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
    else:
        second = exp_avg_sq
    denom = np.sqrt(second, out=s.b)
    np.divide(denom, bias_correction2_sqrt, out=denom)
    np.add(denom, eps, out=denom)
    F.addcdiv_(param, exp_avg, denom, -step_size, s.c)


class Adam(_ElementwiseOptimizer):
    _group_defaults = dict(amsgrad=False, maximize=False, foreach=None, capturable=False,
                           differentiable=False, decoupled_weight_decay=False, fused=None)
    _scalar_state = ("step",)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        _check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if foreach and not capturable:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        defaults = dict(lr=lr, betas=tuple(map(_to_scalar, betas)), eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def _refuse_sparse(self):
        raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam "
                           "instead")

    def _step_group(self, group, params, grads, has_sparse_grad):
        amsgrad = group["amsgrad"]
        names = ("exp_avg", "exp_avg_sq") + ("max_exp_avg_sq",) * amsgrad
        state = self._state_lists(params, *names)
        beta1, beta2 = group["betas"]
        adam(params, grads, state["exp_avg"], state["exp_avg_sq"],
             state["max_exp_avg_sq"] if amsgrad else [], state["step"],
             foreach=group["foreach"], capturable=group["capturable"],
             differentiable=group["differentiable"], fused=group["fused"], **self._amp_args(),
             decoupled_weight_decay=group["decoupled_weight_decay"], amsgrad=amsgrad,
             beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
             eps=group["eps"], maximize=group["maximize"])


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    """Functional Adam (AdamW with decoupled_weight_decay=True): one step on `params` and their
    state, all updated in place, each step count included. See `Adam`."""
    kind = I.implementation(params, foreach, fused, differentiable)
    I.check_state_steps(state_steps)
    if kind == "foreach" and params and not capturable:
        if isinstance(lr, Tensor):
            raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                               "foreach=True")
        for name, beta in (("beta1", beta1), ("beta2", beta2)):
            if isinstance(beta, Tensor):
                raise ValueError(f"{name} as a Tensor is not supported for capturable=False "
                                 "and foreach=True")
    I.check(kind, params, differentiable=differentiable, grad_scale=grad_scale,
            found_inf=found_inf, fused_name="Adam", capturable=capturable)
    if kind == "fused" and not I.unscale(grads, grad_scale, found_inf):
        return
    lr, beta1, beta2 = (_get_value(_to_scalar(x)) for x in (lr, beta1, beta2))
    for i, param in enumerate(params):
        step = _increment(state_steps[i])
        states = (exp_avgs[i], exp_avg_sqs[i]) + ((max_exp_avg_sqs[i],) if amsgrad else ())
        I.update(_adam_update, param, grads[i], states, dict(
            lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
            step_size=lr / (1 - beta1 ** step), bias_correction2_sqrt=(1 - beta2 ** step) ** 0.5))
