"""Composite reductions (PyTorch's _refs role): var_mean, std_mean, norms, quantiles, argsort,
nanmean, written from ops."""
import builtins
import math

from .._core import dtype as D
from .._core.tensor import Tensor, _wrap_dim
from .._dispatch.dispatcher import impl, lookup as _op
from .._aten.elementwise import _scalar_type_name
from .._aten.reduction import _check_var_dtype
from .._bindings.overloads import _dims
from .._bindings.overloads import _var_args
from .._bindings.factories import full_like
from .. import _refs as B   # the package's functions, used at call time
from .._bindings.factories import scalar_tensor
from .._bindings.generated import (sum, amax, amin, ceil, floor, gather, isnan, lerp, logical_not,
                                   nansum, transpose)
from .._refs.shape import movedim, reshape
from .._bindings.out import _call_with_out, _finish
from .._bindings.overloads import where, sort, round
from .._bindings.codegen import numpy_names

_mean = _op("mean.dim")
_std = _op("std.correction")
_var = _op("var.correction")
_var_mean = _op("var_mean.correction")


@numpy_names
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _check_var_dtype(input, "var_mean")
    d, c, k = _var_args(dim, unbiased, keepdim, correction)
    return _var_mean(input, d, c, k)


@numpy_names
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _check_var_dtype(input, "std_mean")
    d, c, k = _var_args(dim, unbiased, keepdim, correction)
    if input.dtype is D.complex32:  # (mean has no complex32 kernel; var_mean's mean has)
        return _std(input, d, c, k), _var_mean(input, d, c, k)[1]
    return _std(input, d, c, k), _mean(input, d, k, None)


# reductions and scans
def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """linalg.vector_norm."""
    return _finish(_op("linalg_vector_norm")(x, ord, _dims(dim), keepdim, dtype), False, out,
                   "linalg_vector_norm", (x,))


