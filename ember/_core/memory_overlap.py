"""Writes through overlapping memory (PyTorch's ATen/MemoryOverlap.cpp).

An in-place op refuses to write into a tensor in which several elements share one memory
location (an `expand`ed tensor: which of the writes would win?), and refuses an input that
partly overlaps the tensor it writes (`x[1:].add_(x[:-1])` would read values it has already
overwritten in PyTorch's kernels). An input that is exactly the written tensor is fine
(`x.add_(x)`), and so are overlaps PyTorch does not try to decide: when either tensor is not
dense (`x[::2].add_(x[1::2])`).
"""
import numpy as np
from numpy.lib.array_utils import byte_bounds

from .tensor import Tensor, _root_array

# In-place ops PyTorch lets write into an expanded tensor: fills, and ops that only restride.
UNCHECKED = frozenset({
    "fill_", "zero_", "index_put_", "masked_fill_", "index_fill_", "threshold_",
    "conj_physical_", "tril_", "triu_", "embedding_renorm_", "resize_", "resize_as_",
    "as_strided_", "squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_",
})


def has_internal_overlap(t):
    """Whether some dim of more than one element has stride 0 (PyTorch's MemOverlap::Yes); an
    empty tensor has no elements to share memory."""
    stride = t.stride() if t._np is None else t._np.strides
    return 0 in stride and 0 not in t._size and \
        any(s == 0 and n > 1 for n, s in zip(t._size, stride))


def _dense_bounds(a):
    """The byte range of an array that covers its memory exactly once, else None."""
    lo, hi = byte_bounds(a)
    return (lo, hi) if hi - lo == a.nbytes else None


def check_inplace_overlap(args):
    """PyTorch's errors for an in-place op writing `args[0]` (inputs are the other tensors)."""
    out = args[0]
    a = out._np
    if 0 in (out.stride() if a is None else a.strides) and has_internal_overlap(out):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.")
    if a is None or len(args) == 1 or not a.size:
        return
    root = None
    for other in args[1:]:
        if not isinstance(other, Tensor) or other is out or other._np is None:
            continue
        b = other._np
        if root is None:
            root = _root_array(a)
        if _root_array(b) is not root or not np.may_share_memory(a, b):
            continue
        bounds_a, bounds_b = _dense_bounds(a), _dense_bounds(b)
        if bounds_a is None or bounds_b is None:
            continue  # PyTorch's MemOverlapStatus::TooHard: not decided, allowed
        if bounds_a != bounds_b or a.strides != b.strides:
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")
