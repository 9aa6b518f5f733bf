"""TensorIterator's output layout: the strides PyTorch gives the new result of an elementwise op.

The result takes the memory layout of its operands rather than being contiguous: a transposed
input gives a transposed result, a channels_last input a channels_last one. PyTorch's
TensorIterator decides it in two steps (TensorIterator.cpp, `fast_set_up` and
`reorder_dimensions` + `allocate_or_resize_outputs`); `output_strides` is the same rule on
(sizes, strides) pairs, `laid_out` puts an eager kernel's NumPy result into that layout.
"""
import numpy as np
from .._core.float8 import as_strided

from .._core import caching_allocator
from .._core.memory_format import is_non_overlapping_and_dense
from .._core.tensor import Tensor, _wrap

# Note [TensorIterator's output layout]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Fast setup, when every operand has the output's shape: all contiguous -> contiguous; all
# channels_last (4-d) -> channels_last; all non-overlapping and dense with equal strides ->
# exactly those strides. A Python number or a 0-dim tensor is an operand of shape () and so
# turns the fast setup off.
#
# Otherwise the dims are sorted, fastest first, by the operands' strides after broadcasting (a
# broadcast dim has stride 0 and says nothing): starting from the reversed order, an insertion
# sort asks each operand in turn, first to last, whether two dims should swap; the first operand
# whose strides differ decides, and for equal strides the smaller dim goes first. The output is
# then dense in that order ("compatible strides"). NumPy's order='K' is similar, but on a
# conflict it keeps C order where PyTorch lets the first operand win: `a.t() + b` follows `a`.
#
# PyTorch's Meta kernels of elementwise ops are its Python references (torch._refs,
# compute_elementwise_output_strides), whose short cuts differ: numbers and 0-dim tensors are
# no operands; all contiguous and not all channels_last -> contiguous; all channels_last and
# not all contiguous -> channels_last; anything else (equal dense strides too) is sorted. The
# two differ only in the strides of size-1 dims. (Measured on PyTorch 2.13: its unary ops' Meta
# kernels follow the references, binary and ternary ones TensorIterator.)


def _is_contiguous(sizes, strides):
    """PyTorch's is_contiguous: every empty tensor is."""
    if 0 in sizes:
        return True
    expected = 1
    for size, st in zip(reversed(sizes), reversed(strides)):
        if size != 1:
            if st != expected:
                return False
            expected *= size
    return True


def _is_channels_last(sizes, strides):
    """is_contiguous(memory_format=channels_last) for a 4-d tensor."""
    expected = 1
    for d in (1, 3, 2, 0):
        size = sizes[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


def output_strides(shape, operands, meta=False):
    """The strides (in elements) TensorIterator gives a new output of `shape`, or None when they
    are the contiguous ones. `operands` are the inputs' (sizes, strides), Python numbers as
    ((), ()). meta: the rule of PyTorch's Meta kernels instead (see the Note)."""
    n = len(shape)
    if n < 2:
        return None
    shape = tuple(shape)
    if meta:
        operands = [(s, st) for s, st in operands if s]
        contiguous = all(_is_contiguous(s, st) for s, st in operands)
        cl = n == 4 and all(len(s) == 4 and _is_channels_last(s, st) for s, st in operands)
        if contiguous and not cl:
            return None
        if cl and not contiguous:
            c, h, w = shape[1], shape[2], shape[3]
            return (c * h * w, 1, w * c, c)
    elif all(s == shape for s, _ in operands):
        if all(_is_contiguous(s, st) for s, st in operands):
            return None
        if n == 4 and all(_is_channels_last(s, st) for s, st in operands):
            c, h, w = shape[1], shape[2], shape[3]
            return (c * h * w, 1, w * c, c)
        first = operands[0][1]
        if all(st == first for _, st in operands) and is_non_overlapping_and_dense(shape, first):
            return tuple(first)
    if not meta and 1 not in shape and 0 not in shape:
        # an expanded scalar (strides all 0) orders no dimension below: without it the rest
        # may be plainly contiguous (sum's gradient times a tensor). (An empty operand counts
        # as contiguous whatever its strides; the full rule below still follows them.)
        kept = [(s, st) for s, st in operands if any(st)]
        if len(kept) < len(operands):
            if all(s == shape and _is_contiguous(s, st) for s, st in kept):
                return None
            operands = kept
    # the operands' strides over the broadcast shape (0 for a broadcast dim)
    bstrides = []
    for sizes, st in operands:
        off = n - len(sizes)
        b = [0] * n
        for i, size in enumerate(sizes):
            if size != 1 or shape[off + i] == 1:
                b[off + i] = st[i]
        bstrides.append(b)

    def should_swap(d0, d1):
        for b in bstrides:
            s0, s1 = b[d0], b[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))  # fastest dim first
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(n - 1, -1, -1)):
        return None
    strides = [0] * n
    acc = 1
    for d in perm:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def _operand_layout(x):
    if isinstance(x, Tensor):
        return x._size, x.stride()
    return (), ()


