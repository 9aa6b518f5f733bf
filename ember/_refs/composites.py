"""torch.* functions and Tensor methods that PyTorch implements as CompositeImplicitAutograd:
written here from other ember ops, so autograd and the Meta device come for free (diff, cov,
trapezoid, block_diag, renorm, the window functions, ...). A few are not differentiable in
PyTorch either (histogram, isin, unravel_index, nonzero_static) and compute on NumPy arrays.
"""
import builtins
import itertools
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

from .._core import dtype as D
from .._core.layout import sparse_coo
from .._core.flags import warn_once
from .._core.math_bits import resolved_values
from .._core.tensor import Tensor, _wrap_dim
from .. import _refs as B
from .._bindings.out import _finish_tuple, _finish
from .._bindings.factories import range_out
from .._refs.reduction import _vector_norm
from .._bindings.tensor_methods import _no_grad_guard
from .._bindings.codegen import numpy_names
from .._aten.elementwise import _scalar_type_name

__all__ = ["diff", "cov", "corrcoef", "cartesian_prod", "combinations", "block_diag", "diagflat",
           "vander", "gradient", "trapezoid", "trapz", "cumulative_trapezoid", "histogram",
           "histogramdd", "isin", "unravel_index", "range", "bartlett_window", "blackman_window",
           "hamming_window", "hann_window", "kaiser_window", "renorm", "dist", "inner",
           "frombuffer", "empty_permuted", "split_with_sizes", "unsafe_split", "unsafe_chunk",
           "unsafe_split_with_sizes", "index_put", "index_put_", "nonzero_static"]


# ---- differences, covariance, integration ---------------------------------------------------
@numpy_names
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    # with n=0 PyTorch copies the input into out, with the copy's dtype check
    return _finish(_diff(input, n, dim, prepend, append), False, out, "diff" if n == 0 else None)


def _diff(input, n, dim, prepend, append):
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    for t in parts:
        if t.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        for d in builtins.range(input.dim()):
            if d != dim and t.shape[d] != input.shape[d]:
                raise RuntimeError(f"diff expects the shape of tensor to prepend or append to "
                                   f"match that of input except along the differencing "
                                   f"dimension; input.size({d}) = {input.shape[d]}, but got "
                                   f"tensor.size({d}) = {t.shape[d]}")
    if n == 0:  # PyTorch returns a copy of the input, leaving prepend and append out
        return B.zeros_like(input).copy_(input)
    x = B.cat(parts, dim) if len(parts) > 1 else input
    for _ in builtins.range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi, lo = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = B.logical_xor(hi, lo) if x.dtype is D.bool else hi - lo
    return x


