"""torch.distributions.LKJCholesky: the LKJ distribution over correlation matrices, given by
their lower Cholesky factors, density proportional to det(C)^(eta - 1). Drawn by the onion
method (Lewandowski, Kurowicka & Joe 2009): row i of the factor is sqrt(y_i) times a uniform
direction in its first i coordinates, y_i ~ Beta, and the diagonal completes each row to unit
length. The Beta draws go through ember's gamma sampler (not PyTorch's random stream)."""
import math

import ember
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Cholesky factors of dim x dim correlation matrices; `concentration` is eta."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i's squared off-diagonal length is Beta(i / 2, eta + (dim - 2) / 2 - (i - 1) / 2)
        # (row 0 has none: its Beta is drawn and not used, keeping one draw per row)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = ember.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), ember.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            direction = normal / normal.norm(dim=-1, keepdim=True)
            direction[..., 0, :] = 0.0  # the first row is (1, 0, ..., 0)
            w = ember.sqrt(y) * direction
            diagonal = (1 - (w ** 2).sum(-1)).clamp(min=ember.finfo(w.dtype).tiny).sqrt()
            return w + ember.diag_embed(diagonal)

    def log_prob(self, value):
        """sum_i (2 (eta - 1) + dim - i) log L_ii over i = 2..dim, minus the normalizer."""
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + ember.mvlgamma(alpha - 0.5, dm1)
                      - ember.lgamma(alpha) * dm1)
        return unnormalized - normalizer
