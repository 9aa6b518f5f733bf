"""Pooling kernels (CPU and Meta): max pooling with indices, average pooling, adaptive max
and average pooling and max unpooling, for 2 and 3 spatial dims (1-d pooling is 2-d pooling
of a height-1 input, as in PyTorch).

Every kernel loops over the positions of the pooling window only -- 4 for a 2x2 window -- and
each step is one NumPy operation over the whole batch: a strided slice of the padded input
holds, for every output pixel, the input element at that window position. Max pooling keeps a
running maximum and which window position gave it (PyTorch's rule: a larger value or a NaN
replaces the current one, so ties keep the first and NaN wins). The backward of max pooling
sends each gradient to the input element its index names: a plain scatter when the windows do
not overlap, else `np.bincount` over cache-sized blocks, which sums the contributions of
overlapping windows.

The kernels work on either of two views of the input's memory: rows (M, *spatial), one per
(sample, channel) of a contiguous input, or -- for a channels_last / channels_last_3d input of
the ops whose PyTorch CPU kernels keep that layout -- (N, *spatial, C), the channel the fast
axis. In both the spatial dims are axes 1..nd, so every window step is the same NumPy
operation; the channels-last results are (N, *out, C) blocks whose (N, C, *out) view has
PyTorch's channels_last strides, with no layout copy in or out.
"""
import numpy as np

from .._core import dtype as D
from .._dispatch.dispatcher import impl
from .._core.tensor import _wrap, _meta
from .._core import caching_allocator
from .._core.memory_format import (channels_last, channels_last_3d, suggest_memory_format,
                                   format_strides)
from ._parallel import parallel_for
from .conv import compute_dtype
from .elementwise import not_implemented
from .factory import _check_size

FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)
NUMBERS = (D.uint8, D.int8, D.int16, D.int32, D.int64) + FLOATS


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _fmt(shape):
    return "x".join(map(str, shape))


# Note [Channels-last pooling]
# ------------------------------
# PyTorch's CPU kernels of max_pool2d/3d, avg_pool2d and adaptive max/avg pool2d keep a
# channels_last (3-d: channels_last_3d) input's layout in their results (values, indices and
# the input gradient); avg_pool3d and the 3-d adaptive pools return contiguous results for any
# input. `_layout` gives the kernels the view of the memory they work on, `_result` turns their
# result back into an (N, C, *out) tensor with the strides PyTorch gives.
_CHANNELS_LAST = {2: channels_last, 3: channels_last_3d}


def _is_channels_last(t, nd, keeps_channels_last=True):
    """Whether the op's CPU kernel works on (and returns) t's channels-last layout. The 3-d
    kernel that keeps it (max_pool3d) sees an unbatched (C, D, H, W) input as (1, C, D, H, W),
    so keeps that one's channels_last_3d layout too; the 2-d kernels take (C, H, W) as it is."""
    if not keeps_channels_last:
        return False
    if t.dim() == nd + 2:
        return suggest_memory_format(t) is _CHANNELS_LAST[nd]
    if nd != 3 or t.dim() != 4 or t.is_contiguous():
        return False
    expected = format_strides((1,) + tuple(t.shape), channels_last_3d)[1:]
    return all(n == 1 or st == e for n, st, e in zip(t.shape, t.stride(), expected))


def _layout(t, nd, keeps_channels_last=True):
    """(array, cl): tensor t (N, C, *spatial) or (C, *spatial) as (M, *spatial) rows, or --
    when the op keeps channels-last layouts and t is so -- as (N, *spatial, C) (cl True), a
    view of its memory (copied only when not dense in that order)."""
    cl = _is_channels_last(t, nd, keeps_channels_last)
    return _as_layout(t, nd, cl), cl


def _result(r, shape, cl):
    """A kernel's result r ((M, *out) rows, or (N, *out, C) when cl) as a tensor of `shape`."""
    if cl:   # (the reshape drops the batch dim of an unbatched input: a view)
        return _wrap(np.moveaxis(r, -1, 1).reshape(shape))
    return _wrap(r.reshape(shape))


def _as_layout(t, nd, cl):
    """Another tensor (a gradient, indices) in the view `_layout` chose (cl) for the input."""
    if cl:
        a = np.moveaxis(t._np if t.dim() == nd + 2 else t._np[None], 1, -1)
        return a if a.flags.c_contiguous else np.ascontiguousarray(a)
    return t._np.reshape((-1,) + tuple(t.shape[-nd:]))


# ---- shapes and checks ------------------------------------------------------------------------
def pooling_output_size(size, kernel, stride, pad, dilation, ceil_mode):
    """PyTorch's pooling_output_shape: with ceil_mode the last window may hang over the end,
    but must start inside the input or its left padding."""
    out = (size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) \
        // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _check_pool(name, self, nd, kernel, stride, padding, dilation, ceil_mode):
    """The output's spatial size, or PyTorch's RuntimeError for bad arguments."""
    kinds = {2: "3D or 4D", 3: "4D or 5D"}[nd]
    if self.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {kinds} (batch mode) tensor expected for input")
    # PyTorch's order: the dimension count, pooling_output_shape's checks per spatial dim, then
    # pool2d/3d_shape_check (positive kernel/stride/dilation, non-empty non-batch dims, padding
    # against the kernel, output size) -- so a bad padding is named before an empty input.
    for k, st, p, d in zip(kernel, stride, padding, dilation):
        if st == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    names = "THW"[3 - nd:] if nd > 1 else "HW"
    if nd == 1:  # a 1-d pool runs as a 2-d one of height 1
        kernel, stride, dilation = (1, *kernel), (1, *stride), (1, *dilation)
    for what, values, label in (("kernel size", kernel, "k{}"), ("stride", stride, "d{}"),
                                ("dilation", dilation, "dilation{}")):
        if any(v <= 0 for v in values):
            got = " ".join(f"{label.format(n)}: {v}" for n, v in zip(names, values))
            raise RuntimeError(f"{what} should be greater than zero, but got {got}")
    if 0 in self.shape[-nd - 1:]:
        shape = f"[{', '.join(map(str, self.shape))}]"
        if nd == 2:
            raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{shape}")
        where = {"max_pool3d_with_indices": "max_pool3d_with_indices_out_cpu_template"}
        # PyTorch's message names non-batch dimension 0 whichever dimension is empty
        raise RuntimeError(f"{where.get(name, name)}(): Expected input's non-batch dimensions to "
                           f"have positive length, but input has a shape of {shape} and "
                           f"non-batch dimension 0 has length zero!")
    pads = (0, *padding) if nd == 1 else tuple(padding)
    if any(p > k // 2 for p, k in zip(pads, kernel)):  # PyTorch's pool2d/3d_shape_check
        if nd == 3:
            (kt, kh, kw), (pt, ph, pw) = kernel, pads
            got = f"kT: {kt} kW: {kw} kH: {kh} padT: {pt} padW: {pw} padH: {ph}"
        else:
            (kh, kw), (ph, pw) = kernel, pads
            got = f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}"
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"{got}")
    spatial = tuple(self.shape[-nd:])
    out = tuple(pooling_output_size(*a, ceil_mode)
                for a in zip(spatial, kernel, stride, padding, dilation))
    if any(o < 1 for o in out):
        c = self.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({_fmt((c,) + spatial)}). Calculated output "
                           f"size: ({_fmt((c,) + out)}). Output size is too small")
    return out