def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype is D.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if input.dim() == 2 else input.view(1, -1)
    num_obs = x.shape[1]
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        if weights.dim() > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {weights.dim()} dimensions")
        if name == "fweights" and weights.is_floating_point():
            raise RuntimeError("cov(): expected fweights to have integral dtype but got "
                               f"fweights with {D.scalar_type_name(weights.dtype)} dtype")
        if name == "aweights" and not weights.is_floating_point():
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {D.scalar_type_name(weights.dtype)} dtype")
        if weights.numel() != num_obs:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {weights.numel()} != "
                               f"{num_obs}")
        if bool((weights < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    viewed = x
    if not x.is_floating_point() and not x.is_complex():
        x = x.to(D.get_default_dtype())
    if w is None:
        avg = x.mean(1)
        w_sum = num_obs
        norm_factor = w_sum - correction
    else:
        w_sum = w.sum()
        if not w_sum.item():
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm_factor = w_sum
        elif aweights is None:
            norm_factor = w_sum - correction
        else:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if float(norm_factor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning)
        norm_factor = norm_factor * 0 if isinstance(norm_factor, Tensor) else 0
    # Note: with one observation and one kind of weights the centered matrix is exactly zero;
    # PyTorch writes those zeros into the input (or its 2-D view), so the input is zeroed and
    # a leaf that requires grad is refused by the in-place rule, as here.
    if num_obs == 1 and (fweights is None) != (aweights is None):
        centered = viewed.zero_().to(x.dtype)
    else:
        centered = x - avg.unsqueeze(1)
    weighted = centered if w is None else centered * w
    c = B.mm(centered, weighted.t().conj())
    return (c / norm_factor).squeeze()


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = B.diag(c).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c.clamp(-1, 1) if not c.is_complex() else c


def _spacing(y, x, dim):
    """The distances between consecutive sample points, shaped to broadcast against the
    differences of `y` along `dim`."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0] - 1
        return diff(x).reshape(shape)
    return diff(x, dim=dim)


def _check_x(x, name):
    if not isinstance(x, (Tensor, type(None))):
        raise TypeError(f"{name}(): argument 'x' must be Tensor, not {type(x).__name__} (give "
                        f"a constant spacing as dx=)")


def _check_dx(dx, name):
    if isinstance(dx, Tensor):
        raise TypeError(f"{name}(): argument 'dx' must be Number, not Tensor")
    if isinstance(dx, complex):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def _check_not_bool(y, name):
    if y.dtype is D.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def _zeros_without(y, dim):
    """The integral over no samples: zeros, outside the graph as in PyTorch."""
    shape = list(y.shape)
    del shape[dim]
    return B.zeros(shape, dtype=y.dtype, device=y.device)


@numpy_names
def trapezoid(y, x=None, *, dx=None, dim=-1):
    dim = _wrap_dim(dim, y.dim())
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx "
                        "cannot both be given")
    _check_x(x, "trapezoid")
    _check_not_bool(y, "trapezoid")
    length = y.shape[dim]
    if x is None:
        dx = 1 if dx is None else dx
        _check_dx(dx, "trapezoid")
        if length == 0:
            return _zeros_without(y, dim)
        ends = y.narrow(dim, 0, 1).squeeze(dim) + y.narrow(dim, length - 1, 1).squeeze(dim)
        return (y.sum(dim) - ends * 0.5) * dx
    if length == 0:
        return _zeros_without(y, dim)
    spacing = _spacing(y, x, dim)
    avg = y.narrow(dim, 1, length - 1) + y.narrow(dim, 0, length - 1)
    return (spacing * avg).sum(dim) / 2


@numpy_names
def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@numpy_names
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    dim = _wrap_dim(dim, y.dim())
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: "
                        "x and dx cannot both be given")
    _check_x(x, "cumulative_trapezoid")
    _check_not_bool(y, "cumulative_trapezoid")
    length = y.shape[dim]
    if length == 0:  # an empty x (summed: an exact 0) stays in the graph, as in PyTorch
        return y.narrow(dim, 0, 0) * 1.0 + (0 if x is None or x.numel() else x.sum())
    avg = y.narrow(dim, 1, length - 1) + y.narrow(dim, 0, length - 1)
    if x is None:
        dx = 1 if dx is None else dx
        _check_dx(dx, "cumulative_trapezoid")
        return (avg * (dx / 2)).cumsum(dim)
    return (_spacing(y, x, dim) * avg / 2).cumsum(dim)


@numpy_names
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences inside, one-sided ones of order `edge_order` at the ends, along each
    dim; `spacing` is a step (per dim) or the sample coordinates (1-D tensors), as in
    numpy.gradient."""
    if input.dtype is D.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(builtins.range(input.dim())) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    if spacing is None:   # PyTorch's binding takes None for the default step
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if dim is None and len(spacing) != input.dim():
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, "
                               f"or a list of length equal to 'self.dim() = {input.dim()}', "
                               f"since dim argument was not given, but got a list of length "
                               f"{len(spacing)}")
        if dim is not None and len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but got "
                               f"a spacing argument of length {len(spacing)} and a dim argument "
                               f"of length {len(dims)}.")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = [_wrap_dim(d, input.dim()) for d in dims]
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    for h in spacings:
        if isinstance(h, Tensor) and h.device != input.device:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, "
                               f"but got devices {input.device} and {h.device}!")
    f = input if input.is_floating_point() or input.is_complex() else \
        input.to(D.get_default_dtype())
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, spacings))


