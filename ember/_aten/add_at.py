"""`np.add.at` for whole rows, fast: out[index[i]] += rows[i] for every i, a repeated index
adding its rows in order -- the scatter-add behind an embedding's weight gradient (PyTorch's
embedding_dense_backward) and behind adding sparse entries into a dense tensor.

Note [Scatter-add in passes]
np.add.at adds one element at a time, and np.add.reduceat over axis 0 is hardly faster (about
15x a plain sum per element). Here the indices are sorted stably, so each index's rows stay in
their order. An index met once gets its row in one fancy-indexed write with all the others (into
a fresh zero output it is written straight from the rows, with no gather). The repeated ones get
theirs in passes of whole-row fancy indexing: pass r adds the r-th row of every index that has
one; an index never appears twice in one pass, so `out[i] += rows` adds every row. There are as
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
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    counts = np.diff(np.r_[starts, n])
    once = counts == 1
    if fresh:
        out[keys] = rows  # right for the keys met once; the repeated ones start again at 0
        starts, counts = starts[~once], counts[~once]
        out[sorted_keys[starts]] = 0
    elif once.all():
        out[keys] += rows
        return out
    else:
        at = order[starts[once]]
        out[keys[at]] += rows[at]
        starts, counts = starts[~once], counts[~once]
    heavy = counts > HEAVY
    light_starts, light_counts = starts[~heavy], counts[~heavy]
    for r in range(int(light_counts.max(initial=0))):
        at = order[light_starts[light_counts > r] + r]
        out[keys[at]] += rows[at]
    for start, count in zip(starts[heavy].tolist(), counts[heavy].tolist()):
        run = order[start:start + count]
        out[keys[run[0]]] += rows[run].sum(axis=0)
    return out
