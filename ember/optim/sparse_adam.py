"""optim.SparseAdam: Adam on the rows a sparse gradient stores (nn.Embedding(sparse=True)'s).

PyTorch's update, per parameter at step t, on the coordinates of the coalesced sparse gradient g
only (every other entry of the parameter and of both moments stays as it is):

    m = m + (1 - beta1) * (g - m)
    v = v + (1 - beta2) * (g^2 - v)
    p = p - lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps)

The parameters are dense and the gradients sparse: a dense gradient is refused (use Adam), as
are sparse or complex parameters. `step` is kept as a Python int, as PyTorch keeps it.
"""
import math

from .._core.tensor import Tensor
from .optimizer import Optimizer, _lr, _sparse_like, _zeros_like

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)

        sparse, complex_ = [], []
        for i, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([i, j])
                if p.is_complex():
                    complex_.append([i, j])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             "parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure=None):
        """Perform a single optimization step. closure: re-evaluates the model, returns loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if any(not p.grad.is_sparse for p in params):
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                state["step"] += 1
            for p in params:
                self._update(p, group, self.state[p])
        return loss

    @staticmethod
    def _update(p, group, state):
        beta1, beta2 = group["betas"]
        grad = -p.grad if group.get("maximize", False) else p.grad
        grad = grad.coalesce()  # the update is not linear in g: one entry per row
        values = grad._values()
        if values.numel() == 0:
            return
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        # old <- b * old + (1 - b) * new, written old += (1 - b) * (new - old) on g's rows
        old_avg = exp_avg.sparse_mask(grad)._values()
        avg_update = values.sub(old_avg).mul_(1 - beta1)
        exp_avg.add_(_sparse_like(grad, avg_update))
        old_avg_sq = exp_avg_sq.sparse_mask(grad)._values()
        avg_sq_update = values.pow(2).sub_(old_avg_sq).mul_(1 - beta2)
        exp_avg_sq.add_(_sparse_like(grad, avg_sq_update))

        # the new moments on g's rows, without a second sparse_mask
        numer = avg_update.add_(old_avg)
        denom = avg_sq_update.add_(old_avg_sq).sqrt_().add_(group["eps"])
        step = state["step"]
        step_size = _lr(group) * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        p.add_(_sparse_like(grad, -step_size * numer.div_(denom)))