def _gradient_along(f, dim, h, edge_order):
    n = f.shape[dim]
    if isinstance(h, Tensor):
        shape = [1] * f.dim()
        shape[dim] = n - 1
        dx = diff(h).reshape(shape)
        dx1, dx2 = dx.narrow(dim, 0, n - 2), dx.narrow(dim, 1, n - 2)
        first, second = dx.narrow(dim, 0, 1), dx.narrow(dim, 1, 1) if n > 2 else None
        last, before = dx.narrow(dim, n - 2, 1), dx.narrow(dim, n - 3, 1) if n > 2 else None
    else:   # a uniform step: differences of samples, as PyTorch computes them (an inf sample
        # gives inf, where the weighted sum of the coordinates form would give 0 * inf = nan)
        h = h.item() if isinstance(h, Tensor) else h
        at = lambda start, length: f.narrow(dim, start, length)    # noqa: E731
        center = (at(2, n - 2) - at(0, n - 2)) / h / 2
        if edge_order == 1:
            head = (at(1, 1) - at(0, 1)) / h
            tail = (at(n - 1, 1) - at(n - 2, 1)) / h
        else:
            head = (-1.5 * at(0, 1) + 2 * at(1, 1) - 0.5 * at(2, 1)) / h
            tail = (0.5 * at(n - 3, 1) - 2 * at(n - 2, 1) + 1.5 * at(n - 1, 1)) / h
        return B.cat([head, center, tail], dim)
    at = lambda start, length: f.narrow(dim, start, length)    # noqa: E731
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    center = a * at(0, n - 2) + b * at(1, n - 2) + c * at(2, n - 2)
    if edge_order == 1:
        head = (at(1, 1) - at(0, 1)) / first
        tail = (at(n - 1, 1) - at(n - 2, 1)) / last
    else:
        d1, d2 = first, second
        head = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * at(0, 1) + (d1 + d2) / (d1 * d2) * at(1, 1)
                - d1 / (d2 * (d1 + d2)) * at(2, 1))
        d1, d2 = before, last
        tail = (d2 / (d1 * (d1 + d2)) * at(n - 3, 1) - (d2 + d1) / (d1 * d2) * at(n - 2, 1)
                + (2 * d2 + d1) / (d2 * (d1 + d2)) * at(n - 1, 1))
    return B.cat([head, center, tail], dim)


