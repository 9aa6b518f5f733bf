"""Derivatives of the neural-network functions: softmax, losses, recurrent layers, convolution,
pooling, normalization, embedding, padding."""
import math

from ..grad_mode import is_grad_enabled
from ..variable_type import derivative, not_differentiable, not_implemented
from ... import _refs as E
from ._common import _aten
from ..._core.memory_format import channels_last as _channels_last


# ---- softmax and losses
derivative("_softmax", {"self": lambda grad, result, dim, self:
                        _aten._softmax_backward_data(grad, result, dim, self.dtype)},
           node_name="SoftmaxBackward0")
derivative("_log_softmax", {"self": lambda grad, result, dim, self:
                            _aten._log_softmax_backward_data(grad, result, dim, self.dtype)},
           node_name="LogSoftmaxBackward0")


def _softmax_bwd_grad_output(grad, output, dim, input_dtype):
    return _aten._softmax_backward_data(grad, output, dim, input_dtype)


def _softmax_bwd_output(grad, grad_output, output, dim):
    # d/dy [y * (g - sum(g*y))] applied to grad
    s = (grad_output * output).sum(dim, keepdim=True)
    gs = (grad * output).sum(dim, keepdim=True)
    return grad * (grad_output - s) - gs * grad_output


derivative("_softmax_backward_data", {"grad_output": _softmax_bwd_grad_output,
                                      "output": _softmax_bwd_output})


def _log_softmax_bwd_output(grad, grad_output, output, dim):
    return -(grad * output.exp()) * grad_output.sum(dim, keepdim=True)


derivative("_log_softmax_backward_data", {
    "grad_output": lambda grad, output, dim, input_dtype:
        grad - (grad * output.exp()).sum(dim, keepdim=True),
    "output": _log_softmax_bwd_output})


derivative("nll_loss", {"self": lambda grad, self, target, weight, reduction, ignore_index:
                        _aten._nll_loss_backward(grad, self, target, weight, reduction,
                                                      ignore_index)},
           node_name=lambda self: "NllLossBackward0" if self.dim() <= 2  # PyTorch's nll_loss2d
           else "NllLoss2DBackward0")                                    # for images and beyond
derivative("_nll_loss_backward", {  # linear in grad_output: its adjoint is nll_loss itself
    "grad_output": lambda grad, target, weight, reduction, ignore_index:
        _aten.nll_loss(grad, target, weight, reduction, ignore_index)},
    node_name="NllLossBackwardBackward0")


def _mse_grad(grad, self, target, reduction):
    d = self - target
    if reduction == 1:
        return grad * 2 * d / d.numel()
    return grad * 2 * d


derivative("mse_loss", {"self": _mse_grad,
                        "target": lambda grad, self, target, reduction:
                            -_mse_grad(grad, self, target, reduction)})


def _robust_grad(grad, self, target, reduction, threshold, huber):
    """d loss / d self of smooth_l1 and huber: x / beta (smooth_l1) or x (huber) where
    |x| < threshold, sign(x) (smooth_l1) or delta * sign(x) (huber) elsewhere; x = self -
    target."""
    d = self - target
    inside, outside = (d, threshold) if huber else (d / threshold, 1.0)
    g = E.where(d.abs() < threshold, inside, d.sign() * outside)
    if reduction == 1:
        g = g / max(d.numel(), 1)
    return grad * g


derivative("smooth_l1_loss", {
    "self": lambda grad, self, target, reduction, beta:
        _robust_grad(grad, self, target, reduction, beta, False),
    "target": lambda grad, self, target, reduction, beta:
        -_robust_grad(grad, self, target, reduction, beta, False)})
def _soft_margin_grad(grad, self, target, reduction):
    g = -target * E.sigmoid(-self * target)
    if reduction == 1:
        g = g / max(self.numel(), 1)
    return (grad * g).to(self.dtype)


derivative("soft_margin_loss", {"self": _soft_margin_grad})
derivative("huber_loss", {
    "self": lambda grad, self, target, reduction, delta:
        _robust_grad(grad, self, target, reduction, delta, True),
    "target": lambda grad, self, target, reduction, delta:
        -_robust_grad(grad, self, target, reduction, delta, True)})


