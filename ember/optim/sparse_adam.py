"""optim.SparseAdam: Adam on the rows a sparse gradient stores (nn.Embedding(sparse=True)'s).

PyTorch's update, per parameter at step t, on the coordinates of the coalesced sparse gradient g
only (every other entry of the parameter and of both moments stays as it is):

    m = m + (1 - beta1) * (g - m)
    v = v + (1 - beta2) * (g^2 - v)
    p = p - lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps)

The parameters are dense and the gradients sparse: a dense gradient is refused (use Adam), as
are sparse or complex parameters. `step` is kept as a Python int, as PyTorch keeps it.
"""
from .._core.tensor import Tensor
from . import _functional as F
from .optimizer import Optimizer, _lr, _zeros_like

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
            states = []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                state["step"] += 1
                states.append(state)
            beta1, beta2 = group["betas"]
            F.sparse_adam(params, [p.grad for p in params], [s["exp_avg"] for s in states],
                          [s["exp_avg_sq"] for s in states], [s["step"] for s in states],
                          eps=group["eps"], beta1=beta1, beta2=beta2, lr=_lr(group),
                          maximize=group.get("maximize", False))
        return loss
