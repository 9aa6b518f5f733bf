"""EmbeddingBag's kernels (CPU and Meta): PyTorch's `_embedding_bag` (and its forward-only twin),
its weight gradient `_embedding_bag_backward` (dense, or sparse COO) and the gradient of the
per-sample weights. A bag is a run of a 1-D `indices` between two `offsets`; the forward sums,
averages or takes the maximum of the weight rows the bag names, and returns PyTorch's CPU
kernel's four outputs: (output, offset2bag, bag_size, max_indices).

Note [Bag sums in passes]
NumPy has no segmented sum that is fast along rows: `np.add.reduceat` over axis 0 walks every
column of every segment on its own. Both the forward (rows of the weight summed per bag) and
the dense backward (rows of the gradient summed per weight row) are instead one loop over the
*position within a segment*: pass r adds the r-th row of every segment that has one (the
segments still alive shrink from pass to pass); each pass is one gather of whole rows (as
records of D elements, one copy each) and one add. Every segment's rows are added in their
order, one after the other, as PyTorch's CPU loops add them. There are as many passes as the
longest segment, so a segment longer than HEAVY rows (one huge bag, a very frequent index) is
summed on its own.
"""
import numpy as np

from .._core import caching_allocator
from .._core import dtype as D
from .._core.tensor import _wrap, _meta
from .._dispatch.dispatcher import impl
from .elementwise import _OPMATH
from .sparse import _from_arrays

MODES = ("sum", "mean", "max")
SUM, MEAN, MAX = 0, 1, 2
HEAVY = 48
_FAST_SUM = (D.float32, D.float16, D.bfloat16)


def _records(a):
    """A C-contiguous (N, D) array as N records of D elements: `records[i]` gathers whole rows."""
    return a.view(np.dtype((np.void, a.shape[1] * a.itemsize))).reshape(a.shape[0])


def segment_sums(src, pos, starts, counts, scale=None, dtype=None):
    """(S, D): row s = sum over j < counts[s] of src[pos[starts[s] + j]] * scale[starts[s] + j],
    added in order of j (zeros for an empty segment); see Note [Bag sums in passes]. src is
    (N, D) C-contiguous, `dtype` the accumulation dtype (src's by default)."""
    num, dim = counts.size, src.shape[1]
    out = caching_allocator.empty((num, dim), dtype or src.dtype)
    if not num or not dim or not pos.size:
        out[...] = 0
        return out
    recs = _records(src)

    def rows(p):  # the rows at entries p, weighted
        r = recs[pos[p]].view(src.dtype).reshape(p.size, dim)
        return r if scale is None else r * scale[p][:, None]

    empty = counts == 0
    heavy = np.flatnonzero(counts > HEAVY)
    if heavy.size:
        for s in heavy.tolist():
            first = int(starts[s])
            out[s] = np.add.reduce(rows(np.arange(first, first + int(counts[s]))), axis=0,
                                   dtype=out.dtype)
        counts = counts.copy()
        counts[heavy] = 0
    out[empty] = 0
    # the segments longest first: the ones pass r reaches are a prefix of them
    order = np.argsort(-counts, kind="stable")
    first, longest = starts[order], counts[order]
    live = np.searchsorted(-longest, -np.arange(int(longest[0])), side="left")
    if not live.size:  # every segment empty or heavy
        return out
    # every pass's rows gathered (and weighted) at once, pass after pass
    ends = np.cumsum(live)
    pass_of = np.repeat(np.arange(live.size), live)
    entries = first[np.arange(ends[-1]) - np.repeat(ends - live, live)] + pass_of
    gathered = rows(entries)
    acc = caching_allocator.empty((live[0], dim), out.dtype)
    acc[...] = gathered[:live[0]]
    for r, (n, end) in enumerate(zip(live.tolist(), ends.tolist())):
        if r:
            acc[:n] += gathered[end - n:end]
    _records(out)[order[:live[0]]] = _records(acc)
    return out


# ---- the bags ----------------------------------------------------------------------------------
def _index_dtype(indices, offsets):
    """PyTorch's promoteIndicesAndOffsets: one index dtype, int64 unless both are int32."""
    return indices.dtype if indices.dtype is offsets.dtype else D.int64