# ---- losses with backward kernels of their own (_aten/loss.py, _aten/ctc.py)
def _sample_scale(target, weight, reduction, ignore_index, dtype):
    """Each sample's factor in a class-index loss: w[t] (0 where ignored), divided by the sum
    of these for "mean" (all zeros stay zeros)."""
    valid = target != ignore_index
    scale = valid.to(dtype)
    if weight is not None:
        scale = scale * weight.index_select(0, target.masked_fill(~valid, 0).long())
    if reduction == 1:
        total = scale.sum()
        scale = scale / (total + (total == 0).to(dtype))
    return scale


def _class_onehot(target, ignore_index, classes, dtype):
    return _aten.one_hot(target.masked_fill(target == ignore_index, 0).long(), classes).to(dtype)


# The fused cross-entropy (Note [Fused softmax cross-entropy] in _aten/loss.py): its node has
# the name of PyTorch's last node there (nll_loss's, or the add of the label-smoothed loss's
# two terms), and its backward reads the softmax the forward returned.
derivative("_softmax_cross_entropy", {
    "self": lambda grad, self, target, weight, reduction, ignore_index, label_smoothing, result1:
        _aten._softmax_cross_entropy_backward(grad, self, target, weight, reduction,
                                              ignore_index, result1, label_smoothing)},
    node_name=lambda label_smoothing: "AddBackward0" if label_smoothing else "NllLossBackward0",
    output_differentiability=[True, False])


def _smoothing_scales(self, target, weight, reduction, ignore_index, label_smoothing):
    """The backward's per-sample factors a (of softmax - onehot(t)) and, with label smoothing,
    b (of sum(w) softmax - w): see softmax_cross_entropy_backward in _aten/loss.py."""
    scale = _sample_scale(target, weight, reduction, ignore_index, self.dtype)
    if not label_smoothing:
        return scale, None
    valid = (target != ignore_index).to(self.dtype)
    if reduction == 1:  # the same divisor as the plain loss's: sum(w[t]) over valid samples
        ws = valid if weight is None else valid * weight.index_select(
            0, target.masked_fill(target == ignore_index, 0).long())
        total = ws.sum()
        valid = valid / (total + (total == 0).to(self.dtype))
    return scale * (1 - label_smoothing), valid * (label_smoothing / self.shape[1])


def _sce_backward_grad_output(grad, self, target, weight, reduction, ignore_index,
                              label_smoothing):
    """The backward is (softmax(x) - onehot(t)) * grad_output * a, plus, with label smoothing,
    (sum(w) softmax(x) - w) * grad_output * b: linear in grad_output."""
    p = _aten._softmax(self, 1, False)
    onehot = _class_onehot(target, ignore_index, self.shape[1], self.dtype)
    a, b = _smoothing_scales(self, target, weight, reduction, ignore_index, label_smoothing)
    r = (grad * (p - onehot)).sum(1) * a
    if b is not None:
        smooth = p * self.shape[1] - 1 if weight is None else p * weight.sum() - weight
        r = r + (grad * smooth).sum(1) * b
    return r if reduction == 0 else r.sum()


def _sce_backward_self(grad, grad_output, self, target, weight, reduction, ignore_index,
                       label_smoothing):
    """softmax's Jacobian-vector product; the softmax recomputed from self (not the saved one),
    so that higher derivatives see that it depends on self."""
    a, b = _smoothing_scales(self, target, weight, reduction, ignore_index, label_smoothing)
    if b is not None:  # the softmax's factor
        a = a + b * (self.shape[1] if weight is None else weight.sum())
    coef = grad_output * a
    p = _aten._softmax(self, 1, False)
    return _aten._softmax_backward_data(grad * coef.unsqueeze(1), p, 1, self.dtype)


derivative("_softmax_cross_entropy_backward", {"grad_output": _sce_backward_grad_output,
                                               "self": _sce_backward_self})


def _own_scale(t, weight, reduction):
    """The factor of an elementwise loss's gradient: its weight, over the number of elements of
    `t` for "mean". PyTorch's formulas divide by the size of the argument differentiated
    (the input, or the target), not by the broadcast shape's: a 0-d input gets the sum."""
    scale = 1 / t.numel() if reduction == 1 and t.numel() else 1
    return scale if weight is None else weight * scale


derivative("binary_cross_entropy", {
    "self": lambda grad, self, target, weight, reduction:
        _aten.binary_cross_entropy_backward(grad, self, target, weight, reduction),
    "target": lambda grad, self, target, weight, reduction: grad * ((-self).log1p() - self.log())
    * _own_scale(target, weight, reduction)})


