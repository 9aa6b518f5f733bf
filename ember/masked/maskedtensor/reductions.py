"""MaskedTensor's reductions (PyTorch's torch/masked/maskedtensor/reductions.py): torch.masked's
rule on the data, the result specified where any reduced element was. The names and their aten
operators; the implementations are in _ops_refs.py."""
from ember import ops as _ops

from ._ops_refs import REDUCE_NAMES  # noqa: F401

__all__ = []

NATIVE_REDUCE_FNS = [getattr(_ops.aten, n) for n in REDUCE_NAMES if hasattr(_ops.aten, n)]