def _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset):
    for t, name in ((indices, "indices"), (offsets, "offsets")):
        if t.dtype not in (D.int64, D.int32):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the "
                               f"following scalar types: Long, Int; but got "
                               f"torch.{D.LEGACY_TYPE_NAMES[t.dtype]} instead (while checking "
                               f"arguments for embedding_bag)")
    if weight.dtype not in (D.float16, D.bfloat16, D.float32, D.float64):
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the "
                           f"following scalar types: Half, BFloat16, Float, Double; but got "
                           f"torch.{D.LEGACY_TYPE_NAMES[weight.dtype]} instead (while checking "
                           f"arguments for embedding_bag)")
    if weight.dim() != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                           f"{weight.dim()}")
    # PyTorch's check lets a 2-D input through, which its paths then read inconsistently (the
    # FBGEMM sum as the flattened entries, the others with a wrong bag count or an internal
    # error); ember reads it flattened. F.embedding_bag reshapes 2-D inputs before this.
    if indices.dim() not in (1, 2):
        raise RuntimeError(f"input has to be a 1D or 2D Tensor, but got Tensor of dimension "
                           f"{indices.dim()}")
    if offsets.dim() != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension "
                           f"{offsets.dim()}")
    if mode not in (SUM, MEAN, MAX):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if include_last_offset and offsets.numel() < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if per_sample_weights is not None:
        if mode != SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with "
                               "mode='sum'")
        if per_sample_weights.dtype is not weight.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type "
                               f"as tensor for argument #1 'per_sample_weights'; but type "
                               f"torch.{D.LEGACY_TYPE_NAMES[weight.dtype]} does not equal "
                               f"torch.{D.LEGACY_TYPE_NAMES[per_sample_weights.dtype]} (while "
                               f"checking arguments for embedding_bag)")
        if per_sample_weights.dim() != 1:
            raise RuntimeError("Expected per_sample_weights.value().dim() == 1 to be true, but "
                               "got false.")
        if per_sample_weights.numel() != indices.numel():
            raise RuntimeError(f"Expected per_sample_weights.value().numel() == "
                               f"indices.numel() to be true, but got false: "
                               f"{per_sample_weights.numel()} per-sample weights for "
                               f"{indices.numel()} indices")


def _bag_starts(offsets, n, include_last_offset):
    """(starts, counts) of the bags. Bag b runs from offsets[b] to the next bag's start, the
    last bag to the end of the input (with include_last_offset too, as PyTorch's bag sizes)."""
    starts = offsets.astype(np.int64, copy=False)
    if include_last_offset:
        starts = starts[:-1]
    if starts.size:
        if starts[0] != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got "
                               f"{int(starts[0])}")
        if offsets[-1] > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but "
                               f"got offsets[-1] of {int(offsets[-1])}")
        if (starts[1:] < starts[:-1]).any():
            raise RuntimeError("offsets must be non-decreasing")
    return starts, np.diff(np.r_[starts, n])


def _kept(idx, starts, counts, padding_idx):
    """(kept, kept_starts, kept_counts): the positions counted (not padding_idx; None for all of
    them) and the bags as runs of those positions, which stay in bag order."""
    if padding_idx < 0:
        return None, starts, counts
    kept = np.flatnonzero(idx != padding_idx)
    kept_counts = np.bincount(np.repeat(np.arange(counts.size), counts)[kept],
                              minlength=counts.size)
    return kept, np.r_[0, np.cumsum(kept_counts)[:-1]].astype(np.int64), kept_counts


def bag_max_rows(w, idx, starts, counts):
    """(B, D) int64: the weight row each bag's maximum comes from, per column, as PyTorch's CPU
    kernel picks it: the bag's first entry, replaced by each later one strictly greater (so the
    first of equal maxima wins, and a NaN stays only when it comes first); 0 for an empty bag.

    That rule's maximum is the NaN-ignoring maximum (np.fmax), except where the first entry is
    NaN. The bags are walked in passes as in Note [Bag sums in passes], twice: the maxima, then,
    per column, the number of entries before the first one equal to it (plain comparisons and
    adds: masked writes are slow in NumPy)."""
    num, dim = counts.size, w.shape[1]
    best_row = np.zeros((num, dim), dtype=np.int64)
    if not num or not dim or not idx.size:
        return best_row
    recs = _records(w)

    def rows(p):
        return recs[idx[p]].view(w.dtype).reshape(p.size, dim)
    order = np.argsort(-counts, kind="stable")
    first, longest = starts[order], counts[order]
    live = np.searchsorted(-longest, -np.arange(int(longest[0])), side="left").tolist()
    if not live:
        return best_row
    best = rows(first[:live[0]])
    for r in range(1, len(live)):
        np.fmax(best[:live[r]], rows(first[:live[r]] + r), out=best[:live[r]])
    searching = np.not_equal(rows(first[:live[0]]), best)
    wide = len(live) > 255  # counts past uint8
    arg = searching.astype(np.int64) if wide else searching.view(np.uint8).copy()
    differs = np.empty(best.shape, bool)
    for r in range(1, len(live) - 1):
        n = live[r]
        np.not_equal(rows(first[:n] + r), best[:n], out=differs[:n])
        searching[:n] &= differs[:n]
        searching[n:] = False
        arg += searching if wide else searching.view(np.uint8)
    first_nan = rows(first[:live[0]]) != rows(first[:live[0]])  # a NaN first stays
    arg[first_nan] = 0
    best_row[order[:live[0]]] = idx[first[:live[0], None] + arg]
    return best_row