def _bce_backward_grads(grads, grad_output, self, target, weight, reduction, needs):
    """The backward is grad_output * scale * (x - y) / D with D = max(x (1 - x), 1e-12)."""
    gg = grads[0] * _own_scale(self, weight, reduction)
    xx = self * (1 - self)
    d = xx.clamp(min=1e-12)
    g_grad = gg * (self - target) / d if needs[0] else None
    g_self = g_target = None
    if needs[1]:
        d_d = _aten.where(xx > 1e-12, 1 - 2 * self, 0.0)
        g_self = gg * grad_output * (d - (self - target) * d_d) / (d * d)
    if needs[2]:
        g_target = -grads[0] * _own_scale(target, weight, reduction) * grad_output / d
    return g_grad, g_self, g_target


derivative("binary_cross_entropy_backward",
           {"grad_output, self, target": _bce_backward_grads})


def _bce_logits_target(grad, self, target, weight, pos_weight, reduction):
    g = -self if pos_weight is None else -self - (pos_weight - 1) * _aten.log_sigmoid(self)
    return grad * g * _own_scale(target, weight, reduction)


derivative("binary_cross_entropy_with_logits", {
    "self": lambda grad, self, target, weight, pos_weight, reduction:
        _aten._binary_cross_entropy_with_logits_backward(grad, self, target, weight,
                                                         pos_weight, reduction),
    "target": _bce_logits_target})


def _bce_logits_backward_grads(grads, grad_output, self, target, weight, pos_weight, reduction,
                               needs):
    """The backward is grad_output * scale * ((1 - y) - (1 + (pos_weight - 1) y) sigmoid(-x)),
    summed to the input's shape: the incoming gradient spreads over the terms' broadcast shape."""
    shape = E.broadcast_shapes(*(t.shape for t in (grad_output, self, target, weight, pos_weight)
                                 if t is not None))
    gg = grads[0].expand(shape) * _own_scale(self, weight, reduction)
    sig_neg = (-self).sigmoid()
    pw_scale = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    g_grad = g_self = g_target = None
    if needs[0]:
        g_grad = gg * ((1 - target) - pw_scale * sig_neg)
    if needs[1]:
        g_self = gg * grad_output * pw_scale * sig_neg * self.sigmoid()
    if needs[2]:
        g_target = -gg * grad_output * (1 if pos_weight is None else 1 + (pos_weight - 1) *
                                        sig_neg)
    return g_grad, g_self, g_target


derivative("_binary_cross_entropy_with_logits_backward",
           {"grad_output, self, target": _bce_logits_backward_grads})

derivative("_ctc_loss", {
    "log_probs": lambda grad, log_probs, targets, input_lengths, target_lengths, blank,
    zero_infinity, result, result1: _aten._ctc_loss_backward(
        grad, log_probs, targets, input_lengths, target_lengths, result, result1, blank,
        zero_infinity)},
    output_differentiability=[True, False])
not_implemented("_ctc_loss_backward")  # as in PyTorch

# cdist's p-norm path: a backward kernel that is not differentiable again, as in PyTorch
derivative("_cdist_forward", {
    "x1": lambda grad, x1, x2, p, result:
    _aten._cdist_backward(grad.contiguous(), x1, x2, p, result).sum_to_size(x1.shape),
    "x2": lambda grad, x1, x2, p, result: _aten._cdist_backward(
        grad.mT.contiguous(), x2, x1, p, result.mT.contiguous()).sum_to_size(x2.shape)},
    node_name="CdistBackward0")
not_implemented("_cdist_backward")


# ---- recurrent layers (_aten/rnn.py)
def _rnn_layer_grads(grads, input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx,
                     mode, batch_sizes, reverse, result, result3, needs):
    if is_grad_enabled():  # create_graph: the gradients through the layer's steps as tensor ops
        return _rnn_layer_double_grads(grads, (input, weight_ih, weight_hh, bias_ih, bias_hh,
                                               weight_hr, hx, cx), mode, batch_sizes, reverse,
                                       needs)
    return _aten._rnn_layer_backward(input, weight_ih, weight_hh, weight_hr, result, result3,
                                     grads[0], grads[1], grads[2] if mode == "LSTM" else None,
                                     mode, batch_sizes, reverse, list(needs))


