"""nn.functional: the functional forms of layers and losses, with PyTorch's signatures.

Each function turns PyTorch's calling conventions (an int or a tuple for a size, padding='same',
unbatched inputs, string modes) into calls of ops with explicit arguments. Where PyTorch has a
dedicated op (convolution, pooling, batch norm, embedding, padding) the function calls it; the
others are written here from differentiable ops, as PyTorch's own composite functions are.
"""
import math
import warnings

import numpy as np

from .. import _python_bindings as E
from .. import _dtype as D
from .._dispatcher import lookup as _lookup
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

_linear = _lookup("linear")
_relu = _lookup("relu")
_relu_ = _lookup("relu_")
_nll_loss = _lookup("nll_loss")
_mse_loss = _lookup("mse_loss")
_gelu = _lookup("gelu")
_silu = _lookup("silu")
_softplus = _lookup("softplus")

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _reduction_name(size_average, reduce, reduction):
    """The reduction string after PyTorch's legacy size_average/reduce arguments."""
    code = _reduction(reduction, size_average, reduce)
    return {0: "none", 1: "mean", 2: "sum"}[code]


def linear(input, weight, bias=None):
    return _linear(input, weight, bias)


def relu(input, inplace=False):
    return _relu_(input) if inplace else _relu(input)


def gelu(input, approximate="none"):
    return _gelu(input, approximate)


def silu(input, inplace=False):
    return input.copy_(_silu(input)) if inplace else _silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _softplus(input, beta, threshold)


def sigmoid(input):
    return E.sigmoid(input)


def tanh(input):
    return E.tanh(input)


softmax = E.softmax
log_softmax = E.log_softmax


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _nll_loss(input, target, weight, _reduction(reduction, size_average, reduce),
                     ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    r = _reduction(reduction, size_average, reduce)
    class_dim = 1 if input.dim() > 1 else 0
    logp = E.log_softmax(input, class_dim)
    if target.dtype.is_floating_point:
        # class probabilities as targets
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / input.shape[class_dim]
        w = weight.reshape([-1] + [1] * (input.dim() - class_dim - 1)) if weight is not None \
            else 1
        loss = -(logp * target * w).sum(class_dim)
        if r == 1:
            return loss.sum() / (input.numel() // input.shape[class_dim])
        return loss.sum() if r == 2 else loss
    nll = _nll_loss(logp, target, weight, r, ignore_index)
    if label_smoothing <= 0:
        return nll
    n_classes = input.shape[class_dim]
    w = weight.reshape([-1] + [1] * (input.dim() - class_dim - 1)) if weight is not None else 1
    smooth = -(logp * w).sum(class_dim)
    valid = target != ignore_index
    smooth = E.where(valid, smooth, smooth * 0)
    if r == 1:
        if weight is not None:
            denom = weight.index_select(0, E.where(valid, target, target * 0).reshape(-1))
            denom = E.where(valid.reshape(-1), denom, denom * 0).sum()
        else:
            denom = valid.sum()
        smooth = smooth.sum() / denom
    elif r == 2:
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + label_smoothing / n_classes * smooth


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if input.shape != target.shape:
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=2)
    return _mse_loss(input, target, _reduction(reduction, size_average, reduce))
