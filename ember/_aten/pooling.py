"""Pooling kernels (CPU and Meta): max pooling with indices, average pooling, adaptive max
and average pooling and max unpooling, for 2 and 3 spatial dims (1-d pooling is 2-d pooling
of a height-1 input, as in PyTorch).

Every kernel loops over the positions of the pooling window only -- 4 for a 2x2 window -- and
each step is one NumPy operation over the whole batch: a strided slice of the padded input
holds, for every output pixel, the input element at that window position. Max pooling keeps a
running maximum and which window position gave it (PyTorch's rule: a larger value or a NaN
replaces the current one, so ties keep the first and NaN wins). The backward of max pooling
sends each gradient to the input element its index names: a plain scatter when the windows do
not overlap, else one `np.bincount` that sums the contributions of overlapping windows.
"""
import numpy as np

from .._core import dtype as D
from .._dispatch.dispatcher import impl
from .._core.tensor import _wrap, _meta
from .._core import caching_allocator
from .._core.memory_format import channels_last, suggest_memory_format, copy_in_format
from ._parallel import parallel_for
from .conv import compute_dtype
from .elementwise import not_implemented

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
# PyTorch's CPU pooling kernels keep a channels_last input's layout in their results (values,
# indices, and the input gradient). The kernels here compute over (N*C, H, W) rows; for a
# channels_last input the rows are read through a copy and the results laid out channels_last
# again -- the strides PyTorch gives, at the cost of two layout copies.
def _keeps_channels_last(kernel, layout_arg=0):
    """Wrap a 2-d pooling kernel: when its argument `layout_arg` (the input) is channels_last,
    so are its tensor results."""
    def wrapper(*args, **kwargs):
        result = kernel(*args, **kwargs)
        t = args[layout_arg]
        if t.dim() != 4 or suggest_memory_format(t) is not channels_last:
            return result
        if isinstance(result, tuple):
            return tuple(_wrap(copy_in_format(r._np, channels_last)) for r in result)
        return _wrap(copy_in_format(result._np, channels_last))
    wrapper.__name__ = kernel.__name__
    return wrapper


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
    if self.dim() not in (nd + 1, nd + 2) or 0 in self.shape[-nd - 1:]:
        kinds = {2: "3D or 4D", 3: "4D or 5D"}[nd]
        raise RuntimeError(f"{name}: Expected {kinds} (batch mode) tensor for input with "
                           f"possible 0 batch size and non-zero dimensions for input, but got: "
                           f"[{', '.join(map(str, self.shape))}]")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_size="
                           f"{list(kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got stride={list(stride)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation="
                           f"{list(dilation)}")
    if any(p < 0 or p > k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={list(padding)}, kernel_size={list(kernel)} and dilation="
                           f"{list(dilation)}")
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
def _padded(x, nd, padding, need, fill):
    """x (M, *spatial) in a buffer filled with `fill`, `padding` in front, at least `need` long."""
    spatial = x.shape[-nd:]
    shape = x.shape[:-nd] + tuple(max(n, p + s) for n, p, s in zip(need, padding, spatial))
    if shape == x.shape:
        return x
    buf = np.full(shape, fill, x.dtype)
    buf[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, spatial))] = x
    return buf