def _rnn_layer_double_grads(grads, tensors, mode, batch_sizes, reverse, needs):
    """The layer's gradients as differentiable functions of its inputs and of `grads`: the
    forward again in tensor ops (_aten/rnn.py rnn_layer_by_steps), differentiated with
    create_graph, as PyTorch's float64 CPU layers (tensor ops themselves) are."""
    from ..._aten.rnn import rnn_layer_by_steps
    from .. import grad as autograd_grad
    outs = rnn_layer_by_steps(*tensors, mode, batch_sizes, reverse)
    pairs = [(o, g) for o, g in zip(outs, grads) if o is not None and g is not None]
    wanted = [i for i, t in enumerate(tensors) if t is not None and needs[i]]
    got = autograd_grad([o for o, _ in pairs], [tensors[i] for i in wanted],
                        [g for _, g in pairs], create_graph=True, allow_unused=True)
    result = [None] * len(tensors)
    for i, g in zip(wanted, got):
        result[i] = g if g is not None else tensors[i].new_zeros(tensors[i].shape)
    return tuple(result)


# one node per layer and direction, named as PyTorch's CPU LSTM layer node
derivative("_rnn_layer", {
    "input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx": _rnn_layer_grads},
    node_name="MkldnnRnnLayerBackward0", output_differentiability=[True, True, True, False])
not_implemented("_rnn_layer_backward")

# ---- convolution, pooling, normalization, embedding, padding
# A convolution F(x, W) is linear in x and in W, and so are its two backward products
# (A_W^T g for the input, B_x^T g for the weight). The derivative of each backward product is
# therefore F or the other backward product again:
#   d<gg, A_W^T g>/dg = F(gg, W)      d<gg, A_W^T g>/dW = B_gg^T g   (weight grad, input gg)
#   d<gg, B_x^T g>/dg = F(x, gg)      d<gg, B_x^T g>/dx = A_gg^T g   (input grad, weight gg)
# which is how PyTorch's _convolution_double_backward works too.
def _conv_bias_grad(grad, bias_shape):
    """grad_output summed over all but its channels; zeros when the input had no channels
    (the output then has none, Note [Empty convolutions] in _aten/conv.py)."""
    if grad.shape[1] != bias_shape[0]:
        return grad.new_zeros(bias_shape)
    return grad.sum([0] + list(range(2, grad.dim())))


def _in_weight_layout(grad_weight, weight):
    """A channels_last 4-d weight gets a channels_last gradient, as PyTorch's (its kernel runs
    channels-last whenever the weight is; the backward op sees the input and grad_output only,
    which are contiguous for an unbatched input)."""
    if weight.dim() == 4 and not weight.is_contiguous() and \
            weight.is_contiguous(memory_format=_channels_last):
        return grad_weight.contiguous(memory_format=_channels_last)
    return grad_weight


derivative("convolution", {
    "input": lambda grad, weight, input_shape, stride, padding, dilation, transposed,
    output_padding, groups: _aten._convolution_backward_input(
        grad, weight, input_shape, stride, padding, dilation, transposed, output_padding, groups),
    "weight": lambda grad, input, weight, stride, padding, dilation, transposed,
    output_padding, groups: _in_weight_layout(_aten._convolution_backward_weight(
        grad, input, list(weight.shape), stride, padding, dilation, transposed, output_padding,
        groups), weight),
    "bias": _conv_bias_grad})
# A training convolution hands its im2col columns to the weight gradient as a second output
# (Note [Keeping the forward's columns for the weight gradient] in _aten/conv.py).
derivative("_convolution_with_columns", {
    "input": lambda grad, weight, input_shape, stride, padding, dilation, groups:
        _aten._convolution_backward_input(grad, weight, input_shape, stride, padding, dilation,
                                          False, [0] * len(stride), groups),
    "weight": lambda grad, input, weight_shape, stride, padding, dilation, groups, result1:
        _aten._convolution_backward_weight(grad, input, weight_shape, stride, padding, dilation,
                                           False, [0] * len(stride), groups, result1),
    "bias": _conv_bias_grad},
    node_name="ConvolutionBackward0", output_differentiability=[True, False])
derivative("_convolution_backward_input", {
    "grad_output": lambda grad, weight, stride, padding, dilation, transposed, output_padding,
    groups: _aten.convolution(grad, weight, None, stride, padding, dilation, transposed,
                              output_padding, groups),
    "weight": lambda grad, grad_output, weight_shape, stride, padding, dilation, transposed,
    output_padding, groups: _aten._convolution_backward_weight(
        grad_output, grad, weight_shape, stride, padding, dilation, transposed, output_padding,
        groups)}, node_name="ConvolutionBackwardBackward0")
