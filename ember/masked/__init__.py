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


_REDUCTIONS = frozenset({"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median",
                         "norm", "var", "std", "logsumexp"})
_NORMALIZATIONS = frozenset({"softmax", "log_softmax", "softmin", "normalize", "cumsum",
                             "cumprod"})


def _output_mask(op, input, *args, **kwargs):
    """Which elements of a masked op's output its mask keeps (PyTorch's helper, which its
    OpInfo samples use to compare masked outputs): for a reduction, the elements whose reduced
    slice keeps any element; for a normalization, the input mask."""
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} "
                         f"object)")
    name = op.__name__
    if name in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    if name not in _REDUCTIONS:
        raise ValueError(f"_output_mask expected masked operation (got callable "
                         f"{op.__module__}.{name})")
    if name == "norm" and args:
        args = args[1:]   # the ord argument comes before dim
    dim = args[0] if args else kwargs.get("dim")
    mask = _input_mask(input, *args, **kwargs)
    keepdim = bool(kwargs.get("keepdim", False))
    for d in reversed(_ops._canonical_dim(dim, input.ndim)):
        mask = mask.any(dim=d, keepdim=keepdim)
    return mask


__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
