"""nn.functional: the functional forms of layers and losses, with PyTorch's signatures.

Each function turns PyTorch's calling conventions (an int or a tuple for a size, padding='same',
unbatched inputs, string modes) into calls of ops with explicit arguments. Where PyTorch has a
dedicated op (convolution, pooling, batch norm, embedding, padding) the function calls it; the
others are written here from differentiable ops, as PyTorch's own composite functions are.
"""
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

from .. import _refs as E
from .._core.tensor import Tensor
from .._core import dtype as D
from .._bindings import arg_parser as _ap
from .._core.memory_format import contiguous_format, suggest_memory_format
from .._dispatch.dispatcher import impl as _impl, lookup as _lookup
from .._aten.nn_ops import check_cdist
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd import forward_ad as _forward_ad
from ..overrides import (handle_torch_function, has_torch_function,  # noqa: F401  (F's, as torch's)
                         has_torch_function_unary, has_torch_function_variadic)
from ._ctc import ctc_loss as _ctc
from ..backends import cudnn as _cudnn
from . import attention as _attention
from . import _reduction as _Reduction
from ._grouped_mm import (ScalingType, SwizzleType, grouped_mm, scaled_mm,  # noqa: F401
                          scaled_grouped_mm)

_linear = _lookup("linear")
_relu = _lookup("relu")
_relu_ = _lookup("relu_")
_nll_loss = _lookup("nll_loss")
_softmax_cross_entropy = _lookup("_softmax_cross_entropy")
_binary_cross_entropy = _lookup("binary_cross_entropy")
_binary_cross_entropy_with_logits = _lookup("binary_cross_entropy_with_logits")
_mse_loss = _lookup("mse_loss")
_gelu = _lookup("gelu")
_silu, _silu_ = _lookup("silu"), _lookup("silu_")
_softplus = _lookup("softplus")

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _legacy_reduction(size_average, reduce, stacklevel=4):
    """The reduction string for PyTorch's deprecated size_average/reduce arguments."""
    name = _Reduction.legacy_get_string(size_average, reduce, emit_warning=False)
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{name}' instead.", stacklevel=_user_stacklevel())
    return name


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=_user_stacklevel())
        reduction = "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def linear(input, weight, bias=None, *, out=None):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor) and (
            bias is None or isinstance(bias, Tensor))):
        _check_linear_args(input, weight, bias)
    if out is not None:
        return _nn_out("linear", linear, out, input, weight, bias)
    return _linear(input, weight, bias)


def _check_linear_args(input, weight, bias):
    """PyTorch's parser's TypeError for a non-tensor argument of linear."""
    for pos, (name, value) in enumerate((("input", input), ("weight", weight)), 1):
        _ap.as_tensor("linear", name, pos, value)
    if bias is not None:
        _ap.as_tensor("linear", "bias", 3, bias)


def _nn_out(name, fn, out, *args):
    """F.<fn>(..., out=): PyTorch's F.linear, F.gelu, F.avg_pool2d, ... are its torch._C._nn
    bindings, which take out= as every op with an `.out` overload does."""
    from .._C._nn import call_with_out
    return call_with_out(name, fn, args, {}, out)


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o], computed as
    one matrix product (input1 against weight laid out as (in1, out * in2)) and a reduction."""
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)]
    tensors += [("bias", bias)] if bias is not None else []
    if len({t.dtype for _, t in tensors}) > 1:
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{name}: {_scalar_name(t.dtype).lower()}" for name, t in tensors))
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} "
                           f"and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    out_features, in1, in2 = weight.shape
    for name, x, expected in (("input1", input1, in1), ("input2", input2, in2)):
        if x.shape[-1] != expected:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {expected}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_features):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {out_features}")
    if input1.is_complex() and is_grad_enabled() and any(
            t.requires_grad for t in (input1, input2, weight)):
        # PyTorch's bilinear runs _trilinear, which has no complex derivative
        raise RuntimeError("_trilinear does not support automatic differentiation for outputs "
                           "with complex dtype.")
    batch = list(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, 1, in2)
    left = x1.matmul(weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    out = (left.reshape(-1, out_features, in2) * x2).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(batch + [out_features])


def relu(input, inplace=False):
    return _relu_(input) if inplace else _relu(input)


def relu_(input):
    return _relu_(input)


def gelu(input, approximate="none", *, out=None):
    if out is not None:
        return _nn_out("gelu", gelu, out, input, approximate)
    return _gelu(input, approximate)


def silu(input, inplace=False):
    return _silu_(input) if inplace else _silu(input)


def softplus(input, beta=1.0, threshold=20.0, *, out=None):
    if out is not None:
        return _nn_out("softplus", softplus, out, input, beta, threshold)
    return _softplus(input, beta, threshold)


def sigmoid(input):
    return E.sigmoid(input)


def tanh(input):
    return E.tanh(input)


def _softmax_dim(name, input, dim, stacklevel):
    """PyTorch's legacy choice when no dim is given: 0 for 0-, 1- and 3-D input, else 1."""
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                      "call to include dim=X as an argument.", stacklevel=_user_stacklevel())
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return E.softmax(input, _softmax_dim("softmax", input, dim, _stacklevel), dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return E.log_softmax(input, _softmax_dim("log_softmax", input, dim, _stacklevel), dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1), drawn as -log(Exponential(1)) (the
    same draws as PyTorch for the same seed). hard: the one-hot of the argmax in the forward,
    the soft sample's gradient in the backward (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=_user_stacklevel())
    gumbels = -E.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = E.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---- losses -----------------------------------------------------------------------------------
# PyTorch writes most losses as composite ops; so does ember, from differentiable ops, and
# autograd supplies their gradients. Some are ops of their own with a backward kernel
# (_aten/loss.py, _aten/ctc.py): binary cross-entropy (its clamped logarithms are flat at 0
# and 1, where PyTorch's gradient stays finite), binary cross-entropy with logits, CTC (the
# forward-backward algorithm), and cross-entropy of (N, C) logits and class indices, fused for
# speed. Reductions: 0 none, 1 mean, 2 sum.
def _apply_reduction(loss, r):
    return loss.mean() if r == 1 else loss.sum() if r == 2 else loss


def _not_differentiable(fn_name, **tensors):
    """PyTorch refuses, rather than ignores, an argument its kernel has no derivative for."""
    for name, t in tensors.items():
        if t is not None and t.requires_grad and is_grad_enabled():
            raise RuntimeError(f"The function '{fn_name}' is not differentiable with respect to "
                               f"argument '{name}'. This input cannot have requires_grad True.")


def _warn_target_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=_user_stacklevel())


def _weighted(loss, weight, input, r, mean_by_weight=True):
    """The optional elementwise weight of l1/mse/huber loss; their "mean" divides by the summed
    weight (huber's by the element count)."""
    if weight is None:
        return _apply_reduction(loss, r)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if r == 1 and mean_by_weight:
        return loss.sum() / weight.sum()
    return _apply_reduction(loss, r)


def _check_nll_args(input, target, weight):
    """PyTorch's checks on nll_loss's arguments that the kernel does not make."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() >= 2 and (target.dim() == 0 or target.shape[0] != input.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.dim() else 0}).")
    if input.dim() <= 2 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.dim() > 2:
        expected = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_scalar_name(target.dtype)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found "
                           f"{_scalar_name(weight.dtype)}")
    _not_differentiable("nll_loss_forward", weight=weight)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    _check_nll_args(input, target, weight)
    return _nll_loss(input, target, weight, r, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    return _cross_entropy_loss(input, target, weight, _reduction(reduction, size_average, reduce),
                               ignore_index, label_smoothing)


_cross_entropy_loss = _lookup("cross_entropy_loss")


@_impl("cross_entropy_loss", "CompositeImplicitAutograd")
def _cross_entropy_loss_composite(input, target, weight, r, ignore_index, label_smoothing):
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 1 if input.dim() > 1 else 0
    n_classes = input.shape[class_dim] if input.dim() else 1
    w = weight.reshape([-1] + [1] * (input.dim() - class_dim - 1)) if weight is not None else 1
    if target.shape == input.shape:  # like PyTorch, the shape tells class probabilities apart
        if not target.is_floating_point():
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {_scalar_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        logp = E.log_softmax(input, class_dim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target * w
        if r == 0:
            return -prod.sum(class_dim)
        loss = -prod.sum()  # summed, then negated, as PyTorch does (the node is NegBackward0)
        return loss / (input.numel() // n_classes) if r == 1 else loss
    _check_nll_args(input, target, weight)
    if (input.dim() == 2 and target.dim() == 1 and input.dtype in (D.float32, D.float64)
            and input.device.type == "cpu"):
        return _softmax_cross_entropy(input, target, weight, r, ignore_index,
                                      label_smoothing)[0]
    logp = E.log_softmax(input, class_dim)
    nll = _nll_loss(logp, target, weight, r, ignore_index)
    if label_smoothing <= 0:
        return nll
    # the smoothed part: the (weighted) mean of -log p over all classes, for samples not ignored
    smooth = -(logp if weight is None else logp * w).sum(class_dim)
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


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target); linear_weight may
    have extra dims (num_classes, *out_features, in_features) for a K-dimensional loss."""
    if not 1 <= input.dim() <= 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                           f"respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    # `options` asks for PyTorch's batch-chunked computation, which only saves memory: ember
    # computes in one piece, and warns, as PyTorch does, where the chunked path cannot be taken
    if options is not None and (out_features or reduction not in ("mean", "sum", "none")
                                or label_smoothing != 0.0 or target.dtype is not D.int64):
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == "
            f"(). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
            f"linear_bias.shape={None if linear_bias is None else tuple(linear_bias.shape)}.",
            stacklevel=2)
    n_out = math.prod(out_features, start=num_classes)
    logits = linear(input, linear_weight.reshape(n_out, in_features),
                    None if linear_bias is None else linear_bias.reshape(n_out))
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight,
                         reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_target_size(input, target)
    r = _reduction(reduction, size_average, reduce)
    if weight is None:
        return _mse_loss(input, target, r)
    a, b = E.broadcast_tensors(input, target)
    return _weighted((a - b) ** 2, weight, input, r)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_target_size(input, target)
    r = _reduction(reduction, size_average, reduce)
    a, b = E.broadcast_tensors(input, target)
    if weight is not None:  # PyTorch weighs in Python, around no op
        return _weighted((a - b).abs(), weight, input, r)
    return _l1_loss(a, b, r)


_l1_loss = _lookup("l1_loss")


@_impl("l1_loss", "CompositeImplicitAutograd")
def _l1_loss_composite(input, target, r):
    return _apply_reduction((input - target).abs(), r)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_target_size(input, target)
    r = _reduction(reduction, size_average, reduce)
    a, b = E.broadcast_tensors(input, target)
    if beta == 0.0:
        return _l1_loss(a, b, r)
    return _smooth_l1_loss(a, b, r, beta)


_smooth_l1_loss = _lookup("smooth_l1_loss")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_target_size(input, target)
    r = _reduction(reduction)
    a, b = E.broadcast_tensors(input, target)
    if weight is None:
        return _huber_loss(a, b, r, delta)
    return _weighted(_huber_loss(a, b, 0, delta), weight, input, r, mean_by_weight=False)


_huber_loss = _lookup("huber_loss")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _not_differentiable("soft_margin_loss", target=target)
    return _soft_margin_loss(input, target, _reduction(reduction, size_average, reduce))


_soft_margin_loss = _lookup("soft_margin_loss")


def _check_broadcasts_to(input, *others):
    """PyTorch's kernel writes into a tensor of the input's shape: the others must broadcast
    to it."""
    for t in others:
        shape = input.shape if t is None else E.broadcast_shapes(input.shape, t.shape)
        if shape != input.shape:
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        weight = weight.expand(E.broadcast_shapes(target.shape, weight.shape))
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_scalar_name(target.dtype)} but expected "
                           f"{_scalar_name(input.dtype)}")
    _not_differentiable("binary_cross_entropy", weight=weight)
    return _binary_cross_entropy(input, target, weight, r)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    r = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    if not target.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_scalar_name(target.dtype)}")
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    _check_broadcasts_to(input, weight, pos_weight)
    return _binary_cross_entropy_with_logits(input, target, weight, pos_weight, r)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    batchmean = False
    if size_average is not None or reduce is not None:
        r = _reduction(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=_user_stacklevel())
        batchmean = reduction == "batchmean"
        r = 2 if batchmean else _reduction(reduction)
    out = _kl_div_op(input, target, r, log_target)
    return out / input.shape[0] if batchmean and input.dim() != 0 else out


_kl_div_op = _lookup("kl_div")


