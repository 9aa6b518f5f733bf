"""torch.distributions.utils: the small helpers every distribution shares.

`broadcast_all` turns a mix of numbers and tensors into tensors of one shape, the
probs/logits converters keep the two parameterisations of discrete distributions in step,
and `lazy_property` computes a derived parameter (say `logits` from `probs`) on first use
and then stores it on the instance, which is how PyTorch lets either one be the source.
"""
import functools
import numbers

import ember
import ember.nn.functional as F

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_all(*values):
    """Broadcast tensors and numbers together. Numbers become tensors with the dtype and
    device of the first tensor argument (the default dtype when there is none)."""
    if not all(isinstance(v, (ember.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, ember.Tensor) for v in values):
        options = dict(dtype=ember.get_default_dtype())
        for v in values:
            if isinstance(v, ember.Tensor):
                options = dict(dtype=v.dtype, device=v.device)
                break
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **options) for v in values]
    return ember.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    # `normal_` on a fresh tensor: the same draws, in the same order, as PyTorch's sampler
    return ember.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Log-odds (binary) or unnormalised log-probabilities (last dim) to probabilities."""
    if is_binary:
        return ember.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into [eps, 1 - eps] for the dtype's machine epsilon."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Probabilities to log-odds (binary) or log-probabilities, after `clamp_probs`."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


class lazy_property:
    """A non-data descriptor: the first access computes the value (with grad enabled, so a
    derived parameter stays differentiable even when first read under no_grad) and stores
    it in the instance's __dict__, which then shadows the descriptor."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class attribute looks like: a lazy_property to argument validation (which
    skips lazily built parameters) and a property to documentation tools."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    arange = ember.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries of a (batch of) D x D matrix, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of `tril_matrix_to_vec`: fill a D x D lower triangle row by row."""
    # D is the positive root of D**2 + (1 + 2*diag)*D - |diag|*(diag + 1) - 2*len(vec) = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > ember.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed "
                         "as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + ember.Size((n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
