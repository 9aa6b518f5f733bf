"""MaskedTensor's unary ops (PyTorch's torch/masked/maskedtensor/unary.py): the op on the data,
the same mask. The names and their aten operators; the implementations are in _ops_refs.py."""
from ember import ops as _ops

from ._ops_refs import INPLACE_UNARY_NAMES, UNARY_NAMES  # noqa: F401

__all__ = []

NATIVE_UNARY_FNS = [getattr(_ops.aten, n) for n in UNARY_NAMES if hasattr(_ops.aten, n)]
NATIVE_INPLACE_UNARY_FNS = [getattr(_ops.aten, n) for n in INPLACE_UNARY_NAMES
                            if hasattr(_ops.aten, n)]