def _kl_div(input, target, reduction=0, *, log_target=False):
    """torch.kl_div: the pointwise KL divergence, reduced by code."""
    return _kl_div_op(input, target, reduction, log_target)


@_impl("kl_div", "CompositeImplicitAutograd")
def _kl_div_composite(input, target, reduction, log_target):
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if log_target:
        loss = E.exp(target) * (target - input)
    else:  # xlogy(target, target): 0 where the target is 0
        loss = E.where(target == 0, 0.0, target * E.log(target)) - target * input
    return _apply_reduction(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:  # no deprecated 'elementwise_mean' here, as in PyTorch
        raise ValueError(reduction + " is not a valid value for reduction")
    return _poisson_nll_loss(input, target, log_input, full, eps, _REDUCTIONS[reduction])


_poisson_nll_loss = _lookup("poisson_nll_loss")


@_impl("poisson_nll_loss", "CompositeImplicitAutograd")
def _poisson_nll_loss_composite(input, target, log_input, full, eps, r):
    loss = E.exp(input) - target * input if log_input else input - target * E.log(input + eps)
    if full:  # Stirling's approximation of log(target!), for targets above 1
        stirling = target * E.log(target) - target + 0.5 * E.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, r)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * E.ones_like(input)
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss(): var must be a Tensor or a float, not "
                        f"{type(var).__name__}")
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:  # one variance per sample: broadcast over the last dim
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():  # the clamp is not differentiated: the gradient reaches var unchanged
        var.clamp_(min=eps)
    loss = 0.5 * (E.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    # the functional checks the ranks; aten::margin_ranking_loss (torch.margin_ranking_loss)
    # broadcasts whatever it is given
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _margin_ranking_loss(input1, input2, target, margin,
                                _reduction(reduction, size_average, reduce))


_margin_ranking_loss = _lookup("margin_ranking_loss")


@_impl("margin_ranking_loss", "CompositeImplicitAutograd")
def _margin_ranking_loss_composite(input1, input2, target, margin, r):
    return _apply_reduction(E.clamp(-target * (input1 - input2) + margin, min=0), r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    return _hinge_embedding_loss(input, target, margin, _reduction(reduction, size_average, reduce))


_hinge_embedding_loss = _lookup("hinge_embedding_loss")


@_impl("hinge_embedding_loss", "CompositeImplicitAutograd")
def _hinge_embedding_loss_composite(input, target, margin, r):
    zeros = E.zeros_like(input)
    loss = (E.where(target != 1, E.clamp(margin - input, min=0), zeros)
            + E.where(target != -1, input, zeros))
    return _apply_reduction(loss, r)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    return _cosine_embedding_loss(input1, input2, target, margin,
                                  _reduction(reduction, size_average, reduce))


_cosine_embedding_loss = _lookup("cosine_embedding_loss")


@_impl("cosine_embedding_loss", "CompositeImplicitAutograd")
def _cosine_embedding_loss_composite(input1, input2, target, margin, r):
    dim = target.dim()
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    cos = prod / ((input1 * input1).sum(dim) + eps).mul((input2 * input2).sum(dim) + eps).sqrt()
    zeros = E.zeros_like(cos)
    loss = (E.where(target == 1, 1 - cos, zeros)
            + E.where(target == -1, E.clamp(cos - margin, min=0), zeros))
    return _apply_reduction(loss, r)


def _check_triplet_dims(anchor, positive, negative):
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.dim()}D, positive "
                           f"{positive.dim()}D, and negative {negative.dim()}D inputs")


def _triplet(dist_pos, dist_neg, dist_swap, margin, r):
    if dist_swap is not None:  # the positive may be the harder negative's anchor (Balntas 2016)
        dist_neg = E.minimum(dist_neg, dist_swap)
    return _apply_reduction(E.clamp(margin + dist_pos - dist_neg, min=0), r)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, r)


_triplet_margin_loss = _lookup("triplet_margin_loss")


@_impl("triplet_margin_loss", "CompositeImplicitAutograd")
def _triplet_margin_loss_composite(anchor, positive, negative, margin, p, eps, swap, r):
    _check_triplet_dims(anchor, positive, negative)
    swapped = pairwise_distance(positive, negative, p, eps) if swap else None
    return _triplet(pairwise_distance(anchor, positive, p, eps),
                    pairwise_distance(anchor, negative, p, eps), swapped, margin, r)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = pairwise_distance if distance_function is None else distance_function
    swapped = dist(positive, negative) if swap else None
    return _triplet(dist(anchor, positive), dist(anchor, negative), swapped, margin,
                    _REDUCTIONS[reduction])


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def _samples_by_class(input):
    """The (C,) or (N, C) input of the margin losses as (N, C) (a scalar is one class)."""
    if input.dim() > 2 or (input.dim() >= 1 and input.shape[-1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    return input.reshape(-1, input.shape[-1] if input.dim() else 1)


def _check_long(target):
    if target.dtype != D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_scalar_name(target.dtype)}")


def _check_margin_kernel(input, target, kernel):
    """After the shapes, PyTorch's margin-loss kernels take float and double inputs only, then
    read the target as int64."""
    if input.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_scalar_name(input.dtype)}'")
    _check_long(target)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _multi_margin_loss(input, target, p, margin, weight, r)


_multi_margin_loss = _lookup("multi_margin_loss")


@_impl("multi_margin_loss", "CompositeImplicitAutograd")
def _multi_margin_loss_composite(input, target, p, margin, weight, r):
    x = _samples_by_class(input)
    n, c = x.shape
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    _check_margin_kernel(input, target, "multi_margin_loss_cpu_kernel")
    t = target.reshape(-1)
    if n and (int(t.min()) < 0 or int(t.max()) >= c):
        raise RuntimeError("target out of range")
    _not_differentiable("multi_margin_loss", weight=weight)
    # max(0, margin - x[y] + x[j])^p for every class j but the target y, averaged over classes
    z = E.clamp(margin - x.gather(1, t.unsqueeze(1)) + x, min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t).unsqueeze(1)
    z = z.masked_fill(t.unsqueeze(1) == E.arange(c), 0)
    loss = z.sum(1) / c
    return _apply_reduction(loss if input.dim() == 2 else loss.reshape(target.shape), r)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _multilabel_margin_loss(input, target, _reduction(reduction, size_average, reduce))


_multilabel_margin_loss = _lookup("multilabel_margin_loss")


@_impl("multilabel_margin_loss", "CompositeImplicitAutograd")
def _multilabel_margin_loss_composite(input, target, r):
    x = _samples_by_class(input)
    n, c = x.shape
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _check_margin_kernel(input, target, "multilabel_margin_loss_forward_out_frame")
    t = target.numpy(force=True).reshape(n, c)
    if t.size and (t.min() < -1 or t.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    # a sample's labels are its target entries before the first -1 (repeats count again)
    listed = np.cumprod(t != -1, axis=1).astype(bool)
    labels = np.where(listed, t, 0)
    is_label = np.zeros((n, c), bool)
    is_label[np.nonzero(listed)[0], labels[listed]] = True
    loss = (x * 0).sum(1)
    for k in range(int(listed.sum(1).max()) if n else 0):
        # max(0, 1 - x[label] + x[j]) for the k-th label against every class j not a label
        mask = E.from_numpy((listed[:, k:k + 1] & ~is_label).astype(x.dtype._np))
        x_label = x.gather(1, E.from_numpy(labels[:, k:k + 1]))
        loss = loss + (E.clamp(1 - x_label + x, min=0) * mask).sum(1)
    loss = loss / c
    return _apply_reduction(loss if input.dim() == 2 else loss.reshape(()), r)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    return _torch_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                           _reduction(reduction), zero_infinity)


# The torch.* forms of the losses take the reduction as its code (0 none, 1 mean, 2 sum);
# called from Python, PyTorch's default for it is 0, not the schema's 1.
_REDUCTION_NAMES = ("none", "mean", "sum")


def _torch_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
                    zero_infinity=False):
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                zero_infinity)


def _torch_bce_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                            reduction=_REDUCTION_NAMES[reduction])


def _torch_poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _poisson_nll_loss(input, target, log_input, full, eps, reduction)


def _torch_cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _cosine_embedding_loss(input1, input2, target, margin, reduction)


def _torch_hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _hinge_embedding_loss(input, target, margin, reduction)


def _torch_margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _margin_ranking_loss(input1, input2, target, margin, reduction)


def _torch_triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6,
                               swap=False, reduction=0):
    return triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                               reduction=_REDUCTION_NAMES[reduction])


# ---- argument helpers -------------------------------------------------------------------------
def _ntuple(value, n, name="argument", what="convolution"):
    """An int or a sequence as n ints (PyTorch's expand_param_if_needed)."""
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return (int(value[0]),) * n
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                               f"values to match the {what} dimensions, but got {name}="
                               f"{list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _half_to_float(x):
    """float16/bfloat16 values computed in float32 (PyTorch's opmath), others as they are."""
    return x.float() if x.dtype in (D.float16, D.bfloat16) else x


def _vector_norm(x, p, dim, keepdim=False):
    """The p-norm over `dim`, with PyTorch's gradient convention: 0 where the norm is 0 (the
    `where` keeps the 1/norm of the derivative away from zero norms)."""
    if abs(p) == math.inf and x.numel() == 0 and x.shape[dim] == 0:   # (a 0-d x is one element)
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on the dimension "
                           f"{dim % x.dim()}because this dimension is empty and the operation "
                           f"does not have an identity")
    if x.is_complex():  # the norm of the moduli
        x = x.abs()
    if p == math.inf:
        return x.abs().amax(dim, keepdim)
    if p == -math.inf:
        return x.abs().amin(dim, keepdim)
    if p == 0:  # a count: its gradient is 0, but it is part of the graph like PyTorch's
        return (x != 0).sum(dim, keepdim=keepdim).to(x.dtype) + (x * 0).sum(dim, keepdim=keepdim)
    if p == 2:
        s = x * x
    elif p < 1:   # |x|^p has an infinite slope at 0: those elements get a 0 gradient
        a = x.abs()
        nonzero = a != 0
        s = E.where(nonzero, E.where(nonzero, a, 1.0).pow(p), 0.0)
    else:
        s = x.abs().pow(p)
    s = s.sum(dim, keepdim=keepdim)
    zero = s == 0
    safe = E.where(zero, 1.0, s)
    return E.where(zero, 0.0, safe.sqrt() if p == 2 else safe.pow(1.0 / p))


# ---- convolution ------------------------------------------------------------------------------
_convolution = _lookup("convolution")
_convolution_with_columns = _lookup("_convolution_with_columns")
_constant_pad_nd = _lookup("constant_pad_nd")


def _check_conv_input(input, nd, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    return input.dim() == nd + 2


def _same_padding(input, weight, stride, dilation, nd):
    """padding='same': d * (k - 1) zeros in total per dim, the odd one on the right. An odd
    total cannot be symmetric: the input is padded on the right first, as PyTorch does."""
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.dim() != input.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-"
                           f"dimensional weight{list(weight.shape)}, but got {input.dim()}-"
                           f"dimensional input of size {list(input.shape)} instead")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, extra = [], [0] * (2 * nd)
    for i in range(nd):
        total = dilation[i] * (weight.shape[2 + i] - 1)
        left.append(total // 2)
        extra[2 * (nd - 1 - i) + 1] = total - 2 * (total // 2)
    if any(extra):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require "
                      "a zero-padded copy of the input be created", stacklevel=_user_stacklevel())
        input = _constant_pad_nd(input, extra, 0)
    return input, tuple(left)


def _int_list(value, n, fn, name, pos):
    """An int[n] argument as PyTorch's Python binding passes it on: an int repeated n times, a
    sequence as its list (its length checked by the kernel); anything else (a float, a bool) is
    PyTorch's TypeError naming `fn`'s argument `name`."""
    if value.__class__ is int:
        return [value] * n
    if value.__class__ in (list, tuple) and all(v.__class__ is int for v in value):
        return list(value)
    return _ap.as_int_list(fn, name, pos, value, size=n)


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):
    fn = _CONV_NAMES[nd]
    stride, dilation = _int_list(stride, nd, fn, "stride", 4), _int_list(dilation, nd, fn,
                                                                        "dilation", 6)
    if isinstance(padding, str):
        return _conv_ops[nd][1](input, weight, bias, stride, padding, dilation, groups)
    return _conv_ops[nd][0](input, weight, bias, stride, _int_list(padding, nd, fn, "padding", 5),
                            dilation, groups)


_CONV_NAMES = {1: "conv1d", 2: "conv2d", 3: "conv3d"}


