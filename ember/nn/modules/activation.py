"""Activation modules: thin Modules around the nn.functional activations, holding their
hyper-parameters (and PReLU its learnable slope) with PyTorch's names, defaults and reprs."""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .module import Module
from ..parameter import Parameter
from .. import init, functional as F
from ... import _refs as E


def _inplace_repr(inplace, leading=""):
    """PyTorch shows `inplace=True` only when set; after other fields it follows a comma."""
    return f"{leading}inplace=True" if inplace else ""


class _InplaceUnit(Module):
    """An elementwise function whose only argument is `inplace`."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + \
            _inplace_repr(self.inplace, ", ")


class ReLU(_InplaceUnit):
    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class RReLU(Module):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in training
    and fixed at (lower + upper) / 2 in evaluation."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + _inplace_repr(self.inplace, ", ")


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=_user_stacklevel())
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=_user_stacklevel())
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            _inplace_repr(self.inplace, ", ")


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Hardsigmoid(_InplaceUnit):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""  # PyTorch leaves `inplace` out of this repr


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class SiLU(_InplaceUnit):
    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceUnit):
    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(_InplaceUnit):
    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""  # PyTorch leaves `inplace` out of this repr


class _AlphaUnit(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class ELU(_AlphaUnit):
    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)


class CELU(_AlphaUnit):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_InplaceUnit):
    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class _Shrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    def forward(self, input):
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + _inplace_repr(self.inplace, ", ")


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """max(0, x) + a * min(0, x) with a learnable `a`: one shared slope, or one per channel
    (dimension 1 of the input), all starting at `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(E.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxBase):
    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels at every spatial position of a (N, C, H, W) or (C, H, W)
    input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)
from .attention import MultiheadAttention  # noqa: E402,F401  (PyTorch defines it in this module)
