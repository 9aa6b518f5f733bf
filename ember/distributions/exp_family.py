"""torch.distributions.ExponentialFamily: densities p(x) = h(x) exp(<theta, t(x)> - F(theta)).

A subclass gives its natural parameters theta (`_natural_params`), the log-normaliser F
(`_log_normalizer`) and E[log h(x)] (`_mean_carrier_measure`). Then the entropy, and the KL
divergence between two members of the same family (a Bregman divergence of F, in kl.py),
follow from autograd: grad F(theta) is the expected sufficient statistic.
"""
import ember
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class for exponential-family distributions (entropy through autograd of F)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[log h(x)]."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = ember.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for nparam, g in zip(nparams, gradients):
            result -= (nparam * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