def _conv_composite(nd, name):
    """The kernel of aten.conv{nd}d and its `.padding` overload: an unbatched input as a batch
    of one, padding='same'/'valid' resolved, then aten.convolution."""
    def conv(input, weight, bias, stride, padding, dilation, groups):
        batched = _check_conv_input(input, nd, name)
        if not batched:
            input = input.unsqueeze(0)
        stride = _ntuple(stride, nd, "stride")
        dilation = _ntuple(dilation, nd, "dilation")
        if isinstance(padding, str):
            if padding == "valid":
                padding = (0,) * nd
            elif padding == "same":
                input, padding = _same_padding(input, weight, stride, dilation, nd)
            else:
                raise RuntimeError(f"Invalid padding string: '{padding}'")
        else:
            padding = _ntuple(padding, nd, "padding")
        # the weight gradient builds its columns again rather than keep the forward's
        # (Note [Keeping the forward's columns for the weight gradient] in _aten/conv.py)
        args = (list(stride), list(padding), list(dilation), False, [0] * nd, groups)
        if input.is_complex() and weight.dtype is input.dtype:
            out = _complex_convolution(input, weight, bias, args)
        else:
            out = _convolution(input, weight, bias, *args)
        return out if batched else out.squeeze(0)
    return conv


def _complex_convolution(input, weight, bias, args):
    """A complex convolution as three real ones (Gauss's trick, as PyTorch's): with
    a = conv(xr, Wr, br), b = conv(xi, Wi, 0) and c = conv(xr + xi, Wr + Wi, br + bi),
    conv(x, W, b) = (a - b) + i (c - a - b)."""
    x, w = input.resolve_conj(), weight.resolve_conj()
    xr, xi, wr, wi = x.real, x.imag, w.real, w.imag
    b = None if bias is None else bias.resolve_conj()
    real = _convolution(xr, wr, None if b is None else b.real, *args)
    imag_imag = _convolution(xi, wi, None, *args)
    mixed = _convolution(xr + xi, wr + wi, None if b is None else b.real + b.imag, *args)
    return E.view_as_complex(E.stack((real - imag_imag, mixed - real - imag_imag), -1))


_conv_ops = {}
for _nd in (1, 2, 3):
    _conv_ops[_nd] = (_lookup(f"conv{_nd}d"), _lookup(f"conv{_nd}d.padding"))
    _impl(f"conv{_nd}d", "CompositeImplicitAutograd")(_conv_composite(_nd, f"conv{_nd}d"))
    _impl(f"conv{_nd}d.padding", "CompositeImplicitAutograd")(
        _conv_composite(_nd, f"conv{_nd}d"))


def _slow_conv_composite(nd):
    """The kernel of aten.thnn_conv2d / aten.slow_conv3d, the undilated ungrouped convolutions
    of PyTorch's CPU fallback (torch._C._nn): the kernel size is an argument, and a 2-d weight
    is its (out, in * kernel) matrix."""
    def slow_conv(self, weight, kernel_size, bias, stride, padding):
        kernel_size, stride, padding = (
            [v] * nd if isinstance(v, int) else list(v) for v in (kernel_size, stride, padding))
        for arg, value in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
            if len(value) != nd:
                raise RuntimeError(f"2D {arg} expected" if nd == 2 else
                                   f"It is expected {arg} equals to {nd}, but got size "
                                   f"{len(value)}")
        if weight.numel() == 0 or weight.dim() not in (2, nd + 2):
            raise RuntimeError(f"non-empty 2D or {nd + 2}D weight tensor expected, but got: "
                               f"{list(weight.shape)}")
        if nd == 3:
            _slow_conv3d_shape_check(self, kernel_size, stride, padding)
        elif self.dim() != nd + 2:
            raise RuntimeError(f"Expected {nd + 2}D input tensor, but got: {list(self.shape)}")
        if weight.dim() == 2:
            weight = weight.reshape(weight.shape[0], -1, *kernel_size)
        return _convolution(self, weight, bias, stride, padding, [1] * nd, False, [0] * nd, 1)
    return slow_conv


def _slow_conv3d_shape_check(input, kernel, stride, padding):
    """PyTorch's slow_conv3d_shape_check on the sizes, in its order (a padding so large that
    the padded size would overflow int64 is a ValueError; so is a kernel whose height x width
    does)."""
    dims = " x ".join
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got: "
                           f"{dims(map(str, kernel))} (TxHxW)")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got: "
                           f"{dims(map(str, stride))} (TxHxW)")
    shape = tuple(input.shape)
    empty_batch = len(shape) == 5 and shape[0] == 0 and 0 not in shape[1:]
    if len(shape) != 5 or (input.numel() == 0 and not empty_batch):
        raise RuntimeError(f"non-empty 5D input tensor expected but got: {list(shape)}")
    for name, pad in (("height", padding[1]), ("width", padding[2]), ("depth", padding[0])):
        if pad > 1 << 61:
            raise ValueError(f"Padding {name} too large: pad_{name}={pad}")
    padded = [i + 2 * p for i, p in zip(shape[2:], padding)]
    if any(p < k for p, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: ({dims(map(str, padded))})."
                           f" Kernel size: ({dims(map(str, kernel))}). Kernel size can't be "
                           "greater than actual input size")
    out = [(p - k) // s + 1 for p, k, s in zip(padded, kernel, stride)]
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input size per channel: ({dims(map(str, shape[2:]))}). "
                           f"Calculated output size per channel: ({dims(map(str, out))}). "
                           "Output size is too small")
    if kernel[1] * kernel[2] >= 1 << 64:
        raise RuntimeError(f"Kernel height x width product is too large: kernel_height="
                           f"{kernel[1]}, kernel_width={kernel[2]}")


@_impl("_convolution_double_backward", "CompositeImplicitAutograd")
def _convolution_double_backward(ggI, ggW, ggb, gO, weight, self, stride, padding, dilation,
                                 transposed, output_padding, groups, output_mask):
    """The convolution's backward differentiated once more, from the gradients of its three
    results (ggI, ggW, ggb for grad_input, grad_weight, grad_bias; None for a zero one): the
    gradient of grad_output -- the convolution is bilinear, so conv(ggI, W) + conv(x, ggW) +
    ggb --, of the input (gO against ggW) and of the weight (gO against ggI). A result with
    nothing to come from is None (undefined); PyTorch's CPU build computes every result
    whatever output_mask says, and so does this."""
    args = (stride, padding, dilation, transposed, output_padding, groups)
    ggO = gI = gW = None
    if ggI is not None:
        ggO = _convolution(ggI, weight, None, *args)
        gW = _conv_backward_weight(gO, ggI, list(weight.shape), *args)
    if ggW is not None:
        term = _convolution(self, ggW, None, *args)
        ggO = term if ggO is None else ggO + term
        gI = _conv_backward_input(gO, ggW, list(self.shape), *args)
    if ggb is not None:
        term = ggb.reshape([1, -1] + [1] * (gO.dim() - 2)).expand(gO.shape)
        ggO = term.contiguous() if ggO is None else ggO + term
    return ggO, gI, gW


@_impl("convolution_backward", "CompositeImplicitAutograd")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """A convolution's gradients of its input, weight and bias from grad_output, each where
    output_mask asks for it (None, undefined, where not)."""
    args = (stride, padding, dilation, transposed, output_padding, groups)
    gI = _conv_backward_input(grad_output, weight, list(input.shape), *args) \
        if output_mask[0] else None
    gW = _conv_backward_weight(grad_output, input, list(weight.shape), *args) \
        if output_mask[1] else None
    gb = grad_output.sum([0] + list(range(2, grad_output.dim()))) if output_mask[2] else None
    return gI, gW, gb


_conv_backward_input = _lookup("_convolution_backward_input")
_conv_backward_weight = _lookup("_convolution_backward_weight")
_impl("thnn_conv2d", "CompositeImplicitAutograd")(_slow_conv_composite(2))
_impl("slow_conv3d", "CompositeImplicitAutograd")(_slow_conv_composite(3))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution of (time, batch, channels) sequences with a (kernel width, in, out)
    weight, `pad` steps of zeros at both ends of time (an op, as PyTorch's, so autocast runs
    it in lower precision)."""
    return _conv_tbc(input, weight, bias, pad)


_conv_tbc = _lookup("conv_tbc")


@_impl("conv_tbc", "CompositeImplicitAutograd")
def _conv_tbc_composite(input, weight, bias, pad):
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.numel() == 0:
        # no step, sample or channel: the bias alone, as PyTorch's kernel gives (conv1d would
        # refuse steps without elements, or drop the output channels with the input's); the
        # empty sums keep input and weight in the graph, with zero gradients
        length = input.shape[0] + 2 * pad - weight.shape[0] + 1
        nothing = input.sum() + weight[:0].sum()
        return bias.expand(length, input.shape[1], weight.shape[2]) + nothing
    # (T, B, C) -> (B, C, T) for conv1d, whose weight is (out, in, width); the bias is added
    # after, so that a width-0 kernel still gives it
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), padding=pad)
    return out.permute(2, 0, 1) + bias


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd,
                    name):
    batched = _check_conv_input(input, nd, name)
    if not batched:
        input = input.unsqueeze(0)
    args = (list(_ntuple(stride, nd, "stride")), list(_ntuple(padding, nd, "padding")),
            list(_ntuple(dilation, nd, "dilation")), True,
            list(_ntuple(output_padding, nd, "output_padding")), groups)
    if input.is_complex() and weight.dtype is input.dtype:
        out = _complex_convolution(input, weight, bias, args)
    else:
        out = _convolution(input, weight, bias, *args)
    return out if batched else out.squeeze(0)


# aten.conv_transpose1d / conv_transpose2d.input / conv_transpose3d.input: ops torch.export
# keeps whole (CompositeImplicitAutograd, lowered to aten.convolution)
_conv_transpose_ops = {1: _lookup("conv_transpose1d"), 2: _lookup("conv_transpose2d.input"),
                       3: _lookup("conv_transpose3d.input")}
for _nd, _op_t in _conv_transpose_ops.items():
    _impl(_op_t, "CompositeImplicitAutograd")(
        lambda input, weight, bias, stride, padding, output_padding, groups, dilation, _nd=_nd:
        _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                        _nd, f"conv_transpose{_nd}d"))


def _conv_transpose_call(input, weight, bias, stride, padding, output_padding, groups, dilation,
                         nd):
    return _conv_transpose_ops[nd](input, weight, bias, *(
        list(_ntuple(v, nd, name)) for v, name in ((stride, "stride"), (padding, "padding"),
                                                   (output_padding, "output_padding"))),
        groups, list(_ntuple(dilation, nd, "dilation")))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_call(input, weight, bias, stride, padding, output_padding, groups,
                                dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_call(input, weight, bias, stride, padding, output_padding, groups,
                                dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_call(input, weight, bias, stride, padding, output_padding, groups,
                                dilation, 3)


_im2col = _lookup("im2col")
_col2im = _lookup("col2im")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks as columns (im2col): (N, C, H, W) -> (N, C * kh * kw, L)."""
    if input.dim() == 0:  # PyTorch reads input.size(-1) first
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    return _im2col(input, list(_ntuple(kernel_size, 2, "kernel_size")),
                   list(_ntuple(dilation, 2, "dilation")), list(_ntuple(padding, 2, "padding")),
                   list(_ntuple(stride, 2, "stride")))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns summed back into an image (col2im), the adjoint of unfold."""
    return _col2im(input, list(_ntuple(output_size, 2, "output_size")),
                   list(_ntuple(kernel_size, 2, "kernel_size")),
                   list(_ntuple(dilation, 2, "dilation")), list(_ntuple(padding, 2, "padding")),
                   list(_ntuple(stride, 2, "stride")))


# ---- pooling ----------------------------------------------------------------------------------
_max_pool = {2: _lookup("max_pool2d_with_indices"), 3: _lookup("max_pool3d_with_indices")}
_avg_pool = {2: _lookup("avg_pool2d"), 3: _lookup("avg_pool3d")}
_adaptive_max = {2: _lookup("adaptive_max_pool2d"), 3: _lookup("adaptive_max_pool3d")}


def _pool_list(v, default=(), fn=None, name=None, pos=None):
    """A pooling size as a list; with `fn`, its elements must be ints (PyTorch's TypeError
    naming `fn`'s argument `name` otherwise)."""
    if v is None:
        return list(default)
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    if fn is not None and any(x.__class__ is not int for x in v):
        return _ap.as_int_list(fn, name, pos, v)
    return v


def _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):
    fn = f"max_pool{nd}d_with_indices"
    out, indices = _max_pool[nd](input, _pool_list(kernel_size, (), fn, "kernel_size", 2),
                                 _pool_list(stride, (), fn, "stride", 3),
                                 _pool_list(padding, (), fn, "padding", 4),
                                 _pool_list(dilation, (), fn, "dilation", 5), ceil_mode)
    return (out, indices) if return_indices else out