def _expand(v, nd, default=None):
    """A pooling argument as a tuple of nd ints: [] means `default`, one value means nd."""
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    if not v:
        v = list(default)
    if len(v) == 1:
        v = v * nd
    return tuple(int(x) for x in v)


def _pool_args(self, nd, kernel_size, stride, padding, dilation, name):
    kernel = _expand(kernel_size, nd)
    if len(kernel) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single int, or a tuple of "
                           f"{nd} ints")
    stride = _expand(stride, nd, kernel)
    padding = _expand(padding, nd)
    dilation = _expand(dilation, nd)
    for n, v in (("stride", stride), ("padding", padding), ("dilation", dilation)):
        if len(v) != nd:
            raise RuntimeError(f"{name}: {n} must either be omitted, a single int, or a tuple "
                               f"of {nd} ints")
    return kernel, stride, padding, dilation


# ---- window helpers ---------------------------------------------------------------------------
def _spatial(x, nd):
    """The spatial sizes of x (M, *spatial) or (N, *spatial, C): axes 1..nd."""
    return x.shape[1:nd + 1]


def _padded(x, nd, padding, need, fill):
    """x (M, *spatial[, C]) in a buffer filled with `fill`, `padding` in front, at least `need`
    long."""
    spatial = _spatial(x, nd)
    shape = x.shape[:1] + tuple(max(n, p + s) for n, p, s in zip(need, padding, spatial)) + \
        x.shape[nd + 1:]
    if shape == x.shape:
        return x
    buf = np.full(shape, fill, x.dtype)
    buf[(slice(None),) + tuple(slice(p, p + s) for p, s in zip(padding, spatial))] = x
    return buf


def _window_slices(pos, out, stride, dilation):
    """The strided slice of the padded input holding window position `pos` of every output."""
    return (slice(None),) + tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                                  for k, o, s, d in zip(pos, out, stride, dilation))


def window_views(buf, kernel, stride, dilation, out):
    """[(M, *out) view of `buf` per window position]: view k holds, for every output, the input
    at window position k. With a stride > 1 these views would step over elements, which makes
    every NumPy loop over them 2-3x slower; so `buf` is first de-interleaved into its stride
    phases (one copy), where each view is a block with unit inner stride."""
    positions = list(np.ndindex(*kernel))
    if all(s == 1 for s in stride):
        return [buf[_window_slices(pos, out, stride, dilation)] for pos in positions]
    phases = {}
    views = []
    for pos in positions:
        offsets = [k * d for k, d in zip(pos, dilation)]
        residue = tuple(o % s for o, s in zip(offsets, stride))
        if residue not in phases:
            phases[residue] = np.ascontiguousarray(
                buf[(slice(None),) + tuple(slice(r, None, s) for r, s in zip(residue, stride))])
        start = [o // s for o, s in zip(offsets, stride)]
        views.append(phases[residue][(slice(None),) + tuple(
            slice(a, a + o) for a, o in zip(start, out))])
    return views


def _is_float(dtype):
    return not np.issubdtype(dtype, np.integer)   # bfloat16 (ml_dtypes) has kind "V"


def _lowest(dtype):
    return -np.inf if _is_float(dtype) else np.iinfo(dtype).min


def _window_max(views, dtype, out=None):
    """(max, first window position holding it) over the views (the max written into `out`
    when given), with PyTorch's rule for ties
    (the first wins) and NaN (the last NaN wins, a NaN beats any number). The maximum is one
    np.maximum per position. The argmax counts, per output, the positions before the first
    one equal to the maximum: three vectorised passes per position, no masked writes (the
    count is kept in uint8 and adds the running mask viewed as uint8: a same-type add)."""
    best = views[0].copy() if out is None else out
    if out is not None:
        np.copyto(best, views[0])
    for v in views[1:]:
        np.maximum(best, v, out=best)
    if len(views) == 1:
        return best, np.zeros(best.shape, np.uint8)
    searching = np.not_equal(views[0], best)
    if len(views) < 256:
        step = searching.view(np.uint8)
        arg = step.copy()
    else:
        step, arg = searching, searching.astype(np.int64)
    differs = np.empty(best.shape, bool)
    for v in views[1:-1]:
        np.not_equal(v, best, out=differs)
        searching &= differs
        arg += step
    if _is_float(dtype):
        nan = np.isnan(best)
        if nan.any():
            for k, v in enumerate(views):
                np.copyto(arg, k, where=nan & np.isnan(v))
    return best, arg


def _grid(out, nd, cl=False):
    """Per-dim output coordinates shaped to broadcast over (*out), or (*out, C) when cl."""
    return [np.arange(o).reshape((-1,) + (1,) * (nd - 1 - i + cl)) for i, o in enumerate(out)]


def _flat_offsets(kernel, dilation, spatial):
    """The flat input offset of each window position (row-major over the kernel)."""
    steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]   # row-major strides of spatial
    return np.array([sum(k * d * st for k, d, st in zip(pos, dilation, steps))
                     for pos in np.ndindex(*kernel)], dtype=np.int64)