def _matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """linalg.matrix_norm: 'fro' is the vector 2-norm of the entries; 1/-1 (inf/-inf) the
    max/min over columns (rows) of the absolute column (row) sums; 2/-2 and 'nuc' the
    largest/smallest and summed singular values."""
    # PyTorch checks the order first, then A and dim
    if ord not in ("fro", "nuc") if isinstance(ord, str) else \
            builtins.abs(ord) not in (1, 2, math.inf):
        shown = ord if isinstance(ord, str) else f"{float(ord):g}"   # as C++ prints a double
        raise RuntimeError(f"linalg.matrix_norm: Order {shown} not supported.")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim)) if isinstance(dim, (tuple, list)) else dim}")
    d0, d1 = (_wrap_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if ord == "fro":
        return _finish(_vector_norm(A, 2, [d0, d1], keepdim, dtype=dtype), False, out,
                       "linalg_matrix_norm", (A,))
    if ord in ("nuc", 2, -2):
        s = _op("linalg_svdvals")(movedim(A if dtype is None else A.to(dtype), (d0, d1),
                                          (-2, -1)), None)
        r = s.sum(-1) if ord == "nuc" else _norm_max(s, -1, False) if ord == 2 else s.amin(-1)
        if keepdim:
            r = r.unsqueeze(builtins.min(d0, d1)).unsqueeze(builtins.max(d0, d1))
        return _finish(r, False, out, "linalg_matrix_norm", (A,))
    if builtins.abs(ord) == math.inf:
        d0, d1 = d1, d0
    sums = _vector_norm(A, 1, [d0], keepdim, dtype=dtype)
    d1 = d1 - 1 if not keepdim and d0 < d1 else d1
    return _finish((_norm_max if ord > 0 else amin)(sums, d1, keepdim), False, out,
                   "linalg_matrix_norm", (A,))


def _norm_max(x, dim, keepdim):
    """The largest of some norms, 0 for none: PyTorch gives an empty matrix's norm as new zeros,
    outside the graph (no gradient)."""
    if x.shape[dim] == 0:
        shape = list(x.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return x.new_zeros(shape)
    return amax(x, dim, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector norm of the entries (over `dim`), or a matrix norm for 'nuc'."""
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return _vector_norm(input, 2, dims, keepdim, dtype=dtype, out=out)
        dims = list(range(input.dim())) if dims is None else dims
        return _matrix_norm(input, p, dims, keepdim, dtype=dtype, out=out)
    return _vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype, out=out)


@numpy_names
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean of the non-NaN elements: nansum over their count."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex) and dtype is None:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_scalar_type_name(input.dtype)}")
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return _finish(nansum(input, dim, keepdim, dtype=dtype) / count, False, out, "nanmean")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    """PyTorch's quantile: sort, turn q into fractional ranks, gather the values on each side
    and interpolate -- composite, so the gradient flows through sort, gather and lerp."""
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (D.float32, D.float64):
        # nanquantile's check is quantile's, message included
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = scalar_tensor(q, dtype=input.dtype, device=input.device)
    if q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if q.dtype is not input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    # checked on the CPU only, as PyTorch does (elsewhere it would need the values)
    if q.device.type == "cpu" and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        values = sort(reshape(input, (-1,))).values
        shape = (1,) * input.dim() if keepdim else ()
    else:
        d = _wrap_dim(dim, input.dim())
        values = sort(transpose(input.unsqueeze(-1), d, -1)).values
        shape = input._size[:d] + ((1,) if keepdim else ()) + input._size[d + 1:] \
            if input.dim() else ()
    values = reshape(values, tuple(shape) + (values.shape[-1],))
    if ignore_nan:
        ranks = q * (sum(logical_not(isnan(values)), -1, True) - 1)
        ranks = where(ranks < 0, 0.0, ranks)
    else:
        last = values.shape[-1] - 1
        ranks = where(isnan(values).any(-1, True), float(last), q * last)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": floor, "higher": ceil, "nearest": round}[interpolation](ranks)
    below = ranks.long()
    result = gather(values, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        result = lerp(result, gather(values, -1, ceil(ranks).long()), weights)
    return result.squeeze(-1) if q.dim() == 0 else movedim(result, -1, 0)


@numpy_names
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _call_with_out(_op("quantile"), out, input, q, dim, keepdim, interpolation,
                          name="quantile")


@numpy_names
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _call_with_out(_op("nanquantile"), out, input, q, dim, keepdim, interpolation,
                          name="nanquantile")


impl("quantile", "CompositeImplicitAutograd")(
    lambda input, q, dim, keepdim, interpolation:
    _quantile(input, q, dim, keepdim, interpolation, False, "quantile"))
impl("nanquantile", "CompositeImplicitAutograd")(
    lambda input, q, dim, keepdim, interpolation:
    _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile"))


@numpy_names
def argsort(input, dim=-1, descending=False, stable=False):
    return _op("sort.stable")(input, stable, dim, descending)[1]


def msort(input, *, out=None):
    return _finish(sort(input, 0).values, False, out, "msort")


METHODS = dict(norm=norm, quantile=quantile, nanquantile=nanquantile, nanmean=nanmean,
               argsort=argsort, msort=msort)

__all__ = ["argsort", "msort", "nanmean", "nanquantile", "norm", "quantile", "std_mean",
           "var_mean"]


# ---- segment_reduce: reductions over consecutive segments of one dim
# Note [segment_reduce as a masked reduction]
# Segment j of row b (the leading dims before `axis`) covers positions offsets[b, j] up to
# offsets[b, j + 1] of `axis`. A (segments x positions) membership mask, broadcast against the
# data, picks each segment's elements; the others become the reduction's identity, and one
# ordinary reduction over the position dim gives every segment at once -- differentiable
# through where and the reduction. `initial` takes part as one more element (the mean still
# divides by the segment's length), and an empty segment is `initial`, else the identity
# (the mean's is NaN).
#
# Max, min and prod take PyTorch's gradients, which are not those of amax/amin/prod: an
# element gets the max's gradient if it equals the result or is NaN (shared evenly when
# several do), and prod's gradient at an element is the product of the segment's others
# times `initial` (so a NaN or zero element gets a finite one). Those outputs are the
# detached value plus a zero-valued term, sum(weight * (x - x.detach())), whose gradient
# is exactly those weights.
_SEGMENT_IDENTITY = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf"),
                     "mean": 0.0}


@impl("segment_reduce", "CompositeImplicitAutograd")
def _segment_reduce(data, reduce, lengths=None, indices=None, offsets=None, axis=0,
                    unsafe=False, initial=None):
    if reduce not in _SEGMENT_IDENTITY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = _wrap_dim(axis, data.dim())
    segments, kind = (lengths, "lengths") if lengths is not None else (offsets, "offsets")
    if axis != segments.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {kind} "
                           f"but got {axis}.")
    if not unsafe and lengths is not None:
        if int(lengths.min()) < 0:
            raise RuntimeError("lengths contains negative value!")
        if not bool((lengths.sum(-1) == data.shape[axis]).all()):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                               "sum to data.size(lengths.dim()-1) when !unsafe.")
    if offsets is None:
        zero = lengths.new_zeros(tuple(lengths.shape[:-1]) + (1,))
        offsets = B.cumsum(B.cat([zero, lengths], -1), -1)
    n = data.shape[axis]
    position = B.arange(n, device=data.device)                       # (N,)
    start, end = offsets[..., :-1, None], offsets[..., 1:, None]     # (..., J, 1)
    member = (position >= start) & (position < end)                  # (..., J, N)
    trailing = data.dim() - axis - 1
    member = member.reshape(tuple(member.shape) + (1,) * trailing)   # (..., J, N, 1...)
    picked = B.where(member, data.unsqueeze(axis), _SEGMENT_IDENTITY[reduce])
    count = member.sum(axis + 1)
    if reduce in ("sum", "mean"):
        out = picked.sum(axis + 1)
    elif reduce == "prod":
        out = picked.prod(axis + 1)
    else:
        out = getattr(picked, "amax" if reduce == "max" else "amin")(axis + 1)
    if reduce in ("max", "min", "prod") and picked.requires_grad:
        return _segment_with_kernel_grad(data, reduce, member, picked, out, axis, initial)
    if initial is not None:
        if reduce == "max":
            out = B.clamp_min(out, initial)
        elif reduce == "min":
            out = B.clamp_max(out, initial)
        else:
            out = out * initial if reduce == "prod" else out + initial
        if reduce == "mean":
            out = B.where(count > 0, out / count.clamp_min(1), float(initial))
    elif reduce == "mean":
        out = out / count
    return out.to(data.dtype)


def _segment_with_kernel_grad(data, reduce, member, picked, out, axis, initial):
    """max/min/prod of segment_reduce with PyTorch's gradients (Note [segment_reduce as a
    masked reduction])."""
    picked, out = picked.detach(), out.detach()
    if reduce == "prod":
        if initial is not None:
            out = out * initial
        # the product of the others: exclusive prefix times exclusive suffix products
        pos = axis + 1
        ones = B.ones_like(picked.narrow(pos, 0, 1))
        before = B.cat([ones, picked.narrow(pos, 0, picked.shape[pos] - 1)], pos).cumprod(pos)
        after = B.cat([picked.narrow(pos, 1, picked.shape[pos] - 1), ones], pos)
        after = after.flip(pos).cumprod(pos).flip(pos)
        others = before * after * (1 if initial is None else initial)
        weight = B.where((picked == 0) | B.isnan(picked), others, out.unsqueeze(pos) / picked)
    else:
        if initial is not None:
            out = (B.clamp_min if reduce == "max" else B.clamp_max)(out, initial)
        hit = member & (B.isnan(picked) | (picked == out.unsqueeze(axis + 1)))
        ties = hit.sum(axis + 1, keepdim=True)
        weight = hit / B.where(ties > 1, ties, 1)  # shared evenly only among ties
    weight = B.where(member, weight, 0).to(data.dtype)  # a NaN weight elsewhere would leak
    shift = B.where(member, data.unsqueeze(axis) - data.detach().unsqueeze(axis), 0)
    return (out + (shift * weight).sum(axis + 1)).to(data.dtype)