def _one_d(v, fill):
    """A 1-d pooling argument as the (1, v) of a 2-d pooling over a height-1 input."""
    v = _pool_list(v)
    return [fill] + v if v else []


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return _max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                        ceil_mode)
    return _max_pool_op[1](input, _int_list(kernel_size, 1, "max_pool1d", "kernel_size", 2),
                           [] if stride is None else _int_list(stride, 1, "max_pool1d",
                                                               "stride", 3),
                           _int_list(padding, 1, "max_pool1d", "padding", 4),
                           _int_list(dilation, 1, "max_pool1d", "dilation", 5), ceil_mode)


def _check_max_pool1d_input(input):
    # only the batch dimension of max_pool1d's input may be empty
    if input.dim() not in (2, 3) or 0 in input.shape[-2 if input.dim() == 3 else 0:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")


def _max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for max_pool1d)")
    out, indices = _max_pool[2](input.unsqueeze(-2), _one_d(kernel_size, 1),
                                _one_d(stride, 1), _one_d(padding, 0), _one_d(dilation, 1),
                                ceil_mode)
    return out.squeeze(-2), indices.squeeze(-2)


def _scalar_name(dtype):
    from .._aten.elementwise import _scalar_type_name
    return _scalar_type_name(dtype)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, True, 2)
    return _max_pool_op[2](input, _int_list(kernel_size, 2, "max_pool2d", "kernel_size", 2),
                           [] if stride is None else _int_list(stride, 2, "max_pool2d",
                                                               "stride", 3),
                           _int_list(padding, 2, "max_pool2d", "padding", 4),
                           _int_list(dilation, 2, "max_pool2d", "dilation", 5), ceil_mode)


_max_pool_op = {1: _lookup("max_pool1d"), 2: _lookup("max_pool2d")}


@_impl("max_pool1d", "CompositeImplicitAutograd")
def _max_pool1d_composite(input, kernel_size, stride, padding, dilation, ceil_mode):
    _check_max_pool1d_input(input)
    k, p, d = (_pool_list(a)[0] for a in (kernel_size, padding, dilation))
    st = _pool_list(stride)[0] if _pool_list(stride) else k
    for what, v in (("kernel_size", k), ("stride", st), ("dilation", d)):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    from .._aten.pooling import pooling_output_size
    width = pooling_output_size(input.shape[-1], k, st, p, d, ceil_mode)
    if width <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {width}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for "
                                  f"'{_scalar_name(input.dtype)}'")
    return _max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                    ceil_mode)[0]


@_impl("max_pool2d", "CompositeImplicitAutograd")
def _max_pool2d_composite(input, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, False, 2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:  # PyTorch's max_pool3d_with_indices
        return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, True, 3)
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


_max_pool3d = _lookup("max_pool3d")


@_impl("max_pool3d", "CompositeImplicitAutograd")
def _max_pool3d_composite(input, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, False, 3)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    out = _avg_pool[2](input.unsqueeze(-2), _one_d(kernel_size, 1), _one_d(stride, 1),
                       _one_d(padding, 0), ceil_mode, count_include_pad, None)
    return out.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None, *, out=None):
    if out is not None:
        return _nn_out("avg_pool2d", avg_pool2d, out, input, kernel_size, stride, padding,
                       ceil_mode, count_include_pad, divisor_override)
    fn = "avg_pool2d"
    return _avg_pool[2](input, _pool_list(kernel_size, (), fn, "kernel_size", 2),
                        _pool_list(stride, (), fn, "stride", 3),
                        _pool_list(padding, (), fn, "padding", 4), ceil_mode, count_include_pad,
                        divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None, *, out=None):
    if out is not None:
        return _nn_out("avg_pool3d", avg_pool3d, out, input, kernel_size, stride, padding,
                       ceil_mode, count_include_pad, divisor_override)
    fn = "avg_pool3d"
    return _avg_pool[3](input, _pool_list(kernel_size, (), fn, "kernel_size", 2),
                        _pool_list(stride, (), fn, "stride", 3),
                        _pool_list(padding, (), fn, "padding", 4), ceil_mode, count_include_pad,
                        divisor_override)


def _check_output_dims(input, output_size):
    """PyTorch's _list_with_default: a tuple output_size needs an input with more dims."""
    if isinstance(output_size, (list, tuple)) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _check_non_batch_sizes(input, name):
    """PyTorch's adaptive max pooling refuses an empty dim after the first (of a batched or
    an unbatched input alike)."""
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")


def _adaptive_output_size(input, output_size, nd, name):
    """The output size as a list (None keeps the input's size); only a bare int is repeated."""
    sizes = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size] * nd
    if len(sizes) != nd:
        if name.startswith("adaptive_avg"):
            raise RuntimeError(f"{name}: output_size must be {nd}")
        if nd == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                               f"{len(sizes)})")
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    return [input.shape[input.dim() - nd + i] if s is None else int(s)
            for i, s in enumerate(sizes)]


_adaptive_avg = {2: _lookup("_adaptive_avg_pool2d"), 3: _lookup("_adaptive_avg_pool3d")}


def _adaptive_avg_pool(input, output_size, nd):
    """PyTorch's adaptive_avg_pool2d/3d: a 1 x 1 (x 1) output is the mean over the spatial
    dims (nan over an empty window), any other the _adaptive_avg_pool kernel."""
    name = f"adaptive_avg_pool{nd}d"
    _check_output_dims(input, output_size)
    if input.dim() == 0 and all(s == 1 for s in _pool_list(output_size)):
        # PyTorch's shortcut for a 1 x 1 output, a mean over the last dims, comes first
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got {-nd})")
    out = _adaptive_output_size(input, output_size, nd, name)
    if all(o == 1 for o in out):
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                               f"{list(input.shape)}")
        if not input.is_floating_point():
            raise NotImplementedError(f"\"{name}\" not implemented for "
                                      f"'{_scalar_name(input.dtype)}'")
        r = input.mean(list(range(-nd, 0)), keepdim=True)
        fmt = suggest_memory_format(input)   # channels_last(_3d) is kept, as PyTorch does
        return r.clone(memory_format=fmt) if fmt is not contiguous_format else r
    return _adaptive_avg[nd](input, out)


def adaptive_avg_pool1d(input, output_size):
    """PyTorch's: adaptive_avg_pool2d of the input as a height-1 image."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"adaptive_avg_pool1d)")
    size = _pool_list(output_size)
    if len(size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(size)})")
    return _adaptive_avg_pool(input.unsqueeze(-2), [1, size[0]], 2).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    if None in _pool_list(output_size) and input.dim() >= 2:  # None keeps the input's size
        output_size = _adaptive_output_size(input, output_size, 2, "adaptive_avg_pool2d")
    return _adaptive_avg_pool2d_op(input, output_size)


_adaptive_avg_pool2d_op = _lookup("adaptive_avg_pool2d")   # an op torch.export keeps whole
_impl(_adaptive_avg_pool2d_op, "CompositeImplicitAutograd")(
    lambda input, output_size: _adaptive_avg_pool(input, output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg_pool3d(input, output_size)


_adaptive_avg_pool3d = _lookup("adaptive_avg_pool3d")


@_impl("adaptive_avg_pool3d", "CompositeImplicitAutograd")
def _adaptive_avg_pool3d_composite(input, output_size):
    return _adaptive_avg_pool(input, output_size, 3)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got: "
                           f"{list(input.shape)}")
    _check_non_batch_sizes(input, "adaptive_max_pool1d")
    size = _adaptive_output_size(input, output_size, 1, "adaptive_max_pool1d")
    out, indices = _adaptive_max[2](input.unsqueeze(-2), [1] + size)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    _check_output_dims(input, output_size)
    out, indices = _adaptive_max[2](input, _adaptive_output_size(input, output_size, 2,
                                                                    "adaptive_max_pool2d"))
    return (out, indices) if return_indices else out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    _check_output_dims(input, output_size)
    out, indices = _adaptive_max[3](input, _adaptive_output_size(input, output_size, 3,
                                                                    "adaptive_max_pool3d"))
    return (out, indices) if return_indices else out


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples, nd):
    """Fractional max pooling (Graham 2014): the output size is given or a fraction of the
    input's; one random sample per plane and spatial dim (drawn here unless given) places the
    windows (see ember/_aten/pooling.py)."""
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:  # (a float ratio fails here too, as in PyTorch)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             f"of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else \
            (output_ratio,) * nd
        output_size = [int(input.size(d - nd) * r) for d, r in enumerate(ratio)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = E.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype,
                                 device=input.device)
    sizes = [list(v) if isinstance(v, (list, tuple)) else [v] * nd
             for v in (kernel_size, output_size)]
    out, indices = _lookup(name)(input, *sizes, _random_samples)
    return (out, indices) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 3)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 3)


_max_unpool2d = _lookup("max_unpool2d")
_max_unpool3d = _lookup("max_unpool3d")


def _unpool_output_size(input, kernel_size, stride, padding, output_size, nd):
    default = [(input.shape[input.dim() - nd + d] - 1) * stride[d] + kernel_size[d] -
               2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{lo} and {hi})')  # printed as the caller gave it, as in PyTorch
    return list(output_size)


def _unpool_args(kernel_size, stride, padding, nd):
    k = _ntuple(kernel_size, nd, "kernel_size", "pooling")
    s = _ntuple(stride, nd, "stride", "pooling") if stride is not None else k
    return k, s, _ntuple(padding, nd, "padding", "pooling")


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k, s, p = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, k, s, p, output_size, 1)
    return _max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    return _max_unpool2d(input, indices, _unpool_output_size(input, k, s, p, output_size, 2))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k, s, p = _unpool_args(kernel_size, stride, padding, 3)
    return _max_unpool3d(input, indices, _unpool_output_size(input, k, s, p, output_size, 3),
                         list(s), list(p))


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, avg_pool):
    """(sum over the window of x ** p) ** (1 / p), as PyTorch writes it: an average times the
    window size, with the sign kept so that the root of a negative sum is nan, not an error."""
    kernel = _ntuple(kernel_size, nd, "kernel_size", "pooling")
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, avg_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, avg_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, avg_pool3d)


# ---- padding ----------------------------------------------------------------------------------
_index_pads = {(mode, nd): _lookup(f"{kind}_pad{nd}d")
               for mode, kind in (("reflect", "reflection"), ("replicate", "replication"))
               for nd in (1, 2, 3)}


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dims; `pad` lists (before, after) pairs, last dim first."""
    pad = list(_ap.int_list_arg("pad", "pad", 2, pad))
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.dim()}")
    if mode == "constant":
        return _constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    nd = len(pad) // 2
    if nd not in (1, 2, 3) or input.dim() not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    return _index_pads[(mode, nd)](input, pad)


def _pad_circular(input, pad):
    """Wrap around, written from narrow and cat as PyTorch's _pad_circular is: a negative pad
    first crops its side, then each positive pad copies that many elements from the other end
    of what is left."""
    x = input
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if x.shape[d] + min(before, 0) + min(after, 0) < 1:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if before < 0:
            x = x.narrow(d, -before, x.shape[d] + before)
        if after < 0:
            x = x.narrow(d, 0, x.shape[d] + after)
        n = x.shape[d]
        if before > n or after > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        parts = ([x.narrow(d, n - before, before)] if before > 0 else []) + [x] + \
            ([x.narrow(d, 0, after)] if after > 0 else [])
        x = E.cat(parts, d) if len(parts) > 1 else x
    # PyTorch's _pad_circular fills a fresh contiguous tensor whatever the input's layout (cat
    # would keep a channels-last one).
    return x.contiguous() if x is not input else x.clone(memory_format=contiguous_format)


# ---- interpolation ----------------------------------------------------------------------------
_INTERPOLATE_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | " \
                     "nearest-exact"


def _interpolate_sizes(input, size, scale_factor, recompute_scale_factor, mode):
    """(output sizes, scale factors or None): PyTorch's rules for size vs scale_factor."""
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(s, (int, np.integer)) or
                       (isinstance(s, Tensor) and not s.is_floating_point()) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            out = [_ap.int_arg("interpolate", "size", 2, size, symint=True)] * dim
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return out, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                             "...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    out = [int(math.floor(input.shape[2 + i] * s)) for i, s in enumerate(scales)]
    if mode == "area" or recompute_scale_factor:
        return out, None
    return out, scales