def _fbgemm_path(weight, mode, padding_idx):
    """Whether PyTorch's CPU forward takes its FBGEMM kernel: sum or mean of float, half or
    bfloat16 rows with no padding_idx. Two visible behaviours follow the path taken: the error
    an out-of-range index raises, and (with include_last_offset) where the last bag's sum ends."""
    return mode != MAX and weight.dtype in _FAST_SUM and padding_idx < 0


def _check_range(idx, num_weights, fbgemm):
    """An index outside [0, num_weights) is an error, worded as the kernel PyTorch takes."""
    if idx.size and (idx.min() < 0 or idx.max() >= num_weights):
        bad = int(np.flatnonzero((idx < 0) | (idx >= num_weights))[0])
        if fbgemm:
            raise RuntimeError(f"Index {bad} of input takes value {int(idx[bad])} which is not "
                               f"in the valid range [0, {num_weights})")
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                           f"found idx to be {int(idx[bad])}")


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                   per_sample_weights, include_last_offset, padding_idx, requires_grad):
    _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    w = np.ascontiguousarray(weight._np)
    idx = indices._np.reshape(-1)
    num_weights, dim = w.shape
    fbgemm = _fbgemm_path(weight, mode, padding_idx)
    _check_range(idx, num_weights, fbgemm)
    starts, counts = _bag_starts(offsets._np, idx.size, include_last_offset)
    kept, kept_starts, kept_counts = _kept(idx, starts, counts, padding_idx)
    index_dt = _index_dtype(indices, offsets)._np
    num_bags = counts.size
    psw = None if per_sample_weights is None else per_sample_weights._np
    fast_sum = (mode == SUM and weight.dtype in _FAST_SUM and padding_idx < 0
                and (dim < 2 or weight._np.strides[1] == w.itemsize)
                and (psw is None or psw.size < 2 or psw.strides[0] == psw.itemsize))
    offset2bag = np.repeat(np.arange(num_bags, dtype=index_dt), counts) if not fast_sum else \
        np.zeros(0, index_dt)
    if mode == SUM:
        bag_size = np.zeros(num_bags if requires_grad else offsets.numel(), index_dt)
    else:
        bag_size = kept_counts.astype(index_dt)
    acc = _OPMATH.get(weight.dtype, weight.dtype)._np
    picked = idx if kept is None else idx[kept]
    if mode == MAX:
        max_rows = bag_max_rows(w, picked, kept_starts, kept_counts)
        out = np.take_along_axis(w, max_rows, axis=0)
        out[kept_counts == 0] = 0
        max_indices = max_rows.astype(index_dt, copy=False)
    else:
        sum_counts = kept_counts
        if fbgemm and include_last_offset and num_bags and offsets._np[-1] < idx.size:
            # PyTorch's FBGEMM path sums the last bag up to the last offset, though its
            # bag_size (the mean's divisor) and offset2bag run to the input's end; its other
            # path sums the last bag to the input's end
            end = int(offsets._np[-1])
            kept, kept_starts, sum_counts = _kept(idx[:end], starts,
                                                  np.diff(np.r_[starts, end]), padding_idx)
            picked = idx[:end] if kept is None else idx[:end][kept]
        if psw is not None:
            psw = (psw[:picked.size] if kept is None else psw[kept]).astype(acc, copy=False)
        out = segment_sums(w, picked, kept_starts, sum_counts, psw, acc)
        if mode == MEAN:
            out /= np.maximum(kept_counts, 1)[:, None].astype(acc)
        max_indices = bag_size.copy()
    return (_wrap(out.astype(w.dtype, copy=False)), _wrap(offset2bag), _wrap(bag_size),
            _wrap(max_indices))


@impl("_embedding_bag", "CPU")
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset, padding_idx, True)


