"""torch.masked: reductions and normalisations that read only the elements a boolean `mask`
keeps (ember/masked/_ops.py). MaskedTensor is not implemented in ember."""
from ._ops import (sum, prod, cumsum, cumprod, amax, amin, argmax, argmin, mean, median,
                   logsumexp, logaddexp, norm, var, std, softmax, log_softmax, softmin,
                   normalize)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