# ---- products and combinations --------------------------------------------------------------
def cartesian_prod(*tensors):
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = B.meshgrid(*tensors, indexing="ij")
    return B.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return B.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(pick(builtins.range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    columns = [input.index_select(0, B.tensor(idx[:, k], device=input.device))
               for k in builtins.range(r)]
    return B.stack(columns, 1)


def block_diag(*tensors):
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
        blocks.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1
                      else t)
    dtype = D.bool if not blocks else blocks[0].dtype
    for b in blocks[1:]:
        dtype = D.promote_types(dtype, b.dtype)
    if not blocks:
        return B.empty(1, 0)
    cols = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        h, w = b.shape
        pad_l = B.zeros(h, left, dtype=dtype, device=b.device)
        pad_r = B.zeros(h, cols - left - w, dtype=dtype, device=b.device)
        rows.append(B.cat([pad_l, b.to(dtype), pad_r], 1))
        left += w
    return B.cat(rows, 0)


def diagflat(input, offset=0):
    return B.diag(input.reshape(-1), offset)


def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = D.promote_types(x.dtype, D.int64)
    if n == 0:
        return B.empty(x.shape[0], 0, dtype=dtype, device=x.device)
    ones = B.ones(x.shape[0], 1, dtype=dtype, device=x.device)
    if n == 1:
        return ones
    powers = B.cat([ones, x.unsqueeze(1).expand(-1, n - 1).to(dtype)], 1).cumprod(1)
    return powers if increasing else powers.flip(1)


def inner(input, other, *, out=None):
    if input.dim() == 0 or other.dim() == 0:
        return _finish(input * other, False, out)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return _finish(B.tensordot(input, other, ([-1], [-1])), False, out, "inner", (input, other))


def dist(input, other, p=2):
    return _vector_norm(input - other, p)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Rescale each slice along `dim` whose p-norm exceeds maxnorm to norm maxnorm (the 1e-7
    keeps PyTorch's rounding: factor = maxnorm / (norm + 1e-7))."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")
    dim = _wrap_dim(dim, input.dim())
    reduce = [d for d in builtins.range(input.dim()) if d != dim]
    norm = _vector_norm(input, p, reduce, True)
    factor = B.where(norm > maxnorm, maxnorm / (norm + 1e-7), B.ones_like(norm))
    return _finish(input * factor, False, out, "renorm")


def _renorm_(self, p, dim, maxnorm):
    with _no_grad_guard():
        result = renorm(self.detach(), p, dim, maxnorm)
    if self.requires_grad or result.requires_grad:
        return self.copy_(renorm(self.clone(), p, dim, maxnorm))
    return self.copy_(result)


# ---- histograms and membership (not differentiable in PyTorch either) -------------------------
def _bin_edges(values, bins, bounds, dtype, name):
    """One dim's bin edges: a given 1-D tensor, or `bins` equal bins over `bounds` (default
    the data's min and max, [0, 1] for no data; an empty range widens to +-0.5, as NumPy
    does)."""
    if isinstance(bins, Tensor):
        if bins.dim() != 1:
            raise RuntimeError(f"{name}: bins tensor should have one dimension, but got "
                               f"{bins.dim()} dimensions")
        return bins.detach().to(dtype)
    if bins <= 0:
        raise RuntimeError(f"{name}(): bins must be > 0, but got {bins} for dimension 0")
    if bounds is not None:
        lo, hi = float(bounds[0]), float(bounds[1])
    elif values.size:
        lo, hi = float(values.min()), float(values.max())
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"{name}: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise RuntimeError(f"{name}(): max must be larger than min")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return B.linspace(lo, hi, bins + 1, dtype=dtype)


def _histogramdd(input, bins, bounds, weight, density, name):
    """Counts of the rows of `input` (..., D) per D-dimensional bin, and each dim's edges.
    A value x lands in bin i of its dim when edges[i] <= x < edges[i+1] (the last bin also
    holds its right edge), as PyTorch's kernel decides after its linear guess and local
    search; rows outside any dim's edges are not counted."""
    if input.dim() < 2:
        if input.dim() == 0 and isinstance(bins, int):  # PyTorch reads input.size(-1) first
            raise IndexError("Dimension specified as -1 but tensor has no dimensions")
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    # bin counts run a kernel built for float and double; given bin edges, any floating dtype
    counted = not isinstance(bins, Tensor) and (
        isinstance(bins, int) or any(not isinstance(b, Tensor) for b in bins))
    if not input.is_floating_point() or (counted and input.dtype in (D.float16, D.bfloat16)):
        from .._aten.elementwise import not_implemented
        raise not_implemented("histogramdd", input.dtype)
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"{name}: if weight tensor is provided it should have the same "
                           f"shape as the input tensor excluding its innermost dimension")
    d = input.shape[-1]
    data = _as_numpy(input.reshape(math.prod(input.shape[:-1]), d))
    bins = [bins] * d if isinstance(bins, (int, Tensor)) else list(bins)
    if len(bins) != d:
        raise RuntimeError(f"{name}: The size of bins must be equal to the innermost dimension "
                           f"of the input.")
    if bounds is not None and len(bounds) != 2 * d:
        raise RuntimeError(f"{name}: for a {d}-dimensional histogram range should have "
                           f"{2 * d} elements, but got {len(bounds)}")
    edges = [_bin_edges(data[:, k], bins[k], None if bounds is None else
                        bounds[2 * k:2 * k + 2], input.dtype, name) for k in builtins.range(d)]
    keep = np.ones(len(data), dtype=bool)
    cells = []
    for k, e in enumerate(edges):
        e = _as_numpy(e)
        idx = np.searchsorted(e, data[:, k], side="right") - 1
        idx[data[:, k] == e[-1]] = len(e) - 2
        keep &= (idx >= 0) & (idx < len(e) - 1)
        cells.append(np.clip(idx, 0, max(len(e) - 2, 0)))
    shape = tuple(len(e) - 1 for e in edges)
    flat = np.ravel_multi_index(cells, shape)[keep] if data.size else np.zeros(0, np.int64)
    w = None if weight is None else _as_numpy(weight.reshape(-1))[keep]
    counts = np.bincount(flat, weights=w, minlength=int(np.prod(shape))).astype(np.float64)
    counts = counts.reshape(shape)
    if density:
        volume = np.ones(shape)
        for k, e in enumerate(edges):
            width = np.diff(_as_numpy(e).astype(np.float64))
            volume = volume * width.reshape([-1 if j == k else 1 for j in builtins.range(d)])
        counts = counts / (counts.sum() * volume)
    return B.tensor(counts, dtype=input.dtype), [e.clone() for e in edges]


def _as_numpy(t):
    """`t`'s values as an array (bfloat16, which NumPy lacks, as the float32 values it holds)."""
    t = t.detach()
    return (t.float() if t.dtype is D.bfloat16 else t).numpy(force=True)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """Counts of `input`'s elements per bin and the bin edges (histogramdd of one dim)."""
    if not input.is_floating_point():
        from .._aten.elementwise import not_implemented
        raise not_implemented("histogram_cpu" if isinstance(bins, Tensor) else "histogramdd",
                              input.dtype)
    if weight is not None and weight.shape != input.shape:
        raise RuntimeError("torch.histogram: if weight tensor is provided, it should have the "
                           "same shape as the input tensor")
    hist, edges = _histogramdd(input.reshape(-1, 1), bins, range,
                               None if weight is None else weight.reshape(-1), density,
                               "torch.histogram")
    return _finish_tuple("histogram", ["hist", "bin_edges"], (hist, edges[0]), out)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    hist, edges = _histogramdd(input, bins, range, weight, density, "histogramdd")
    return _finish_tuple("histogramdd", ["hist", "bin_edges"], (hist, tuple(edges)))


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one of:\n"
            " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool "
            "invert = False, Tensor out = None)\n"
            " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool "
            "invert = False, Tensor out = None)\n"
            " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool "
            "invert = False, Tensor out = None)\n")
    a = elements.detach() if isinstance(elements, Tensor) else B.tensor(elements)
    b = test_elements.detach() if isinstance(test_elements, Tensor) else B.tensor(test_elements)
    for given, t in ((elements, a), (test_elements, b)):
        if t.dtype is D.bool or t.dtype.is_complex:  # a Python complex counts as complex128
            dt = D.complex128 if isinstance(given, complex) else t.dtype
            raise RuntimeError(f"Unsupported input type encountered for isin(): "
                               f"{_scalar_type_name(dt)}")
    if a.is_meta or b.is_meta:   # one bool per element, without values to compare
        return _finish(B.empty(a.shape, dtype=D.bool, device="meta"), False, out, "isin", (a, b))
    # PyTorch compares in result_type (a Python number, and a 0-dim tensor beside a dimensioned
    # one, do not widen the other side). Its elementwise kernel, taken for few test elements
    # (a number is compared with eq), has no barebones unsigned version; its sort-based one does.
    common = D.result_type_of((elements, test_elements))
    if common in D.barebones_unsigned and isinstance(test_elements, Tensor) and \
            b.numel() < 10.0 * a.numel() ** 0.145:
        from .._aten.elementwise import not_implemented
        raise not_implemented("isin_default_cpu", common)
    found = np.isin(_values(a.to(common)), _values(b.to(common)), invert=invert)
    return _finish(B.tensor(np.asarray(found), dtype=D.bool, device=a.device), False, out,
                   "isin", (a, b))