derivative("_convolution_backward_weight", {
    "grad_output": lambda grad, input, stride, padding, dilation, transposed, output_padding,
    groups: _aten.convolution(input, grad, None, stride, padding, dilation, transposed,
                              output_padding, groups),
    "input": lambda grad, grad_output, input_shape, stride, padding, dilation, transposed,
    output_padding, groups: _aten._convolution_backward_input(
        grad_output, grad, input_shape, stride, padding, dilation, transposed, output_padding,
        groups)}, node_name="ConvolutionBackwardBackward0")
derivative("im2col", {"self": lambda grad, self_shape, kernel_size, dilation, padding, stride:
                      _aten.col2im(grad, list(self_shape[-2:]), kernel_size, dilation, padding,
                                   stride)})
derivative("col2im", {"self": lambda grad, kernel_size, dilation, padding, stride:
                      _aten.im2col(grad, kernel_size, dilation, padding, stride)})
derivative("pixel_shuffle", {"self": lambda grad, upscale_factor:
                             _aten.pixel_unshuffle(grad, upscale_factor)})
derivative("pixel_unshuffle", {"self": lambda grad, downscale_factor:
                               _aten.pixel_shuffle(grad, downscale_factor)})


def _gather_at(grad, indices, nd):
    """grad (..., *in) read at the flat spatial `indices` (..., *out): max pooling's gradient
    of its gradient (PyTorch's max_pool_double_backward) and max_unpool's gradient."""
    return grad.flatten(-nd).gather(-1, indices.flatten(-nd)).reshape(indices.shape)


def _pooling_derivatives(nd):
    max_pool_backward = getattr(_aten, f"max_pool{nd}d_with_indices_backward")
    avg_pool, avg_pool_backward = (getattr(_aten, f"avg_pool{nd}d"),
                                   getattr(_aten, f"avg_pool{nd}d_backward"))
    adaptive_max_backward = getattr(_aten, f"adaptive_max_pool{nd}d_backward")
    derivative(f"max_pool{nd}d_with_indices", {
        "self": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
            max_pool_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                              result1)},
        output_differentiability=[True, False])
    derivative(f"max_pool{nd}d_with_indices_backward", {
        "grad_output": lambda grad, indices: _gather_at(grad, indices, nd)})
    derivative(f"avg_pool{nd}d", {
        "self": lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override: avg_pool_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                                            count_include_pad, divisor_override)})
    derivative(f"avg_pool{nd}d_backward", {
        "grad_output": lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override: avg_pool(grad, kernel_size, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override)})
    derivative(f"adaptive_max_pool{nd}d", {
        "self": lambda grad, self, result1: adaptive_max_backward(grad, self, result1)},
        output_differentiability=[True, False])
    derivative(f"adaptive_max_pool{nd}d_backward", {
        "grad_output": lambda grad, indices: _gather_at(grad, indices, nd)})
    derivative(f"max_unpool{nd}d", {"self": lambda grad, indices: _gather_at(grad, indices, nd)})
    adaptive_avg = getattr(_aten, f"_adaptive_avg_pool{nd}d")
    adaptive_avg_backward = getattr(_aten, f"_adaptive_avg_pool{nd}d_backward")
    derivative(f"_adaptive_avg_pool{nd}d", {
        "self": lambda grad, self: adaptive_avg_backward(grad, self)})
    derivative(f"_adaptive_avg_pool{nd}d_backward", {
        "grad_output": lambda grad, grad_output_shape: adaptive_avg(
            grad, list(grad_output_shape[-nd:])),
        "self": lambda grad, self_shape: grad.new_zeros(self_shape)})


_pooling_derivatives(2)
_pooling_derivatives(3)


def _batch_norm_mask(needs):
    """The backward's output_mask: the inputs that need a gradient -- all three while a graph
    of the backward is recorded (create_graph), whose autograd node takes every output
    defined."""
    return [True, True, True] if is_grad_enabled() else list(needs)


def _batch_norm_grads(grads, input, weight, running_mean, running_var, result1, result2,
                      training, eps, needs):
    return _aten.native_batch_norm_backward(grads[0], input, weight, running_mean, running_var,
                                            result1, result2, training, eps,
                                            _batch_norm_mask(needs))


derivative("native_batch_norm", {"input, weight, bias": _batch_norm_grads},
           output_differentiability=[True, False, False])


def _legit_no_training_grads(grads, input, weight, running_mean, running_var, result1,
                             result2, eps, needs):
    return _aten.native_batch_norm_backward(grads[0], input, weight, running_mean, running_var,
                                            result1, result2, False, eps, _batch_norm_mask(needs))