def _source_positions(n_in, n_out, scale, align_corners, cubic=False):
    """Where each output pixel samples the input (PyTorch's area_pixel_compute_source_index)."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    ratio = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    src = ratio * (dst + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _linear_matrix(n_in, n_out, scale, align_corners):
    """(out, in): row o mixes the two inputs around o's source position linearly."""
    src = _source_positions(n_in, n_out, scale, align_corners)
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = src - lo
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    m[rows, lo] += 1 - frac      # each statement names every row once: += is exact
    m[rows, hi] += frac
    return m


def _cubic_matrix(n_in, n_out, scale, align_corners, a=-0.75):
    """(out, in): Keys' cubic convolution (a = -0.75) over the four inputs around each source
    position, clamped at the borders (PyTorch's upsample_bicubic2d)."""
    src = _source_positions(n_in, n_out, scale, align_corners, cubic=True)
    base = np.floor(src).astype(np.int64)
    t = src - base

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    for k, w in enumerate(weights):
        m[rows, np.clip(base - 1 + k, 0, n_in - 1)] += w
    return m


def _antialias_matrix(n_in, n_out, scale, align_corners, kernel, antialias=True):
    """(out, in): PyTorch's antialiased bilinear/bicubic/lanczos (PIL's resampling). When
    shrinking by a factor s, the filter (triangle, Keys' cubic with a = -0.5, or the Lanczos-3
    windowed sinc) is stretched s times, so every input pixel contributes to some output
    instead of being skipped; each row is normalised to sum to 1. Enlarging uses the plain
    filter width."""
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    half_width = {"linear": 1.0, "cubic": 2.0, "lanczos": 3.0}[kernel]
    stretch = antialias and s >= 1.0
    support = half_width * s if stretch else half_width
    inv = 1.0 / s if stretch else 1.0
    center = s * np.arange(n_out) + 0.5 if align_corners and not antialias else \
        s * (np.arange(n_out) + 0.5)
    lo = np.maximum((center - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((center + support + 0.5).astype(np.int64), n_in)
    x = np.abs((np.arange(n_in)[None, :] - center[:, None] + 0.5) * inv)
    if kernel == "cubic":
        a = -0.5 if antialias else -0.75
        w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                     np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
    elif kernel == "lanczos":
        w = np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    else:
        w = np.maximum(1 - x, 0.0)
    cols = np.arange(n_in)[None, :]
    w = np.where((cols >= lo[:, None]) & (cols < hi[:, None]), w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    return w / np.where(total == 0, 1.0, total)


_AA_KERNEL = {"bilinear": "linear", "bicubic": "cubic", "lanczos": "lanczos"}


def _nearest_index(n_in, n_out, scale, exact):
    """PyTorch's nearest source index, computed in float32 as PyTorch does."""
    if not exact and n_in == n_out:  # PyTorch's nearest copies; nearest-exact always scales
        return np.arange(n_out)
    if not exact and n_out == 2 * n_in:
        return np.arange(n_out) >> 1
    ratio = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    dst = np.arange(n_out, dtype=np.float32) + (np.float32(0.5) if exact else 0)
    return np.minimum(np.floor(dst * ratio).astype(np.int64), n_in - 1)


def _resample(input, out, scales, matrix_fn, skip_same=True):
    """Apply a per-dim (out, in) resampling matrix along each spatial dim. PyTorch's linear
    and antialiased kernels leave a dim whose size does not change as it is, whatever the
    scale factor (`skip_same`); its plain bicubic kernel resamples it by the scale."""
    x = input
    nd = len(out)
    for i in range(nd):
        axis = x.dim() - nd + i
        if skip_same and x.shape[axis] == out[i]:
            continue
        m = matrix_fn(x.shape[axis], out[i], None if scales is None else scales[i])
        mat = E.tensor(m, dtype=x.dtype, device=x.device)
        x = (x.movedim(axis, -1) @ mat.mT).movedim(-1, axis)
    return x


def _check_upsample_sizes(input, out):
    """PyTorch's upsample kernels' checks: every spatial size positive, and an empty input
    only by an empty batch."""
    names = "DHW"[3 - len(out):]
    if min(input.shape[2:]) <= 0 or min(out) <= 0:
        def fmt(sizes):
            return ", ".join(f"{n}: {v}" for n, v in zip(names, sizes))
        sep = " and" if len(out) == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({fmt(input.shape[2:])}){sep} output ({fmt(out)})")
    if input.numel() == 0 and input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {input.dim()}D data tensor expected but got a tensor "
                           f"with sizes {list(input.shape)}")


def _resample_uint8(input, out, scales, matrix_fn, skip_same=True):
    """PyTorch's uint8 bilinear/bicubic (PIL's resampling in fixed point): per spatial dim,
    last dim first, the filter weights (truncated at the borders and renormalised) scaled to
    int16 with as many fraction bits as the largest weight allows; each pass rounds, shifts
    and saturates to [0, 255] before the next. The integers are carried in float64, where the
    matrix product runs on BLAS and stays exact: every partial sum of pixel (< 2**8) times
    weight (< 2**15) products is far below 2**53, and the shift is a floor division by a power
    of two."""
    x = input.double()
    for i in reversed(range(len(out))):
        axis = x.dim() - len(out) + i
        if x.shape[axis] == out[i] and (skip_same or scales is None):
            continue  # PyTorch skips a pass that does not resize
        w = matrix_fn(x.shape[axis], out[i], None if scales is None else scales[i])
        precision = 0
        while precision < 22 and int(0.5 + w.max(initial=0) * (1 << (precision + 1))) < 1 << 15:
            precision += 1
        wi = E.tensor(np.round(w * (1 << precision)), dtype=D.float64, device=x.device)
        y = x.movedim(axis, -1) @ wi.mT
        half = (1 << (precision - 1)) if precision else 0
        x = ((y + half) // (1 << precision)).clamp(0, 255).movedim(-1, axis)
    return x.to(D.uint8)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims. Nearest modes pick input pixels (index_select); linear,
    bilinear, trilinear and bicubic are separable, so each is one small (out, in) matrix
    product per spatial dim, differentiable like any matmul. PyTorch's upsample kernels write
    a fresh tensor in the input's suggested memory format (channels_last(_3d) or contiguous), so
    the result is laid out so whatever the passes left ("area" is adaptive average pooling,
    whose kernels decide)."""
    r = _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                     antialias)
    if mode != "area":
        fmt = suggest_memory_format(input) if input.dim() in (4, 5) else contiguous_format
        if not r.is_contiguous(memory_format=fmt):
            return r.contiguous(memory_format=fmt)
    return r


@_impl("_upsample_bilinear2d_aa", "CompositeImplicitAutograd")
def _upsample_bilinear2d_aa(input, output_size, align_corners, scales_h=None, scales_w=None):
    """aten._upsample_bilinear2d_aa: interpolate(mode="bilinear", antialias=True) to
    `output_size` (the scales, when given, are the ones that size came from)."""
    if input.dim() != 4:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size {input.dim()}")
    if scales_h is not None and scales_w is not None:
        return interpolate(input, scale_factor=(scales_h, scales_w), mode="bilinear",
                           align_corners=align_corners, antialias=True)
    return interpolate(input, size=tuple(output_size), mode="bilinear",
                       align_corners=align_corners, antialias=True)



@_impl("_upsample_bilinear2d_aa.vec", "CompositeImplicitAutograd")
def _upsample_bilinear2d_aa_vec(input, output_size, align_corners, scale_factors):
    """aten._upsample_bilinear2d_aa.vec: the same, given exactly one of `output_size` and
    `scale_factors` (the .vec form interpolate's callers use)."""
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if input.dim() != 4:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size {input.dim()}")
    return interpolate(input, size=None if output_size is None else tuple(output_size),
                       scale_factor=None if scale_factors is None else tuple(scale_factors),
                       mode="bilinear", align_corners=align_corners, antialias=True)

def _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                 antialias):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    # the sizes are checked against the input's spatial dims before its rank (PyTorch's order)
    out, scales = _interpolate_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    nd = input.dim() - 2
    if mode == "lanczos" and nd == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    wanted = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2, "lanczos": 2}
    if nd not in (1, 2, 3) or mode not in wanted and mode not in ("nearest", "nearest-exact",
                                                                  "area"):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: {_INTERPOLATE_MODES} "
                                  f"(got {mode})")
    if mode in wanted and wanted[mode] != nd:
        if mode == "lanczos":  # PyTorch has no mode-specific message for it
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                      f"(got {input.dim()}D) for the modes: {_INTERPOLATE_MODES} "
                                      f"(got {mode})")
        need = wanted[mode] + 2
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D "
                                  "input")
    if mode != "area":
        _check_upsample_sizes(input, out)
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](input, out)
    if mode in ("nearest", "nearest-exact"):
        if not (input.is_floating_point() or input.dtype is D.uint8):
            raise NotImplementedError(f"\"upsample_nearest{nd}d_out_frame\" not implemented "
                                      f"for '{_scalar_name(input.dtype)}'")
        if input.device.type == "meta":   # the shape only: no index arrays of the output's size
            return E.empty(tuple(input.shape[:-nd]) + tuple(out), dtype=input.dtype,
                           device=input.device, memory_format=suggest_memory_format(input))
        x = input
        for i in range(nd):
            axis = input.dim() - nd + i
            idx = _nearest_index(input.shape[axis], out[i],
                                 None if scales is None else scales[i], mode == "nearest-exact")
            x = x.index_select(axis, E.tensor(idx, device=x.device))
        return x
    if input.dtype is D.uint8 and nd == 2:
        if mode == "bicubic" and not antialias:
            return _resample_uint8(input, out, scales,
                                   lambda n, o, s: _cubic_matrix(n, o, s, align_corners),
                                   skip_same=False)
        return _resample_uint8(input, out, scales, lambda n, o, s: _antialias_matrix(
            n, o, s, align_corners, _AA_KERNEL[mode], antialias=antialias))
    if not input.is_floating_point():
        raise NotImplementedError(f"\"upsample_{mode}{nd if mode == 'bicubic' else ''}_out_frame"
                                  f"\" not implemented for '{_scalar_name(input.dtype)}'")
    if antialias:
        return _resample(input, out, scales, lambda n, o, s: _antialias_matrix(
            n, o, s, align_corners, _AA_KERNEL[mode]))
    if mode == "bicubic":
        return _resample(input, out, scales,
                         lambda n, o, s: _cubic_matrix(n, o, s, align_corners), skip_same=False)
    return _resample(input, out, scales, lambda n, o, s: _linear_matrix(n, o, s, align_corners))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=_user_stacklevel())
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=_user_stacklevel())
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=_user_stacklevel())
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- grid sampling ----------------------------------------------------------------------------
def _floor(x):
    """floor(x) without a gradient: x - (x mod 1)."""
    return (x - E.remainder(x, 1.0)).detach()


