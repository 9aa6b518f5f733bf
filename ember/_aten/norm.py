"""Normalization kernels (CPU and Meta): PyTorch's `native_batch_norm`, `native_layer_norm`
and `native_group_norm`, each with its backward. Layer and group norm are described in their
section below; the rest of this docstring is about batch norm.

Statistics are per channel (dim 1) over every other dim. The kernels view the input as
(N, C, L) and reduce with `einsum`, which sums over N and L in one pass without temporaries.
Training mode normalizes with the batch's mean and biased variance, returns the mean and
1/sqrt(var + eps) for the backward (`save_mean`, `save_invstd`), and updates the running
statistics in place: running = (1 - momentum) * running + momentum * batch statistic, with the
*unbiased* variance, as PyTorch does (without bumping their version counters: PyTorch's don't
either, and the op's own backward reads them). Evaluation mode normalizes with the running
statistics.

float16/bfloat16 inputs are computed in float32; the saved statistics stay float32.
"""
import math

import numpy as np

from .._core.memory_format import channels_last, channels_last_3d, suggest_memory_format, \
    format_strides, copy_in_format

from .._core import caching_allocator
from .._core import dtype as D
from .._dispatch.dispatcher import impl, lookup as _op
from .._core.tensor import _wrap, _wrap_external, _meta
from ._parallel import parallel_for
from .conv import compute_dtype
from .elementwise import not_implemented

_FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)