derivative("_native_batch_norm_legit_no_training",
           {"input, weight, bias": _legit_no_training_grads},
           output_differentiability=[True, False, False])
derivative("_native_batch_norm_legit_functional", {"input, weight, bias": _batch_norm_grads},
           output_differentiability=[True, False, False, False, False])


def _native_dropout_grad(grad, result1, p, train):
    # train=None trains in the forward but scales the gradient by 1, as PyTorch's formula does
    scale = 1.0 if not train else (0.0 if p == 1 else 1.0 / (1.0 - p))
    return grad * result1 * scale


derivative("native_dropout", {"input": _native_dropout_grad},
           output_differentiability=[True, False])
derivative("native_dropout_backward",
           {"grad_output": lambda grad, mask, scale: grad * mask * scale})


def _batch_norm_double_backward(grads, grad_out, input, weight, running_mean, running_var,
                                save_mean, save_invstd, train, eps, needs):
    """The derivative of batch norm's backward (PyTorch's batchnorm_double_backward), in
    differentiable ops. gg_x, gg_w, gg_b are the incoming gradients of (grad_input, grad_weight,
    grad_bias); the result is the gradient for (grad_out, input, weight)."""
    gg_x, gg_w, gg_b = grads
    nd = input.dim()
    dims = [0] + list(range(2, nd))
    # an output left out by the backward's output_mask (or given no gradient) adds nothing
    c = input.shape[1]
    gg_x = input.new_zeros(input.shape) if gg_x is None else gg_x
    gg_w = input.new_zeros(c) if gg_w is None else gg_w
    gg_b = input.new_zeros(c) if gg_b is None else gg_b
    shape = [1, -1] + [1] * (nd - 2)

    def per_channel(t):
        return t.reshape(shape)

    def channel_sum(t):
        return t.sum(dims, keepdim=True)
    m = input.numel() // input.shape[1]
    if train:
        mean = per_channel(save_mean.to(input.dtype))
        invstd = per_channel(save_invstd.to(input.dtype))
    else:
        mean = per_channel(running_mean)
        invstd = per_channel((running_var + eps).rsqrt())
    gamma = per_channel(weight) if weight is not None else 1.0
    centered = input - mean
    invstd2, invstd3 = invstd * invstd, invstd * invstd * invstd
    g_sum = channel_sum(grad_out)
    g_centered_sum = channel_sum(grad_out * centered)
    gg_x_sum = channel_sum(gg_x)
    gg_x_centered_sum = channel_sum(gg_x * centered)

    def first_backward(g, scale):
        """batch norm's input gradient for output gradient g, weight `scale`"""
        return scale * invstd / m * (m * g - channel_sum(g) - centered * invstd2 *
                                     channel_sum(g * centered))
    grad_input = grad_weight = grad_grad_out = None
    if needs[1]:
        if train:
            common = (gg_x_sum * g_sum / m - channel_sum(grad_out * gg_x) +
                      3 / m * invstd2 * g_centered_sum * gg_x_centered_sum)
            grad_input = gamma * (centered * invstd3 * common / m +
                                  gg_x_centered_sum * invstd3 / m * (g_sum / m - grad_out) +
                                  g_centered_sum * invstd3 / m * (gg_x_sum / m - gg_x))
            grad_input = grad_input + per_channel(gg_w) * (
                grad_out * invstd - invstd * g_sum / m - centered * invstd3 * g_centered_sum / m)
        else:
            grad_input = per_channel(gg_w) * invstd * grad_out
    if needs[2] and weight is not None:
        if train:
            grad_weight = (gg_x * first_backward(grad_out, 1.0)).sum(dims)
        else:
            grad_weight = (gg_x * grad_out * invstd).sum(dims)
    if needs[0]:
        grad_grad_out = first_backward(gg_x, gamma) if train else gg_x * invstd * gamma
        grad_grad_out = grad_grad_out + per_channel(gg_w) * centered * invstd + per_channel(gg_b)
    return grad_grad_out, grad_input, grad_weight


derivative("native_batch_norm_backward",
           {"grad_out, input, weight": _batch_norm_double_backward})


