"""torch.distributions.NegativeBinomial: the number of successes before `total_count`
failures, each trial succeeding with `probs`. Draws are Poisson(Gamma(total_count, e^-logits))
(the gamma-Poisson mixture), through ember's gamma and Poisson samplers."""
import ember
from ember.nn import functional as F
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """P(k) = C(k + r - 1, k) p^k (1 - p)^r with r = total_count, p = probs."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_parameters(NegativeBinomial, batch_shape, _instance,
                                      ("total_count", "probs", "logits"))
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        return new

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=ember.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return ember.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        unnormalized = (self.total_count * F.logsigmoid(-self.logits)
                        + value * F.logsigmoid(self.logits))
        normalization = (-ember.lgamma(self.total_count + value) + ember.lgamma(1.0 + value)
                         + ember.lgamma(self.total_count))
        # r + k = 0 (no trials at all) has probability 1: lgamma(0) would make it nan
        normalization = normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return unnormalized - normalization
