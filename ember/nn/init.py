"""nn.init: parameter initialisation, drawing from the same streams as PyTorch's.

Every initialiser fills its tensor in place under `no_grad` (so a leaf Parameter can be
filled) and returns it. The random ones consume the generator exactly as PyTorch's do — the
same number of draws of the same kind, in the same order — so after the same `manual_seed`
ember's weights equal PyTorch's.
"""
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .. import _refs as E
from .. import linalg
from ..autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
]

_LINEAR_NONLINEARITIES = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                          "conv_transpose2d", "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended scale for the weights feeding `nonlinearity` (leaky_relu: `param` is the
    negative slope, 0.01 by default)."""
    if nonlinearity in _LINEAR_NONLINEARITIES:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with draws from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with draws from N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with draws from N(mean, std**2) restricted to [a, b], by rejection sampling.

    Which sampler runs depends on how much of the normal's mass lies inside [a, b]: above 30%
    every element is redrawn from the normal until it lands inside; below it, candidates are
    drawn uniformly on [a, b] and accepted with probability pdf(x) / pdf(mode) (the mode being
    the point of [a, b] nearest the mean). Each round redraws a whole tensor's worth of values
    (and keeps only what it needs), which is what keeps the stream in step with PyTorch's.
    """
    if tensor.is_meta:
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=_user_stacklevel())

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    with no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            # compare against the bounds as the tensor's dtype represents them
            lo = tensor.new_tensor(a, device="cpu").item()
            hi = tensor.new_tensor(b, device="cpu").item()
            result = tensor.normal_(mean, std, generator=generator)
            outside = (result < lo) | (result > hi)
            while outside.any():
                redraw = E.empty_like(result).normal_(mean, std, generator=generator)
                result = E.where(outside, redraw, result)
                outside = (result < lo) | (result > hi)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        accept_buf = E.empty_like(tensor)

        def log_ratio(x):
            # log(pdf(x) / pdf(mode)), computed in place on the candidate buffer
            return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

        tensor.uniform_(a, b, generator=generator)
        candidates = log_ratio(tensor.clone())
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        if not pending.any():
            return tensor
        result = tensor
        while True:
            candidates.uniform_(a, b, generator=generator)
            result = E.where(pending, candidates, result)
            log_ratio(candidates)
            rejected = accept_buf.uniform_(generator=generator).log_().gt(candidates)
            pending = E.where(pending, rejected, pending)
            if not pending.any():
                break
        tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    """Fill with `val`."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with 0."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D tensor with the identity (ones on the main diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.zero_()
        tensor.diagonal().fill_(1)
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-D convolution weight so the convolution copies its input channels (per
    group, as many as both sides have): a one at the kernel's centre for channel d -> d."""
    dimensions = tensor.ndimension()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:
        return tensor
    out_per_group = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_per_group, sizes[1])):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=_user_stacklevel())
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std**2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=_user_stacklevel())
        return tensor
    return normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix, trailing dimensions flattened: the Q of a Gaussian
    matrix's QR decomposition, each column's sign fixed by R's diagonal so Q is uniformly
    (Haar) distributed; the taller of the matrix and its transpose is factored."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened = flattened.t()
    q, r = linalg.qr(flattened)
    q = q * E.diag(r, 0).sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor with N(0, std**2) draws, then zero ceil(sparsity * rows) randomly
    chosen entries of every column (the row choices come from the global generator)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[E.randperm(rows)[:num_zeros], col] = 0
    return tensor


def _make_deprecate(method):
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=_user_stacklevel())
        return method(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated alias of :func:`ember.nn.init.{new_name}`."
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
