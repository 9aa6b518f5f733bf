"""torch.distributions.Wishart: the distribution of X X^T for df columns X drawn from
N(0, Sigma), over p x p positive-definite matrices. Drawn by the Bartlett decomposition:
Sigma^1/2 A A^T Sigma^1/2^T with A lower triangular, sqrt(chi2(df - i)) on its diagonal and
standard normals below it. Chi2 draws go through ember's gamma sampler (not PyTorch's random
stream)."""
import math
import numbers
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import ember
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum of digamma(x - i / 2) for i < p."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return ember.digamma(x.unsqueeze(-1) - ember.arange(p, dtype=x.dtype).div(2)).sum(-1)


class Wishart(ExponentialFamily):
    """W_p(df, Sigma), Sigma given as covariance_matrix, precision_matrix or scale_tril."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype)
        else:
            batch_shape = ember.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=_user_stacklevel())
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(self.df, batch_shape)

    def _bartlett_chi2(self, df, batch_shape):
        """chi2(df - i) for the i-th diagonal entry of Bartlett's factor."""
        p = self._event_shape[-1]
        steps = ember.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=df.unsqueeze(-1) - steps.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        identity = ember.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return ember.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape)

    def _df_as_matrix_factor(self):
        return self.df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_as_matrix_factor() * self.covariance_matrix

    @property
    def mode(self):  # undefined (nan) for df <= p + 1
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, math.nan, factor)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag = V.diagonal(dim1=-2, dim2=-1)
        return self._df_as_matrix_factor() * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=ember.Size()):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = chi.clamp(min=ember.finfo(chi.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        i, j = ember.tril_indices(p, p, offset=-1)
        noise[..., i, j] = ember.randn(ember.Size(sample_shape) + self._batch_shape
                                       + (p * (p - 1) // 2,), dtype=noise.dtype)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """Bartlett draws; a draw that is numerically singular (possible for df close to p - 1)
        is drawn again, at most `max_try_correction` (default 10) times.

        PyTorch 2.13's first test is `support.check(sample)` without the negation its redraw
        loop uses, so every valid first draw counts as singular: it warns "Singular sample
        detected." and draws once more (then the negated test stops the loop). ember does the
        same, so the same seed gives the same samples and the same warning."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self.support.check(sample)
        if self._batch_shape:
            singular = singular.amax(self._batch_dims)
        if singular.any():
            warnings.warn("Singular sample detected.", stacklevel=_user_stacklevel())
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(singular[singular].shape)
                sample[singular] = redrawn
                still = ~self.support.check(redrawn)
                if self._batch_shape:
                    still = still.amax(self._batch_dims)
                singular[singular.clone()] = still
                if not singular.any():
                    break
        return sample

    def _log_det_scale(self):
        """p log 2 / 2 + log det L (half of log det(2 Sigma))."""
        p = self._event_shape[-1]
        return (p * _LOG_2 / 2
                + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = ember.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * self._log_det_scale() - ember.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * self._log_det_scale() + ember.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu, p = self.df, self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-ember.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + ember.mvlgamma(y + (p + 1) / 2, p=p))
