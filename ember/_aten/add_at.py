"""`np.add.at` for whole rows, fast: out[index[i]] += rows[i] for every i, a repeated index
adding its rows in order -- the scatter-add behind an embedding's weight gradient (PyTorch's
embedding_dense_backward) and behind adding sparse entries into a dense tensor.

Note [Scatter-add in passes]
np.add.at adds one element at a time, and np.add.reduceat over axis 0 is hardly faster (about
15x a plain sum per element). Here the indices are sorted stably, so each index's rows stay in
their order. When no index repeats, all rows go in one fancy-indexed write (into a fresh zero
output straight from the rows, with no gather). Otherwise the rows are added in passes of
whole-row fancy indexing: pass r adds the r-th row of every index that has one; an index never
appears twice in one pass, so every row is added. The passes add into a compact array of the
indices' sums (started from out's rows, so each sum is still out[i] + row + row ... in order),
ordered longest run first so that pass r writes a contiguous prefix of it; one fancy-indexed
write puts the sums in place at the end. There are as
many passes as the largest repeat count, so an index repeated more than HEAVY times (a padding
token, "the") is summed on its own, over its contiguous run in the sorted order.
"""
import numpy as np

HEAVY = 32


def add_at(out, index, rows):
    """np.add.at(out, index, rows) for a tuple `index` of k int arrays of one length n and
    rows (n, *out.shape[k:]); returns out."""
    k = len(index)
    if k == 1 or not index[0].size:
        return _add_rows(out, index[0], rows, fresh=False) if k == 1 else out
    keys = np.ravel_multi_index(index, out.shape[:k])
    flat = np.ascontiguousarray(out).reshape((int(np.prod(out.shape[:k])),) + out.shape[k:])
    _add_rows(flat, keys, rows, fresh=False)
    if not np.shares_memory(flat, out):
        out[...] = flat.reshape(out.shape)
    return out


def index_sum(keys, rows, num_keys):
    """(num_keys, *rows.shape[1:]): the sum of the rows with each key, zero for keys none has."""
    out = np.zeros((num_keys,) + rows.shape[1:], rows.dtype)
    return _add_rows(out, keys, rows, fresh=True)


def _add_rows(out, keys, rows, fresh):
    """out[keys[i]] += rows[i] for every i; `fresh`: out is known to be all zeros."""
    n = keys.size
    if not n:
        return out
    if (keys[1:] >= keys[:-1]).all():  # already grouped (the bags of an EmbeddingBag)
        order, sorted_keys = np.arange(n), keys
    else:
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    counts = np.diff(np.r_[starts, n])
    if starts.size == n:  # no key repeats: one fancy-indexed write
        if fresh:
            out[keys] = rows
        else:
            out[keys] += rows
        return out
    heavy = counts > HEAVY
    for start, count in zip(starts[heavy].tolist(), counts[heavy].tolist()):
        run = order[start:start + count]
        out[keys[run[0]]] += rows[run].sum(axis=0)
    # the other keys, longest run first, so that the keys pass r reaches are a prefix
    by_length = np.argsort(-counts[~heavy], kind="stable")
    starts, counts = starts[~heavy][by_length], counts[~heavy][by_length]
    run_keys = sorted_keys[starts]
    first = rows[order[starts]]
    sums = first if fresh else np.add(out[run_keys], first, out=first)
    for r in range(1, int(counts[0]) if counts.size else 0):
        live = int(np.searchsorted(-counts, -r))  # the runs longer than r
        sums[:live] += rows[order[starts[:live] + r]]
    out[run_keys] = sums
    return out
