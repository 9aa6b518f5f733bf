"""torch.masked: reductions and normalisations that read only the elements a boolean `mask`
keeps (ember/masked/_ops.py), and the prototype MaskedTensor (ember/masked/maskedtensor/)."""
from ._ops import (sum, prod, cumsum, cumprod, amax, amin, argmax, argmin, mean, median,
                   logsumexp, logaddexp, norm, var, std, softmax, log_softmax, softmin,
                   normalize)
from .maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor
from . import _ops
from ._ops import _canonical_dim, _combine_input_and_mask, _output_mask, _where  # noqa: F401


def _input_mask(input, *args, **kwargs):
    """The canonical input mask (PyTorch's helper, which its masked-op tests call with an op's
    arguments): `mask=` as a bool tensor of the input's shape."""
    return _ops._input_mask(input, kwargs.get("mask"))


__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