def _reflect(c, twice_low, twice_high):
    """Reflect coordinates into [low, high] (PyTorch's reflect_coordinates)."""
    if twice_low == twice_high:
        return c * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (c - low).abs()
    extra = E.remainder(c, span)
    flips = _floor(c / span)
    return E.where(E.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _clip(c, size):
    """c clamped to [0, size - 1], with PyTorch's gradient: 0 on the borders too."""
    inside = (c > 0) & (c < size - 1)
    return E.where(inside, c, c.detach().clamp(0, size - 1))


def _grid_source(coord, size, padding_mode, align_corners):
    """Normalized grid coordinates in [-1, 1] -> pixel coordinates of an input of `size`."""
    c = (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    return _pad_coordinate(c, size, padding_mode, align_corners)


def _pad_coordinate(c, size, padding_mode, align_corners):
    """A pixel coordinate moved inside the input as the padding mode says ('zeros' leaves it:
    reading outside gives 0)."""
    if padding_mode == "border":
        c = _clip(c, size)
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = _clip(c, size)
    return c


def _cubic_weights(t, A=-0.75):
    """The four weights of Keys' cubic convolution (A = -0.75, as PyTorch) for taps at -1, 0,
    1, 2 around a point at fraction t past the second tap."""
    def near(x):   # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):    # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample `input` (N, C, *in) at the normalized points of `grid` (N, *out, nd), written from
    gather: each output mixes the 2^nd input pixels around its point (bilinear/trilinear) or
    takes the nearest one. Pixels outside the input read 0 (padding_mode='zeros'), the border
    pixel ('border') or the reflection ('reflection')."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=_user_stacklevel())
        align_corners = False
    return _grid_sampler(input, grid, _GRID_MODES.index(mode), _GRID_PADDINGS.index(padding_mode),
                         align_corners)


_GRID_MODES, _GRID_PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")
_grid_sampler = _lookup("grid_sampler")


def _grid_sampler_nd(nd):
    """grid_sampler_2d / grid_sampler_3d: grid_sampler for one spatial rank."""
    def kernel(input, grid, interpolation_mode, padding_mode, align_corners):
        if input.dim() == 0 or grid.dim() == 0:  # PyTorch reads the sizes first
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if input.shape[0] != grid.shape[0] or grid.shape[-1] != input.dim() - 2:
            # PyTorch checks the batch sizes and grid's last size first: the composite's errors
            return _grid_sampler_composite(input, grid, interpolation_mode, padding_mode,
                                           align_corners)
        if input.dim() != nd + 2 or grid.dim() != nd + 2:
            raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same "
                               f"number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return _grid_sampler_composite(input, grid, interpolation_mode, padding_mode,
                                       align_corners)
    return kernel


@_impl("grid_sampler", "CompositeImplicitAutograd")
def _grid_sampler_composite(input, grid, interpolation_mode, padding_mode, align_corners):
    mode, padding_mode = _GRID_MODES[interpolation_mode], _GRID_PADDINGS[padding_mode]
    if grid.dim() == 0:  # PyTorch reads grid.size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype} and grid has {grid.dtype}")
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    nd = input.dim() - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if nd not in (2, 3) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected {4 if nd == 2 else 5}D input and grid with "
                           f"same number of dimensions, but got {sizes}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"grid_sampler_{nd}d_cpu_kernel_impl\" not implemented "
                                  f"for '{_scalar_name(input.dtype)}'")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    n, c = input.shape[:2]
    spatial = input.shape[2:]
    out_shape = grid.shape[1:-1]
    # grid[..., 0] is x (the last dim), grid[..., 1] is y, ...; bicubic pads each of its 16
    # taps rather than the point itself
    src = [_grid_source(grid[..., nd - 1 - d], spatial[d],
                        "zeros" if mode == "bicubic" else padding_mode, align_corners)
           for d in range(nd)]
    flat = input.reshape(n, c, math.prod(spatial))
    count = math.prod(out_shape)

    def read(idx):
        """input at integer coordinates idx (per dim, (N, *out)); 0 outside."""
        inside = None
        linear = 0
        for d, i in enumerate(idx):
            ok = (i >= 0) & (i <= spatial[d] - 1)
            inside = ok if inside is None else inside & ok
            linear = linear * spatial[d] + i.clamp(0, spatial[d] - 1)
        g = flat.gather(2, linear.to(D.int64).reshape(n, 1, count).expand(n, c, count))
        return g.reshape((n, c) + tuple(out_shape)), inside.unsqueeze(1)
    if mode == "nearest":
        near = []
        for s in src:
            r = _floor(s + 0.5)
            tie = ((r - s) == 0.5) & (E.remainder(r, 2) == 1)   # round half to even
            near.append(E.where(tie, r - 1, r))
        values, inside = read(near)
        # the output is piecewise constant in the grid: PyTorch gives the grid a zero gradient
        zero = sum(src) * 0
        return E.where(inside, values, 0.0) + zero.unsqueeze(1)
    if mode == "bicubic":
        # rows of 4 taps along x mixed by x's weights, then the 4 rows by y's (PyTorch's order)
        (y0, x0), (ty, tx) = [_floor(s) for s in src], [s - _floor(s) for s in src]
        wy, wx = _cubic_weights(ty), _cubic_weights(tx)
        out = None
        for i in range(4):
            yi = _pad_coordinate(y0 + (i - 1), spatial[0], padding_mode, align_corners)
            row = None
            for j in range(4):
                xj = _pad_coordinate(x0 + (j - 1), spatial[1], padding_mode, align_corners)
                values, inside = read([yi.detach(), xj.detach()])
                term = E.where(inside, values, 0.0) * wx[j].unsqueeze(1)
                row = term if row is None else row + term
            out = row * wy[i].unsqueeze(1) if out is None else out + row * wy[i].unsqueeze(1)
        return out
    low = [_floor(s) for s in src]
    frac = [s - lo for s, lo in zip(src, low)]
    out = None
    for corner in np.ndindex(*(2,) * nd):
        weight = 1
        for d, bit in enumerate(corner):
            weight = weight * (frac[d] if bit else 1 - frac[d])
        values, inside = read([lo + bit for lo, bit in zip(low, corner)])
        term = E.where(inside, values, 0.0) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


_impl("grid_sampler_2d", "CompositeImplicitAutograd")(_grid_sampler_nd(2))
_impl("grid_sampler_3d", "CompositeImplicitAutograd")(_grid_sampler_nd(3))


def _base_coordinates(steps, align_corners, dtype):
    # In theta's dtype, step by step as PyTorch does: a last-bit difference can move a sample
    # point across a pixel boundary, and grid_sample's gradient jumps there.
    if steps <= 1:
        return np.zeros(max(steps, 1), E.empty(0, dtype=dtype)._np.dtype)
    r = E.linspace(-1, 1, steps, dtype=dtype)._np
    return r if align_corners else r * (steps - 1) / steps


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, *out, nd) of the affine maps theta (N, nd, nd + 1): the base grid
    of normalized output coordinates (x, y[, z], 1), times theta transposed."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=_user_stacklevel())
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) not in (4, 5):  # the messages print `size` as the caller gave it
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    nd = len(size) - 2
    if theta.dim() != 3 or theta.shape[-2] != nd or theta.shape[-1] != nd + 1:
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} "
                         f"for size {size}. Got {theta.shape}.")
    if min(size[2:]) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _affine_grid_generator(theta, list(size), align_corners)


_affine_grid_generator = _lookup("affine_grid_generator")


@_impl("affine_grid_generator", "CompositeImplicitAutograd")
def _affine_grid_generator_composite(theta, size, align_corners):
    """The base grid of normalized output coordinates (x, y[, z], 1), one row per output
    point, times each theta transposed: (N, *out, nd)."""
    size = list(size)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    nd = len(size) - 2
    spatial = size[2:]
    axes = [_base_coordinates(s, align_corners, theta.dtype) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")          # per spatial dim, (*spatial)
    base = np.stack(list(mesh[::-1]) + [np.ones(spatial)], -1).reshape(1, -1, nd + 1)
    base = E.tensor(base, dtype=theta.dtype, device=theta.device)
    grid = base.expand(size[0], -1, -1).bmm(theta.transpose(1, 2))
    return grid.reshape([size[0]] + spatial + [nd])


# ---- pixel shuffle ----------------------------------------------------------------------------
_pixel_shuffle = _lookup("pixel_shuffle")
_pixel_unshuffle = _lookup("pixel_unshuffle")


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel blocks become r x r pixel blocks."""
    return _pixel_shuffle(input, int(upscale_factor))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of pixel_shuffle."""
    return _pixel_unshuffle(input, int(downscale_factor))


def native_channel_shuffle(input, groups):
    """(N, C, *) -> (N, C, *) with the channels, seen as a (groups, C / groups) grid, read
    column by column: channel g * (C / groups) + k moves to k * groups + g."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *spatial = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape([n, groups, c // groups] + spatial).transpose(1, 2)
    return x.contiguous().reshape(input.shape)


channel_shuffle = native_channel_shuffle


# ---- embedding --------------------------------------------------------------------------------
_embedding = _lookup("embedding")
_embedding_renorm_ = _lookup("embedding_renorm_")


def _padding_index(padding_idx, num_embeddings):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` looked up by `input`. With max_norm, the looked-up rows are first
    rescaled in place to norm <= max_norm (PyTorch's embedding_renorm_, without grad)."""
    if weight.dim() != 2 and padding_idx is None:
        if max_norm is not None:
            raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"embedding_renorm_)")
        if weight.dim() == 0 and weight.requires_grad and is_grad_enabled():
            # PyTorch's autograd records weight.size(0) before its kernel checks the rank
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    if max_norm is not None:   # (on weight.detach(): neither grad nor a forward-AD tangent)
        _embedding_renorm_(weight.detach(), input.contiguous(), float(max_norm),
                           float(norm_type))
    return _embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embeddings: PyTorch's argument checks, a 2-D input made
    1-D bags of its rows, then torch.embedding_bag (one `_embedding_bag` op, whose backward is
    EmbeddingBagBackward0)."""
    if weight.dtype is D.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=_user_stacklevel())
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        offsets = E.arange(0, input.numel(), input.shape[1], dtype=input.dtype,
                           device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with no_grad():
            _embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    return _torch_embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode],
                                sparse, per_sample_weights, include_last_offset, padding_idx)[0]


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}
_embedding_bag_op = _lookup("_embedding_bag")
_embedding_bag_forward_only = _lookup("_embedding_bag_forward_only")


def _torch_embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                         sparse=False, per_sample_weights=None, include_last_offset=False,
                         padding_idx=None):
    """torch.embedding_bag: bags of a 1-D input cut at its offsets, the mode as a number (0 sum,
    1 mean, 2 max); all four outputs of the CPU kernel. As PyTorch, `_embedding_bag` runs when
    the weight or the per-sample weights require grad (in no_grad mode too) or the weight has a
    forward-mode tangent, else its forward-only twin."""
    if weight.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if indices.dim() == 2:
        # PyTorch's kernel reads a 2-D input as its first column's length (wrong sums, or a
        # crash in mean and max mode); F.embedding_bag takes 2-D inputs without offsets
        raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is "
                         f"a mini-batch of fixed length sequences. However, found offsets of "
                         f"type {type(offsets)}")
    if padding_idx is None:
        padding_idx = -1
    else:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    needs_grad = weight.requires_grad or (per_sample_weights is not None and
                                          per_sample_weights.requires_grad) or \
        _forward_ad.unpack_dual(weight).tangent is not None
    op = _embedding_bag_op if needs_grad else _embedding_bag_forward_only
    return op(weight, indices.contiguous(), offsets.contiguous(), scale_grad_by_freq, mode,
              sparse, per_sample_weights, include_last_offset, padding_idx)


def one_hot(tensor, num_classes=-1):
    return _lookup("one_hot")(tensor, _ap.int_arg("one_hot", "num_classes", 2, num_classes))


# ---- dropout ----------------------------------------------------------------------------------
# PyTorch's CPU dropout draws a Bernoulli(1 - p) mask of the input's dtype with `bernoulli_`
# (so the same generator state gives the same mask), scales it by 1 / (1 - p) and multiplies;
# the feature variants draw one mask value per (sample, channel). Alpha dropout replaces
# dropped values by SELU's negative saturation and rescales to keep mean and variance.
_ALPHA = 1.7580993408473766


def _check_dropout_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, training, inplace, feature=False, alpha=False):
    _check_dropout_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = E.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature:  # one draw per (sample, channel)
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise = E.empty(list(input.shape[:2]) + [1] * (input.dim() - 2), dtype=input.dtype,
                        device=input.device)
    else:  # laid out like the input, which decides the order the values are drawn in
        noise = E.empty_like(input)
    noise.bernoulli_(1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise.mul_(a)
        return input.mul_(noise).add_(b) if inplace else input * noise + b
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    if inplace:
        return _dropout_impl(input, p, training, True)
    _check_dropout_p(p)
    return _dropout(input, p, training)


_dropout = _lookup("dropout")


@_impl("dropout", "CompositeImplicitAutograd")
def _dropout_composite(input, p, train):
    return _dropout_impl(input, p, train, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout_impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _feature_dropout_unbatched(input, p, training, inplace):
    """Channel dropout of an input without its batch dim: as a batch of one."""
    x = input.unsqueeze(0)
    out = _dropout_impl(x, p, training, False, feature=True)
    out = out.squeeze(0)
    return input.copy_(out) if inplace and out is not input else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_dropout_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 2:
        return _feature_dropout_unbatched(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, feature=True)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_dropout_p(p)
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=_user_stacklevel())
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=_user_stacklevel())
    return _dropout_impl(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_dropout_p(p)
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=_user_stacklevel())
    if input.dim() != 5:
        return _feature_dropout_unbatched(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, feature=True)


# ---- normalization ----------------------------------------------------------------------------
_native_batch_norm = _lookup("native_batch_norm")
_native_layer_norm = _lookup("native_layer_norm")
_native_group_norm = _lookup("native_group_norm")


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) by batch statistics (training; the running statistics
    are updated in place) or by the running statistics (evaluation)."""
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:  # the normalizer sqrt(var + eps) of a constant channel is 0
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _batch_norm(input, weight, bias, running_mean, running_var, training,
                       0.0 if momentum is None else momentum, eps, _cudnn.enabled)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    return _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                          momentum, eps, _cudnn.enabled)


