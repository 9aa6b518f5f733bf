"""optim.Adafactor: Adam's second moment kept factored, as a row and a column vector per matrix.

PyTorch's update, per parameter at step t (g = grad, or -grad when maximizing; eps1 defaults to
the dtype's machine epsilon):

    beta2_t = 1 - t^beta2_decay            rho = min(lr, 1/sqrt(t))
    alpha = max(eps2, RMS(p)) * rho        p = p * (1 - lr * wd)
    matrix (factored over the last two dims):
        R = lerp(R, mean(g^2, -1), 1 - beta2_t)      C = lerp(C, mean(g^2, -2), 1 - beta2_t)
        V = R @ C / max(mean(R, -2), eps1)
    vector:  V = lerp(V, g^2, 1 - beta2_t)
    u = g / sqrt(max(V, eps1^2))           p = p - alpha / max(1, RMS(u) / d) * u

The state holds `row_var`/`col_var` (or `variance` for a vector) and a 0-d `step`, with
PyTorch's names, so state dicts move between the two. The update is written with ember ops.
"""
from .._core.tensor import Tensor
from .._core.type_info import finfo
from .optimizer import Optimizer, _scalar_tensor, _to_scalar, _zeros_like

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    _group_defaults = dict(foreach=None)
    _scalar_state = ("step",)  # a state dict may carry `step` as a Python number

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _state(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0)
            if p.grad.dim() > 1:
                row, col = list(p.grad.shape), list(p.grad.shape)
                row[-1], col[-2] = 1, 1
                state["row_var"] = p.grad.new_zeros(row)
                state["col_var"] = p.grad.new_zeros(col)
            else:
                state["variance"] = _zeros_like(p)
        return state

    def step(self, closure=None):
        """Perform a single optimization step. closure: re-evaluates the model, returns loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            eps1, eps2 = group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if p.grad.is_sparse:
                    raise RuntimeError("Adafactor does not support sparse gradients")
                state = self._state(p)
                self._update(p, state, lr, finfo(p.dtype).eps if eps1 is None else eps1, eps2,
                             group)
        return loss

    @staticmethod
    def _update(p, state, lr, eps1, eps2, group):
        grad = -p.grad if group["maximize"] else p.grad
        step_t = state["step"]
        step_t += 1
        t = step_t.item()
        one_minus_beta2_t = t ** group["beta2_decay"]
        rho = min(lr, 1 / (t ** 0.5))
        alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            # the mean of g*g along a dim, as PyTorch computes it (a norm squared, divided)
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)),
                          one_minus_beta2_t)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)),
                          one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
        p.add_(update, alpha=-alpha / denom)
