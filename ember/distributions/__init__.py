"""torch.distributions: parameterised probability distributions and sampling functions.

Each distribution is one file, named as in PyTorch, subclassing `Distribution`
(distribution.py explains batch_shape / event_shape / sample_shape, rsample and
validate_args). `constraints` says where parameters and samples live, `transforms` maps
between spaces with a log|det J|, `TransformedDistribution` pushes a distribution through
transforms, and `kl_divergence` dispatches on a registry of closed forms (kl.py).

Two ways to get gradients through random draws, as in PyTorch:

    # score function (REINFORCE): log_prob is differentiable in the parameters
    m = Categorical(logits=policy(state)); action = m.sample()
    loss = -m.log_prob(action) * reward

    # pathwise (reparameterisation): the sample itself is differentiable
    m = Normal(mu, sigma); x = m.rsample(); loss = f(x)

With the same `ember.manual_seed`, samples of the families drawn from PyTorch's bit-exact
samplers (normal_, rand, uniform_, exponential_, cauchy_, bernoulli, multinomial, poisson,
binomial, _standard_gamma, _sample_dirichlet: so also Binomial, Gamma, Chi2, Beta, Dirichlet,
StudentT, InverseGamma, FisherSnedecor, NegativeBinomial) equal PyTorch's.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import _add_kl_info, kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .lkj_cholesky import LKJCholesky
from .laplace import Laplace
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .logistic_normal import LogisticNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

_add_kl_info()
del _add_kl_info

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric",
    "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
    "LKJCholesky",
    "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
    "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises",
    "Weibull", "Wishart",
    "biject_to", "kl_divergence", "register_kl", "transform_to",
]
__all__.extend(transforms.__all__)