_instance_norm = _lookup("instance_norm")   # an op torch.export keeps whole


@_impl("instance_norm", "CompositeImplicitAutograd")
def _instance_norm_composite(input, weight, bias, running_mean, running_var, use_input_stats,
                             momentum, eps, cudnn_enabled):
    """Batch norm of each (sample, channel) on its own, as PyTorch writes it: the input viewed
    as (1, N * C, *spatial), the per-channel parameters repeated N times, and the running
    statistics averaged back over the batch."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    if use_input_stats:
        n = 1
        for s in input.shape[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape}")
    b, c = input.shape[0], input.shape[1]

    def repeat(t):
        return None if t is None else t.repeat(b)
    # PyTorch accepts running statistics of another dtype here (they are copied back below)
    mean, var = (None if t is None else t.repeat(b).to(input.dtype)
                 for t in (running_mean, running_var))
    x = input.contiguous().reshape([1, b * c] + list(input.shape[2:]))
    out = _torch_batch_norm(x, repeat(weight), repeat(bias), mean, var, use_input_stats,
                            momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(mean.reshape(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(var.reshape(b, c).mean(0))
    return out.reshape(input.shape)


def _check_float(input, kernel):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_scalar_name(input.dtype)}'")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last len(normalized_shape) dims; float16/bfloat16 are computed in
    float32 and rounded once, as PyTorch's kernel does."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return _layer_norm(input, shape, weight, bias, eps, _cudnn.enabled)


_layer_norm = _lookup("layer_norm")


@_impl("layer_norm", "CompositeImplicitAutograd")
def _layer_norm_composite(input, normalized_shape, weight, bias, eps, cudnn_enable):
    return _native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _group_norm(input, num_groups, weight, bias, eps, _cudnn.enabled)


_group_norm = _lookup("group_norm")   # an op torch.export keeps whole


@_impl("group_norm", "CompositeImplicitAutograd")
def _group_norm_composite(input, num_groups, weight, bias, eps, cudnn_enabled):
    """Normalize each group of num_groups consecutive channels of each sample."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    _verify_batch_size([n * c // num_groups, num_groups] + list(input.shape[2:]))
    return _native_group_norm(input, weight, bias, n, c, input.numel() // max(n * c, 1),
                              num_groups, eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the last dims; eps defaults to the machine epsilon of
    the computation dtype."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    n = len(shape)
    if not n:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = {shape}")
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = {shape}")
    if not input.dim():
        raise ValueError("Input tensor must have at least 1 dimensions, but got 0")
    if list(input.shape[input.dim() - n:]) != shape or input.dim() < n:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if not input.is_complex():   # (complex inputs use x * x, not |x|^2, as PyTorch's)
        _check_float(input, "rms_norm")
    x = _half_to_float(input)
    if eps is None:
        eps = float(np.finfo(np.float64 if x.dtype in (D.float64, D.complex128)
                             else np.float32).eps)
    out = (x * (x * x).mean(list(range(-n, 0)), keepdim=True).add(eps).rsqrt()).to(input.dtype)
    return out * weight if weight is not None else out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    sq = (input * input).unsqueeze(1)
    if input.dim() == 3:
        div = pad(sq, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        shape = input.shape
        div = sq.reshape(shape[0], 1, shape[1], shape[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(shape)
    return input / div.mul(alpha).add(k).pow(beta)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_scalar_name(input.dtype)}")
    denom = _vector_norm(input, p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    if out is None:
        return input / denom
    return E.div(input, denom, out=out)


# ---- distances --------------------------------------------------------------------------------
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / ||x1|| * x2 / ||x2||) over dim, each norm clamped to >= eps (the clamp is not
    differentiated, as in PyTorch)."""
    common = E.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_scalar_name(common)}")
    x1, x2 = E.broadcast_tensors(x1, x2)
    n1 = _vector_norm(x1, 2, dim, keepdim=True).clone()
    n2 = _vector_norm(x2, 2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    dim = max(x1.dim(), x2.dim()) - 1
    return _vector_norm(x1 - x2 + eps, p, dim, keepdim)


def pdist(input, p=2):
    """The distances between all pairs of rows i < j of a 2-D input, in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n > 1 and input.dtype not in (D.float32, D.float64):  # (its kernel's dtypes)
        raise NotImplementedError(f"\"pdist\" not implemented for '{_scalar_name(input.dtype)}'")
    i, j = np.triu_indices(n, 1)
    dev = input.device
    diff = input.index_select(0, E.tensor(i, device=dev)) - \
        input.index_select(0, E.tensor(j, device=dev))
    return _vector_norm(diff, p, -1)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between the rows of x1 (*, P, M) and of x2 (*, R, M) -> (*, P, R). For p = 2
    and many rows PyTorch expands ||a - b||^2 = ||a||^2 - 2 a.b + ||b||^2 into one matmul;
    ember does the same, so the two round alike."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _cdist(x1, x2, p, _CDIST_MODES.index(compute_mode) or None)


_cdist = _lookup("cdist")
_cdist_forward = _lookup("_cdist_forward")


@_impl("cdist", "CompositeImplicitAutograd")
def _cdist_composite(x1, x2, p, mode):
    check_cdist(x1, x2, p, mode)
    compute_mode = _CDIST_MODES[mode or 0]
    modes = _CDIST_MODES
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == modes[1] or
                         (compute_mode == modes[0] and (rows1 > 25 or rows2 > 25)))
    if use_mm and x1.numel() and x2.numel():
        n1 = (x1 * x1).sum(-1, keepdim=True)
        n2 = (x2 * x2).sum(-1, keepdim=True)
        a = E.cat([x1 * -2, n1, E.ones_like(n1)], -1)
        b = E.cat([x2, E.ones_like(n2), n2], -1)
        squared = a.matmul(b.mT).clamp(min=0)
        positive = squared > 0   # a 0 gradient at 0 distance, not sqrt's infinite slope
        return E.where(positive, E.where(positive, squared, 1.0).sqrt(), 0.0)
    return _cdist_forward(x1, x2, p, mode)


# ---- attention --------------------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v, the reference formula of PyTorch's docs. A boolean mask
    keeps the True positions; is_causal keeps j <= i; a row with nothing kept gives zeros.
    Dropout on the attention weights draws its mask like F.dropout."""
    args = (query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if _attention._flash_watchers[0] and _attention._cpu_runs_flash(
            query, key, value, attn_mask, dropout_p, enable_gqa):
        with _attention._flash_region():  # where PyTorch would run its fused kernel
            return _sdpa(*args)
    return _sdpa(*args)


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.dim()} key.dim: {key.dim()} and "
                           f"value.dim: {value.dim()} instead.")
    if not _attention._math_sdp_enabled():  # sdpa_kernel left only fused kernels on
        _attention._select_cpu_backend(query, key, value, attn_mask, dropout_p, enable_gqa)
    length, source = query.shape[-2], key.shape[-2]
    if scale is None:  # (no features: every score is an empty sum, 0, whatever the scale)
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    if enable_gqa:  # key and value heads each shared by a group of query heads
        heads = query.size(-3)
        if heads % key.size(-3) or heads % value.size(-3):
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")
        key = key.repeat_interleave(heads // key.size(-3), -3)
        value = value.repeat_interleave(heads // value.size(-3), -3)
    scores = query.matmul(key.transpose(-2, -1)) * scale
    keep = None
    if is_causal:
        keep = E.ones(length, source, dtype=D.bool, device=query.device).tril()
    elif attn_mask is not None:
        if attn_mask.dtype is D.bool:
            keep = attn_mask
        else:
            scores = scores + attn_mask
    if keep is not None:
        scores = scores.masked_fill(~keep, -math.inf)
    if keep is None and attn_mask is None:
        weights = E.softmax(scores, -1)
    else:
        # a query whose scores are all -inf (no key kept by a boolean or an additive mask):
        # PyTorch's safe softmax gives it zero weights, and zero gradient rather than NaN
        dead = (scores == -math.inf).all(-1, keepdim=True)
        weights = E.softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value)


_sdpa = _lookup("scaled_dot_product_attention")  # an op torch.export keeps whole
_impl(_sdpa, "CompositeImplicitAutograd")(_sdpa_math)


# ---- activations (issue 3a; the kernels are in ember/_aten/elementwise.py) -------------------
_elu, _elu_ = _lookup("elu"), _lookup("elu_")
_leaky_relu, _leaky_relu_ = _lookup("leaky_relu"), _lookup("leaky_relu_")
_hardtanh, _hardtanh_ = _lookup("hardtanh"), _lookup("hardtanh_")
_threshold, _threshold_ = _lookup("threshold"), _lookup("threshold_")


def _maybe_inplace(name, inplace):
    return _lookup(f"{name}_" if inplace else name)


def elu(input, alpha=1.0, inplace=False):
    return (_elu_ if inplace else _elu)(input, alpha, 1, 1)


def elu_(input, alpha=1.0):
    return _elu_(input, alpha, 1, 1)


def selu(input, inplace=False):
    return E.selu_(input) if inplace else E.selu(input)


def celu(input, alpha=1.0, inplace=False):
    return E.celu_(input, alpha) if inplace else E.celu(input, alpha)


selu_, celu_ = E.selu_, E.celu_


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return (_leaky_relu_ if inplace else _leaky_relu)(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _leaky_relu_(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return (_hardtanh_ if inplace else _hardtanh)(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    return _maybe_inplace("hardsigmoid", inplace)(input)


def hardswish(input, inplace=False):
    return _maybe_inplace("hardswish", inplace)(input)


def mish(input, inplace=False):
    return _maybe_inplace("mish", inplace)(input)


def logsigmoid(input, *, out=None):
    if out is not None:
        return _nn_out("log_sigmoid", logsigmoid, out, input)
    return _lookup("log_sigmoid")(input)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    return (_threshold_ if inplace else _threshold)(input, threshold, value)


def threshold_(input, threshold, value):
    return _threshold_(input, threshold, value)


def glu(input, dim=-1):
    return _lookup("glu")(input, dim)


hardshrink = E.hardshrink   # (PyTorch's F.hardshrink is torch.hardshrink, out= and all)


def softshrink(input, lambd=0.5, *, out=None):
    if out is not None:
        return _nn_out("softshrink", softshrink, out, input, lambd)
    return _lookup("softshrink")(input, lambd)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input): the smallest entries get the largest weights."""
    return E.softmax(-input, _softmax_dim("softmin", input, dim, _stacklevel), dtype)


prelu = E.prelu


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return (E.rrelu_ if inplace else E.rrelu)(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return E.rrelu_(input, lower, upper, training)


# ---- the same functions at the top level (torch.conv2d, torch.dropout, ...) ------------------
# PyTorch exposes many of these as `torch.*` too, some with other signatures (`torch.dropout`
# takes `train` positionally, `torch.embedding` takes the weight first, `torch.batch_norm` the
# parameters before the statistics). `ember/__init__.py` adds this table to the ember namespace.
def _torch_dropout(input, p, train):
    return _dropout(input, p, train)


def _torch_alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, alpha=True)


def _torch_feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, feature=True)


def _torch_feature_alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, feature=True, alpha=True)


def _torch_inplace_dropout(**kind):
    """torch.dropout_ and its kin (alpha=, feature=): the in-place forms."""
    def fn(input, p, train):
        return _dropout_impl(input, p, train, True, **kind)
    return fn


def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      cudnn_enabled=True):
    """torch.batch_norm (which F.batch_norm and instance_norm call): the op aten.batch_norm."""
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                       cudnn_enabled)


_batch_norm = _lookup("batch_norm")


@_impl("batch_norm", "CompositeImplicitAutograd")
def _batch_norm_composite(input, weight, bias, running_mean, running_var, training, momentum,
                          eps, cudnn_enabled):
    """aten.batch_norm's kernel: native_batch_norm. An input without elements
    is not checked nor normalized, as in PyTorch: its result is the input scaled by the first
    weight and shifted by the first bias -- empty, yet part of the graph of both, whose
    gradients are then zeros -- and an empty weight or bias fails on that first element."""
    if input.numel() == 0:
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training,
                              momentum, eps)[0]


def _torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                         momentum, eps, cudnn_enabled=True):
    return instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                         momentum, eps)


def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
                      cudnn_enable=True):
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return _layer_norm(input, shape, weight, bias, eps, cudnn_enable)


def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5,
                      cudnn_enabled=True):
    return group_norm(input, num_groups, weight, bias, eps)


def _torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)