def _window_slices(pos, out, stride, dilation):
    """The strided slice of the padded input holding window position `pos` of every output."""
    return (Ellipsis,) + tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
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
                buf[(Ellipsis,) + tuple(slice(r, None, s) for r, s in zip(residue, stride))])
        start = [o // s for o, s in zip(offsets, stride)]
        views.append(phases[residue][(Ellipsis,) + tuple(
            slice(a, a + o) for a, o in zip(start, out))])
    return views


def _is_float(dtype):
    return not np.issubdtype(dtype, np.integer)   # bfloat16 (ml_dtypes) has kind "V"


def _lowest(dtype):
    return -np.inf if _is_float(dtype) else np.iinfo(dtype).min


def _window_max(views, dtype):
    """(max, first window position holding it) over the views, with PyTorch's rule for ties
    (the first wins) and NaN (the last NaN wins, a NaN beats any number). The maximum is one
    np.maximum per position. The argmax counts, per output, the positions before the first
    one equal to the maximum: three vectorised passes per position, no masked writes."""
    best = views[0].copy()
    for v in views[1:]:
        np.maximum(best, v, out=best)
    arg = np.zeros(best.shape, np.uint8 if len(views) < 256 else np.int64)
    searching = np.ones(best.shape, bool)
    differs = np.empty(best.shape, bool)
    for v in views[:-1]:
        np.not_equal(v, best, out=differs)
        searching &= differs
        arg += searching
    if _is_float(dtype):
        nan = np.isnan(best)
        if nan.any():
            for k, v in enumerate(views):
                np.copyto(arg, k, where=nan & np.isnan(v))
    return best, arg


def _grid(out, nd):
    """Per-dim output coordinates shaped to broadcast over (*out)."""
    return [np.arange(o).reshape((-1,) + (1,) * (nd - 1 - i)) for i, o in enumerate(out)]


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
            any(o * k > n for o, k, n in zip(out, kernel, x.shape[-nd:])):
        return None
    crop = x[(Ellipsis,) + tuple(slice(0, o * k) for o, k in zip(out, kernel))]
    if not crop.flags.c_contiguous:
        return None
    shape = (x.shape[0],)
    for o, k in zip(out, kernel):
        shape += (o, k)
    tiles = crop.reshape(shape)
    return [tiles[(slice(None),) + tuple(v for i in pos for v in (slice(None), i))]
            for pos in np.ndindex(*kernel)]


def _max_pool_base(nd, spatial, kernel, stride, padding, dilation, out):
    """(flat input offset of each window position, flat input index of each window's origin
    (*out)): an output's index is base + offsets[argmax]."""
    grid = _grid(out, nd)
    steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]
    base = sum((o * s - p) * st for o, s, p, st in zip(grid, stride, padding, steps))
    return _flat_offsets(kernel, dilation, spatial), base


