"""torch.distributions.GeneralizedPareto: the law of exceedances over a high threshold
(peaks-over-threshold), with location `loc`, `scale` and shape `concentration` xi; xi = 0 is the
exponential limit, which every formula takes where xi is (close to) 0. Drawn by inverting the
cdf of a uniform draw (reparameterised)."""
import math
import numbers

import ember
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Survival function (1 + xi z)^(-1/xi), z = (x - loc) / scale (exp(-z) for xi = 0)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, numbers.Number) for v in (loc, scale, concentration)):
            batch_shape = ember.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_parameters(GeneralizedPareto, batch_shape, _instance,
                                       ("loc", "scale", "concentration"))

    def _exponential_limit(self):
        """Where xi is (close to) 0, and xi with those entries replaced by 1 (safe to divide)."""
        at_zero = ember.isclose(self.concentration, ember.zeros_like(self.concentration))
        return at_zero, ember.where(at_zero, ember.ones_like(self.concentration),
                                    self.concentration)

    def rsample(self, sample_shape=ember.Size()):
        u = ember.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, xi = self._exponential_limit()
        y = 1 / xi + ember.ones_like(z)
        general = ember.where(y == 0, y, y * ember.log1p(xi * z))
        return -self.scale.log() - ember.where(at_zero, z, general)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, xi = self._exponential_limit()
        return ember.where(at_zero, -z, -ember.log1p(xi * z) / xi)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        at_zero, xi = self._exponential_limit()
        log_u = ember.log1p(-value)
        return ember.where(at_zero, self.loc - self.scale * log_u,
                           self.loc + self.scale / xi * ember.expm1(-xi * log_u))

    @property
    def mean(self):  # undefined (nan) for xi >= 1
        valid = self.concentration < 1
        xi = ember.where(valid, self.concentration, 0.5)
        return ember.where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):  # undefined (nan) for xi >= 1/2
        valid = self.concentration < 0.5
        xi = ember.where(valid, self.concentration, 0.25)
        return ember.where(valid, self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi)), math.nan)

    def entropy(self):
        return ember.broadcast_to(ember.log(self.scale) + self.concentration + 1,
                                  self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        # bounded above by loc - scale / xi when xi < 0
        upper = ember.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(self.loc, upper)