# ---- max pooling ------------------------------------------------------------------------------
def _tiling_views(x, nd, kernel, stride, padding, dilation, out):
    """The window views without a copy when the windows tile the input (stride == kernel, no
    padding or dilation, e.g. the common 2x2 pooling): a reshape to (M, o1, k1, o2, k2, ...)."""
    if any(padding) or any(d != 1 for d in dilation) or tuple(kernel) != tuple(stride) or \
            any(o * k > n for o, k, n in zip(out, kernel, _spatial(x, nd))):
        return None
    crop = x[(slice(None),) + tuple(slice(0, o * k) for o, k in zip(out, kernel))]
    if not crop.flags.c_contiguous:
        return None
    shape = (x.shape[0],)
    for o, k in zip(out, kernel):
        shape += (o, k)
    tiles = crop.reshape(shape + x.shape[nd + 1:])
    return [tiles[(slice(None),) + tuple(v for i in pos for v in (slice(None), i))]
            for pos in np.ndindex(*kernel)]


def _max_pool_base(nd, spatial, kernel, stride, padding, dilation, out, cl=False):
    """(flat input offset of each window position, flat input index of each window's origin
    (*out), or (*out, 1) when cl): an output's index is base + offsets[argmax]."""
    grid = _grid(out, nd, cl)
    steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]
    base = sum((o * s - p) * st for o, s, p, st in zip(grid, stride, padding, steps))
    return _flat_offsets(kernel, dilation, spatial), base


def _max_pool(x, nd, kernel, stride, padding, dilation, out, values=None, index=None, base=None,
              cl=False):
    """x (M, *in) -> (values, flat input indices), both (M, *out) -- or (N, *in, C) -> (N, *out,
    C) when cl; written into `values` and `index` when given."""
    spatial = _spatial(x, nd)
    lowest = _lowest(x.dtype)
    views = _tiling_views(x, nd, kernel, stride, padding, dilation, out)
    if views is None:
        need = tuple((o - 1) * s + d * (k - 1) + 1
                     for o, k, s, d in zip(out, kernel, stride, dilation))
        buf = _padded(x, nd, padding, need, lowest)
        views = window_views(buf, kernel, stride, dilation, out)
    best, arg = _window_max(views, x.dtype, values)
    offsets, origin = base or _max_pool_base(nd, spatial, kernel, stride, padding, dilation, out,
                                             cl)
    index = np.take(offsets, arg, out=index, mode="clip")   # (arg is in range: no checks)
    index += origin
    if padding and any(padding):
        # a window that is all `lowest` may have picked a padding element: PyTorch points at
        # its first element inside the input
        empty = best == lowest
        if empty.any():
            grid = _grid(out, nd, cl)
            steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]
            first = [np.maximum(0, -(-(p - o * s) // d)) for o, s, p, d in
                     zip(grid, stride, padding, dilation)]
            coords = [o * s - p + k * d for o, s, p, k, d in
                      zip(grid, stride, padding, first, dilation)]
            inside = sum(c * st for c, st in zip(coords, steps))
            np.copyto(index, np.broadcast_to(inside, index.shape), where=empty)
    return best, index


# Note [Separable max pooling]
# -----------------------------
# A box window's maximum is a maximum of maxima: over the window positions along the last dim
# first, then over those results along the dim before, and so on -- k_1 + k_2 steps for a
# k_1 x k_2 window instead of k_1 * k_2 (each step one compare and one np.maximum over an array
# the size of the stage's output). Each stage also carries the winner's offset inside the
# window, sum_d k_d * dilation_d * (flat step of dim d), in the smallest unsigned type that holds
# it: a stage replaces it only where a later position is strictly greater, so ties keep the
# first position in row-major window order, as PyTorch's kernels do. As offsets only grow along
# that order, "replace where greater" is `code = maximum(code, (later code) * mask)`, three
# plain vectorised passes, no masked writes (`np.copyto(..., where=)` is 30-50x slower).
# NumPy's loops are 2-3x slower on any operand that is not contiguous as a whole (even rows
# of a few thousand elements), so a stage never reads strided views: it copies the input into
# stride phases padded with the dtype's lowest value, laid out so that every window position
# is one flat shift of a phase, and runs each step over whole flat arrays (rows past an
# output's end are computed and dropped). Padding then never beats a real element; only a
# window whose maximum *is* the lowest value (all -inf, or all padding) could point at the
# padding, and NaN (which PyTorch's rule lets win, the last one) is not ordered by `greater`:
# a block whose result holds either is recomputed by the window-position path above.
# Measured (CPU time, one thread, loaded machine) on the ResNet stem's 3x3/2/1 pool of
# (32, 64, 56, 56) with indices: NHWC 25.1 -> 18.6 ms (torch 5.6), NCHW 33.3 -> 22.5 ms
# (torch 63). Windows that tile the input (2x2/2) stay on the window-position path, which
# reads them in place: the phase copies made the stages ~10% slower there.
def _separable_plan(spatial, kernel, dilation):
    """(the flat step of each dim's window positions, the window offsets' dtype)."""
    steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]
    units = [int(d * st) for d, st in zip(dilation, steps)]
    top = sum((k - 1) * u for k, u in zip(kernel, units))
    code_dtype = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                      if top <= np.iinfo(t).max)
    return units, np.dtype(code_dtype)