def _values(t):
    """The array of `t`'s values; a Tensor subclass (a BatchedTensor under vmap) is read
    through numpy(), which it refuses, so that the call runs per example."""
    t = resolved_values(t)
    return t._np if type(t) is Tensor else t.numpy()


def unravel_index(indices, shape):
    if indices.is_floating_point() or indices.is_complex() or indices.dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got "
                        f"{type(shape)}")
    for s in shape:
        if not isinstance(s, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(s)}")
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    strides = list(itertools.accumulate(reversed(list(shape[1:]) + [1]), lambda a, b: a * b))
    strides = B.tensor(strides[::-1], dtype=D.int64)
    coords = indices.unsqueeze(-1).floor_divide(strides) % B.tensor(list(shape), dtype=D.int64)
    return coords.unbind(-1)


def nonzero_static(input, *, size, fill_value=-1, out=None):
    if out is not None:
        return _finish(nonzero_static(input, size=size, fill_value=fill_value), False, out,
                       "nonzero_static", (input,))
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"{size} instead")
    # the first `size` nonzero positions, in order, by a stable sort that puts them first
    # (no op whose shape depends on the values, so it batches under vmap)
    shape = tuple(input.shape)
    flat = (input != 0).reshape(-1)
    n = flat.shape[0]
    order = B.argsort((~flat).to(D.int64), stable=True)
    if size > n:
        order = B.cat([order, B.zeros(size - n, dtype=D.int64)])
    order = order[:size]
    valid = B.arange(size) < flat.sum()
    coords, stride = [], 1
    for dim in reversed(shape):
        dim = max(dim, 1)   # no element: every row is fill_value anyway
        coords.append(order.div(stride, rounding_mode="floor") % dim)
        stride *= dim
    found = B.stack(coords[::-1], -1) if shape else B.zeros(size, 0, dtype=D.int64)
    return B.where(valid.unsqueeze(-1), found, B.full((), fill_value, dtype=D.int64))