def all_contiguous(operands):
    """The common case, checked first: every tensor operand is C-contiguous (the result then
    is too, in NumPy and in PyTorch)."""
    for x in operands:
        if isinstance(x, Tensor) and not x._np.flags.c_contiguous:
            return False
    return True


def meta_strides(shape, *operands, refs=False):
    """output_strides for a Meta kernel's operands (tensors or Python numbers); refs: by the
    rule of PyTorch's Python references (its Meta kernels of unary ops)."""
    return output_strides(shape, [_operand_layout(x) for x in operands if x is not None], refs)


def laid_out(r, *operands):
    """A kernel's NumPy result `r` in the layout TensorIterator gives the output of these
    operands: `r` itself when its strides are already those, else a copy in an allocator block
    made so (the copy `_wrap` would otherwise make to move NumPy's temporary into a block)."""
    if r.ndim < 2 or not r.size:
        return r
    if all_contiguous(operands):
        # contiguous operands give a contiguous result; only the strides of its size-1 dims
        # can follow operands whose own size-1 dims have other strides than the contiguous ones
        if 1 not in r.shape or all(natural(x._np) for x in operands if isinstance(x, Tensor)):
            return r
    return laid_out_as(r, output_strides(r.shape, [_operand_layout(x) for x in operands
                                                   if x is not None]))


def wrap_laid_out(r, *operands):
    """laid_out(r, *operands) as a tensor. An empty result gets the strides by the rule too:
    NumPy forgets an empty array's strides, PyTorch's TensorIterator keeps them (an empty
    channels-last batch times a number stays channels-last)."""
    t = _wrap(laid_out(r, *operands))
    if not r.size and r.ndim > 1:
        strides = output_strides(r.shape, [_operand_layout(x) for x in operands
                                           if x is not None])
        if strides is not None:
            t._stride_, t._offset_ = strides, 0
    return t


def laid_out_as(r, strides):
    """`r` with these strides (in elements; None: contiguous), copied into a block if need be."""
    if strides is None:
        if r.flags.c_contiguous and natural(r):
            return r
        out = caching_allocator.empty(r.shape, r.dtype)
    else:
        if r.strides == tuple(s * r.itemsize for s in strides) and caching_allocator.in_block(r):
            return r
        out = empty_strided(r.shape, strides, r.dtype)
    out[...] = r
    return out


def preserve_strides(sizes, strides):
    """preserve_format's strides for a copy (clone, .to, empty_like): a non-overlapping and
    dense tensor's own strides, else dense ones in the order of its strides (PyTorch's
    infer_dense_strides, the rule above on one operand); None for the contiguous ones."""
    if is_non_overlapping_and_dense(sizes, strides):
        expected = 1
        for size, st in zip(reversed(sizes), reversed(strides)):
            if st != expected:
                return tuple(strides)
            expected *= size
        return None
    return output_strides(sizes, [(tuple(sizes), tuple(strides))])


def natural(a):
    """C-contiguous with the contiguous strides on size-1 dims too (NumPy's flag ignores them)."""
    acc = a.itemsize
    for size, st in zip(reversed(a.shape), reversed(a.strides)):
        if st != acc and size == 1:
            return False
        acc *= size
    return True


def empty_strided(shape, strides, dtype):
    """An uninitialized allocator block of `shape` with dense `strides` (in elements; None for
    the contiguous ones)."""
    if strides is None:
        return caching_allocator.empty(shape, dtype)
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    a = caching_allocator.empty([shape[d] for d in order], dtype).transpose(np.argsort(order))
    want = tuple(s * a.itemsize for s in strides)
    if a.strides != want:  # size-1 dims whose strides the permuted block does not give
        a = as_strided(a, a.shape, want)
    return a
