"""Derivatives of the reductions and scans: sums, means, extremes, statistics, norms,
cumulative ops."""
import math


import numpy as np

from ..variable_type import derivative, not_differentiable
from ..._aten.elementwise import float_limits
from ... import _refs as E
from ..._core import dtype as D
from ._common import _aten, _conj, _unsqueeze_dims, _masked


# ---- reductions
derivative("sum.dim_IntList", {
    # sum() (SumBackward0): the 0-dim gradient expands as it is, as PyTorch's formula does
    "self": lambda grad, self_shape, dim, keepdim: (grad if dim is None else _unsqueeze_dims(
        grad, self_shape, dim, keepdim)).expand(self_shape)},
    node_name=lambda dim: "SumBackward0" if dim is None else "SumBackward1")


def _mean_grad(grad, self_shape, dim, keepdim):
    n = 1
    dims = range(len(self_shape)) if dim is None or len(dim) == 0 else dim
    for d in dims:
        n *= self_shape[d] if self_shape else 1
    return _unsqueeze_dims(grad, self_shape, dim, keepdim).expand(self_shape) / max(n, 1) \
        if n else _unsqueeze_dims(grad, self_shape, dim, keepdim).expand(self_shape) / 0.0


derivative("mean.dim", {"self": _mean_grad},
           node_name=lambda dim: "MeanBackward0" if dim is None else "MeanBackward1")


def _prod_grad(grad, self, result, dim, keepdim):
    """d prod / d x_i is the product of the other elements: result / x_i when no element is
    zero, else computed directly (a zero makes result / x_i 0/0)."""
    if self.dim() == 0:
        return grad
    if dim is None:
        return _prod_grad(grad, self.reshape(-1), result, 0, False).reshape(self.shape)
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    if not (self == 0).any():
        return g * _conj(_unsqueeze_dims(result, self.shape, dim, keepdim) / self)
    return g * _conj(_prod_of_others(self, dim))


def _prod_of_others(x, dim):
    """For every i along dim, the product of the other elements: row i of an n x n matrix of
    copies of x, with the diagonal set to 1, reduced by prod (exact when x has zeros)."""
    n = x.shape[dim]
    xs = x.movedim(dim, -1)
    rows = xs.unsqueeze(-2).expand(*xs.shape[:-1], n, n)
    diagonal = E.eye(n, dtype=D.bool, device=x.device)
    return E.where(diagonal, 1, rows).prod(-1).movedim(-1, dim)


derivative("prod.dim_int", {"self": _prod_grad},
           node_name=lambda dim: "ProdBackward0" if dim is None else "ProdBackward1")


def _amax_grad(grad, self, result, dim, keepdim):
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    r = _unsqueeze_dims(result, self.shape, dim, keepdim)
    mask = (self == r)
    count = mask.sum(dim=dim if dim else None, keepdim=True) if dim else mask.sum()
    return (g / count) * mask  # multiplied, as PyTorch's: a NaN gradient reaches every element


derivative("amax", {"self": _amax_grad})
derivative("amin", {"self": _amax_grad})
derivative("max", {"self": lambda grad, self, result: _evenly_distribute(grad, self, result)},
           node_name="MaxBackward1")
derivative("min", {"self": lambda grad, self, result: _evenly_distribute(grad, self, result)},
           node_name="MinBackward1")


def _value_index_grad(grads, self, dim, keepdim, result1):
    g = grads[0]
    idx = result1
    if self.dim() == 0:
        return g
    if not keepdim:
        g = g.unsqueeze(dim)
        idx = idx.unsqueeze(dim)
    return _aten.scatter_add(E.zeros_like(self, dtype=g.dtype), dim, idx, g)


derivative("max.dim", {"self": _value_index_grad}, node_name="MaxBackward0",
           output_differentiability=[True, False])
derivative("min.dim", {"self": _value_index_grad}, node_name="MinBackward0",
           output_differentiability=[True, False])


