"""torch.distributions.Gamma: shape `concentration` and `rate`, reparameterised by implicit
differentiation of the sampler (see _reparam_gradients.py). Draws come from
`ember._standard_gamma`, PyTorch's CPU sampler (the same draws for the same seed)."""
import numbers

import ember
from ember.autograd import Function
from ember.autograd.function import once_differentiable
from . import constraints
from ._reparam_gradients import standard_gamma_grad
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class _StandardGamma(Function):
    """x ~ Gamma(alpha, 1) with dx/dalpha = standard_gamma_grad(alpha, x) in backward
    (what PyTorch's derivative entry for `_standard_gamma` does)."""

    @staticmethod
    def forward(ctx, concentration):
        x = ember._standard_gamma(concentration.detach())
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        concentration, x = ctx.saved_tensors
        return grad_output * standard_gamma_grad(concentration, x)


def _standard_gamma(concentration):
    if concentration.requires_grad and ember.is_grad_enabled():
        return _StandardGamma.apply(concentration)
    return ember._standard_gamma(concentration.detach())


class Gamma(ExponentialFamily):
    """Gamma distribution: density rate^a x^(a-1) exp(-rate x) / Gamma(a), a = concentration."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number):
            batch_shape = ember.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=ember.finfo(value.dtype).tiny)  # keep draws positive
        return value

    def log_prob(self, value):
        value = ember.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (ember.xlogy(self.concentration, self.rate)
                + ember.xlogy(self.concentration - 1, value)
                - self.rate * value - ember.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - ember.log(self.rate) + ember.lgamma(self.concentration)
                + (1.0 - self.concentration) * ember.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x + 1) + (x + 1) * ember.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.special.gammainc(self.concentration, self.rate * value)