def _row_norm_double_backward(grads, grad_out, input, mean, rstd, weight, view, needs):
    """The derivative of layer/group norm's backward, in differentiable ops, on the
    (N, G, C, L) view whose rows (dims 2, 3) share one mean and rstd and whose weight is per
    (G, C). With x_hat = (x - mean) * rstd and F(v) = rstd * (v - mean(v) - x_hat *
    mean(v * x_hat)) per row (the input gradient for an x_hat gradient v; F is symmetric),
    the backward is grad_input = F(g * w), grad_weight = sum(g * x_hat), grad_bias = sum(g).
    The input term of F's own derivative is batch norm's (see above) with rows for channels."""
    gg_x, gg_w, gg_b = grads
    n, groups, c, length = view
    m = c * length
    x = input.reshape(view)
    g = grad_out.reshape(view)
    s = rstd.to(x.dtype).reshape(n, groups, 1, 1)
    centered = x - mean.to(x.dtype).reshape(n, groups, 1, 1)
    xhat = centered * s
    w = weight.reshape(1, groups, c, 1) if weight is not None else None
    ggw = gg_w.reshape(1, groups, c, 1) if weight is not None and gg_w is not None else None
    ggx = gg_x.reshape(view)

    def rsum(t):
        return t.sum([2, 3], keepdim=True)

    def first_backward(v):
        return s * (v - rsum(v) / m - xhat * (rsum(v * xhat) / m))
    grad_grad_out = grad_input = grad_weight = None
    f_ggx = first_backward(ggx) if needs[0] or needs[2] else None
    if needs[0]:
        grad_grad_out = f_ggx * w if w is not None else f_ggx
        if ggw is not None:
            grad_grad_out = grad_grad_out + ggw * xhat
        if gg_b is not None:
            grad_grad_out = grad_grad_out + gg_b.reshape(1, groups, c, 1)
        grad_grad_out = grad_grad_out.reshape(input.shape)
    if needs[1]:
        u = g * w if w is not None else g
        s3 = s * s * s
        u_sum, u_centered_sum = rsum(u), rsum(u * centered)
        ggx_sum, ggx_centered_sum = rsum(ggx), rsum(ggx * centered)
        common = (ggx_sum * u_sum / m - rsum(u * ggx) +
                  3 / m * s * s * u_centered_sum * ggx_centered_sum)
        grad_input = (centered * s3 * common / m +
                      ggx_centered_sum * s3 / m * (u_sum / m - u) +
                      u_centered_sum * s3 / m * (ggx_sum / m - ggx))
        if ggw is not None:
            grad_input = grad_input + first_backward(g * ggw)
        grad_input = grad_input.reshape(input.shape)
    if needs[2] and weight is not None:
        grad_weight = (g * f_ggx).sum([0, 3]).reshape(weight.shape)
    return grad_grad_out, grad_input, grad_weight


def _layer_norm_view(input, normalized_shape):
    k = len(normalized_shape)
    return (math.prod(input.shape[:input.dim() - k]), 1, math.prod(normalized_shape), 1)


derivative("native_layer_norm", {
    "input, weight, bias": lambda grads, input, normalized_shape, weight, bias, result1, result2,
    needs: _aten.native_layer_norm_backward(grads[0], input, normalized_shape, result1, result2,
                                            weight, bias, list(needs))},
    output_differentiability=[True, False, False])
derivative("native_layer_norm_backward", {
    "grad_out, input, weight": lambda grads, grad_out, input, normalized_shape, mean, rstd,
    weight, needs: _row_norm_double_backward(grads, grad_out, input, mean, rstd, weight,
                                             _layer_norm_view(input, normalized_shape), needs)})


def _group_norm_grads(grads, raw_grads, input, weight, N, C, HxW, group, result1, result2,
                      needs):
    """The kernel's gradients for the output, plus, as in PyTorch (whose group norm mean and
    rstd are differentiable), the input gradient through mean and rstd when both received a
    gradient: d mean / dx = 1 / m, d rstd / dx = -rstd^3 (x - mean) / m per group. Which
    outputs received one is read from the graph (PyTorch's `grads[i].defined()`), never from
    the values, so the backward has no data-dependent branch for ember.compile to break on."""
    out = (None, None, None)
    if raw_grads[0] is not None:
        out = _aten.native_group_norm_backward(grads[0], input, result1, result2, weight, N, C,
                                               HxW, group, list(needs))
    if not needs[0] or raw_grads[1] is None or raw_grads[2] is None:
        return out
    g_mean, g_rstd = grads[1], grads[2]
    x = input.reshape(N, group, -1)
    mean, rstd = result1.unsqueeze(-1), result2.unsqueeze(-1)
    extra = (g_mean.unsqueeze(-1) - g_rstd.unsqueeze(-1) * rstd * rstd * rstd * (x - mean))
    extra = (extra / x.shape[-1]).reshape(input.shape)
    return (extra if out[0] is None else out[0] + extra,) + tuple(out[1:])