def _var_grad(grad, self, dim, correction, keepdim):
    """2 / (N - correction) * grad * (x - mean). With no degrees of freedom left the forward
    divided by 0: the gradient is inf, or nan where x == mean (inf * 0)."""
    c = 1 if correction is None else correction
    if self.dim() == 0 or not dim:
        dof = self.numel() - c
        if dof <= 0:
            return grad * E.where(self == self.mean(), math.nan, math.inf)
        return (2.0 / dof) * grad * (self - self.mean())
    n = 1
    for d in dim:
        n *= self.shape[d]
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    scale = 2.0 / (n - c) if n != c else math.inf
    return scale * g * (self - self.mean(dim, keepdim=True))


def _std_grad(grad, self, result, dim, correction, keepdim):
    """The variance's gradient scaled by 1 / (2 std); 0 where std is 0 (not 0 / 0)."""
    grad_var = (grad / (result * 2)).masked_fill(result == 0, 0)
    return _var_grad(grad_var, self, dim, correction, keepdim)


derivative("var.correction", {"self": _var_grad}, node_name="VarBackward0")


def _var_mean_grad(grads, self, dim, correction, keepdim):
    """Each result's gradient, added (either may be undefined)."""
    gvar, gmean = grads
    out = None
    if gvar is not None:
        out = _var_grad(gvar, self, dim, correction, keepdim)
    if gmean is not None:
        if self.dim() == 0:
            g = gmean.expand(self.shape)
        else:
            n = self.numel() if not dim else math.prod(self.shape[d] for d in dim)
            g = _unsqueeze_dims(gmean, self.shape, dim, keepdim).expand(self.shape) / n
        out = g if out is None else out + g
    return out


derivative("var_mean.correction", {"self": _var_mean_grad})
derivative("std.correction", {"self": _std_grad}, node_name="StdBackward0")
derivative("logsumexp", {"self": lambda grad, self, result, dim, keepdim:
                         _unsqueeze_dims(grad, self.shape, dim, keepdim) *
                         _conj((self - _unsqueeze_dims(result, self.shape, dim, keepdim)).exp())})

# ---- norms, medians, nan-reductions, scans


def _vector_norm_grad(grad, self, result, ord, dim, keepdim):
    """PyTorch's norm_backward, written with differentiable ops (sgn: z/|z| for a complex
    input, sign for a real one)."""
    g = _unsqueeze_dims(grad, self.shape, dim, keepdim)
    norm = _unsqueeze_dims(result, self.shape, dim, keepdim)
    p = float(ord)
    if p == 0:  # no gradient at all (PyTorch's formula gives an undefined tensor)
        return None
    if p == 1:
        return self.sgn() * g
    if p == 2:
        return g * E.where(norm == 0, 0.0, self / norm)
    if math.isinf(p):
        mask = (self.abs() == norm) | self.isnan()
        count = mask.sum(dim=dim, keepdim=True) if dim else mask.sum()
        return self.sgn() * (g / count) * mask
    if p < 1:
        scaled = self.sgn() * E.where(self == 0, 0.0, self.abs().pow(p - 1))
        return scaled * g * norm.pow(1 - p)
    scaled = self.sgn() * self.abs().pow(p - 1) if p < 2 else self * self.abs().pow(p - 2)
    return scaled * E.where(norm == 0, 0.0, g / norm.pow(p - 1))


derivative("linalg_vector_norm", {"self": _vector_norm_grad})
derivative("nansum", {"self": lambda grad, self, dim, keepdim: E.where(
    self.isnan(), 0.0, _unsqueeze_dims(grad, self.shape, dim, keepdim).expand(self.shape))})


def _evenly_distribute(grad, self, result):
    """max(), min(), median() and nanmedian(): the gradient shared by every element equal to
    the result (every NaN if the result is NaN), the others exactly 0 (PyTorch writes the
    shares into zeros; amax/amin multiply by the mask instead, so a NaN gradient spreads)."""
    mask = (self == result) | (self.isnan() & result.isnan())
    return _masked(mask, grad / mask.sum())


