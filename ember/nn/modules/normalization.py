"""Normalization layers that use each sample's own statistics: LayerNorm, GroupNorm, RMSNorm
(learnable per-element or per-channel scale and shift, initialised to ones and zeros),
LocalResponseNorm and the legacy CrossMapLRN2d (no parameters)."""
import numbers

from .module import Module
from ..parameter import Parameter
from ...autograd.function import Function
from .. import init, functional as F
from ... import _refs as E


class _ChannelWindowNorm(Module):
    """The options of LocalResponseNorm and CrossMapLRN2d: each value is divided by
    (k + alpha / size * sum of squares over `size` neighbouring channels) ** beta."""

    def __init__(self, size, alpha, beta, k):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LocalResponseNorm(_ChannelWindowNorm):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


def _channel_window_sum(t, lo, hi):
    """out[:, c] = sum of t[:, j] for j from c + lo to c + hi (channels outside are zero)."""
    channels = t.shape[1]
    padded = F.pad(t, (0, 0, 0, 0, -lo, hi))
    out = padded[:, 0:channels]
    for i in range(1, hi - lo + 1):
        out = out + padded[:, i:i + channels]
    return out


class _CrossMapLRN2dFunction(Function):
    """The legacy (Lua Torch) cross-channel LRN, reproduced as PyTorch computes it.

    Its running-window forward never drops channel 0 from the sum once the window has moved
    past it, and its backward sums the ratios over the window [c - r, c + size - 1 - r]
    (r = (size + 1) // 2) rather than differentiating that forward. Both quirks are kept
    so that values and gradients equal PyTorch's; LocalResponseNorm is the well-defined form.
    PyTorch's is an autograd.Function over tensor ops too, and so is this one: forward and
    backward are ember ops, which explain() records.
    """
    _backward_name = "CrossMapLRN2dBackward"  # PyTorch's node for it

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        half = (size - 1) // 2
        square = input * input
        window = _channel_window_sum(square, -half, half)
        if input.shape[1] > half + 1:  # channel 0 stays in the sums from channel half + 1 on
            window[:, half + 1:] += square[:, :1]
        scale = window * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size = ctx.size
        r = (size + 1) // 2
        ratio = _channel_window_sum(grad_output * output / scale, -r, size - 1 - r)
        grad_input = scale.pow(-ctx.beta) * grad_output \
            - (2 * ctx.alpha * ctx.beta / size) * input * ratio
        return grad_input, None, None, None, None


class CrossMapLRN2d(_ChannelWindowNorm):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)


def _as_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


class _AffineNorm(Module):
    """What LayerNorm and GroupNorm share: a learnable scale `weight` and shift `bias` of one
    shape (None when not affine, the shift None without bias), reset to one and zero, the
    identity until training moves them; and a repr that ends in bias=True/False."""
    _repr_format = ""

    def _init_affine(self, affine, bias, shape, device, dtype):
        self.register_parameter("weight", Parameter(E.empty(shape, device=device, dtype=dtype))
                                if affine else None)
        self.register_parameter("bias", Parameter(E.empty(shape, device=device, dtype=dtype))
                                if affine and bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def extra_repr(self):
        return self._repr_format.format(**self.__dict__, use_bias=self.bias is not None)


class LayerNorm(_AffineNorm):
    _repr_format = ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                    "bias={use_bias}")

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self._init_affine(elementwise_affine, bias, self.normalized_shape, device, dtype)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class GroupNorm(_AffineNorm):
    _repr_format = "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}"

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        self._init_affine(affine, bias, (num_channels,), device, dtype)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.register_parameter("weight", Parameter(E.empty(
            self.normalized_shape, device=device, dtype=dtype)) if elementwise_affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, "
                "elementwise_affine={elementwise_affine}".format(**self.__dict__))