def _max_pool(x, nd, kernel, stride, padding, dilation, out, values=None, index=None, base=None):
    """x (M, *in) -> (values, flat input indices), both (M, *out); written into `values` and
    `index` when given."""
    spatial = x.shape[-nd:]
    lowest = _lowest(x.dtype)
    views = _tiling_views(x, nd, kernel, stride, padding, dilation, out)
    if views is None:
        need = tuple((o - 1) * s + d * (k - 1) + 1
                     for o, k, s, d in zip(out, kernel, stride, dilation))
        buf = _padded(x, nd, padding, need, lowest)
        views = window_views(buf, kernel, stride, dilation, out)
    best, arg = _window_max(views, x.dtype)
    offsets, origin = base or _max_pool_base(nd, spatial, kernel, stride, padding, dilation, out)
    if values is not None:
        values[...] = best
        best = values
    index = np.take(offsets, arg, out=index)
    index += origin
    if padding and any(padding):
        # a window that is all `lowest` may have picked a padding element: PyTorch points at
        # its first element inside the input
        empty = best == lowest
        if empty.any():
            grid = _grid(out, nd)
            steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]
            first = [np.maximum(0, -(-(p - o * s) // d)) for o, s, p, d in
                     zip(grid, stride, padding, dilation)]
            coords = [o * s - p + k * d for o, s, p, k, d in
                      zip(grid, stride, padding, first, dilation)]
            inside = sum(c * st for c, st in zip(coords, steps))
            np.copyto(index, np.broadcast_to(inside, index.shape), where=empty)
    return best, index


def _scatter(values, indices, spatial, unique):
    """values, indices (M, *out) -> (M, *spatial): each value added at its flat index."""
    m = values.shape[0]
    size = _prod(spatial)
    if unique:
        r = np.zeros((m, size), values.dtype)
        per_row = _prod(values.shape[1:])
        v, i = values.reshape(m, per_row), indices.reshape(m, per_row)

        def part(rows):           # rows: a slice of M, each row scattered on its own
            dest = r[rows]
            flat = i[rows] + (np.arange(dest.shape[0]) * size)[:, None]
            dest.reshape(-1)[flat.reshape(-1)] = v[rows].reshape(-1)
        parallel_for(part, (m,), r.size)
        return r.reshape((m,) + tuple(spatial))
    flat = (indices.reshape(m, _prod(indices.shape[1:])) + (np.arange(m) * size)[:, None]).reshape(-1)
    v = values.reshape(-1)
    r = np.bincount(flat, weights=v, minlength=m * size).astype(values.dtype, copy=False)
    return r.reshape((m,) + tuple(spatial))


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


def _max_pool_kernel(nd):
    name = f"max_pool{nd}d_with_indices"

    def kernel(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool_args(self, nd, kernel_size, stride, padding, dilation, name)
        out = _check_pool(name, self, nd, k, s, p, d, ceil_mode)
        if self.dtype not in NUMBERS:
            raise not_implemented(f"max_pool{nd}d", self.dtype)
        shape = tuple(self.shape[:-nd]) + out
        x = _leading(self, nd)
        if x.size == 0:
            return _wrap(np.empty(shape, x.dtype)), _wrap(np.empty(shape, np.int64))
        values = caching_allocator.empty((x.shape[0],) + out, x.dtype)
        idx = caching_allocator.empty((x.shape[0],) + out, np.int64)

        base = _max_pool_base(nd, x.shape[1:], k, s, p, d, out)

        def part(rows):           # rows: a slice of M, pooled a cache-sized block at a time
            for block in _blocks(rows, x.shape[0], _prod(x.shape[1:])):
                _max_pool(x[block], nd, k, s, p, d, out, values[block], idx[block], base)
        parallel_for(part, (x.shape[0],), x.size)
        return _wrap(values.reshape(shape)), _wrap(idx.reshape(shape))

    def meta(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool_args(self, nd, kernel_size, stride, padding, dilation, name)
        out = _check_pool(name, self, nd, k, s, p, d, ceil_mode)
        shape = tuple(self.shape[:-nd]) + out
        return (_meta(shape, self.dtype, device=self.device),
                _meta(shape, D.int64, device=self.device))

    def backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
        k, s, p, d = _pool_args(self, nd, kernel_size, stride, padding, dilation, name)
        overlap = any(st < di * (kk - 1) + 1 for st, kk, di in zip(s, k, d))
        return _wrap(_scatter_back(grad_output, self, indices, nd, not overlap))

    impl(name, "CPU")(_keeps_channels_last(kernel) if nd == 2 else kernel)
    impl(name, "Meta")(meta)
    impl(name + "_backward", "CPU")(_keeps_channels_last(backward, 1) if nd == 2 else backward)
    impl(name + "_backward", "Meta")(_like_self_meta)


def _scatter_back(grad_output, self, indices, nd, unique):
    g = grad_output._np
    dt = compute_dtype(g)
    spatial = tuple(self.shape[-nd:])
    r = _scatter(g.reshape((-1,) + g.shape[-nd:]).astype(dt, copy=False),
                 indices._np.reshape((-1,) + g.shape[-nd:]), spatial, unique)
    return r.reshape(self.shape).astype(g.dtype, copy=False)


def _like_self_meta(grad_output, self, *rest):
    return _meta(self.shape, grad_output.dtype, device=self.device)


_max_pool_kernel(2)
_max_pool_kernel(3)


# ---- average pooling --------------------------------------------------------------------------
def _avg_divisors(spatial, out, kernel, stride, padding, count_include_pad, divisor_override):
    """The divisor of every output (*out): the window's size, inside the padded input (or
    without the padding), or divisor_override. The window is a box, so it is a product of
    per-dim sizes."""
    if divisor_override:
        return divisor_override
    div = 1
    for i, (n, o, k, s, p) in enumerate(zip(spatial, out, kernel, stride, padding)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start if count_include_pad else \
            np.minimum(end, n) - np.maximum(start, 0)
        div = div * size.reshape((-1,) + (1,) * (len(out) - 1 - i))
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

    def kernel(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
        k, s, p, out = _avg_pool_args(self, nd, kernel_size, stride, padding, ceil_mode, name)
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        if self.dtype not in _AVG_DTYPES[nd]:
            raise not_implemented(f"avg_pool{nd}d_out_frame", self.dtype)
        x = _leading(self, nd)
        dt = compute_dtype(x)
        spatial = x.shape[1:]
        need = tuple((o - 1) * st + kk for o, st, kk in zip(out, s, k))
        buf = _padded(x.astype(dt, copy=False), nd, p, need, 0)
        views = window_views(buf, k, s, (1,) * nd, out)
        total = views[0].copy()
        for v in views[1:]:
            total += v
        div = _avg_divisors(spatial, out, k, s, p, count_include_pad, divisor_override)
        r = _divide(total, div, np.dtype(dt))
        return _wrap(r.reshape(tuple(self.shape[:-nd]) + out).astype(self.dtype._np, copy=False))

    def meta(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
        k, s, p, out = _avg_pool_args(self, nd, kernel_size, stride, padding, ceil_mode, name)
        return _meta(tuple(self.shape[:-nd]) + out, self.dtype, device=self.device)

    def backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
        """Each output's gradient, divided by its divisor, added onto its window."""
        k, s, p, out = _avg_pool_args(self, nd, kernel_size, stride, padding, ceil_mode, name)
        g = grad_output._np
        dt = compute_dtype(g)
        g = g.reshape((-1,) + out).astype(dt, copy=False)
        spatial = tuple(self.shape[-nd:])
        div = _avg_divisors(spatial, out, k, s, p, count_include_pad, divisor_override)
        share = g / div
        need = tuple((o - 1) * st + kk for o, st, kk in zip(out, s, k))
        acc = np.zeros((g.shape[0],) + tuple(max(n, pp + sz) for n, pp, sz in
                                             zip(need, p, spatial)), dt)
        for pos in np.ndindex(*k):
            acc[_window_slices(pos, out, s, (1,) * nd)] += share
        r = acc[(Ellipsis,) + tuple(slice(pp, pp + sz) for pp, sz in zip(p, spatial))]
        return _wrap(np.ascontiguousarray(r.reshape(self.shape), dtype=grad_output.dtype._np))

    impl(name, "CPU")(_keeps_channels_last(kernel) if nd == 2 else kernel)
    impl(name, "Meta")(meta)
    impl(name + "_backward", "CPU")(_keeps_channels_last(backward, 1) if nd == 2 else backward)
    impl(name + "_backward", "Meta")(_like_self_meta)


_avg_pool_kernel(2)
_avg_pool_kernel(3)


# ---- adaptive max pooling ---------------------------------------------------------------------
def adaptive_windows(size, out):
    """PyTorch's adaptive windows along one dim: [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_max(x, nd, out):
    """x (M, *in) -> (values, flat indices) over PyTorch's adaptive windows. Windows differ in
    size; each dim gathers max_size positions per output, repeating the window's last element
    where a window is shorter (a repeat never changes a maximum)."""
    spatial = x.shape[1:]
    starts, lengths = [], []
    for n, o in zip(spatial, out):
        s, e = adaptive_windows(n, o)
        starts.append(s)
        lengths.append(e - s)
    kernel = tuple(int(ln.max()) for ln in lengths)
    grid_starts = [s.reshape((-1,) + (1,) * (nd - 1 - i)) for i, s in enumerate(starts)]
    grid_last = [(s + ln - 1).reshape((-1,) + (1,) * (nd - 1 - i))
                 for i, (s, ln) in enumerate(zip(starts, lengths))]
    steps = np.cumprod((1,) + tuple(spatial[:0:-1]))[::-1]

    def flat(pos):
        """Flat input index of window position `pos` of every output (clamped to the window)."""
        return sum(np.minimum(s + k, last) * st
                   for s, k, last, st in zip(grid_starts, pos, grid_last, steps))
    flat_x = x.reshape(x.shape[0], -1)
    best, arg = _window_max([flat_x[:, flat(pos)] for pos in np.ndindex(*kernel)], x.dtype)
    return best, flat(np.unravel_index(arg, kernel))


def _adaptive_max_kernel(nd):
    name = f"adaptive_max_pool{nd}d"

    def check(self, output_size):
        if len(output_size) != nd:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
        if self.dim() not in (nd + 1, nd + 2) or 0 in self.shape[-nd:]:
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                               f"[{', '.join(map(str, self.shape))}]")
        if any(o < 0 for o in output_size):
            raise RuntimeError(f"{name}(): Expected output_size to be non-negative")
        return tuple(self.shape[:-nd]) + tuple(output_size)

    def kernel(self, output_size):
        shape = check(self, output_size)
        if self.dtype not in FLOATS:
            raise not_implemented(name, self.dtype)
        x = _leading(self, nd)
        if 0 in shape:
            return _wrap(np.empty(shape, x.dtype)), _wrap(np.empty(shape, np.int64))
        values, idx = _adaptive_max(x, nd, tuple(output_size))
        return _wrap(values.reshape(shape)), _wrap(idx.reshape(shape).astype(np.int64))

    def meta(self, output_size):
        shape = check(self, output_size)
        return (_meta(shape, self.dtype, device=self.device),
                _meta(shape, D.int64, device=self.device))

    def backward(grad_output, self, indices):
        return _wrap(_scatter_back(grad_output, self, indices, nd, False))

    impl(name, "CPU")(_keeps_channels_last(kernel) if nd == 2 else kernel)
    impl(name, "Meta")(meta)
    impl(name + "_backward", "CPU")(_keeps_channels_last(backward, 1) if nd == 2 else backward)
    impl(name + "_backward", "Meta")(_like_self_meta)


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
        x = _leading(self, nd)
        r = _adaptive_avg(x.astype(compute_dtype(x), copy=False), tuple(output_size))
        return _wrap(np.ascontiguousarray(r.reshape(shape), dtype=x.dtype))

    def meta(self, output_size):
        return _meta(check(self, output_size), self.dtype, device=self.device)

    def backward(grad_output, self):
        for i in range(1, grad_output.dim()):
            if grad_output.shape[i] == 0:
                raise RuntimeError(f"{name}_backward(): Expected grad_output to have non-zero "
                                   f"size for non-batch dimensions, but grad_output has sizes "
                                   f"{list(grad_output.shape)} with dimension {i} being empty")
        if grad_output.dtype is not self.dtype:
            raise RuntimeError(f"{name}_backward_out_cpu_template: Expected dtype "
                               f"{self.dtype} for `grad_output` but got dtype "
                               f"{grad_output.dtype}")
        g = _leading(grad_output, nd)
        r = _adaptive_avg_grad(g.astype(compute_dtype(g), copy=False), tuple(self.shape[-nd:]))
        return _wrap(np.ascontiguousarray(r.reshape(self.shape), dtype=g.dtype))

    impl(f"_{name}", "CPU")(_keeps_channels_last(kernel) if nd == 2 else kernel)
    impl(f"_{name}", "Meta")(meta)
    impl(f"_{name}_backward", "CPU")(_keeps_channels_last(backward, 1) if nd == 2 else backward)
    impl(f"_{name}_backward", "Meta")(_like_self_meta)


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
        x = _leading(self, nd)
        r = _scatter(x, idx.reshape(x.shape), tuple(output_size), True)
        return _wrap(r.reshape(shape))

    def meta(self, indices, output_size, *stride_padding):
        return _meta(_unpool_check(self, indices, output_size, nd), self.dtype,
                     device=self.device)

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