# ---- factories ----------------------------------------------------------------------------------
def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning, stacklevel=_user_stacklevel())
    if end is None:
        raise TypeError("range() missing required argument 'end' (pos 2)")
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dtype = dtype or (out.dtype if out is not None else D.get_default_dtype())
    if dtype.is_complex or dtype is D.bool:
        from .._aten.elementwise import not_implemented
        raise not_implemented("range_cpu", dtype)
    values = start + np.arange(n, dtype=np.float64) * step
    result = B.tensor(values, dtype=dtype, device=device)
    return range_out(result, out, requires_grad)


def _window_start(name, window_length, periodic, dtype, layout, device):
    """Validate a window call; returns (n, dtype) with n the length computed (one more than
    asked for a periodic window, whose last sample is then dropped)."""
    if layout is sparse_coo:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: "
                           f"layout=Sparse, dtype={dtype or D.get_default_dtype()}")
    dtype = dtype or D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    return (window_length + 1 if periodic else window_length), dtype


def _window_finish(window, window_length, periodic, requires_grad):
    if periodic:
        window = window.narrow(0, 0, window_length).clone()
    return _finish(window, requires_grad)


def _window_overloads(name, window_length, given):
    """PyTorch's window overloads take (n), (n, periodic), (n, periodic, alpha), (n, periodic,
    alpha, beta): a later parameter, even by keyword, needs every earlier one."""
    present = [v is not None for _, v in given]
    last = builtins.max((i for i, p in enumerate(present) if p), default=-1)
    if all(present[:last + 1]):
        return
    got = ", ".join([type(window_length).__name__] +
                    [f"{k}={type(v).__name__}" for k, v in given if v is not None])
    params = ", ".join(f"{'bool' if k == 'periodic' else 'float'} {k}" for k, _ in given)
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                    f"expected one of: the overloads (int window_length) to (int window_length, "
                    f"{params})")


def _step(value, dtype):
    """A window's step as a zero-dim tensor of the window's dtype: PyTorch's window functions
    round it to a float16/bfloat16 dtype before multiplying (a Python float would be read in
    float32 by mul)."""
    return B.tensor(value, dtype=dtype)


