"""MaskedTensor's binary ops (PyTorch's torch/masked/maskedtensor/binary.py): both masks equal
(or one operand a plain tensor), the op on the data. The names and their aten operators; the
implementations are in _ops_refs.py."""
from ember import ops as _ops

from ._ops_refs import BINARY_NAMES, INPLACE_BINARY_NAMES  # noqa: F401

__all__ = []

NATIVE_BINARY_FNS = [getattr(_ops.aten, n) for n in BINARY_NAMES if hasattr(_ops.aten, n)]
NATIVE_INPLACE_BINARY_FNS = [getattr(_ops.aten, n) for n in INPLACE_BINARY_NAMES
                             if hasattr(_ops.aten, n)]