derivative("native_group_norm", {"input, weight, bias": _group_norm_grads})
derivative("native_group_norm_backward", {
    "grad_out, input, weight": lambda grads, grad_out, input, mean, rstd, weight, N, C, HxW,
    group, needs: _row_norm_double_backward(grads, grad_out, input, mean, rstd, weight,
                                            (N, group, C // group, HxW), needs)})


def _embedding_weight(grad, weight_shape, indices, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        return _embedding_sparse_grad(grad, weight_shape, indices, padding_idx,
                                      scale_grad_by_freq)
    return _aten.embedding_dense_backward(grad, indices, weight_shape[0], padding_idx,
                                          scale_grad_by_freq)


def _embedding_sparse_grad(grad, weight_shape, indices, padding_idx, scale_grad_by_freq):
    """sparse=True: a sparse COO gradient holding one entry per token, in token order and
    uncoalesced (a row picked twice has two entries), padding tokens left out — PyTorch's."""
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    num_features = grad.shape[-1]
    rows = indices.reshape(-1)
    values = grad.reshape(rows.shape[0], num_features)   # (-1 is ambiguous for 0 features)
    if padding_idx != -1:
        kept = rows != padding_idx
        rows, values = rows[kept], values[kept]
    # (the indices are copied: a gradient sharing the caller's index tensor would change
    # when the caller writes to it, as PyTorch's AccumulateGrad copies such a gradient)
    return _aten._sparse_coo_tensor_with_dims_and_tensors(
        1, 1, [weight_shape[0], num_features], rows.reshape(1, -1).long().clone(),
        values)


derivative("embedding", {"weight": _embedding_weight})
derivative("embedding_dense_backward", {
    "grad_output": lambda grad, indices, padding_idx: _aten.embedding(grad, indices).masked_fill(
        (indices == padding_idx).unsqueeze(-1), 0)})
derivative("_embedding_bag", {
    "weight": lambda grad, weight_shape, indices, offsets, result1, result2, result3,
    scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx:
        _aten._embedding_bag_backward(grad, indices, offsets, result1, result2, result3,
                                      weight_shape[0], scale_grad_by_freq, mode, sparse,
                                      per_sample_weights, padding_idx),
    "per_sample_weights": lambda grad, weight, indices, offsets, result1, mode, padding_idx:
        _aten._embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets,
                                                         result1, mode, padding_idx)},
    output_differentiability=[True, False, False, False])
not_implemented("_embedding_bag_backward")  # as in PyTorch
not_implemented("_embedding_bag_forward_only", "_embedding_bag_per_sample_weights_backward",
                listed=False)
derivative("constant_pad_nd", {"self": lambda grad, pad: _aten.constant_pad_nd(
    grad, [-p for p in pad])})


def _index_pad_derivatives(name):
    forward, backward = getattr(_aten, name), getattr(_aten, name + "_backward")
    derivative(name, {"self": lambda grad, self, padding: backward(grad, self, padding)})
    derivative(name + "_backward", {"grad_output": lambda grad, padding: forward(grad, padding)})


for _kind in ("reflection", "replication"):
    for _nd in (1, 2, 3):
        _index_pad_derivatives(f"{_kind}_pad{_nd}d")
not_differentiable("embedding_renorm_", "one_hot")
not_differentiable("_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_")


def _weight_norm_grads(grad, v, g, result1, dim, needs):
    """The fused kernel's backward; under create_graph the same sums in differentiable ops
    (PyTorch's `_weight_norm_differentiable_backward`)."""
    grad = grad.contiguous()
    if not is_grad_enabled():
        return _aten._weight_norm_interface_backward(grad, v, g, result1, dim)
    kept = [1] * v.dim()
    kept[dim] = v.shape[dim]
    rows = (grad * v).reshape(v.shape[0], -1) if dim == 0 else (grad * v).reshape(-1, v.shape[-1])
    sums = rows.sum(1 if dim == 0 else 0).reshape(kept)
    norms = result1.reshape(kept)
    grad_v = (g.reshape(kept) / norms) * (grad - v * (sums / (norms * norms)))
    return grad_v, (sums / norms).reshape(g.shape)


derivative("_weight_norm_interface", {"v, g": _weight_norm_grads},
           output_differentiability=[True, False])
not_implemented("_weight_norm_interface_backward", listed=False)
