"""Reduction kernels (CPU and Meta): sum, mean, prod, amax/amin, max/min with indices,
argmax/argmin, var/std with correction, logsumexp, all/any.

`dim` follows PyTorch: None or [] means every dimension, negative dims wrap, a repeated dim is
an error. Integer sums accumulate in int64 as in PyTorch; float16/bfloat16 accumulate in float32.
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import _wrap, _meta, _wrap_dim


def reduce_dims(shape, dim, name="sum"):
    """Normalised tuple of reduced dims (None or [] -> all)."""
    n = len(shape)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(n))
    if isinstance(dim, int):
        dim = (dim,)
    out = []
    for d in dim:
        w = _wrap_dim(d, n)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.append(w)
    # a 0-d tensor accepts dim 0 (or -1) and has nothing to reduce over
    return tuple(out) if n else ()


def reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _acc_np(dt):
    if dt is D.float16 or dt is D.bfloat16:
        return np.float32
    return None


def _sum_dtype(dt, dtype):
    if dtype is not None:
        return dtype
    if dt is D.bool or not (dt.is_floating_point or dt.is_complex):
        return D.int64
    return dt


def _meta_reduce(self, dims, keepdim, dt):
    return _meta(reduced_shape(self._size, dims, keepdim), dt, device=self._device)


@impl("sum.dim_IntList", "CPU")
def sum_(self, dim=None, keepdim=False, dtype=None):
    dims = reduce_dims(self._size, dim)
    out_dt = _sum_dtype(self.dtype, dtype)
    acc = _acc_np(out_dt) or out_dt._np
    a = self._np
    r = np.sum(a, axis=dims, keepdims=keepdim, dtype=acc)
    return _wrap(np.asarray(r).astype(out_dt._np, copy=False))


@impl("sum.dim_IntList", "Meta")
def sum_meta(self, dim=None, keepdim=False, dtype=None):
    return _meta_reduce(self, reduce_dims(self._size, dim), keepdim, _sum_dtype(self.dtype, dtype))


def _mean_dtype(self, dtype, name="mean"):
    dt = dtype or self.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {_name(dt)}")
    return dt


def _name(dt):
    from .elementwise import _scalar_type_name
    return _scalar_type_name(dt)


@impl("mean.dim", "CPU")
def mean(self, dim=None, keepdim=False, dtype=None):
    dt = _mean_dtype(self, dtype)
    dims = reduce_dims(self._size, dim)
    acc = _acc_np(dt) or dt._np
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.mean(self._np, axis=dims, keepdims=keepdim, dtype=acc)
    return _wrap(np.asarray(r).astype(dt._np, copy=False))


@impl("mean.dim", "Meta")
def mean_meta(self, dim=None, keepdim=False, dtype=None):
    return _meta_reduce(self, reduce_dims(self._size, dim), keepdim, _mean_dtype(self, dtype))


@impl("prod.dim_int", "CPU")
def prod(self, dim=None, keepdim=False, dtype=None):
    dims = reduce_dims(self._size, dim)
    out_dt = _sum_dtype(self.dtype, dtype)
    r = np.prod(self._np, axis=dims, keepdims=keepdim, dtype=_acc_np(out_dt) or out_dt._np)
    return _wrap(np.asarray(r).astype(out_dt._np, copy=False))


@impl("prod.dim_int", "Meta")
def prod_meta(self, dim=None, keepdim=False, dtype=None):
    return _meta_reduce(self, reduce_dims(self._size, dim), keepdim, _sum_dtype(self.dtype, dtype))


def _check_nonempty(self, dim, dims, name):
    """A reduction without identity (amax, ...) of an empty tensor is an error."""
    if not dim:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if self._size[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _minmax(ufunc, name):
    def cpu(self, dim=(), keepdim=False):
        dims = reduce_dims(self._size, dim)
        if self.numel() == 0:
            _check_nonempty(self, dim, dims, name)
        return _wrap(np.asarray(ufunc.reduce(self._np, axis=dims, keepdims=keepdim)))

    def meta(self, dim=(), keepdim=False):
        dims = reduce_dims(self._size, dim)
        if 0 in self._size:
            _check_nonempty(self, dim, dims, name)
        return _meta_reduce(self, dims, keepdim, self.dtype)
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


# np.maximum/minimum propagate NaN like PyTorch's amax/amin
_minmax(np.maximum, "amax")
_minmax(np.minimum, "amin")


def _check_arg_reduce(self, dim, name):
    """PyTorch's checks for argmax/argmin and max/min along a dim."""
    if self.numel() == 0:
        if dim is None:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        d = _wrap_dim(dim, self.dim())
        if self.dim() and self._size[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _arg_reduce(self, dim, keepdim, fn, name):
    if self.dtype is D.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    _check_arg_reduce(self, dim, name)
    a = self._np
    if dim is None:
        idx = np.asarray(_nan_aware(fn, a.reshape(-1), 0))
        return idx.reshape((1,) * a.ndim) if keepdim else idx
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return np.zeros((), dtype=np.int64)
    if a.size == 0:
        return np.zeros(reduced_shape(a.shape, (d,), keepdim), dtype=np.int64)
    idx = _nan_aware(fn, a, d)
    return np.expand_dims(idx, d) if keepdim else idx


def _nan_aware(fn, a, axis):
    # PyTorch treats NaN as the extreme value: the first NaN wins
    if a.dtype.kind == "f" or a.dtype.kind == "V":
        nan = np.isnan(a)
        if nan.any():
            return np.where(nan.any(axis=axis), np.argmax(nan, axis=axis), fn(a, axis=axis))
    return fn(a, axis=axis)


def _with_indices(fn, name):
    def cpu(self, dim, keepdim=False):
        a = self._np
        _check_arg_reduce(self, dim, name.split(".")[0])
        if a.ndim == 0:
            return _wrap(a.copy()), _wrap(np.zeros((), np.int64))
        d = _wrap_dim(dim, a.ndim)
        if a.size == 0:
            shape = reduced_shape(a.shape, (d,), keepdim)
            return _wrap(np.zeros(shape, a.dtype)), _wrap(np.zeros(shape, np.int64))
        idx = _nan_aware(fn, a, d)
        values = np.take_along_axis(a, np.expand_dims(idx, d), d)
        if not keepdim:
            values = np.squeeze(values, d)
            return _wrap(values), _wrap(idx.astype(np.int64, copy=False))
        return _wrap(values), _wrap(np.expand_dims(idx, d).astype(np.int64, copy=False))

    def meta(self, dim, keepdim=False):
        d = _wrap_dim(dim, self.dim())
        shape = reduced_shape(self._size, (d,), keepdim)
        return (_meta(shape, self.dtype, device=self._device),
                _meta(shape, D.int64, device=self._device))
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


_with_indices(np.argmax, "max.dim")
_with_indices(np.argmin, "min.dim")


def _argfn(fn, name):
    def cpu(self, dim=None, keepdim=False):
        return _wrap(np.asarray(_arg_reduce(self, dim, keepdim, fn, name), dtype=np.int64))

    def meta(self, dim=None, keepdim=False):
        dims = reduce_dims(self._size, dim)
        return _meta_reduce(self, dims, keepdim, D.int64)
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


_argfn(np.argmax, "argmax")
_argfn(np.argmin, "argmin")


def _var(self, dim, correction, keepdim):
    """Sum of squared deviations / max(N - correction, 0), accumulated in float64.

    As in PyTorch, a divisor of 0 is not an error: the result is nan (0/0) or inf.
    """
    dims = reduce_dims(self._size, dim)
    dt = _mean_dtype(self, None, "var")
    a = self._np.astype(np.float64)
    n = 1
    for d in dims:
        n *= self._size[d]
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = a - np.mean(a, axis=dims, keepdims=True)
        sq = np.sum(dev * dev, axis=dims, keepdims=keepdim)
        r = np.true_divide(sq, max(n - (1 if correction is None else correction), 0))
    return np.asarray(r), dt.to_real()


@impl("var.correction", "CPU")
def var(self, dim=None, correction=None, keepdim=False):
    r, dt = _var(self, dim, correction, keepdim)
    return _wrap(r.astype(dt._np))


@impl("std.correction", "CPU")
def std(self, dim=None, correction=None, keepdim=False):
    r, dt = _var(self, dim, correction, keepdim)
    return _wrap(np.sqrt(r).astype(dt._np))


for _n in ("var.correction", "std.correction"):
    impl(_n, "Meta")(lambda self, dim=None, correction=None, keepdim=False: _meta_reduce(
        self, reduce_dims(self._size, dim), keepdim, _mean_dtype(self, None).to_real()))


def _logsumexp_dtype(dt):
    return dt if dt.is_floating_point or dt.is_complex else D.get_default_dtype()


@impl("logsumexp", "CPU")
def logsumexp(self, dim, keepdim=False):
    """max + log(sum(exp(x - max))): the largest term is exp(0), so nothing overflows."""
    dims = reduce_dims(self._size, dim)
    dt = _logsumexp_dtype(self.dtype)
    a = self._np.astype(_acc_np(dt) or dt._np, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        if a.size == 0:
            r = np.log(np.sum(np.exp(a), axis=dims, keepdims=keepdim))
        else:
            m = np.max(a, axis=dims, keepdims=True)
            m = np.where(np.isfinite(m), m, 0)
            r = np.log(np.sum(np.exp(a - m), axis=dims, keepdims=True)) + m
            if not keepdim:
                r = np.squeeze(r, axis=dims)
    return _wrap(np.asarray(r).astype(dt._np, copy=False))


@impl("logsumexp", "Meta")
def logsumexp_meta(self, dim, keepdim=False):
    return _meta_reduce(self, reduce_dims(self._size, dim), keepdim,
                        _logsumexp_dtype(self.dtype))


def _logical_reduce(ufunc, name):
    def cpu(self, dim=None, keepdim=False):
        dims = reduce_dims(self._size, dim)
        r = ufunc.reduce(self._np.astype(bool, copy=False), axis=dims, keepdims=keepdim)
        out = np.asarray(r)
        return _wrap(out.astype(np.uint8) if self.dtype is D.uint8 else out)

    def meta(self, dim=None, keepdim=False):
        return _meta_reduce(self, reduce_dims(self._size, dim), keepdim,
                            D.uint8 if self.dtype is D.uint8 else D.bool)
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


_logical_reduce(np.logical_and, "all.dims")
_logical_reduce(np.logical_or, "any.dims")