def hamming_window(window_length, periodic=None, alpha=None, beta=None, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    _window_overloads("hamming_window", window_length,
                      [("periodic", periodic), ("alpha", alpha), ("beta", beta)])
    periodic = True if periodic is None else periodic
    alpha = 0.54 if alpha is None else alpha
    beta = 0.46 if beta is None else beta
    n, dtype = _window_start("hamming_window", window_length, periodic, dtype, layout, device)
    if window_length <= 1:
        return _finish(B.ones(window_length, dtype=dtype, device=device), requires_grad)
    w = (B.arange(n, dtype=dtype, device=device) * _step(2 * math.pi / (n - 1), dtype)).cos()
    return _window_finish(w * -beta + alpha, window_length, periodic, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    _window_start("hann_window", window_length, periodic, dtype, layout, device)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    n, dtype = _window_start("bartlett_window", window_length, periodic, dtype, layout, device)
    if window_length <= 1:
        return _finish(B.ones(window_length, dtype=dtype, device=device), requires_grad)
    w = B.arange(n, dtype=dtype, device=device) * _step(2.0 / (n - 1), dtype)
    half = ((n - 1) >> 1) + 1
    w = B.cat([w.narrow(0, 0, half), 2 - w.narrow(0, half, n - half)])
    return _window_finish(w, window_length, periodic, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    n, dtype = _window_start("blackman_window", window_length, periodic, dtype, layout, device)
    if window_length <= 1:
        return _finish(B.ones(window_length, dtype=dtype, device=device), requires_grad)
    w = B.arange(n, dtype=dtype, device=device) * _step(math.pi / (n - 1), dtype)
    w = (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _window_finish(w, window_length, periodic, requires_grad)


def kaiser_window(window_length, periodic=None, beta=None, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    _window_overloads("kaiser_window", window_length, [("periodic", periodic), ("beta", beta)])
    periodic = True if periodic is None else periodic
    beta = 12.0 if beta is None else beta
    n, dtype = _window_start("kaiser_window", window_length, periodic, dtype, layout, device)
    if window_length <= 1:
        return _finish(B.ones(window_length, dtype=dtype, device=device), requires_grad)
    alpha = (n - 1) / 2.0
    k = np.arange(n, dtype=np.float64)
    w = np.i0(beta * np.sqrt(np.clip(1 - ((k - alpha) / alpha) ** 2, 0, None))) / np.i0(beta)
    return _window_finish(B.tensor(w, dtype=dtype, device=device), window_length, periodic,
                          requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing memory with an object of the buffer protocol."""
    try:
        length = len(memoryview(buffer).cast("B"))
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    itemsize = dtype.itemsize
    if count < 0 and (length - offset) % itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                         f"bytes) must be a multiple of element size ({itemsize})")
    count = (length - offset) // itemsize if count < 0 else count
    if offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    raw = np.frombuffer(buffer, dtype=np.uint8, count=count * itemsize, offset=offset)
    if not raw.flags.writeable:
        warn_once("The given buffer is not writable, and PyTorch does not support "
                  "non-writable tensors. This means you can write to the underlying "
                  "(supposedly non-writable) buffer using the tensor. You may want to copy "
                  "the buffer to protect its data or make it writable before converting it "
                  "to a tensor. This type of warning will be suppressed for the rest of "
                  "this program.")
    result = B.from_numpy(raw).view(dtype)
    return _finish(result, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    size, order = list(size), list(physical_layout)
    if len(order) != len(size):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    for k, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(size) - 1}, but got {d} at index {k}).  NB: negative dims "
                               f"not currently supported; file an issue if you want it.")
        if d in order[:k]:
            raise RuntimeError("Duplicate dim not allowed")
    physical = B.empty([size[d] for d in order], dtype=dtype, device=device)
    inverse = [order.index(d) for d in builtins.range(len(size))]
    return _finish(physical.permute(inverse), requires_grad)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       requires_grad=False, pin_memory=False):
    return B.empty_strided(size, stride, dtype=dtype or self.dtype,
                           device=device or self.device, requires_grad=requires_grad)


# ---- splits and index_put as functions ------------------------------------------------------
def split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


def _not_views(pieces):
    """The unsafe_* splits' pieces share the input's memory but, as PyTorch's, are neither
    views of it for autograd nor share its version counter: one of them may be written in
    place (a piece of a function returning several views may not), and that does not make the
    others, saved for backward, out of date."""
    from .._core.storage import UntypedStorage
    for piece in pieces:
        piece._base = None
        storage = piece._storage_()   # the same bytes under a storage with its own version
        if storage._array is not None:
            piece._storage = UntypedStorage._adopt(storage._array, piece._device)
    return pieces


def unsafe_split(tensor, split_size_or_sections, dim=0):
    return _not_views(B.split(tensor, split_size_or_sections, dim))


def unsafe_chunk(input, chunks, dim=0):
    return _not_views(B.chunk(input, chunks, dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _not_views(split_with_sizes(input, split_sizes, dim))


def index_put(input, indices, values, accumulate=False):
    return input.index_put(indices, values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    return input.index_put_(indices, values, accumulate)


_METHODS = dict(
    diff=diff, cov=lambda s, *, correction=1, fweights=None, aweights=None: cov(
        s, correction=correction, fweights=fweights, aweights=aweights),
    corrcoef=corrcoef, diagflat=diagflat, histogram=histogram, renorm=renorm,
    renorm_=_renorm_, dist=dist, inner=inner, new_empty_strided=_new_empty_strided,
    split_with_sizes=split_with_sizes, unsafe_split=unsafe_split, unsafe_chunk=unsafe_chunk,
    unsafe_split_with_sizes=unsafe_split_with_sizes,
    nonzero_static=lambda s, *, size, fill_value=-1: nonzero_static(
        s, size=size, fill_value=fill_value),
)
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