def _max_stage(v, c, axis, k, s, p, d, n_out, unit, cdt, lowest):
    """One dim of the separable max (Note above): values v and window offsets c (None before
    the first stage) -> the same with dim `axis` of length n_out (views into buffers)."""
    outer, n, inner = _prod(v.shape[:axis]), v.shape[axis], _prod(v.shape[axis + 1:])
    v3 = v.reshape(outer, n, inner)
    c3 = None if c is None else c.reshape(outer, n, inner)
    shifts = [divmod(j * d - p, s) for j in range(k)]       # (rows, stride phase)
    qmin = min(q for q, _ in shifts)
    rows = n_out + max(q for q, _ in shifts) - qmin
    # phase r, row i holds input index (i + qmin) * s + r: window position j of output o is
    # row o + q_j - qmin of its phase, a fixed flat shift over the whole (outer, rows, inner)
    phases = {}
    for _, r in shifts:
        if r in phases:
            continue
        lo, hi = -qmin, min(rows, (n - 1 - r) // s - qmin + 1)
        if lo == 0 and hi == rows == n and s == 1 and v3.flags.c_contiguous and \
                (c3 is None or c3.flags.c_contiguous):
            phases[r] = (v3, c3)
            continue
        bufs = []
        for a, fill in ((v3, lowest), (c3, 0)):
            if a is None:
                bufs.append(None)
                continue
            buf = np.empty((outer, rows, inner), a.dtype)
            buf[:, :lo] = fill
            buf[:, max(hi, lo):] = fill
            if hi > lo:
                start = (lo + qmin) * s + r
                buf[:, lo:hi] = a[:, start:start + (hi - lo - 1) * s + 1:s]
            bufs.append(buf)
        phases[r] = tuple(bufs)
    best = np.empty((outer, rows, inner), v.dtype)
    code = np.empty((outer, rows, inner), cdt)
    size = ((outer - 1) * rows + n_out) * inner
    flat_b, flat_c = best.reshape(-1)[:size], code.reshape(-1)[:size]

    def source(j, which):
        q, r = shifts[j]
        a = phases[r][which]
        return a.reshape(-1)[(q - qmin) * inner:(q - qmin) * inner + size]
    _running_max([source(j, 0) for j in range(k)],
                 None if c is None else [source(j, 1) for j in range(k)],
                 range(k), unit, flat_b, flat_c)
    shape = v.shape[:axis] + (n_out,) + v.shape[axis + 1:]
    return best[:, :n_out].reshape(shape), code[:, :n_out].reshape(shape)


def _running_max(views, codes, positions, unit, best, code):
    """best, code = the maximum of views and the offset (codes[i] + positions[i] * unit, or
    positions[i] * unit when codes is None) of the first view holding it."""
    cdt = code.dtype.type
    if codes is None:
        code.fill(positions[0] * unit)
    else:
        np.add(codes[0], cdt(positions[0] * unit), out=code)
    if len(views) == 1:
        np.copyto(best, views[0])
        return
    for i in range(1, len(views)):
        prev = views[0] if i == 1 else best
        m = np.greater(views[i], prev)
        np.maximum(prev, views[i], out=best)
        if codes is None:
            t = np.multiply(m.view(np.uint8), cdt(positions[i] * unit), dtype=code.dtype) \
                if code.dtype == np.uint8 else np.multiply(m, cdt(positions[i] * unit),
                                                          dtype=code.dtype)
        else:
            t = np.add(codes[i], cdt(positions[i] * unit))
            if code.dtype == np.uint8:
                np.multiply(t, m.view(np.uint8), out=t)
            else:
                np.multiply(t, m, out=t)
        np.maximum(code, t, out=code)


def _separable_max_pool(x, nd, kernel, stride, padding, dilation, out, plan, values, index,
                        base):
    """Max pooling of x (M, *in) or (N, *in, C) into values and index by separable stages (Note
    above); False when a block has a NaN maximum (not written: the caller recomputes it)."""
    units, cdt = plan
    lowest = _lowest(x.dtype)
    v, c = x, None
    for axis in range(nd, 0, -1):
        i = axis - 1
        v, c = _max_stage(v, c, axis, kernel[i], stride[i], padding[i], dilation[i], out[i],
                          units[i], cdt, lowest)
    low = v.min()       # (NaN if there is a NaN)
    if low != low or low == lowest:
        return False
    np.copyto(values, v)
    np.add(c, base, out=index, casting="unsafe")
    return True


# Note [Max pooling backward: scatter or blocked bincount]
# ---------------------------------------------------------
# Each output sends its gradient to one input element, the one its index names. Where windows
# cannot overlap (stride >= the window's extent along every dim, e.g. 2x2/2) the indices are
# distinct and the gradient is one plain fancy-indexed assignment. Where they overlap (3x3/2),
# contributions to one element are summed by np.bincount, one call per cache-sized block of
# rows (samples when channels-last), its float64 sums in cache and then written as the
# gradient's dtype. Measured on the ResNet stem's 3x3/2/1 pool of (32, 64, 56, 56), one thread:
# over NCHW rows 2.3x faster than one bincount over all rows (whose float64 result is the size
# of the whole input), over NHWC 2.5x faster than one fancy `+=` per class of non-overlapping
# outputs; for 2x2/2 the plain assignment stays 15-35% faster than bincount.
def _scatter(values, indices, spatial, overlapping, cl=False):
    """values, indices (M, *out) -> (M, *spatial): each value added at its flat index. When cl
    they are (N, *out, C) -> (N, *spatial, C), channel c of index i landing at i * C + c.
    overlapping: whether two outputs may name the same element (Note above)."""
    m = values.shape[0]
    c = values.shape[-1] if cl else 1
    size = _prod(spatial) * c
    shape = (m,) + tuple(spatial) + ((c,) if cl else ())
    lanes = np.arange(c) if cl else 0
    r = caching_allocator.empty((m, size), values.dtype)

    def flat_of(i):
        """The flat destination of indices i (a block of rows) in a (rows, size) array."""
        if cl:
            flat = i * c
            flat += lanes
        else:
            flat = i.copy()
        flat += (np.arange(flat.shape[0]) * size).reshape((-1,) + (1,) * (flat.ndim - 1))
        return flat.reshape(-1)

    def part(rows):         # rows: a slice of M, a cache-sized block at a time
        for b in _blocks(rows, m, size):
            dest = r[b]
            if overlapping:
                dest[...] = np.bincount(flat_of(indices[b]), weights=values[b].reshape(-1),
                                        minlength=dest.size).reshape(dest.shape)
            else:
                dest.fill(0)
                dest.reshape(-1)[flat_of(indices[b])] = values[b].reshape(-1)
    parallel_for(part, (m,), r.size)
    return r.reshape(shape)


_BLOCK_ELEMENTS = 1 << 18


def _blocks(rows, m, row_size):
    """The slices of `rows` (a parallel_for index over M rows of row_size elements) of about
    _BLOCK_ELEMENTS input elements each. Max pooling makes several passes over its input (the
    maxima, then the argmax); run block by block they read the cache instead of memory, which
    made pooling 1.5-2x faster (MNIST test pass, ResNet stem)."""
    start, stop, _ = rows[0].indices(m) if isinstance(rows[0], slice) else (0, m, 1)
    step = max(1, _BLOCK_ELEMENTS // max(row_size, 1))
    return [slice(a, min(a + step, stop)) for a in range(start, stop, step)]


def _leading(self, nd):
    """(M, *spatial) array of an (N, C, *spatial) or (C, *spatial) tensor."""
    return self._np.reshape((-1,) + tuple(self.shape[-nd:]))


def _rows_shape(x, nd, out, cl):
    """The shape of a kernel's result over x in _layout's view: (M, *out) or (N, *out, C)."""
    return x.shape[:1] + tuple(out) + (x.shape[nd + 1:] if cl else ())


def _meta_in_layout(shape, dtype, t, nd, keeps_channels_last=True):
    """A Meta result of `shape` in the layout the CPU kernel gives for input t."""
    # (PyTorch's Meta kernels return an unbatched input's results contiguous)
    cl = t.dim() == nd + 2 and _is_channels_last(t, nd, keeps_channels_last)
    strides = format_strides(shape, _CHANNELS_LAST[nd]) if cl else None
    return _meta(shape, dtype, strides, device=t.device)


def _max_pool_kernel(nd):
    name = f"max_pool{nd}d_with_indices"

    def kernel(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool_args(self, nd, kernel_size, stride, padding, dilation, name)
        out = _check_pool(name, self, nd, k, s, p, d, ceil_mode)
        if self.dtype not in NUMBERS:
            raise not_implemented(f"max_pool{nd}d", self.dtype)
        shape = tuple(self.shape[:-nd]) + out
        x, cl = _layout(self, nd)
        rows = _rows_shape(x, nd, out, cl)
        values = caching_allocator.empty(rows, x.dtype)
        idx = caching_allocator.empty(rows, np.int64)
        if x.size == 0:
            return _result(values, shape, cl), _result(idx, shape, cl)
        base = _max_pool_base(nd, _spatial(x, nd), k, s, p, d, out, cl)
        # windows that tile the input (2x2/2) are read in place by the window-position path
        # (faster there); others go by separable stages (Note [Separable max pooling])
        tiling = tuple(k) == tuple(s) and not any(p) and all(di == 1 for di in d)
        plan = None if tiling else _separable_plan(_spatial(x, nd), k, d)
        if plan is not None:
            origin = np.ascontiguousarray(np.broadcast_to(base[1], rows[1:]))   # (a flat add)

        def part(rows):           # rows: a slice of M, pooled a cache-sized block at a time
            for block in _blocks(rows, x.shape[0], _prod(x.shape[1:])):
                if plan is None or not _separable_max_pool(
                        x[block], nd, k, s, p, d, out, plan, values[block], idx[block], origin):
                    _max_pool(x[block], nd, k, s, p, d, out, values[block], idx[block], base,
                              cl)
        parallel_for(part, (x.shape[0],), x.size)
        return _result(values, shape, cl), _result(idx, shape, cl)

    def meta(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool_args(self, nd, kernel_size, stride, padding, dilation, name)
        out = _check_pool(name, self, nd, k, s, p, d, ceil_mode)
        shape = tuple(self.shape[:-nd]) + out
        return (_meta_in_layout(shape, self.dtype, self, nd),
                _meta_in_layout(shape, D.int64, self, nd))

    def backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
        k, s, p, d = _pool_args(self, nd, kernel_size, stride, padding, dilation, name)
        if grad_output.dtype is not self.dtype:
            raise RuntimeError(f"expected dtype {D.c_type_name(self.dtype)} for `gradOutput` but "
                               f"got dtype {D.c_type_name(grad_output.dtype)}")
        if self.dtype not in FLOATS:    # the CPU kernel is compiled for floating types only
            raise not_implemented(f"max_pool{nd}d_backward", self.dtype)
        overlapping = any(di * (kk - 1) + 1 > st for st, kk, di in zip(s, k, d))
        return _scatter_back(grad_output, self, indices, nd, overlapping)

    impl(name, "CPU")(kernel)
    impl(name, "Meta")(meta)
    impl(name + "_backward", "CPU")(backward)
    impl(name + "_backward", "Meta")(_like_self_meta(nd))


def _scatter_back(grad_output, self, indices, nd, overlapping, keeps_channels_last=True):
    """The input gradient of a max pool: grad_output's values sent to the indices, as a tensor
    laid out as the forward's input view (_layout) says."""
    cl = _is_channels_last(self, nd, keeps_channels_last)
    g = _as_layout(grad_output, nd, cl)
    dt = compute_dtype(g)
    r = _scatter(g.astype(dt, copy=False), _as_layout(indices, nd, cl), tuple(self.shape[-nd:]),
                 overlapping, cl)
    return _result(r.astype(g.dtype, copy=False), tuple(self.shape), cl)


def _like_self_meta(nd, keeps_channels_last=True):
    def meta(grad_output, self, *rest):
        return _meta_in_layout(self.shape, grad_output.dtype, self, nd, keeps_channels_last)
    return meta


_max_pool_kernel(2)
_max_pool_kernel(3)


# ---- average pooling --------------------------------------------------------------------------
def _avg_divisors(spatial, out, kernel, stride, padding, count_include_pad, divisor_override,
                  cl=False):
    """The divisor of every output (*out), or (*out, 1) when cl: the window's size, inside the
    padded input (or without the padding), or divisor_override. The window is a box, so it is
    a product of per-dim sizes."""
    if divisor_override:
        return divisor_override
    div = 1
    for i, (n, o, k, s, p) in enumerate(zip(spatial, out, kernel, stride, padding)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start if count_include_pad else \
            np.minimum(end, n) - np.maximum(start, 0)
        div = div * size.reshape((-1,) + (1,) * (len(out) - 1 - i + cl))
    return div


def _divide(total, div, dtype):
    if dtype.kind == "f":
        return total / div
    q = np.abs(total) // div  # integers divide like C: toward zero
    return np.where(total < 0, -q, q)


def _avg_pool_args(self, nd, kernel_size, stride, padding, ceil_mode, name):
    if nd == 2 and self.dim() < 3:  # PyTorch reads input.size(-3) before any check
        n = max(self.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got -3)")
    k, s, p, d = _pool_args(self, nd, kernel_size, stride, padding, 1, name)
    out = _check_pool(name, self, nd, k, s, p, d, ceil_mode)
    return k, s, p, out


_AVG_DTYPES = {2: (D.int64,) + FLOATS, 3: (D.int64, D.float32, D.float64)}


def _avg_pool_kernel(nd):
    name = f"avg_pool{nd}d"
    keeps = nd == 2    # PyTorch's avg_pool3d returns contiguous results for any input

    def kernel(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
        k, s, p, out = _avg_pool_args(self, nd, kernel_size, stride, padding, ceil_mode, name)
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        if self.dtype not in _AVG_DTYPES[nd]:
            raise not_implemented(f"avg_pool{nd}d_out_frame", self.dtype)
        x, cl = _layout(self, nd, keeps)
        dt = np.dtype(compute_dtype(x))
        spatial = _spatial(x, nd)
        need = tuple((o - 1) * st + kk for o, st, kk in zip(out, s, k))
        div = _avg_divisors(spatial, out, k, s, p, count_include_pad, divisor_override, cl)
        total = caching_allocator.empty(_rows_shape(x, nd, out, cl), dt)

        def part(rows):         # rows: a slice of M (or N), a cache-sized block at a time
            for b in _blocks(rows, x.shape[0], _prod(x.shape[1:])):
                buf = _padded(x[b].astype(dt, copy=False), nd, p, need, 0)
                views = window_views(buf, k, s, (1,) * nd, out)
                t = total[b]
                np.copyto(t, views[0])
                for v in views[1:]:
                    t += v
                if dt.kind == "f":
                    np.divide(t, div, out=t)
                else:
                    t[...] = _divide(t, div, dt)
        if x.size:
            parallel_for(part, (x.shape[0],), x.size)
        return _result(total.astype(self.dtype._np, copy=False), tuple(self.shape[:-nd]) + out,
                       cl)

    def meta(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
        k, s, p, out = _avg_pool_args(self, nd, kernel_size, stride, padding, ceil_mode, name)
        return _meta_in_layout(tuple(self.shape[:-nd]) + out, self.dtype, self, nd, keeps)

    def backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
        """Each output's gradient, divided by its divisor, added onto its window."""
        k, s, p, out = _avg_pool_args(self, nd, kernel_size, stride, padding, ceil_mode, name)
        cl = _is_channels_last(self, nd, keeps)
        g = _as_layout(grad_output, nd, cl)
        dt = compute_dtype(g)
        spatial = tuple(self.shape[-nd:])
        div = _avg_divisors(spatial, out, k, s, p, count_include_pad, divisor_override, cl)
        need = tuple((o - 1) * st + kk for o, st, kk in zip(out, s, k))
        padded = tuple(max(n, pp + sz) for n, pp, sz in zip(need, p, spatial))
        inside = (slice(None),) + tuple(slice(pp, pp + sz) for pp, sz in zip(p, spatial))
        r = caching_allocator.empty(g.shape[:1] + spatial + g.shape[nd + 1:], g.dtype)
        direct = padded == spatial and r.dtype == dt   # accumulate in the result itself

        def part(rows):         # rows: a slice of M (or N), a cache-sized block at a time
            for b in _blocks(rows, g.shape[0], _prod(r.shape[1:])):
                share = g[b].astype(dt, copy=False) / div
                acc = r[b] if direct else \
                    np.empty(share.shape[:1] + padded + share.shape[nd + 1:], dt)
                acc.fill(0)
                for pos in np.ndindex(*k):
                    acc[_window_slices(pos, out, s, (1,) * nd)] += share
                if not direct:
                    r[b] = acc[inside]
        if r.size:
            parallel_for(part, (g.shape[0],), r.size)
        return _result(r, tuple(self.shape), cl)

    impl(name, "CPU")(kernel)
    impl(name, "Meta")(meta)
    impl(name + "_backward", "CPU")(backward)
    impl(name + "_backward", "Meta")(_like_self_meta(nd, keeps))


_avg_pool_kernel(2)
_avg_pool_kernel(3)


# ---- adaptive max pooling ---------------------------------------------------------------------
_INT64_MAX = 2 ** 63 - 1


def _check_non_empty(t, name, what):
    """PyTorch's adaptive pools refuse a tensor with an empty dim after the first."""
    for i in range(1, t.dim()):
        if t.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected {what} to have non-zero size for non-batch "
                               f"dimensions, but {what} has sizes {list(t.shape)} with "
                               f"dimension {i} being empty")


def adaptive_windows(size, out):
    """PyTorch's adaptive windows along one dim: [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_max(x, nd, out, cl=False):
    """x (M, *in) -> (values, flat indices) over PyTorch's adaptive windows ((N, *in, C) ->
    (N, *out, C) when cl). Windows differ in size; each dim gathers max_size positions per
    output, repeating the window's last element where a window is shorter (a repeat never
    changes a maximum)."""
    spatial = _spatial(x, nd)
    starts, lengths = [], []
    for n, o in zip(spatial, out):
        s, e = adaptive_windows(n, o)
        starts.append(s)
        lengths.append(e - s)
    kernel = tuple(int(ln.max()) for ln in lengths)
    grid_starts = [s.reshape((-1,) + (1,) * (nd - 1 - i + cl)) for i, s in enumerate(starts)]
    grid_last = [(s + ln - 1).reshape((-1,) + (1,) * (nd - 1 - i + cl))
                 for i, (s, ln) in enumerate(zip(starts, lengths))]
    steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]

    def flat(pos):
        """Flat input index of window position `pos` of every output (clamped to the window)."""
        return sum(np.minimum(s + k, last) * st
                   for s, k, last, st in zip(grid_starts, pos, grid_last, steps))
    flat_x = x.reshape(x.shape[:1] + (-1,) + x.shape[nd + 1:])
    if cl:    # flat(pos) broadcasts over (*out, 1): index with its (*out) part
        best, arg = _window_max([flat_x[:, flat(pos)[..., 0]] for pos in np.ndindex(*kernel)],
                                x.dtype)
    else:
        best, arg = _window_max([flat_x[:, flat(pos)] for pos in np.ndindex(*kernel)], x.dtype)
    return best, flat(np.unravel_index(arg, kernel))


def _adaptive_max_kernel(nd):
    name = f"adaptive_max_pool{nd}d"
    keeps = nd == 2    # (PyTorch's 3-d adaptive pools return contiguous results)

    def check(self, output_size):
        if len(output_size) != nd:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
        _check_non_empty(self, name, "input")
        if self.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                               f"[{', '.join(map(str, self.shape))}]")
        # PyTorch finds a negative output size when it allocates the output
        shape = _check_size(tuple(self.shape[:-nd]) + tuple(output_size))
        if _prod(shape) > _INT64_MAX:
            raise RuntimeError(f"Storage size calculation overflowed with sizes="
                               f"[{', '.join(map(str, shape))}]")
        return shape

    def kernel(self, output_size):
        shape = check(self, output_size)
        if self.dtype not in FLOATS:
            raise not_implemented(name, self.dtype)
        x, cl = _layout(self, nd, keeps)
        if 0 in shape:
            rows = _rows_shape(x, nd, output_size, cl)
            return (_result(np.empty(rows, x.dtype), shape, cl),
                    _result(np.empty(rows, np.int64), shape, cl))
        values, idx = _adaptive_max(x, nd, tuple(output_size), cl)
        return _result(values, shape, cl), _result(idx.astype(np.int64, copy=False), shape, cl)

    def meta(self, output_size):
        shape = check(self, output_size)
        return (_meta_in_layout(shape, self.dtype, self, nd, keeps),
                _meta_in_layout(shape, D.int64, self, nd, keeps))

    def backward(grad_output, self, indices):
        _check_non_empty(grad_output, f"{name}_backward", "grad_output")
        return _scatter_back(grad_output, self, indices, nd, True, keeps)

    impl(name, "CPU")(kernel)
    impl(name, "Meta")(meta)
    impl(name + "_backward", "CPU")(backward)
    impl(name + "_backward", "Meta")(_like_self_meta(nd, keeps))


_adaptive_max_kernel(2)
_adaptive_max_kernel(3)


# ---- adaptive average pooling -----------------------------------------------------------------
# Adaptive windows along each dim are averaged one dim at a time (a box mean is a mean of
# means): a reshape and mean where the windows tile the dim, else a product with the (out, in)
# matrix whose row i averages window i. The input gradient applies the transposes in reverse.
def _adaptive_avg_matrix(n, o, dtype):
    start, end = adaptive_windows(n, o)
    cols = np.arange(n)
    m = ((cols >= start[:, None]) & (cols < end[:, None])) / (end - start)[:, None]
    return m.astype(dtype)


def _adaptive_avg(x, out):
    """x (M, *in) -> (M, *out), the mean over each adaptive window."""
    for axis, o in enumerate(out, 1):
        n = x.shape[axis]
        if o == n:
            continue
        if o and n % o == 0:
            x = x.reshape(x.shape[:axis] + (o, n // o) + x.shape[axis + 1:]).mean(axis + 1)
        else:
            x = np.moveaxis(np.moveaxis(x, axis, -1) @ _adaptive_avg_matrix(n, o, x.dtype).T,
                            -1, axis)
    return x


def _adaptive_avg_grad(g, in_size):
    """The input gradient of _adaptive_avg: g (M, *out) -> (M, *in)."""
    for axis in range(len(in_size), 0, -1):
        n, o = in_size[axis - 1], g.shape[axis]
        if o == n:
            continue
        if o and n % o == 0:
            g = np.repeat(g, n // o, axis) / (n // o)
        else:
            g = np.moveaxis(np.moveaxis(g, axis, -1) @ _adaptive_avg_matrix(n, o, g.dtype),
                            -1, axis)
    return g


def _adaptive_avg_kernel(nd):
    name = f"adaptive_avg_pool{nd}d"
    keeps = nd == 2

    def check(self, output_size):
        if len(output_size) != nd:
            raise RuntimeError(f"{name}: output_size must be {nd}")
        if any(o < 0 for o in output_size):
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                               f"to 0 but received {{{', '.join(map(str, output_size))}}}")
        if self.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                               f"{list(self.shape)}")
        # the 2-d kernel checks the spatial dims, the 3-d one every dim after the first
        for i in range(self.dim() - 2 if nd == 2 else 1, self.dim()):
            if self.shape[i] == 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for "
                                   f"non-batch dimensions, but input has sizes "
                                   f"{list(self.shape)} with dimension {i} being empty")
        return tuple(self.shape[:-nd]) + tuple(output_size)

    def kernel(self, output_size):
        shape = check(self, output_size)
        if self.dtype not in FLOATS:
            raise not_implemented(name, self.dtype)
        x, cl = _layout(self, nd, keeps)
        r = _adaptive_avg(x.astype(compute_dtype(x), copy=False), tuple(output_size))
        return _result(np.ascontiguousarray(r, dtype=x.dtype), shape, cl)

    def meta(self, output_size):
        return _meta_in_layout(check(self, output_size), self.dtype, self, nd, keeps)

    def backward(grad_output, self):
        _check_non_empty(grad_output, f"{name}_backward", "grad_output")
        if grad_output.dtype is not self.dtype:
            raise RuntimeError(f"{name}_backward_out_cpu_template: Expected dtype "
                               f"{self.dtype} for `grad_output` but got dtype "
                               f"{grad_output.dtype}")
        cl = _is_channels_last(self, nd, keeps)
        g = _as_layout(grad_output, nd, cl)
        r = _adaptive_avg_grad(g.astype(compute_dtype(g), copy=False), tuple(self.shape[-nd:]))
        return _result(np.ascontiguousarray(r, dtype=g.dtype), tuple(self.shape), cl)

    impl(f"_{name}", "CPU")(kernel)
    impl(f"_{name}", "Meta")(meta)
    impl(f"_{name}_backward", "CPU")(backward)
    impl(f"_{name}_backward", "Meta")(_like_self_meta(nd, keeps))


_adaptive_avg_kernel(2)
_adaptive_avg_kernel(3)


# ---- max unpooling ----------------------------------------------------------------------------
def _unpool_check(self, indices, output_size, nd):
    if indices.dtype is not D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype}")
    if tuple(self.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(self.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    if len(output_size) != nd:
        raise RuntimeError(f"There should be exactly {nd} elements but got "
                           f"{len(output_size)} elements")
    if self.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {self.dim()} dimensions.")
    for i in range(1, self.dim()):   # (the first dim may be empty, batched or not)
        if self.shape[i] == 0:
            raise RuntimeError(f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have "
                               f"non-zero size for non-batch dimensions, but got "
                               f"{list(self.shape)} with dimension {i} being empty.")
    return tuple(self.shape[:-nd]) + tuple(output_size)


def _max_unpool_kernel(nd):
    name = f"max_unpool{nd}d"
    keeps = nd == 2    # (PyTorch's max_unpool3d returns contiguous results)

    def kernel(self, indices, output_size, *stride_padding):
        shape = _unpool_check(self, indices, output_size, nd)
        if self.dtype not in FLOATS:
            raise not_implemented(f"max_unpooling{nd}d_forward_out_cpu_frame", self.dtype)
        size = _prod(output_size)
        idx = indices._np
        bad = (idx < 0) | (idx >= size)
        if bad.any():
            raise RuntimeError(f"Found an invalid max index: {int(idx[bad].reshape(-1)[0])} "
                               f"(output volumes are of size {_fmt(output_size)}")
        x, cl = _layout(self, nd, keeps)
        r = _scatter(x, _as_layout(indices, nd, cl), tuple(output_size), False, cl)
        return _result(r, shape, cl)

    def meta(self, indices, output_size, *stride_padding):
        return _meta_in_layout(_unpool_check(self, indices, output_size, nd), self.dtype, self,
                               nd, keeps)

    impl(name, "CPU")(kernel)
    impl(name, "Meta")(meta)


_max_unpool_kernel(2)
_max_unpool_kernel(3)


# ---- fractional max pooling -------------------------------------------------------------------
# Graham's fractional max pooling: windows of a fixed size whose starts advance by a
# pseudo-random mix of two step lengths, drawn from one sample u in [0, 1) per plane and dim:
# start[i] = int((i + u) * alpha) - int(u * alpha) with alpha = (in - k) / (out - 1), and the
# last window flush with the end. The arithmetic is in the input's dtype, as in PyTorch.
def _fractional_starts(samples, size, out, k):
    """(planes, out) window starts along one dim, for the (planes,) samples."""
    starts = np.empty((samples.shape[0], out), np.int64)
    if out > 1:
        dt = samples.dtype.type
        alpha = dt(size - k) / dt(out - 1)
        steps = np.arange(out - 1).astype(samples.dtype)
        starts[:, :-1] = ((steps[None, :] + samples[:, None]) * alpha).astype(np.int64) - \
            (samples * alpha).astype(np.int64)[:, None]
    if out > 0:
        starts[:, -1] = size - k
    return starts


def _fractional_kernel(nd):
    name = f"fractional_max_pool{nd}d"
    where = name if nd == 2 else f"{name}_out"
    dims = ("height", "width") if nd == 2 else ("time", "height", "width")

    def check(self, kernel_size, output_size):
        if len(kernel_size) != nd:
            raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of "
                               f"Ints")
        if len(output_size) != nd:
            raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of "
                               f"Ints")
        if self.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"{where}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                               f"{list(self.shape)}")
        for i in range(1, self.dim()):
            if self.shape[i] == 0:
                raise RuntimeError(f"{where}(): Expected input to have non-zero size for "
                                   f"non-batch dimensions, but got{list(self.shape)} with "
                                   f"dimension {i} being empty.")
        for dim, n, o, k in zip(dims, self.shape[-nd:], output_size, kernel_size):
            if o + k - 1 > n or (nd == 3 and o + k - 1 == n):  # (3-d is stricter)
                raise RuntimeError(f"{where}(): pool {dim} {k} too large relative to input "
                                   f"{dim} {n}")
        return tuple(self.shape[:-nd]) + tuple(output_size)

    def check_samples(self, samples):
        if samples.dtype is not self.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        if samples.dim() != 3:
            raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got "
                               f"{samples.dim()}")
        batch, channels = (1, self.shape[0]) if self.dim() == nd + 1 else self.shape[:2]
        if samples.shape[0] < batch:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if samples.shape[1] != channels:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if samples.shape[2] != nd:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                               f"{samples.shape[2]}.")
        return samples._np[:batch].reshape(batch * channels, nd)

    def kernel(self, kernel_size, output_size, random_samples):
        shape = check(self, kernel_size, output_size)
        u = check_samples(self, random_samples)
        if self.dtype not in FLOATS:
            raise not_implemented(f"{name}_out_frame", self.dtype)
        if 0 in shape:
            return _wrap(np.empty(shape, self._np.dtype)), _wrap(np.empty(shape, np.int64))
        x = _leading(self, nd)
        spatial = x.shape[1:]
        # PyTorch's samples are (w, h) in 2-d and (t, h, w) in 3-d
        order = (1, 0) if nd == 2 else (0, 1, 2)
        starts = [_fractional_starts(u[:, j], n, o, k)
                  for j, n, o, k in zip(order, spatial, output_size, kernel_size)]
        plane = np.arange(x.shape[0]).reshape((-1,) + (1,) * nd)
        grids = [s.reshape((-1,) + tuple(o if e == d else 1 for e, o in enumerate(output_size)))
                 for d, s in enumerate(starts)]
        strides = [_prod(spatial[d + 1:]) for d in range(nd)]
        views, flats = [], []
        for pos in np.ndindex(*kernel_size):
            at = [g + p for g, p in zip(grids, pos)]
            views.append(x[(plane, *at)])
            flats.append(sum(a * s for a, s in zip(at, strides)))
        best, arg = _window_max(views, x.dtype)
        flat = np.broadcast_to(np.stack(np.broadcast_arrays(*flats)), (len(flats),) + best.shape)
        idx = np.take_along_axis(flat, arg[None].astype(np.int64), 0)[0]
        return _wrap(best.reshape(shape)), _wrap(idx.reshape(shape).astype(np.int64))

    def meta(self, kernel_size, output_size, random_samples):
        shape = check(self, kernel_size, output_size)
        return (_meta(shape, self.dtype, device=self.device),
                _meta(shape, D.int64, device=self.device))

    impl(name, "CPU")(kernel)
    impl(name, "Meta")(meta)


_fractional_kernel(2)
_fractional_kernel(3)