def _check(input, weight, bias, running_mean, running_var, training):
    if input.dtype not in _FLOATS:
        raise not_implemented("batch_norm", input.dtype)
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm(): Expected 2D or more input, but got input of size "
                           f"{list(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):  # PyTorch's order
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if not training:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    params = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    if any(t.dtype is not input.dtype for t in params):  # PyTorch's CPU "mixed dtype" rule
        if any(t.dtype is not D.float32 for t in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype not in (D.float16, D.bfloat16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return c


def _ncl(a):
    return a.reshape(a.shape[0], a.shape[1], int(np.prod(a.shape[2:], dtype=np.int64)))


def _channel_sum(a3):
    return np.einsum("ncl->c", a3)


def _channel_dot(a3, b3):
    return np.einsum("ncl,ncl->c", a3, b3)


def _stat(t, dt):
    return t._np.astype(dt, copy=False)


def batch_stats(x3, eps):
    """Mean and 1/sqrt(biased var + eps) per channel of x (N, C, L), two passes; and x - mean."""
    n = x3.shape[0] * x3.shape[2]
    mean = _channel_sum(x3) / max(n, 1)
    centered = x3 - mean[:, None]
    var = _channel_dot(centered, centered) / max(n, 1)
    return mean, 1 / np.sqrt(var + eps), centered, var


# Note [Batch norm one channel block at a time]
# ----------------------------------------------
# Written as whole-array NumPy steps, batch norm makes 4 passes over memory forward (x - mean,
# its squares, * scale, + shift) and 7 backward, each over an array too big for the caches,
# and allocates a full-size temporary for x - mean. The kernels below run the same steps on
# blocks of a few channels (about 256K elements: they stay in L2), so the input is read from
# memory about once and the output written once; the temporaries are block-sized. The blocks
# are fixed by the shape alone, and the per-channel sums are made within one block, so the
# result does not depend on how many threads share the blocks.
_BLOCK = 1 << 18


def _channel_blocks(x3):
    """Slices of C, each about _BLOCK elements of x (N, C, L)."""
    c = x3.shape[1]
    step = max(1, min(c, _BLOCK // max(x3.shape[0] * x3.shape[2], 1)))
    return [slice(i, min(i + step, c)) for i in range(0, c, step)]


def _by_blocks(fn, x3):
    """fn(channel slice) for every block of x3, the blocks shared out over threads."""
    blocks = _channel_blocks(x3)

    def run(part):    # part: (Ellipsis,) or (slice of the blocks,)
        for b in blocks[part[0] if isinstance(part[0], slice) else slice(None)]:
            fn(b)
    parallel_for(run, (len(blocks),), x3.size)


def _train_forward(x3, scale_of, bias, eps, out):
    """Training batch norm of x (N, C, L) into out: returns per-channel mean, invstd, var."""
    c = x3.shape[1]
    n = max(x3.shape[0] * x3.shape[2], 1)
    mean, var = np.empty(c, x3.dtype), np.empty(c, x3.dtype)

    def block(b):
        xb = x3[:, b]
        m = _channel_sum(xb) / n
        centered = xb - m[:, None]
        v = _channel_dot(centered, centered) / n
        mean[b], var[b] = m, v
        scale = scale_of(1 / np.sqrt(v + eps), b)
        np.multiply(centered, scale[:, None], out=out[:, b])
        if bias is not None:
            out[:, b] += bias[b, None]
    _by_blocks(block, x3)
    return mean, 1 / np.sqrt(var + eps), var


# Note [Channels-last batch norm]
# ---------------------------------
# A channels_last input (N, C, H, W) -- or channels_last_3d (N, C, D, H, W) -- is an (N*H*W, C)
# matrix in memory: the per-channel sums are column sums of it and the normalisation a row
# broadcast, and the result is channels-last again (PyTorch's CPU batch norm keeps the
# layout). The matrix is walked in blocks of rows that stay in cache: forward, one pass makes
# each block's mean and centred sum of squares (combined across blocks by Chan's formula, as
# exact as two passes over the whole input) and a second writes x * scale + shift; backward,
# one pass makes sum(g) and sum(g * (x - mean)) per block and a second writes the input
# gradient, g * a + x * b + c per channel. The blocks depend on the shape alone and are
# combined in order, so the result does not depend on the number of threads.
# Two measured details (a (4096, 64) float32 block, one thread): a column sum as a product with
# a vector of ones (BLAS gemv) takes a quarter of the time of np.add.reduce(axis=0), and a
# per-channel vector broadcast over a block runs as one short inner loop per row (C long), so
# the vectors are first tiled to the block's shape (once per call), after which every step is
# one flat loop -- 30% faster each.
def _rows_of_channels(t):
    """The (N*spatial, C) matrix of a channels_last / channels_last_3d tensor, or None."""
    if t.dim() == 4:
        fmt = channels_last
    elif t.dim() == 5:
        fmt = channels_last_3d
    else:
        return None
    if suggest_memory_format(t) is not fmt:
        return None
    a = np.moveaxis(t._np, 1, -1)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a.reshape(-1, t.shape[1])


def _row_blocks(x2):
    """Slices of the rows of x (rows, C), each about _BLOCK elements."""
    rows = x2.shape[0]
    step = _block_rows(x2)
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)]


def _block_rows(x2):
    return max(1, min(x2.shape[0], _BLOCK // max(x2.shape[1], 1)))


def _tiled(v, x2):
    """Per-channel vector v (C,) repeated to a full block of x2's rows (slice [:rows] of it
    for a shorter last block). Making the tile costs about one step over a block, and saves
    about a third of each step using it: below 4 blocks it is v as one row, broadcast."""
    rows = _block_rows(x2)
    if x2.shape[0] < 4 * rows:
        return v[None, :]
    return np.broadcast_to(v, (rows, v.shape[0])).copy()


def _column_sum(a, ones):
    """Column sums of a (rows, C) block: ones (at least rows long) @ a."""
    return ones[:a.shape[0]] @ a


def _over_row_blocks(fn, x2):
    """[fn(block) for every row block of x2], the blocks shared out over threads."""
    blocks = _row_blocks(x2)
    results = [None] * len(blocks)

    def run(part):
        for i in range(len(blocks))[part[0] if isinstance(part[0], slice) else slice(None)]:
            results[i] = fn(blocks[i])
    parallel_for(run, (len(blocks),), x2.size)
    return results


def _channels_last_stats(x2, dt):
    """Per-channel mean and biased variance of x (rows, C): each block's mean and centred sum
    of squares, combined in block order (Chan et al.)."""
    ones = np.ones(_block_rows(x2), dt)

    def block(b):
        xb = x2[b].astype(dt, copy=False)
        m = _column_sum(xb, ones) / xb.shape[0]
        d = xb - m
        return xb.shape[0], m, np.einsum("lc,lc->c", d, d)
    count, mean, m2 = 0, None, None
    for nb, mb, m2b in _over_row_blocks(block, x2):
        if mean is None:
            count, mean, m2 = nb, mb, m2b
            continue
        total = count + nb
        delta = mb - mean
        mean = mean + delta * (nb / total)
        m2 = m2 + m2b + delta * delta * (count * nb / total)
        count = total
    return mean, m2 / max(count, 1)


def _from_rows(r, input):
    """An (N*spatial, C) result as an (N, C, *spatial) tensor in channels-last layout."""
    shape = tuple(input.shape)
    return _wrap(np.moveaxis(r.reshape(shape[:1] + shape[2:] + shape[1:2]), -1, 1))


def _batch_norm_channels_last(input, x2, w, b, running_mean, running_var, training, momentum,
                              eps, dt):
    if training:
        n = x2.shape[0]
        if n <= 1 and x2.size:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        mean, var = _channels_last_stats(x2, dt)
        invstd = 1 / np.sqrt(var + eps)
        _update_running(running_mean, running_var, mean, var, n, momentum)
    else:
        mean = _stat(running_mean, dt)
        invstd = 1 / np.sqrt(_stat(running_var, dt) + eps)
    scale = invstd if w is None else invstd * w
    shift = -mean * scale if b is None else b - mean * scale
    out = caching_allocator.empty(x2.shape, x2.dtype)
    scale_t, shift_t = _tiled(scale.astype(dt, copy=False), x2), _tiled(
        shift.astype(dt, copy=False), x2)

    def block(blk):     # x * scale + shift, in the input's dtype
        o = out[blk]
        rows = o.shape[0]
        if x2.dtype == dt:
            np.multiply(x2[blk], scale_t[:rows], out=o)
            o += shift_t[:rows]
        else:
            o[...] = x2[blk].astype(dt) * scale_t[:rows] + shift_t[:rows]
    _over_row_blocks(block, x2)
    if not training:
        mean = invstd = np.empty((0,), dt)
    return _from_rows(out, input), _wrap(mean), _wrap(invstd)


def _stat_dtype(input, *params):
    """The dtype of the saved mean and invstd: PyTorch's CPU kernel keeps them in the
    parameters' dtype -- the input's, unless float32 parameters go with a float16 / bfloat16
    input (its "mixed dtype" case, the only mixing it accepts), then float32."""
    if input.dtype in (D.float16, D.bfloat16) and any(
            p is not None and p.dtype is not input.dtype for p in params):
        return D.float32
    return input.dtype


@impl("native_batch_norm", "CPU")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    _check(input, weight, bias, running_mean, running_var, training)
    out, mean, invstd = _native_batch_norm(input, weight, bias, running_mean, running_var,
                                           training, momentum, eps)
    sdt = _stat_dtype(input, weight, bias, running_mean, running_var)._np
    return out, _wrap(mean._np.astype(sdt, copy=False)), _wrap(invstd._np.astype(sdt, copy=False))


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    x = input._np
    dt = compute_dtype(x)
    x2 = _rows_of_channels(input)
    if x2 is not None and x2.size:
        return _batch_norm_channels_last(
            input, x2, None if weight is None else _stat(weight, dt),
            None if bias is None else _stat(bias, dt), running_mean, running_var, training,
            momentum, eps, dt)
    x3 = _ncl(x.astype(dt, copy=False))
    w = None if weight is None else _stat(weight, dt)
    b = None if bias is None else _stat(bias, dt)
    out = caching_allocator.empty(x3.shape, dt)
    if training:
        n = x3.shape[0] * x3.shape[2]
        if n <= 1 and x.size:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        save_mean, save_invstd, var = _train_forward(
            x3, (lambda inv, blk: inv) if w is None else (lambda inv, blk: inv * w[blk]), b, eps,
            out)
        _update_running(running_mean, running_var, save_mean, var, n, momentum)
    else:
        mean = _stat(running_mean, dt)
        invstd = 1 / np.sqrt(_stat(running_var, dt) + eps)
        scale = invstd if w is None else invstd * w
        shift = -mean * scale if b is None else b - mean * scale

        # x * scale + shift, PyTorch's inference form: two passes, not three
        _affine_pieces(out, x3, scale, c=shift, dt=dt)
        save_mean = save_invstd = np.empty((0,), dt)
    return (_wrap(out.reshape(x.shape).astype(x.dtype, copy=False)), _wrap(save_mean),
            _wrap(save_invstd))


def _update_running(running_mean, running_var, mean, var, n, momentum):
    if running_mean is not None:
        rm = running_mean._np
        rm[...] = (1 - momentum) * rm + momentum * mean
    if running_var is not None:
        rv = running_var._np
        unbiased = var * n / (n - 1) if n > 1 else np.full_like(var, np.inf)
        rv[...] = (1 - momentum) * rv + momentum * unbiased


def _layout_strides(input):
    """The strides of the CPU kernels' (N, C, *spatial) results for this input: channels-last
    for a channels-last input, else None (contiguous)."""
    fmt = suggest_memory_format(input) if input.dim() in (4, 5) else None
    if fmt is channels_last or fmt is channels_last_3d:
        return format_strides(input.shape, fmt)
    return None


@impl("native_batch_norm", "Meta")
def native_batch_norm_meta(input, weight, bias, running_mean, running_var, training, momentum,
                           eps):
    c = _check(input, weight, bias, running_mean, running_var, training)
    stat_dt = _stat_dtype(input, weight, bias, running_mean, running_var)
    stats = (c,) if training else (0,)
    return (_meta(input.shape, input.dtype, _layout_strides(input), device=input.device),
            _meta(stats, stat_dt, device=input.device), _meta(stats, stat_dt, device=input.device))


# ---- the forms run_decompositions lowers aten.batch_norm to (torch's core ATen set): evaluation
# without writes, and training that returns the new running statistics instead of writing them
@impl("_native_batch_norm_legit_no_training", "CPU")
def batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    return native_batch_norm(input, weight, bias, running_mean, running_var, False, momentum,
                             eps)


@impl("_native_batch_norm_legit_no_training", "Meta")
def batch_norm_legit_no_training_meta(input, weight, bias, running_mean, running_var, momentum,
                                      eps):
    return native_batch_norm_meta(input, weight, bias, running_mean, running_var, False,
                                  momentum, eps)


@impl("_native_batch_norm_legit_functional", "CPU")
def batch_norm_legit_functional(input, weight, bias, running_mean, running_var, training,
                                momentum, eps):
    if training and input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes "
                           f"= {list(input.shape)}")
    mean_out, var_out = _wrap(running_mean._np.copy()), _wrap(running_var._np.copy())
    out = native_batch_norm(input, weight, bias, mean_out, var_out, training, momentum, eps)
    return out + (mean_out, var_out)


@impl("_native_batch_norm_legit_functional", "Meta")
def batch_norm_legit_functional_meta(input, weight, bias, running_mean, running_var, training,
                                     momentum, eps):
    out = native_batch_norm_meta(input, weight, bias, running_mean, running_var, training,
                                 momentum, eps)
    return out + (_meta(running_mean.shape, running_mean.dtype, device=input.device),
                  _meta(running_var.shape, running_var.dtype, device=input.device))


# ---- PyTorch's other batch-norm entry points, as native_batch_norm calls (so autograd, export and
# explain see that op): with the running statistics or without them, and the training form
# that always updates them (its fourth result is cuDNN's reserve space, empty on the CPU)
@impl("_native_batch_norm_legit", "CompositeImplicitAutograd")
def batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _op("native_batch_norm")(input, weight, bias, running_mean, running_var, training,
                                    momentum, eps)


@impl("_native_batch_norm_legit.no_stats", "CompositeImplicitAutograd")
def batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    return _op("native_batch_norm")(input, weight, bias, None, None, training, momentum, eps)


@impl("_batch_norm_with_update", "CompositeImplicitAutograd")
def batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    out, save_mean, save_invstd = _op("native_batch_norm")(
        input, weight, bias, running_mean, running_var, True, momentum, eps)
    reserve = _op("empty.memory_format")((0,), dtype=D.uint8, device=input.device)
    return out, save_mean, save_invstd, reserve


# Note [Batch norm backward in two reads]
# ----------------------------------------
# With x_hat = (x - mean) * invstd per channel, the backward needs two per-channel sums,
# sum(g) and sum(g * (x - mean)) = sum(g * x) - mean * sum(g), and then writes, in training,
# grad_input = g * a + x * b + c with a, b, c per channel (a = w * invstd,
# k = invstd^2 * sum(g * (x - mean)) / n, b = -a * k, c = a * (mean * k - sum(g) / n)); in
# evaluation g * a. So the input and the gradient are read once for the sums and once for the
# result. Both reads go over contiguous pieces of about _PIECE elements that stay in L2: for a
# channels-last input, blocks of rows of its (N*spatial, C) matrix; for any other, (samples,
# channels) blocks of its (N, C, L) view, each contiguous. The sums are matrix-vector
# products on those pieces (BLAS: `rows @ ones`, and per-channel dot products as a stacked
# (C, 1, L) @ (C, L, 1) product), 3x faster than np.einsum; the per-channel a, b, c are tiled
# to a piece's shape once, because a product with a broadcast per-channel column or row runs
# about half as fast as one with a full array. The pieces' partial sums are added in order
# (in float64), so the result does not depend on the number of threads.
_PIECE = 1 << 16


def _pieces(x, cl):
    """(index, channel slice) of the contiguous pieces of x: rows of the (rows, C) matrix
    when cl, else (N, C, L) blocks (one sample and some channels, or some whole samples)."""
    if cl:
        step = max(1, _PIECE // max(x.shape[1], 1))
        return [((slice(i, i + step),), slice(None)) for i in range(0, x.shape[0], step)]
    n, c, length = x.shape
    if c * length >= _PIECE:
        step = max(1, _PIECE // max(length, 1))
        return [((i, slice(j, j + step)), slice(j, j + step))
                for j in range(0, c, step) for i in range(n)]
    step = max(1, _PIECE // max(c * length, 1))
    return [((slice(i, i + step),), slice(None)) for i in range(0, n, step)]


def _channel_sums(x, g, mean, cl, dt, need_dot):
    """Per-channel sum(g) and sum(g * (x - mean)) (None unless need_dot) over x, g -- (rows, C)
    matrices when cl, else (N, C, L) -- in float64 (Note above)."""
    c = x.shape[-1] if cl else x.shape[1]
    pieces = _pieces(x, cl)
    parts = [None] * len(pieces)
    ones = np.ones(max(1, min(x.shape[0], _PIECE // max(c, 1))) if cl else x.shape[2], dt)

    def run(part):
        for i in range(len(pieces))[part[0] if isinstance(part[0], slice) else slice(None)]:
            at, _ = pieces[i]
            gb = g[at].astype(dt, copy=False)
            xb = x[at].astype(dt, copy=False) if need_dot else None
            if cl:
                sg = ones[:gb.shape[0]] @ gb
                dot = ones[:gb.shape[0]] @ (gb * xb) if need_dot else None
            else:
                sg = gb @ ones
                dot = np.matmul(gb[..., None, :], xb[..., :, None])[..., 0, 0] \
                    if need_dot else None
                if sg.ndim == 2:    # (samples, channels)
                    sg, dot = sg.sum(0), None if dot is None else dot.sum(0)
            parts[i] = (sg, dot)
    parallel_for(run, (len(pieces),), x.size)
    sum_g, dot = np.zeros(c), np.zeros(c) if need_dot else None
    for (at, chans), (sg, d) in zip(pieces, parts):
        sum_g[chans] += sg
        if need_dot:
            dot[chans] += d
    if need_dot:
        dot -= mean * sum_g
    return sum_g, dot


def _affine_pieces(out, u, a, v=None, b=None, c=None, dt=None):
    """out = u * a (+ v * b) (+ c), a, b, c per channel, a contiguous piece at a time (Note
    above), in dt (float32 for float16 / bfloat16 data)."""
    cl = out.ndim == 2
    pieces = _pieces(out, cl)
    dt = dt or out.dtype
    factors = [t for t in (a, b, c) if t is not None]
    tiles = {}     # per channel block (cl: one block), the factors tiled to a piece's shape
    for at, chans in pieces:
        key = chans.start
        if key not in tiles:
            shape = out[at].shape if cl else out[at].shape[-2:]
            tiles[key] = [np.broadcast_to(t.astype(dt, copy=False) if cl else
                                          t[chans].astype(dt, copy=False)[:, None],
                                          shape).copy() for t in factors]

    def run(part):
        for i in range(len(pieces))[part[0] if isinstance(part[0], slice) else slice(None)]:
            at, chans = pieces[i]
            o = out[at]
            ts = tiles[chans.start]
            if cl and o.shape[0] < ts[0].shape[0]:     # the last, shorter block of rows
                ts = [t[:o.shape[0]] for t in ts]
            ta, ts = ts[0], ts[1:]
            if o.dtype != dt:      # float16 / bfloat16: computed in float32, then cast
                r = u[at].astype(dt) * ta
                if b is not None:
                    r += v[at].astype(dt) * ts.pop(0)
                if c is not None:
                    r += ts[0]
                o[...] = r
                continue
            np.multiply(u[at], ta, out=o)
            if b is not None:
                t = np.multiply(v[at], ts.pop(0))
                if c is not None:
                    t += ts[0]
                o += t
            elif c is not None:
                o += ts[0]
    parallel_for(run, (len(pieces),), out.size)


@impl("native_batch_norm_backward", "CPU")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    """(grad_input, grad_weight, grad_bias), each None when output_mask leaves it out (as
    PyTorch's). With x_hat = (x - mean) * invstd: grad_bias = sum(g), grad_weight =
    sum(g * x_hat) and, in training (mean and invstd depend on x), grad_input =
    w * invstd * (g - mean(g) - x_hat * mean(g * x_hat)) (Note above)."""
    x = input._np
    dt = compute_dtype(x)
    if train:
        mean, invstd = _stat(save_mean, dt), _stat(save_invstd, dt)
    else:
        mean = _stat(running_mean, dt)
        invstd = 1 / np.sqrt(_stat(running_var, dt) + eps)
    w = _stat(weight, dt) if weight is not None else np.ones_like(invstd)
    wdt = weight._np.dtype if weight is not None else x.dtype
    x2 = _rows_of_channels(input) if x.size else None
    cl = x2 is not None
    if cl:
        g = np.moveaxis(grad_out._np, 1, -1)
        xv, gv = x2, (g if g.flags.c_contiguous else np.ascontiguousarray(g)).reshape(x2.shape)
    else:
        xv, gv = _ncl(x), _ncl(np.ascontiguousarray(grad_out._np))
    n = max(x.size // max(x.shape[1], 1), 1)
    need_sums = output_mask[1] or output_mask[2] or (output_mask[0] and train)
    sum_g = dot = None
    if need_sums and x.size:
        sum_g, dot = _channel_sums(xv, gv, mean.astype(np.float64), cl, dt,
                                   output_mask[1] or (output_mask[0] and train))
    elif need_sums:
        sum_g = dot = np.zeros(x.shape[1])
    gi = gw = gb = None
    if output_mask[0]:
        out = caching_allocator.empty(xv.shape, x.dtype)
        a = invstd * w
        if train and x.size:
            k = dot * invstd * invstd / n
            _affine_pieces(out, gv, a, xv, -k * a, (mean * k - sum_g / n) * a, dt)
        elif x.size:
            _affine_pieces(out, gv, a, dt=dt)
        gi = _from_rows(out, input) if cl else _wrap(out.reshape(x.shape))
    if output_mask[1]:
        gw = _wrap((dot * invstd).astype(wdt))
    if output_mask[2]:
        gb = _wrap(sum_g.astype(wdt))
    return gi, gw, gb


@impl("native_batch_norm_backward", "Meta")
def native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var,
                                    save_mean, save_invstd, train, eps, output_mask):
    c = input.shape[1]
    wdt = weight.dtype if weight is not None else input.dtype
    return (_meta(input.shape, input.dtype, _layout_strides(input), device=input.device)
            if output_mask[0] else None,
            _meta((c,), wdt, device=input.device) if output_mask[1] else None,
            _meta((c,), wdt, device=input.device) if output_mask[2] else None)


# ---- layer norm and group norm ----------------------------------------------------------------
# Both normalize rows of a (N, G, C, L) view of the input with the row's own mean and biased
# variance and then scale by a weight per (G, C): layer norm is (prod(batch dims), 1,
# prod(normalized_shape), 1), group norm is (N, groups, channels per group, HxW). One kernel
# pair serves both; mean and rstd are returned (and saved for the backward) one per row.

def _norm_params_dtype(name, input, weight, bias):
    """The dtype of mean and rstd: the input's, or float32 for a float16/bfloat16 input with
    float32 weight/bias (PyTorch's CPU 'mixed dtype' case, the only mixing it accepts)."""
    if input.dtype not in _FLOATS:
        raise not_implemented(name, input.dtype)
    params = [t for t in (weight, bias) if t is not None]
    if all(t.dtype == input.dtype for t in params):
        return input.dtype
    if input.dtype in (D.float16, D.bfloat16) and all(t.dtype == D.float32 for t in params):
        return D.float32
    if input.dtype in (D.float16, D.bfloat16):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _layer_norm_check(input, normalized_shape, weight, bias):
    shape = list(normalized_shape)
    if not shape:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{shape}")
    n = len(shape)
    if input.dim() < n or list(input.shape[input.dim() - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    batch = list(input.shape[:input.dim() - n])
    view = (int(np.prod(batch, dtype=np.int64)), 1, int(np.prod(shape, dtype=np.int64)), 1)
    return view, batch + [1] * n


def _group_norm_check(input, weight, bias, N, C, HxW, group):
    if group <= 0 or C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} "
                               f"and input of shape {list(input.shape)}")
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements (N={N}, C={C}, "
                           f"HxW={HxW}), but got input of size {list(input.shape)}")
    return (N, group, C // group, HxW), [N, group]


# Note [Layer and group norm one block of rows at a time]
# ---------------------------------------------------------
# As batch norm's kernels (Note [Batch norm one channel block at a time]), these walk the input
# in blocks of whole samples (first dim of the view), about _BLOCK elements each, so every step
# of the forward (row sums, x - mean, its squares, * rstd * weight, + bias) and of the backward
# (sum(g), sum(g * x), g * rstd * w + c1 * x + c0) runs on data in cache: the input and the
# gradient are read from memory once and the result written once, straight into an allocator
# block. The blocks depend on the shape alone and the per-block weight/bias gradient sums are
# added in block order, so results do not depend on the number of threads.

def _sample_blocks(view):
    """Slices of the first dim of the (N, G, C, L) view, each about _BLOCK elements."""
    n = view[0]
    step = max(1, min(n, _BLOCK // max(view[1] * view[2] * view[3], 1)))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


def _over_sample_blocks(fn, view, size):
    """[fn(block) for every sample block of the view], shared out over threads."""
    blocks = _sample_blocks(view)
    results = [None] * len(blocks)

    def run(part):
        for i in range(len(blocks))[part[0] if isinstance(part[0], slice) else slice(None)]:
            results[i] = fn(blocks[i])
    parallel_for(run, (len(blocks),), size)
    return results


def _param4(t, view, dt):
    return None if t is None else t._np.astype(dt, copy=False).reshape(1, view[1], view[2], 1)


# Rows longer than this are summed by NumPy's pairwise summation instead of BLAS: a float32
# dot product accumulates each SIMD lane sequentially, and over millions of elements its drift
# (~1e-3 relative on a 2**24-element row) shows in the statistics, where PyTorch's cascade sum
# stays within float rounding.
_LONG_ROW = 1 << 16


def _row_norm_forward(input, weight, bias, eps, view, stat_shape, stat_dt):
    x = input._np
    dt = compute_dtype(x)
    n, groups, c, length = view
    m = c * length
    x4 = x.reshape(view)
    same = x.dtype == dt
    out = caching_allocator.empty(view, x.dtype)
    mean, rstd = np.empty((n, groups), dt), np.empty((n, groups), dt)
    w4, b4 = _param4(weight, view, dt), _param4(bias, view, dt)
    ones = np.ones(m, dt)

    def block(b):
        xb = x4[b] if same else x4[b].astype(dt)
        rows = xb.shape[0] * groups
        xr = xb.reshape(rows, m)
        if m <= _LONG_ROW:
            mu = (xr @ ones) / m   # a row sum as a matrix-vector product: BLAS beats np.sum
            d = xr - mu[:, None]
            r = 1 / np.sqrt(np.einsum("rm,rm->r", d, d) / m + eps)
        else:
            mu = xr.sum(1) / m
            d = xr - mu[:, None]
            r = 1 / np.sqrt(np.square(d).sum(1) / m + eps)
        mean[b], rstd[b] = mu.reshape(xb.shape[:2]), r.reshape(xb.shape[:2])
        d4 = d.reshape(xb.shape)
        r4 = r.reshape(xb.shape[:2] + (1, 1))
        o = out[b] if same else d4
        if w4 is None:
            np.multiply(d4, r4, out=o)
        elif length > 1:  # group norm: rstd * weight is small, one pass
            np.multiply(d4, r4 * w4, out=o)
        else:
            d4 *= r4
            np.multiply(d4, w4, out=o)
        if b4 is not None:
            o += b4
        if not same:
            out[b] = o
    _over_sample_blocks(block, view, x.size)
    sdt = D.np_dtype(stat_dt)
    return (_wrap_external(out.reshape(x.shape), input.dtype),
            _wrap(mean.reshape(stat_shape).astype(sdt, copy=False)),
            _wrap(rstd.reshape(stat_shape).astype(sdt, copy=False)))


def _sum_c(a, w):
    """sum_c a[n, g, c] * w[g, c] -> (N, G); a matrix-vector product when G == 1."""
    if a.shape[1] == 1:
        return (a[:, 0] @ w[0])[:, None]
    return np.einsum("ngc,gc->ng", a, w)


def _sum_n(r, a):
    """sum_n r[n, g] * a[n, g, c] -> (G, C); a vector-matrix product when G == 1."""
    if a.shape[1] == 1:
        return (r[:, 0] @ a[:, 0])[None]
    return np.einsum("ng,ngc->gc", r, a)


def _row_norm_backward(grad_out, input, mean, rstd, weight, output_mask, view, pshape):
    """(grad_input, grad_weight, grad_bias), as PyTorch's CPU kernel computes them. With
    x_hat = (x - mean) * rstd per row (dims 2, 3 of the (N, G, C, L) view) and the sums over L
    db = sum(g), dgx = sum(g * x): grad_bias = sum_N(db), grad_weight = sum_N(rstd * (dgx -
    mean * db)), and grad_input = rstd * (g * w - mean(g * w) - x_hat * mean(g * w * x_hat))
    = rstd * w * g + c1 * x + c0 with c1, c0 per row, so the input is read without being
    normalized again."""
    x = input._np
    dt = compute_dtype(x)
    n, groups, c, length = view
    m = max(c * length, 1)
    x4, g4 = x.reshape(view), grad_out._np.reshape(view)
    mean2 = mean._np.astype(dt, copy=False).reshape(n, groups)
    rstd2 = rstd._np.astype(dt, copy=False).reshape(n, groups)
    w = weight._np.astype(dt, copy=False).reshape(groups, c) if weight is not None else None
    wdt = weight._np.dtype if weight is not None else x.dtype
    want_gw, want_gb = output_mask[1] and weight is not None, output_mask[2]
    same = x.dtype == dt
    gi = caching_allocator.empty(view, x.dtype) if output_mask[0] else None
    ones = np.ones(length, dt)

    def block(b):
        xb, gb = x4[b].astype(dt, copy=False), g4[b].astype(dt, copy=False)
        if length == 1:
            db, dgx = gb[..., 0], np.multiply(gb, xb)[..., 0]
        else:
            db = (gb.reshape(math.prod(xb.shape[:3]), length) @ ones).reshape(xb.shape[:3])
            dgx = np.einsum("ngcl,ngcl->ngc", gb, xb)
        mu, r = mean2[b], rstd2[b]
        part_w = _sum_n(r, dgx) - _sum_n(r * mu, db) if want_gw else None
        part_b = _sum_n(np.ones(r.shape, dt), db) if want_gb else None
        if gi is None:
            return part_w, part_b
        if w is not None:
            sum_u, sum_ux = _sum_c(db, w), _sum_c(dgx, w)
        else:
            sum_u, sum_ux = db.sum(2), dgx.sum(2)
        # mean(g * w * x_hat) = rstd * (sum_ux - mean * sum_u) / m
        k = r * (sum_ux - mu * sum_u) / m
        c1 = (-r * r * k)[..., None, None]
        c0 = (r * (r * k * mu - sum_u / m))[..., None, None]
        r4 = r[..., None, None]
        o = gi[b] if same else np.empty(xb.shape, dt)
        if w is None:
            np.multiply(gb, r4, out=o)
        elif length > 1:  # group norm: rstd * w is small, one pass
            np.multiply(gb, r4 * w[None, :, :, None], out=o)
        else:
            np.multiply(gb, w[None, :, :, None], out=o)
            o *= r4
        # c1 * x + c0, in the buffer of g * x when that is a full block (layer norm)
        t = np.multiply(xb, c1, out=dgx[..., None]) if length == 1 else xb * c1
        t += c0
        o += t
        if not same:
            gi[b] = o
        return part_w, part_b
    parts = _over_sample_blocks(block, view, x.size)
    # outputs left out by output_mask are zeros, not undefined tensors
    gw, gb = np.zeros((groups, c), dt), np.zeros((groups, c), dt)
    for part_w, part_b in parts:
        if want_gw:
            gw += part_w
        if want_gb:
            gb += part_b
    gw = gw.reshape(pshape).astype(wdt, copy=False)
    gb = gb.reshape(pshape).astype(wdt, copy=False)
    gi = (_wrap_external(gi.reshape(x.shape), input.dtype) if gi is not None
          else _wrap(np.zeros(x.shape, x.dtype)))
    return gi, _wrap(gw), _wrap(gb)


def _row_norm_backward_meta(input, weight, output_mask, pshape):
    wdt = weight.dtype if weight is not None else input.dtype
    return (_meta(input.shape, input.dtype, device=input.device),
            _meta(pshape, wdt, device=input.device), _meta(pshape, wdt, device=input.device))


def _row_norm_forward_meta(input, stat_shape, stat_dt):
    return (_meta(input.shape, input.dtype, device=input.device),
            _meta(stat_shape, stat_dt, device=input.device),
            _meta(stat_shape, stat_dt, device=input.device))


@impl("native_layer_norm", "CPU")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    view, stat_shape = _layer_norm_check(input, normalized_shape, weight, bias)
    stat_dt = _norm_params_dtype("LayerNormKernelImpl", input, weight, bias)
    return _row_norm_forward(input, weight, bias, eps, view, stat_shape, stat_dt)


@impl("native_layer_norm", "Meta")
def native_layer_norm_meta(input, normalized_shape, weight, bias, eps):
    _, stat_shape = _layer_norm_check(input, normalized_shape, weight, bias)
    stat_dt = _norm_params_dtype("LayerNormKernelImpl", input, weight, bias)
    return _row_norm_forward_meta(input, stat_shape, stat_dt)


@impl("native_layer_norm_backward", "CPU")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    view, _ = _layer_norm_check(input, normalized_shape, weight, bias)
    return _row_norm_backward(grad_out, input, mean, rstd, weight, output_mask, view,
                              tuple(normalized_shape))


@impl("native_layer_norm_backward", "Meta")
def native_layer_norm_backward_meta(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                                    output_mask):
    return _row_norm_backward_meta(input, weight, output_mask, tuple(normalized_shape))


@impl("native_group_norm", "CPU")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    view, stat_shape = _group_norm_check(input, weight, bias, N, C, HxW, group)
    stat_dt = _norm_params_dtype("GroupNormKernelImpl", input, weight, bias)
    out, mean, rstd = _row_norm_forward(input, weight, bias, eps, view, stat_shape, stat_dt)
    return _in_layout_of(out, input), mean, rstd


def _in_layout_of(t, input):
    """Group norm's results keep a channels_last(_3d) input's layout, as PyTorch's CPU kernels
    do (here by one copy: the rows are computed over the contiguous (N, G, C/G * HxW) view)."""
    strides = _layout_strides(input)
    if strides is None:
        return t
    fmt = channels_last if input.dim() == 4 else channels_last_3d
    return _wrap(copy_in_format(t._np, fmt))


@impl("native_group_norm", "Meta")
def native_group_norm_meta(input, weight, bias, N, C, HxW, group, eps):
    _, stat_shape = _group_norm_check(input, weight, bias, N, C, HxW, group)
    stat_dt = _norm_params_dtype("GroupNormKernelImpl", input, weight, bias)
    out, mean, rstd = _row_norm_forward_meta(input, stat_shape, stat_dt)
    return _meta(input.shape, input.dtype, _layout_strides(input), device=input.device), mean, rstd


@impl("native_group_norm_backward", "CPU")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group,
                               output_mask):
    view, _ = _group_norm_check(input, weight, None, N, C, HxW, group)
    gi, gw, gb = _row_norm_backward(grad_out, input, mean, rstd, weight, output_mask, view, (C,))
    return _in_layout_of(gi, input), gw, gb


@impl("native_group_norm_backward", "Meta")
def native_group_norm_backward_meta(grad_out, input, mean, rstd, weight, N, C, HxW, group,
                                    output_mask):
    gi, gw, gb = _row_norm_backward_meta(input, weight, output_mask, (C,))
    return _meta(input.shape, input.dtype, _layout_strides(input), device=input.device), gw, gb


# ---- weight norm: w = v * g / ||v||, the norm over every dim but the first or the last --------
# (PyTorch's fused `_weight_norm_interface`, which `torch._weight_norm` calls for those dims).
# It returns the norms too, in g's shape (float32 for a half-precision g), for the backward.
def _weight_norm_check(v, dim):
    if dim != 0 and dim != v.dim() - 1:
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    if v.dtype not in _FLOATS:
        raise not_implemented("weight_norm_kernel", v.dtype)


def _weight_norm_sums(a, dim, kept):
    """Sums of `a` over every dim but `dim`, shaped `kept` (size 1 but at dim)."""
    other = tuple(d for d in range(a.ndim) if d != dim)
    return a.sum(axis=other).reshape(kept) if other else a.reshape(kept)


def _weight_norm_kept(v, dim):
    kept = [1] * v.dim()
    kept[dim] = v.shape[dim]
    return kept


@impl("_weight_norm_interface", "CPU")
def weight_norm_interface(v, g, dim=0):
    _weight_norm_check(v, dim)
    acc = np.float32 if v.dtype in (D.float16, D.bfloat16) else v._np.dtype
    x = v._np.astype(acc, copy=False)
    kept = _weight_norm_kept(v, dim)
    norms = np.sqrt(_weight_norm_sums(x * x, dim, kept))
    w = x * (g._np.astype(acc, copy=False).reshape(kept) / norms)
    norm_dt = D.float32 if g.dtype in (D.float16, D.bfloat16) else g.dtype
    return (_wrap(np.ascontiguousarray(w.astype(v._np.dtype, copy=False))),
            _wrap(np.ascontiguousarray(norms.reshape(g.shape).astype(
                np.float32 if norm_dt == D.float32 else g._np.dtype, copy=False))))


@impl("_weight_norm_interface", "Meta")
def weight_norm_interface_meta(v, g, dim=0):
    _weight_norm_check(v, dim)
    norm_dt = D.float32 if g.dtype in (D.float16, D.bfloat16) else g.dtype
    return (_meta(v.shape, v.dtype, device=v.device), _meta(g.shape, norm_dt, device=g.device))


@impl("_weight_norm_interface_backward", "CPU")
def weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    """grad_g = sum(grad_w * v) / ||v||, grad_v = g / ||v|| (grad_w - v sum(grad_w * v) /
    ||v||^2), the sums and norms over every dim but `dim`."""
    _weight_norm_check(saved_v, dim)
    acc = np.float32 if saved_v.dtype in (D.float16, D.bfloat16) else saved_v._np.dtype
    kept = _weight_norm_kept(saved_v, dim)
    gw, v = grad_w._np.astype(acc, copy=False), saved_v._np.astype(acc, copy=False)
    norms = saved_norms._np.astype(acc, copy=False).reshape(kept)
    g = saved_g._np.astype(acc, copy=False).reshape(kept)
    sums = _weight_norm_sums(gw * v, dim, kept)
    grad_v = g / norms * (gw - v * (sums / (norms * norms)))
    grad_g = sums / norms
    return (_wrap(np.ascontiguousarray(grad_v.astype(saved_v._np.dtype, copy=False))),
            _wrap(np.ascontiguousarray(grad_g.reshape(saved_g.shape).astype(
                saved_g._np.dtype, copy=False))))


@impl("_weight_norm_interface_backward", "Meta")
def weight_norm_interface_backward_meta(grad_w, saved_v, saved_g, saved_norms, dim):
    _weight_norm_check(saved_v, dim)
    return (_meta(saved_v.shape, saved_v.dtype, device=saved_v.device),
            _meta(saved_g.shape, saved_g.dtype, device=saved_g.device))