@impl("_embedding_bag_forward_only", "CPU")
def embedding_bag_forward_only(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                               sparse=False, per_sample_weights=None, include_last_offset=False,
                               padding_idx=-1):
    """_embedding_bag when nothing needs a gradient: only the size of a sum's bag_size differs
    (one per offset, as PyTorch's forward-only kernel leaves it)."""
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset, padding_idx, False)


def _embedding_bag_meta(requires_grad):
    def meta(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
             per_sample_weights=None, include_last_offset=False, padding_idx=-1):
        _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
        num_bags = offsets.shape[0] - (1 if include_last_offset else 0)
        index_dt, dim, dev = _index_dtype(indices, offsets), weight.shape[1], weight.device
        fast_sum = mode == SUM and weight.dtype in _FAST_SUM and padding_idx < 0
        sizes = num_bags if requires_grad or mode != SUM else offsets.shape[0]
        return (_meta((num_bags, dim), weight.dtype, device=dev),
                _meta((0 if fast_sum else indices.numel(),), index_dt, device=dev),
                _meta((sizes,), index_dt, device=dev),
                _meta((num_bags, dim) if mode == MAX else (sizes,), index_dt, device=dev))
    return meta


impl("_embedding_bag", "Meta")(_embedding_bag_meta(True))
impl("_embedding_bag_forward_only", "Meta")(_embedding_bag_meta(False))


# ---- backward ----------------------------------------------------------------------------------
def frequency_scale(idx, kept_idx, num_weights):
    """The factor scale_grad_by_freq puts on the gradient of each kept entry, as PyTorch's CPU
    embedding_bag backward computes it.

    Note [embedding_bag's frequency scale]
    PyTorch's dense backward walks the sorted indices one distinct index at a time and divides
    by `counts[sorted_indices[i]]`, i being the distinct index's rank, not by the count of the
    index itself. So row u's gradient is divided by the count of the i-th smallest index (with
    repeats), where i is u's rank among the distinct indices (padding_idx counted): for indices
    [1, 1, 2, 1, 3], rows 2 and 3 are divided by 3, the count of 1. Reproduced so that the
    gradients equal PyTorch's."""
    ordered = np.sort(idx)
    distinct = np.unique(ordered)
    divisor = np.ones(num_weights)
    divisor[distinct] = np.bincount(idx, minlength=num_weights)[ordered[:distinct.size]]
    return 1.0 / divisor[kept_idx]


def _bag_of(indices, offsets, offset2bag):
    """The bag of every index: the forward's offset2bag, or (on the fast sum path, which leaves
    it empty) rebuilt from the offsets as PyTorch's backward does."""
    if offset2bag.numel() or not indices.numel():
        return offset2bag._np.astype(np.int64, copy=False)
    starts = offsets._np.astype(np.int64, copy=False)
    return np.searchsorted(starts, np.arange(indices.numel()), side="right") - 1


def _index_grads(grad, indices, bag_of, bag_size, scale_grad_by_freq, mode, per_sample_weights,
                 padding_idx, num_weights):
    """(kept, rows of grad, scale): the gradient of every kept index is
    grad[bag_of[kept]] * scale (scale None for 1), divided by the bag's size for mean."""
    idx = indices._np.reshape(-1)
    g = grad._np
    num_bags = g.shape[0]
    kept = (bag_of >= 0) & (bag_of < num_bags)  # past the last bag: in no bag
    if padding_idx >= 0:
        kept &= idx != padding_idx
    kept = np.flatnonzero(kept)
    acc = _OPMATH.get(grad.dtype, grad.dtype)._np
    if mode == MEAN:
        g = g.astype(acc) / np.maximum(bag_size._np, 1)[:, None].astype(acc)
    scale = None
    if per_sample_weights is not None:
        scale = per_sample_weights._np[kept].astype(acc)
    if scale_grad_by_freq:
        freq = frequency_scale(idx.astype(np.int64, copy=False), idx[kept], num_weights)
        scale = freq.astype(acc) if scale is None else scale * freq.astype(acc)
    return kept, np.ascontiguousarray(g), scale


