"""optim.RMSprop: divide the gradient by a running root mean square of recent gradients.

PyTorch's update, per parameter (g = grad, or -grad when maximizing):

    g = g + wd * p
    v = alpha * v + (1 - alpha) * g^2                     square_avg
    avg = sqrt(v) + eps,  or, centered:
        m = lerp(m, g, 1 - alpha);  avg = sqrt(v - m^2) + eps      grad_avg
    b = momentum * b + g / avg;  p = p - lr * b           with momentum
    p = p - lr * g / avg                                  without
"""
import numpy as np

from . import _foreach as F
from . import _implementations as I
from .optimizer import (_ElementwiseOptimizer, _check_hyperparameters, _get_value, _increment,
                        _to_scalar)

__all__ = ["RMSprop", "rmsprop"]


def _rmsprop_update(s, param, grad, square_avg, *buffers, lr, alpha, eps, weight_decay,
                    momentum, centered, maximize):
    # after square_avg come momentum_buffer (with momentum) and grad_avg (when centered)
    buf = buffers[0] if momentum > 0 else None
    grad_avg = buffers[-1] if centered else None
    g = F.decayed_grad(s, param, grad, maximize, weight_decay)
    np.multiply(square_avg, alpha, out=square_avg)
    F.addcmul_(square_avg, g, g, 1 - alpha, s.b)
    if centered:
        F.lerp_(grad_avg, g, 1 - alpha, s.b)
        np.copyto(s.b, square_avg)
        avg = s.b
        F.addcmul_(avg, grad_avg, grad_avg, -1, s.c)
        np.sqrt(avg, out=avg)
    else:
        avg = np.sqrt(square_avg, out=s.b)
    np.add(avg, eps, out=avg)
    if momentum > 0:
        np.multiply(buf, momentum, out=buf)
        F.addcdiv_(buf, g, avg, 1, s.c)
        F.add(param, buf, -lr, param, s.c)
    else:
        F.addcdiv_(param, g, avg, -lr, s.c)


class RMSprop(_ElementwiseOptimizer):
    _group_defaults = dict(momentum=0, centered=False, foreach=None, maximize=False,
                           differentiable=False, capturable=False)
    _scalar_state = ("step",)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_hyperparameters(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                               alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _step_group(self, group, params, grads, has_sparse_grad):
        momentum, centered = group["momentum"], group["centered"]
        names = ("square_avg",) + ("momentum_buffer",) * (momentum > 0) + ("grad_avg",) * centered
        state = self._state_lists(params, *names)
        rmsprop(params, grads, state["square_avg"], state.get("grad_avg", []),
                state.get("momentum_buffer", []), state["step"], foreach=group["foreach"],
                maximize=group["maximize"], differentiable=group["differentiable"],
                capturable=group["capturable"], lr=group["lr"], alpha=group["alpha"],
                eps=group["eps"], weight_decay=group["weight_decay"], momentum=momentum,
                centered=centered)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    """Functional RMSprop: one step on `params` and their state (`grad_avgs` are read when
    centered, `momentum_buffer_list` with a momentum). See `RMSprop`."""
    I.check_state_steps(state_steps)
    kind = I.implementation(params, foreach, differentiable=differentiable)
    I.check(kind, params, differentiable=differentiable, capturable=capturable)
    hyper = dict(lr=_get_value(_to_scalar(lr)), alpha=alpha, eps=eps, weight_decay=weight_decay,
                 momentum=momentum, centered=centered, maximize=maximize)
    for i, param in enumerate(params):
        _increment(state_steps[i])
        states = ((square_avgs[i],) + ((momentum_buffer_list[i],) if momentum > 0 else ())
                  + ((grad_avgs[i],) if centered else ()))
        I.update(_rmsprop_update, param, grads[i], states, hyper)
