"""Writes through overlapping memory (PyTorch's ATen/MemoryOverlap.cpp).

An in-place op refuses to write into a tensor in which several elements share one memory
location (an `expand`ed tensor: which of the writes would win?), and refuses an input that
partly overlaps the tensor it writes (`x[1:].add_(x[:-1])` would read values it has already
overwritten in PyTorch's kernels). An input that is exactly the written tensor is fine
(`x.add_(x)`), and so are overlaps PyTorch does not try to decide: when either tensor is not
dense (`x[::2].add_(x[1::2])`).

An `out=` tensor is checked the same way against the op's inputs (`check_out_overlap`, from
the bindings' `out=` path): most ops refuse partial overlap (TensorIterator's check); reductions,
matrix products and a few others check nothing; indexing and joining ops refuse any overlap,
even an input that is exactly `out`, except the `self` that they first copy into `out`.
"""
import numpy as np
from numpy.lib.array_utils import byte_bounds

from .tensor import Tensor, _root_array

# In-place ops PyTorch lets write into an expanded tensor: fills, and ops that only restride.
UNCHECKED = frozenset({
    "fill_", "zero_", "index_put_", "masked_fill_", "index_fill_", "threshold_",
    "conj_physical_", "tril_", "triu_", "embedding_renorm_", "resize_", "resize_as_",
    "resize_as_sparse_",
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


def _overlap(a, b):
    """How arrays `a` and `b` share memory: None (not at all, or not decided: either is not
    dense), "full" (the same elements in the same layout) or "partial"."""
    if _root_array(b) is not _root_array(a) or not np.may_share_memory(a, b):
        return None
    bounds_a, bounds_b = _dense_bounds(a), _dense_bounds(b)
    if bounds_a is None or bounds_b is None:
        return None  # PyTorch's MemOverlapStatus::TooHard: not decided, allowed
    return "full" if bounds_a == bounds_b and a.strides == b.strides else "partial"


_PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation.")
_INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")


# In-place indexing writes (PyTorch's assert_no_overlap): their index, mask and source tensors
# may not share any memory with the written tensor, not even all of it. Of these, the fills
# and index_put_ still write into an expanded tensor, with a deprecation warning.
INDEXING_WRITES = frozenset({
    "index_add_", "index_copy_", "index_fill_", "index_reduce_", "index_put_", "put_",
    "scatter_", "scatter_add_", "scatter_reduce_", "masked_fill_", "masked_scatter_",
})
_EXPANDED_WARNINGS = {"index_fill_": "tensor[mask] = scalar", "masked_fill_": "tensor[mask] = scalar",
                      "index_put_": "tensor[indices] = tensor"}


def inplace_check_for(name):
    """The overlap check in-place op `name` makes before writing its first argument (None:
    none)."""
    if name in INDEXING_WRITES:
        return lambda args: check_indexing_overlap(name, args)
    return None if name in UNCHECKED else check_inplace_overlap


def check_indexing_overlap(name, args):
    """An indexing write's checks: the written tensor's own overlap (an error, or for the fills
    and index_put_ PyTorch's deprecation warning), then any overlap with its other tensors."""
    out = args[0]
    a = out._np
    if out._sparse is not None or a is None or not a.size:
        return
    if 0 in a.strides and has_internal_overlap(out):
        if name not in _EXPANDED_WARNINGS:
            check_inplace_overlap(args[:1])
        import warnings
        from ._warnings import user_stacklevel
        warnings.warn(f"Use of {name} on expanded tensors is deprecated. Please clone() the "
                      f"tensor before performing this operation. This also applies to advanced "
                      f"indexing e.g. {_EXPANDED_WARNINGS[name]}", UserWarning,
                      stacklevel=user_stacklevel())
    for arg in args[1:]:
        for t in arg if isinstance(arg, (tuple, list)) else (arg,):
            if isinstance(t, Tensor) and t._np is not None and \
                    (t is out or _overlap(a, t._np) is not None):
                raise RuntimeError(_PARTIAL_OVERLAP)


def check_inplace_overlap(args):
    """PyTorch's errors for an in-place op writing `args[0]` (inputs are the other tensors)."""
    out = args[0]
    if out._sparse is not None:  # no strided memory to overlap: its entries are replaced
        return
    a = out._np
    if out._sparse is not None:  # a sparse tensor's entries are distinct by its invariants
        return
    if 0 in (out.stride() if a is None else a.strides) and has_internal_overlap(out):
        raise RuntimeError(_INTERNAL_OVERLAP)
    if a is None or len(args) == 1 or not a.size:
        return
    for other in args[1:]:
        if isinstance(other, Tensor) and other is not out and other._np is not None and \
                _overlap(a, other._np) == "partial":
            raise RuntimeError(_PARTIAL_OVERLAP)


# out= ops PyTorch does not check: reductions, matrix products, and ops whose kernels read
# their inputs whole before writing
OUT_UNCHECKED = frozenset({
    "sum", "mean", "nansum", "prod", "amax", "amin", "all", "any", "argmax", "argmin",
    "logsumexp", "std", "var", "median", "nanmedian", "cummax", "cummin", "histc",
    "searchsorted", "bucketize", "nonzero", "multinomial", "mm", "bmm", "matmul", "mv", "dot",
    "vdot", "kron", "tril", "triu", "slice_scatter",
})
# out= ops that refuse any overlap with an input (PyTorch's assert_no_overlap), and an `out`
# that is expanded (its assert_no_internal_overlap): the number of leading inputs exempt from
# the first (the `self` copied into `out` first, checked as usual)
OUT_NO_OVERLAP = {
    "cat": 0, "concat": 0, "concatenate": 0, "stack": 0, "index_select": 0, "gather": 0,
    "take": 0, "masked_select": 0, "index_add": 1, "index_copy": 1, "index_reduce": 1,
    "scatter_add": 1, "scatter_reduce": 1, "kthvalue": 0,
}


# out= ops that check only their first input (`self`; the matrices are read into a product first)
OUT_CHECKS_SELF_ONLY = frozenset({"addmm", "addmv", "addbmm", "baddbmm"})


def check_out_overlap(name, outs, inputs):
    """PyTorch's error for an `out=` tensor (or tuple of them) that overlaps an input of op
    `name` as it does not allow (inputs: the op's tensor arguments, lists of them included)."""
    if name in OUT_UNCHECKED:
        return
    exempt = OUT_NO_OVERLAP.get(name)
    if name in OUT_CHECKS_SELF_ONLY:
        inputs = inputs[:1]
    for out in outs if isinstance(outs, (tuple, list)) else (outs,):
        a = out._np
        # an empty out= is resized before PyTorch checks it, so the no-overlap ops still see
        # an input that is `out` itself
        if a is None or not a.size and exempt is None:
            continue
        if exempt is not None and 0 in a.strides and has_internal_overlap(out):
            raise RuntimeError(_INTERNAL_OVERLAP)
        root = _root_array(a)
        for i, arg in enumerate(inputs):
            for t in arg if isinstance(arg, (tuple, list)) else (arg,):
                if t is out:
                    kind = "full"
                elif not isinstance(t, Tensor) or t._np is None or \
                        _root_array(t._np) is not root:
                    continue
                else:
                    kind = _overlap(a, t._np)
                if kind == "partial" or (kind == "full" and exempt is not None and i >= exempt):
                    raise RuntimeError(_PARTIAL_OVERLAP)


def _debug_has_internal_overlap(t):
    """torch._debug_has_internal_overlap: PyTorch's MemOverlap as a number, 0 (No: the elements
    tile their memory exactly), 1 (Yes: a stride-0 dim of several elements) or 2 (TooHard:
    anything else, which the in-place checks let through)."""
    from .memory_format import is_non_overlapping_and_dense
    if is_non_overlapping_and_dense(tuple(t.shape), t.stride()):
        return 0
    return 1 if has_internal_overlap(t) else 2
