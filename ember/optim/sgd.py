"""optim.SGD with momentum, dampening, nesterov, weight_decay and maximize (PyTorch's update)."""
from .optimizer import Optimizer
from ..autograd.grad_mode import no_grad


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        with no_grad():
            for g in self.param_groups:
                lr, mom, damp = g["lr"], g["momentum"], g["dampening"]
                wd, nesterov, maximize = g["weight_decay"], g["nesterov"], g["maximize"]
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    d_p = p.grad if not maximize else -p.grad
                    if wd != 0:
                        d_p = d_p.add(p, alpha=wd)
                    if mom != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = d_p.clone().detach()
                        else:
                            buf.mul_(mom).add_(d_p, alpha=1 - damp)
                        d_p = d_p.add(buf, alpha=mom) if nesterov else buf
                    p.add_(d_p, alpha=-lr)
        return loss