derivative("median", {"self": _evenly_distribute})
derivative("nanmedian", {"self": _evenly_distribute})
for _name, _node in (("median.dim", "MedianBackward1"), ("nanmedian.dim", "NanmedianBackward1"),
                     ("mode", "ModeBackward0"), ("kthvalue", "KthvalueBackward0")):
    derivative(_name, {"self": _value_index_grad}, node_name=_node,
               output_differentiability=[True, False])


def _aminmax_grad(grads, self, result, result1, dim, keepdim):
    dims = None if dim is None else [dim]
    return _amax_grad(grads[0], self, result, dims, keepdim) + \
        _amax_grad(grads[1], self, result1, dims, keepdim)


derivative("aminmax", {"self": _aminmax_grad})


def _reverse_cumsum(x, dim):
    return x.flip(dim).cumsum(dim).flip(dim)


def _cumsum_grad(grad, self, dim):
    return grad if self.dim() == 0 else _reverse_cumsum(grad, dim)


def _cumprod_grad(grad, self, result, dim):
    """d out_j / d x_i is the product of x_k over k <= j, k != i (for i <= j). Without zeros
    that is out_j / x_i, so the gradient is a reverse cumsum of grad * out, over x. With
    zeros, each row i of an n x n matrix holds x with x_i set to 1: its cumprod is the
    product for every j, summed against grad over j >= i."""
    if self.dim() == 0:
        return grad
    if not (self == 0).any():
        return _reverse_cumsum(grad * _conj(result), dim) / _conj(self)
    x, g = self.movedim(dim, -1), grad.movedim(dim, -1)
    n = x.shape[-1]
    rows = x.unsqueeze(-2).expand(*x.shape[:-1], n, n)
    partial = _conj(E.where(E.eye(n, dtype=D.bool), 1.0, rows).cumprod(-1))
    upper = E.ones(n, n, dtype=D.bool).triu()
    return (E.where(upper, partial, 0.0) * g.unsqueeze(-2)).sum(-1).movedim(-1, dim)


derivative("cumsum", {"self": _cumsum_grad})
derivative("cumprod", {"self": _cumprod_grad})


def _cummaxmin_grad(grads, self, dim, result1):
    if self.dim() == 0:
        return grads[0]
    return _aten.scatter_add(E.zeros_like(self, dtype=grads[0].dtype), dim, result1,
                                  grads[0])


derivative("cummax", {"self": _cummaxmin_grad}, output_differentiability=[True, False])
derivative("cummin", {"self": _cummaxmin_grad}, output_differentiability=[True, False])


def _logcumsumexp_grad(grad, self, result, dim):
    """sum over j >= i of grad_j exp(x_i - out_j), in log space for each sign of grad (the
    positive and negative parts may not cancel through exp of large numbers)."""
    if self.dim() == 0 or self.numel() == 0:
        return grad
    def reverse_logcumsumexp(x):
        return x.flip(dim).logcumsumexp(dim).flip(dim)
    if self.is_complex():  # no sign to split by: the complex log carries the phase
        return _conj((reverse_logcumsumexp(_conj(grad).log() - result) + self).exp())
    lowest = float_limits(grad.dtype)[0]  # log(0), kept finite
    log_abs = grad.abs().log() - result
    positive = E.where(grad > 0, log_abs, lowest)
    negative = E.where(grad < 0, log_abs, lowest)
    # lowest + x may round to -inf (exp gives the 0 it stands for): PyTorch does so silently
    with np.errstate(over="ignore"):
        return (reverse_logcumsumexp(positive) + self).exp() - \
            (reverse_logcumsumexp(negative) + self).exp()


derivative("logcumsumexp", {"self": _logcumsumexp_grad})
not_differentiable("argmax", "argmin", "all.dims", "any.dims", "hash_tensor")