def _torch_adaptive_max_pool1d(input, output_size):
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def _torch_constant_pad_nd(input, pad, value=0):
    return _constant_pad_nd(input, list(pad), value)


TORCH_LEVEL = dict(
    conv1d=conv1d, conv2d=conv2d, conv3d=conv3d, conv_transpose1d=conv_transpose1d,
    conv_transpose2d=conv_transpose2d, conv_transpose3d=conv_transpose3d,
    avg_pool1d=avg_pool1d, max_pool1d=max_pool1d, max_pool2d=max_pool2d, max_pool3d=max_pool3d,
    max_pool1d_with_indices=max_pool1d_with_indices, adaptive_avg_pool1d=adaptive_avg_pool1d,
    adaptive_max_pool1d=_torch_adaptive_max_pool1d, pixel_shuffle=pixel_shuffle,
    pixel_unshuffle=pixel_unshuffle, cosine_similarity=cosine_similarity,
    pairwise_distance=pairwise_distance, pdist=pdist, cdist=cdist, rms_norm=rms_norm,
    conv_tbc=conv_tbc, embedding_bag=_torch_embedding_bag,
    dropout=_torch_dropout, alpha_dropout=_torch_alpha_dropout,
    feature_dropout=_torch_feature_dropout, feature_alpha_dropout=_torch_feature_alpha_dropout,
    dropout_=_torch_inplace_dropout(), alpha_dropout_=_torch_inplace_dropout(alpha=True),
    feature_dropout_=_torch_inplace_dropout(feature=True),
    feature_alpha_dropout_=_torch_inplace_dropout(feature=True, alpha=True),
    batch_norm=_torch_batch_norm, instance_norm=_torch_instance_norm,
    layer_norm=_torch_layer_norm, group_norm=_torch_group_norm, embedding=_torch_embedding,
    constant_pad_nd=_torch_constant_pad_nd,
    native_layer_norm=_native_layer_norm, native_group_norm=_native_group_norm,
    embedding_renorm_=_embedding_renorm_,
    bilinear=bilinear, channel_shuffle=channel_shuffle,
    native_channel_shuffle=native_channel_shuffle,
    kl_div=_kl_div, ctc_loss=_torch_ctc_loss,
    binary_cross_entropy_with_logits=_torch_bce_with_logits,
    poisson_nll_loss=_torch_poisson_nll_loss, triplet_margin_loss=_torch_triplet_margin_loss,
    cosine_embedding_loss=_torch_cosine_embedding_loss,
    hinge_embedding_loss=_torch_hinge_embedding_loss,
    margin_ranking_loss=_torch_margin_ranking_loss,
)


# ---- multi-head attention (the computation of nn.MultiheadAttention) -------------------------
# PyTorch keeps masks in two conventions: boolean (True = this key is masked out) and additive
# float (added to the scores, -inf masks out). `_canonical_mask` turns the boolean form into the
# additive one, so the key-padding mask and the attention mask can be merged by addition.
def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype is not D.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=_user_stacklevel())
    if is_float:
        return mask
    return E.zeros_like(mask, dtype=target_type).masked_fill_(mask, -math.inf)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the call is batched (3-D query) or unbatched (2-D); the other shapes must agree."""
    nd = query.dim()
    if nd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{nd}-D query tensor")
    kind = "For batched (3-D) `query`" if nd == 3 else "For unbatched (2-D) `query`"
    if key.dim() != nd or value.dim() != nd:
        raise AssertionError(f"{kind}, expected `key` and `value` to be {nd}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != nd - 1:
        raise AssertionError(f"{kind}, expected `key_padding_mask` to be `None` or {nd - 1}-D "
                             f"but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"{kind}, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if nd == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return nd == 3


def _in_projection_packed(q, k, v, w, b=None):
    """Project q, k, v with the rows of `w` (and `b`) packed in q, k, v order: one matmul when
    q, k, v are one tensor (self-attention), two when only k is v (encoder-decoder). The packed
    result is split as PyTorch splits it (unflatten to (3, E), the 3 moved to the front, made
    contiguous, then indexed), so exported graphs record torch's ops."""
    e = q.shape[-1]
    if k is v:
        if q is k:
            proj = _split_packed(linear(q, w, b), 3, e)
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        q_proj = linear(q, w_q, b_q)
        kv_proj = _split_packed(linear(k, w_kv, b_kv), 2, e)
        return q_proj, kv_proj[0], kv_proj[1]
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    w_q, w_k, w_v = w.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _split_packed(proj, n, e):
    """(..., n * E) -> (n, ..., E), contiguous."""
    return proj.unflatten(-1, (n, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """Project q, k, v with separate weights (kdim or vdim differ from embed_dim)."""
    e_q, e_k, e_v = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, t, shape in (("query weights", w_q, (e_q, e_q)), ("key weights", w_k, (e_q, e_k)),
                           ("value weights", w_v, (e_q, e_v)), ("query bias", b_q, (e_q,)),
                           ("key bias", b_k, (e_q,)), ("value bias", b_v, (e_q,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {name} shape of {shape}, but got {t.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first inputs (L, N, E), as nn.MultiheadAttention:

        q, k, v = in-projections of query, key, value, split into num_heads heads
        head_i  = softmax(q_i k_i^T / sqrt(head_dim) + mask) v_i
        output  = concat(head_1 .. head_h) W_out^T + b_out

    The key-padding mask and the attention mask are merged into one additive mask of shape
    (N * num_heads, L, S). With need_weights the weights are computed explicitly and returned
    (averaged over heads unless average_attn_weights=False); without, the heads go through
    scaled_dot_product_attention and the weights are None.
    """
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:  # run as a batch of one
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, *biases)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:  # as (1 or N * num_heads, L, S)
        expected = (tgt_len, src_len) if attn_mask.dim() == 2 else \
            (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(f"The shape of the {attn_mask.dim()}D attn_mask is "
                               f"{attn_mask.shape}, but should be {expected}.")
        if attn_mask.dim() == 2:
            attn_mask = attn_mask.unsqueeze(0)

    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None
                             else "bias_v is set but bias_k is None")
    if bias_k is not None:  # one learned key/value appended to every sequence
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static "
                                 f"{'key' if static_k is not None else 'value'}.")
        k = E.cat([k, bias_k.repeat(1, bsz, 1)])
        v = E.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)

    # heads into the batch dim: (L, N, E) -> (N * num_heads, L, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:  # one all-zero key/value appended to every sequence
        zeros = E.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = E.cat([k, zeros], 1)
        v = E.cat([v, zeros], 1)
        attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        for i, n in enumerate((bsz, src_len)):
            if key_padding_mask.shape[i] != n:
                raise AssertionError(f"Expected key_padded_mask.shape[{i}] to be {n}, but got "
                                     f"{key_padding_mask.shape[i]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len) \
            .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = E.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = E.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        attn_output = E.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    else:
        if attn_mask is not None:  # (1 or N * num_heads, L, S) -> (1 or N, num_heads, L, S)
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
                attn_mask.view(bsz, num_heads, -1, src_len)
        q = q.view(bsz, num_heads, tgt_len, head_dim)
        k = k.view(bsz, num_heads, src_len, head_dim)
        v = v.view(bsz, num_heads, src_len, head_dim)
        attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
        attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.shape[1])
        weights = None
    if not batched:
        attn_output = attn_output.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return attn_output, weights


# ---- the fused inference kernels nn.MultiheadAttention's fast path calls ----------------------
def _transform_bias_rescale_qkv(qkv, qkv_bias, num_heads):
    """torch._transform_bias_rescale_qkv: a packed (B, T, 3E) projection plus its bias, split
    into q, k, v of shape (B, num_heads, T, E / num_heads), q scaled by 1 / sqrt(E / num_heads)."""
    return _split_heads_rescale(qkv + qkv_bias, num_heads)


def _split_heads_rescale(qkv, num_heads):
    bsz, seq_len, three_e = qkv.shape
    head_dim = three_e // 3 // num_heads
    q, k, v = (x.view(bsz, seq_len, num_heads, head_dim).transpose(1, 2)
               for x in qkv.chunk(3, -1))
    return q * math.sqrt(1.0 / float(head_dim)), k, v


def _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
                                 proj_weight, proj_bias, mask=None, need_weights=True,
                                 average_attn_weights=True, mask_type=None):
    """torch._native_multi_head_attention on batch-first (B, T, E) inputs. `mask` is read as
    boolean (any non-zero value masks out), broadcast by mask_type: 0 an (L, L) attention mask,
    1 a (B, S) key-padding mask, 2 a (B, H, L, S) merged one. A fully masked row gives NaN."""
    if query.is_nested:  # run padded, masking the keys past each sequence's end
        return _nested_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight,
                                            qkv_bias, proj_weight, proj_bias, need_weights,
                                            average_attn_weights)
    if query.dim() != 3:
        raise RuntimeError(f"expected 3-D `query`, got {query.dim()}-D tensor")
    if query.shape != key.shape or key.shape != value.shape:
        raise RuntimeError("expected `query`/`key`/`value` shapes to match")
    if query.shape[2] != embed_dim:
        raise RuntimeError(f"expected `query` to have embed_dim {embed_dim}, but got "
                           f"{query.shape[2]}")
    bsz, seq_len = query.shape[:2]
    # the same steps, in the same order, as multi_head_attention_forward, so that the two
    # paths agree to the bit
    if query is key and key is value:
        qkv = linear(query, qkv_weight, qkv_bias)
    else:
        qkv = E.cat([linear(x, w, b) for x, w, b in zip((query, key, value),
                                                         qkv_weight.chunk(3),
                                                         qkv_bias.chunk(3))], -1)
    q, k, v = _split_heads_rescale(qkv, num_head)
    scores = E.matmul(q, k.transpose(-2, -1))
    if mask is not None:
        masked = mask.to(D.bool)
        if mask_type == 1:
            masked = masked.view(bsz, 1, 1, -1)
        scores = scores.masked_fill(masked, -math.inf)
    weights = E.softmax(scores, -1)
    attn_output = E.matmul(weights, v).transpose(1, 2).reshape(bsz, seq_len, embed_dim)
    attn_output = linear(attn_output, proj_weight, proj_bias)
    if not need_weights:
        return attn_output, None
    return attn_output, weights.mean(dim=1) if average_attn_weights else weights


def _nested_multi_head_attention(query, key, value, *args):
    from ..nested import nested_tensor
    lengths = [t.shape[0] for t in query.unbind()]
    padded = query.to_padded_tensor(0.0)
    if key is query and value is query:
        key = value = padded
    else:
        key, value = key.to_padded_tensor(0.0), value.to_padded_tensor(0.0)
    ends = E.tensor(lengths, device=padded.device).unsqueeze(1)
    padding = E.arange(padded.shape[1], device=padded.device).unsqueeze(0) >= ends
    *proj, need_weights, average_attn_weights = args
    out, weights = _native_multi_head_attention(padded, key, value, *proj, padding,
                                                need_weights, average_attn_weights, 1)
    return nested_tensor([o[:n] for o, n in zip(out.unbind(), lengths)]), weights


def _fused_sdp_choice(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
                      scale=None, enable_gqa=False):
    """torch._fused_sdp_choice on the CPU: the SDPBackend value PyTorch's dispatch picks, the
    flash kernel when enabled and the (dense) inputs suit it, else the math kernel."""
    flash = not query.is_nested and _attention._cpu_runs_flash(query, key, value, attn_mask,
                                                                 dropout_p, enable_gqa)
    return _attention.SDPBackend.FLASH_ATTENTION.value if flash else \
        _attention.SDPBackend.MATH.value


TORCH_LEVEL.update(_fused_sdp_choice=_fused_sdp_choice,
                   _native_multi_head_attention=_native_multi_head_attention,
                   _transform_bias_rescale_qkv=_transform_bias_rescale_qkv)


def _pad_masks(attn_mask, key_padding_mask):
    """Both masks (if given) with a kept column for a key appended to every sequence."""
    return (None if attn_mask is None else pad(attn_mask, (0, 1)),
            None if key_padding_mask is None else pad(key_padding_mask, (0, 1)))


def _heads(x, static, name, batch_heads, head_dim):
    """(S, N, E) -> (N * num_heads, S, head_dim), or the caller's precomputed `static` one."""
    if static is None:
        return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    for i, n in ((0, batch_heads), (2, head_dim)):
        if static.shape[i] != n:
            raise AssertionError(f"expecting {name}.size({i}) of {n}, but got {static.shape[i]}")
    return static


from . import grad  # noqa: E402,F401  (torch.nn.functional.grad is torch.nn.grad)