@impl("_embedding_bag_backward", "CPU")
def embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
                           num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights,
                           padding_idx=-1):
    """The weight's gradient: for sum and mean, each kept index's row gets its bag's gradient
    (times its per-sample weight, over the bag's size for mean); for max, each bag's gradient
    goes to the rows its maxima came from. Dense, or for sparse=True a sparse COO gradient with
    one entry per kept index, uncoalesced, as PyTorch's."""
    if grad.dtype not in (D.float16, D.bfloat16, D.float32, D.float64):
        raise RuntimeError(f"Unsupported input type encountered: {grad.dtype}")
    bag_of = _bag_of(indices, offsets, offset2bag)
    idx = indices._np.reshape(-1).astype(np.int64, copy=False)
    dim = grad.shape[1]
    acc = _OPMATH.get(grad.dtype, grad.dtype)._np
    if mode == MAX:
        if sparse:
            raise RuntimeError("max mode does not support sparse weights")
        return _wrap(_max_backward(grad._np, maximum_indices._np, bag_size._np, num_weights,
                                   padding_idx, acc))
    kept, g, scale = _index_grads(grad, indices, bag_of, bag_size, scale_grad_by_freq, mode,
                                  per_sample_weights, padding_idx, num_weights)
    if sparse:
        if scale_grad_by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                               "sparse gradients")
        rows = g[bag_of[kept]]
        if scale is not None:
            rows = rows * scale[:, None]
        return _from_arrays(idx[kept][None], rows.astype(grad._np.dtype, copy=False),
                            (num_weights, dim), kept.size <= 1)
    keys = idx[kept]
    # a stable sort of the keys; NumPy radix-sorts 16-bit integers
    order = np.argsort(keys.astype(np.uint16) if num_weights <= 1 << 16 else keys, kind="stable")
    sorted_keys = keys[order]
    run = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) if keys.size else keys
    sums = segment_sums(g, bag_of[kept][order], run, np.diff(np.r_[run, keys.size]),
                        None if scale is None else scale[order], acc)
    out = caching_allocator.empty((num_weights, dim), grad._np.dtype)
    out[...] = 0
    if dim:
        _records(out)[sorted_keys[run]] = _records(sums.astype(out.dtype, copy=False))
    return _wrap(out)


def _max_backward(g, max_rows, bag_size, num_weights, padding_idx, acc):
    """Each bag's gradient added, column by column, into the weight row its maximum came from
    (empty bags and padding_idx give nothing), in bag order."""
    num_bags, dim = g.shape
    out = np.zeros((num_weights, dim), acc)
    rows = max_rows.astype(np.int64, copy=False)
    take = (bag_size[:, None] > 0) & (rows >= 0)
    if padding_idx >= 0:
        take &= rows != padding_idx
    keys = (rows * dim + np.arange(dim))[take]
    np.add.at(out.reshape(-1), keys, g[take].astype(acc, copy=False))
    return out.astype(g.dtype, copy=False)


@impl("_embedding_bag_backward", "Meta")
def embedding_bag_backward_meta(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
                                num_weights, scale_grad_by_freq, mode, sparse,
                                per_sample_weights, padding_idx=-1):
    if sparse:
        raise NotImplementedError("_embedding_bag_backward with sparse=True has no Meta kernel "
                                  "in ember (its result is a sparse tensor)")
    return _meta((num_weights, grad.shape[1]), grad.dtype, device=grad.device)


@impl("_embedding_bag_per_sample_weights_backward", "CPU")
def per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
                                padding_idx=-1):
    """The gradient of each per-sample weight: the dot product of its bag's gradient with the
    weight row its index names (0 for padding_idx)."""
    if mode != SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for "
                           "mode='sum'")
    bag_of = _bag_of(indices, offsets, offset2bag)
    idx = indices._np.reshape(-1)
    g, w = np.ascontiguousarray(grad._np), np.ascontiguousarray(weight._np)
    acc = _OPMATH.get(grad.dtype, grad.dtype)._np
    out = np.zeros(idx.size, acc)
    picked = np.flatnonzero((bag_of >= 0) & (bag_of < g.shape[0]))
    if picked.size and g.shape[1]:
        dim = g.shape[1]
        products = _records(g)[bag_of[picked]].view(g.dtype).reshape(-1, dim).astype(acc)
        products *= _records(w)[idx[picked]].view(w.dtype).reshape(-1, dim)
        out[picked] = products @ np.ones(dim, acc)  # the rows' sums, as one product
    if padding_idx >= 0:
        out[idx == padding_idx] = 0
    return _wrap(out.astype(g.dtype, copy=False))


@impl("_embedding_bag_per_sample_weights_backward", "Meta")
def per_sample_weights_backward_meta(grad, weight, indices, offsets, offset2bag, mode,
                                     padding_idx=-1):
    if mode != SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for "
                           "mode='sum'")
    return _meta((indices.numel(),), grad.dtype, device=grad.device)
