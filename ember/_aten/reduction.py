"""Reduction kernels (CPU and Meta): sum, mean, prod, amax/amin, max/min with indices,
argmax/argmin, var/std with correction, logsumexp, all/any; vector norms, nansum,
count_nonzero, aminmax, median/nanmedian/mode with indices; and the scans cumsum, cumprod,
cummax/cummin and logcumsumexp.

`dim` follows PyTorch: None or [] means every dimension, negative dims wrap, a repeated dim is
an error. Integer sums accumulate in int64 as in PyTorch; float16/bfloat16 accumulate in float32.
"""
import operator

import numpy as np

from .._core import dtype as D
from .._core import complex32 as _c32
from .._dispatch.dispatcher import impl
from .._core.tensor import _wrap as _wrap_array, _meta, _wrap_dim
from .tensor_iterator import laid_out_as


def _wrap(a):
    """A reduction's or scan's result as a tensor: contiguous whatever the input's layout (a
    channels_last or transposed input too), as PyTorch allocates these results."""
    if a.ndim > 1 and not a.flags.c_contiguous:
        a = laid_out_as(a, None)
    return _wrap_array(a)


def reduce_dims(shape, dim, name="sum"):
    """Normalised tuple of reduced dims (None or [] -> all)."""
    n = len(shape)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(n))
    if not isinstance(dim, (list, tuple)):
        dim = (operator.index(dim),)   # an int, or what stands for one (np.int64(1))
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


def _values(t):
    """t's array for NumPy to compute with: complex32 (which NumPy has no arithmetic of) as
    complex64, exactly."""
    return _c32.values(t._np)


def _no_complex32(dt, kernel):
    """PyTorch's CPU reductions have no ComplexHalf kernel (some convert it first: dtype=)."""
    if dt is D.complex32:
        from .elementwise import not_implemented
        raise not_implemented(kernel, dt)


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
    if out_dt is D.complex32:
        _no_complex32(out_dt, "sum_cpu")
    acc = _acc_np(out_dt) or out_dt._np
    a = self._np if self.dtype is not D.complex32 else _c32.widen(self._np)
    r = np.sum(a, axis=dims, keepdims=keepdim, dtype=acc)
    return _wrap(np.asarray(r).astype(out_dt._np, copy=False))


@impl("sum.dim_IntList", "Meta")
def sum_meta(self, dim=None, keepdim=False, dtype=None):
    return _meta_reduce(self, reduce_dims(self._size, dim), keepdim, _sum_dtype(self.dtype, dtype))


def _mean_dtype(self, dtype, name="mean"):
    dt = dtype or self.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}(): could not infer output dtype. "
                           f"{'Input' if dtype is None else 'Optional'} dtype must be either "
                           f"a floating point or complex dtype. Got: {_name(dt)}")
    return dt


def _name(dt):
    from .elementwise import _scalar_type_name
    return _scalar_type_name(dt)


@impl("mean.dim", "CPU")
def mean(self, dim=None, keepdim=False, dtype=None):
    dt = _mean_dtype(self, dtype)
    _no_complex32(dt, "sum_cpu")
    return _mean(self, dim, keepdim, dt)


def _mean(self, dim, keepdim, dt):
    dims = reduce_dims(self._size, dim)
    acc = np.complex64 if dt is D.complex32 else _acc_np(dt) or dt._np
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.mean(_values(self), axis=dims, keepdims=keepdim, dtype=acc)
    return _wrap(_c32.astype(np.asarray(r), dt._np))


@impl("mean.dim", "Meta")
def mean_meta(self, dim=None, keepdim=False, dtype=None):
    return _meta_reduce(self, reduce_dims(self._size, dim), keepdim, _mean_dtype(self, dtype))


@impl("prod.dim_int", "CPU")
def prod(self, dim=None, keepdim=False, dtype=None):
    dims = reduce_dims(self._size, dim)
    out_dt = _sum_dtype(self.dtype, dtype)
    _no_complex32(out_dt, "prod_out_cpu")
    r = np.prod(_values(self), axis=dims, keepdims=keepdim, dtype=_acc_np(out_dt) or out_dt._np)
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
_minmax(np.maximum, "max")  # max(self) and min(self): the full reductions, amax/amin over all
_minmax(np.minimum, "min")


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
        d = _wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return _wrap(a.copy()), _wrap(np.zeros((), np.int64))
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
    _check_var_dtype(self, "std and var")
    dt = self.dtype
    a = _values(self).astype(np.complex128 if self.dtype.is_complex else np.float64)
    n = 1
    for d in dims:
        n *= self._size[d]
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = a - np.mean(a, axis=dims, keepdims=True)
        sq = np.sum((dev * dev.conj()).real if a.dtype.kind == "c" else dev * dev, axis=dims,
                    keepdims=keepdim)
        r = np.true_divide(sq, max(n - (1 if correction is None else correction), 0))
    return np.asarray(r), dt.to_real()


@impl("var.correction", "CPU")
def var(self, dim=None, correction=None, keepdim=False):
    r, dt = _var(self, dim, correction, keepdim)
    return _wrap(r.astype(dt._np))


@impl("std.correction", "CPU")
def std(self, dim=None, correction=None, keepdim=False):
    r, dt = _var(self, dim, correction, keepdim)
    return _wrap(np.asarray(np.sqrt(r)).astype(dt._np))


@impl("var_mean.correction", "CPU")
def var_mean(self, dim=None, correction=None, keepdim=False):
    """One op (one VarMeanBackward0 node for both results), as PyTorch's."""
    # (its mean has a complex32 kernel, where mean's own sum has none)
    return var(self, dim, correction, keepdim), _mean(self, dim, keepdim, self.dtype)


@impl("var_mean.correction", "Meta")
def var_mean_meta(self, dim=None, correction=None, keepdim=False):
    return _var_meta(self, dim, correction, keepdim), mean_meta(self, dim, keepdim)


def _check_var_dtype(self, name):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def _var_meta(self, dim=None, correction=None, keepdim=False):
    _check_var_dtype(self, "std and var")
    return _meta_reduce(self, reduce_dims(self._size, dim), keepdim, self.dtype.to_real())


for _n in ("var.correction", "std.correction"):
    impl(_n, "Meta")(_var_meta)


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


def _logical_reduce_dims(shape, dim):
    """all/any differ from the other reductions on dim=[]: it reduces no dimension (PyTorch's
    all.dims/any.dims read an empty list as "none of them", sum/amax/mean as "all of them")."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        return ()
    return reduce_dims(shape, dim)


def _logical_reduce(ufunc, name):
    def cpu(self, dim=None, keepdim=False):
        dims = _logical_reduce_dims(self._size, dim)
        r = ufunc.reduce(_values(self).astype(bool, copy=False), axis=dims, keepdims=keepdim)
        out = np.asarray(r)
        return _wrap(out.astype(np.uint8) if self.dtype is D.uint8 else out)

    def meta(self, dim=None, keepdim=False):
        return _meta_reduce(self, _logical_reduce_dims(self._size, dim), keepdim,
                            D.uint8 if self.dtype is D.uint8 else D.bool)
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


_logical_reduce(np.logical_and, "all.dims")
_logical_reduce(np.logical_or, "any.dims")


# ---- norms ------------------------------------------------------------------------------------
def _norm_dtype(self, dtype):
    """linalg.vector_norm's checks; the dtype the input is converted to (and the result's)."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_name(self.dtype)}")
    if dtype is None:
        return self.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but "
                           f"got {_name(dtype)}")
    if D.promote_types(self.dtype, dtype) is not dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_name(self.dtype)}) "
                           f"should be convertible without narrowing to the specified dtype "
                           f"({_name(dtype)})")
    return dtype


def _check_norm_identity(self, ord, dims):
    """The inf norms are max/min reductions, and a negative power of an empty sum is 1/0:
    without an identity, so reducing nothing is an error."""
    if not (ord < 0 or ord == np.inf) or self.numel():
        return
    if len(dims) == self.dim():
        raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_name(ord)} norm on an "
                           f"empty tensor because the operation does not have an identity")
    for d in dims:
        if self._size[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_name(ord)} norm on "
                               f"the dimension {d}because this dimension is empty and the "
                               f"operation does not have an identity")


def _ord_name(ord):
    """ord as PyTorch prints a Scalar: -1.0 as -1."""
    return str(int(ord)) if np.isfinite(ord) and ord == int(ord) else str(ord)


@impl("linalg_vector_norm", "CPU")
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    """(sum |x|^ord)^(1/ord) over `dim`; ord inf/-inf is max/min |x|, ord 0 counts non-zeros.
    float16/bfloat16 accumulate in float32."""
    dt = _norm_dtype(self, dtype)
    dims = reduce_dims(self._size, dim)
    _check_norm_identity(self, ord, dims)
    acc = _acc_np(dt)
    if ord == 2 and acc is None and len(dims) == self.dim() and not dt.is_complex:
        # the whole-tensor 2-norm (gradient clipping's hot path) as one BLAS dot product
        x = self._np.astype(dt._np, copy=False).ravel()
        r = np.sqrt(np.dot(x, x))
        return _wrap(np.asarray(r).reshape((1,) * self.dim() if keepdim else ()))
    # (complex32: |x| of its complex64 values, in float32)
    a = np.abs(_values(self).astype(np.complex64 if dt is D.complex32 else dt._np, copy=False))
    if acc is not None:
        a = a.astype(acc)
    with np.errstate(all="ignore"):
        if ord == np.inf:  # (no reduced dim is empty: _check_norm_identity saw to it)
            r = np.max(a, axis=dims, keepdims=keepdim)
        elif ord == -np.inf:
            r = np.min(a, axis=dims, keepdims=keepdim)
        elif ord == 0:
            r = np.sum(a != 0, axis=dims, keepdims=keepdim, dtype=a.dtype)
        elif ord == 1:
            r = np.sum(a, axis=dims, keepdims=keepdim)
        elif ord == 2:
            r = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
        else:
            r = np.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
    return _wrap(np.asarray(r).astype(dt.to_real()._np, copy=False))


@impl("linalg_vector_norm", "Meta")
def linalg_vector_norm_meta(self, ord=2, dim=None, keepdim=False, dtype=None):
    dt = _norm_dtype(self, dtype)
    dims = reduce_dims(self._size, dim)
    _check_norm_identity(self, ord, dims)
    return _meta_reduce(self, dims, keepdim, dt.to_real())


# ---- reductions that skip NaN, count_nonzero, aminmax ----------------------------------------
@impl("nansum", "CPU")
def nansum(self, dim=None, keepdim=False, dtype=None):
    dims = reduce_dims(self._size, dim)
    out_dt = _sum_dtype(self.dtype, dtype)
    if self.dtype.is_floating_point and not out_dt.is_floating_point:
        if out_dt.is_complex:  # the float kernel, asked for a complex sum
            from .elementwise import not_implemented
            raise not_implemented("nansum_cpu", out_dt)
        # into an integral dtype= each element is cast (a NaN as zero), then summed
        a = np.where(np.isnan(self._np), 0, self._np).astype(out_dt._np)
        return _wrap(np.asarray(np.sum(a, axis=dims, keepdims=keepdim, dtype=out_dt._np)))
    # np.nansum only skips NaN in NumPy's own float types: bfloat16 is summed as float32
    a = self._np.astype(_acc_np(out_dt) or out_dt._np, copy=False)
    return _wrap(np.asarray(np.nansum(a, axis=dims, keepdims=keepdim)).astype(out_dt._np,
                                                                              copy=False))


impl("nansum", "Meta")(sum_meta)


@impl("count_nonzero.dim_IntList", "CPU")
def count_nonzero(self, dim):
    dims = reduce_dims(self._size, dim)
    return _wrap(np.asarray(np.count_nonzero(_values(self), axis=dims)).astype(np.int64))


@impl("count_nonzero.dim_IntList", "Meta")
def count_nonzero_meta(self, dim):
    return _meta_reduce(self, reduce_dims(self._size, dim), False, D.int64)


def _check_aminmax(self, dim):
    if dim is None:
        if self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        return tuple(range(self.dim()))
    d = _wrap_dim(dim, self.dim())
    if self.dim() and self._size[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    return (d,) if self.dim() else ()


@impl("aminmax", "CPU")
def aminmax(self, dim=None, keepdim=False):
    dims = _check_aminmax(self, dim)
    a = self._np  # np.minimum/maximum propagate NaN, as PyTorch does
    return (_wrap(np.asarray(np.minimum.reduce(a, axis=dims, keepdims=keepdim))),
            _wrap(np.asarray(np.maximum.reduce(a, axis=dims, keepdims=keepdim))))


@impl("aminmax", "Meta")
def aminmax_meta(self, dim=None, keepdim=False):
    dims = _check_aminmax(self, dim)
    return (_meta_reduce(self, dims, keepdim, self.dtype),
            _meta_reduce(self, dims, keepdim, self.dtype))


# ---- median, mode: order statistics along a dim -----------------------------------------------
def _sortable(a):
    """`a` as an array NumPy sorts and compares natively (bfloat16 as float32, exactly)."""
    return a.astype(np.float32) if a.dtype == D.bfloat16._np else a


def _check_selection_dtype(self, kernel):
    if self.dtype is D.bool:
        from .elementwise import not_implemented
        raise not_implemented(kernel, self.dtype)


def _check_nonempty_dim(self, d, name):
    if self.dim() and self._size[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _median_last(a, ignore_nan):
    """Lower medians along the last axis and their indices.

    The index is the median's position in a stable sort (PyTorch breaks ties by index). A row
    with a NaN has median NaN at its first NaN, unless NaNs are ignored (nanmedian), which
    takes the median of the rest (and the first NaN of an all-NaN row).
    """
    s = _sortable(a)
    n = a.shape[-1]
    order = np.argsort(s, axis=-1, kind="stable")  # NaNs sort last, in order
    nan = np.isnan(s) if s.dtype.kind == "f" else None
    if ignore_nan and nan is not None:
        k = np.maximum((n - nan.sum(-1) - 1) // 2, 0)
    else:
        k = np.full(a.shape[:-1], (n - 1) // 2)
    idx = np.take_along_axis(order, k[..., None], -1)[..., 0]
    if not ignore_nan and nan is not None:
        idx = np.where(nan.any(-1), np.argmax(nan, -1), idx)
    return np.take_along_axis(a, idx[..., None], -1)[..., 0], idx


def _median_kernels(name, ignore_nan):
    def full(self):
        _check_selection_dtype(self, "median_cpu")   # (nanmedian's kernel too)
        a = self._np.reshape(-1)
        if a.size == 0:  # PyTorch fills a NaN (cast to the dtype)
            with np.errstate(invalid="ignore"):
                return _wrap(np.array(np.nan).astype(a.dtype))
        return _wrap(np.asarray(_median_last(a, ignore_nan)[0]))

    def by_dim(self, dim, keepdim=False):
        d = _wrap_dim(dim, self.dim())
        _check_selection_dtype(self, "median_out")
        _check_nonempty_dim(self, d, name)
        a = self._np
        if a.ndim == 0:
            return _wrap(a.copy()), _wrap(np.zeros((), np.int64))
        values, idx = _median_last(np.moveaxis(a, d, -1), ignore_nan)
        if keepdim:
            values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
        return _wrap(np.array(values, order="C")), _wrap(np.array(idx, np.int64, order="C"))

    def full_meta(self):   # (no dtype check: PyTorch's Meta kernels have none)
        return _meta((), self.dtype, device=self._device)

    impl(name, "CPU")(full)
    impl(name, "Meta")(full_meta)
    impl(f"{name}.dim", "CPU")(by_dim)
    impl(f"{name}.dim", "Meta")(_values_indices_meta(name))


def _values_indices_meta(name, kernel=None):
    """Meta kernel of a (values, indices) reduction along one dim (`kernel`: the name in the
    error for bool input, which only ops without a bool kernel give)."""
    def meta(self, dim=-1, keepdim=False):
        if kernel is not None:
            _check_selection_dtype(self, kernel)
        d = _wrap_dim(dim, self.dim())
        _check_nonempty_dim(self, d, name)
        shape = reduced_shape(self._size, (d,) if self.dim() else (), keepdim)
        return _meta(shape, self.dtype, device=self._device), \
            _meta(shape, D.int64, device=self._device)
    return meta


_median_kernels("median", ignore_nan=False)
_median_kernels("nanmedian", ignore_nan=True)


def _mode_last(a):
    """The most frequent value along the last axis (the smallest of equally frequent ones)
    and the index of its last occurrence.

    In a stable sort equal values form runs, in index order: each position knows where its
    run starts and ends, so the run length is end - start + 1, and the first longest run is
    the smallest mode; its last element is the mode's last occurrence.
    """
    s = _sortable(a)
    n = a.shape[-1]
    order = np.argsort(s, axis=-1, kind="stable")
    v = np.take_along_axis(s, order, -1)
    pos = np.arange(n)
    differs = v[..., 1:] != v[..., :-1]
    edge = np.ones(a.shape[:-1] + (1,), dtype=bool)
    starts = np.concatenate([edge, differs], -1)
    ends = np.concatenate([differs, edge], -1)
    start = np.maximum.accumulate(np.where(starts, pos, 0), -1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(ends, pos, n - 1), -1), -1), -1)
    best = np.argmax(end - start, -1)[..., None]
    idx = np.take_along_axis(order, np.take_along_axis(end, best, -1), -1)[..., 0]
    return np.take_along_axis(a, idx[..., None], -1)[..., 0], idx


@impl("mode", "CPU")
def mode(self, dim=-1, keepdim=False):
    d = _wrap_dim(dim, self.dim())
    _check_nonempty_dim(self, d, "mode")
    a = self._np
    if a.ndim == 0:
        return _wrap(a.copy()), _wrap(np.zeros((), np.int64))
    if a.size == 0:
        shape = reduced_shape(a.shape, (d,), keepdim)
        return _wrap(np.zeros(shape, a.dtype)), _wrap(np.zeros(shape, np.int64))
    values, idx = _mode_last(np.moveaxis(a, d, -1))
    if keepdim:
        values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
    return _wrap(np.array(values, order="C")), _wrap(np.array(idx, np.int64, order="C"))


impl("mode", "Meta")(_values_indices_meta("mode"))


# ---- scans: cumsum, cumprod, cummax/cummin, logcumsumexp ---------------------------------------
def _scan_acc(dt):
    """The accumulator of PyTorch's CPU scans (acc_type): float32 for float16/bfloat16, float64
    for float32, int64 for integers; each output is rounded from it."""
    if dt is D.float16 or dt is D.bfloat16:
        return np.float32
    if dt is D.float32:
        return np.float64
    return dt._np


def _scan(self, dim, out_dt, ufunc):
    d = _wrap_dim(dim, self.dim())
    a = self._np.astype(_scan_acc(out_dt), copy=False)
    if a.ndim == 0:
        return a.astype(out_dt._np)
    with np.errstate(over="ignore", invalid="ignore"):
        return ufunc.accumulate(a, axis=d).astype(out_dt._np, copy=False)


def _cumulative(name, ufunc):
    def out_dtype(self, dtype):
        dt = _sum_dtype(self.dtype, dtype)
        if dt is D.bool and self.dim():  # no bool kernel (a 0-d scan is a copy)
            from .elementwise import not_implemented
            raise not_implemented(f"{name}_out_cpu", dt)
        _no_complex32(dt, f"{name}_out_cpu")
        return dt

    def cpu(self, dim, dtype=None):
        return _wrap(_scan(self, dim, out_dtype(self, dtype), ufunc))

    def meta(self, dim, dtype=None):
        _wrap_dim(dim, self.dim())
        return _meta(self._size, out_dtype(self, dtype), device=self._device)

    def check_inplace(self, dtype):
        if dtype is not None and dtype is not self.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype "
                               f"{D.c_type_name(self.dtype)} and output tensor dtype "
                               f"{D.c_type_name(dtype)} should match")
        out_dtype(self, self.dtype)

    def cpu_(self, dim, dtype=None):
        check_inplace(self, dtype)
        np.copyto(self._np, _scan(self, dim, self.dtype, ufunc))
        return self

    def meta_(self, dim, dtype=None):
        check_inplace(self, dtype)
        _wrap_dim(dim, self.dim())
        return self
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)
    impl(f"{name}_", "CPU")(cpu_)
    impl(f"{name}_", "Meta")(meta_)


_c_name = D.c_type_name


_cumulative("cumsum", np.add)
_cumulative("cumprod", np.multiply)


def _cum_extreme(name, ufunc):
    """cummax/cummin: the running extreme and the index where it was last reached.

    Position j reaches the running extreme when x[j] equals it (a later equal value takes
    over, as in PyTorch) or is NaN (NaN, once seen, is the extreme); the index at i is the
    last such j <= i, a running maximum of those positions.
    """
    def cpu(self, dim):
        d = _wrap_dim(dim, self.dim())
        a = self._np
        if a.ndim == 0:
            return _wrap(a.copy()), _wrap(np.zeros((), np.int64))
        s = _sortable(a)
        reached = s == ufunc.accumulate(s, axis=d)
        if s.dtype.kind == "f":
            reached |= np.isnan(s)
        pos = np.arange(a.shape[d]).reshape((-1,) + (1,) * (a.ndim - d - 1))
        idx = np.maximum.accumulate(np.where(reached, pos, 0), axis=d)
        return _wrap(np.take_along_axis(a, idx, d)), _wrap(idx.astype(np.int64, copy=False))

    def meta(self, dim):
        _wrap_dim(dim, self.dim())
        return _meta(self._size, self.dtype, device=self._device), \
            _meta(self._size, D.int64, device=self._device)
    impl(name, "CPU")(cpu)
    impl(name, "Meta")(meta)


_cum_extreme("cummax", np.maximum)
_cum_extreme("cummin", np.minimum)


def _check_logcumsumexp(self):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        from .elementwise import not_implemented
        raise not_implemented("logcumsumexp_out_cpu", self.dtype)


@impl("logcumsumexp", "CPU")
def logcumsumexp(self, dim):
    """log(cumsum(exp(x))) as a running log-add-exp, in float64 (nothing overflows)."""
    _check_logcumsumexp(self)
    d = _wrap_dim(dim, self.dim())
    if self.dtype.is_complex:
        return _wrap(_complex_logcumsumexp(self._np.astype(np.complex128), d)
                     .astype(self.dtype._np))
    a = self._np.astype(np.float64)
    if a.ndim:
        with np.errstate(invalid="ignore"):  # -inf + inf
            a = np.logaddexp.accumulate(a, axis=d)
    return _wrap(a.astype(self.dtype._np))


def _complex_logcumsumexp(a, d):
    """The running log-add-exp of complex numbers, one step along d at a time, from -inf + 0j
    (PyTorch's scan starts there too, so a leading -inf + bj reads -inf + 0j)."""
    out = np.moveaxis(a.copy(), d, 0) if a.ndim else a.reshape(1)
    acc = np.full(out.shape[1:], complex(-np.inf, 0.0))
    for i in range(out.shape[0]):
        acc = out[i] = _complex_log_add_exp(out[i], acc)
    return np.moveaxis(out, 0, d) if a.ndim else out.reshape(())


def _complex_log_add_exp(x, y):
    """log(exp(x) + exp(y)) as PyTorch's complex scan step takes it: log1p(exp(min - max)) + max
    with min/max by real part (the phase of the larger term is kept exactly, not wrapped); a NaN
    anywhere gives nan + nanj; two -inf real parts give the smaller term, two +inf real parts
    log(exp(x) + exp(y))."""
    with np.errstate(all="ignore"):
        x_smaller = x.real < y.real
        lo, hi = np.where(x_smaller, x, y), np.where(x_smaller, y, x)
        r = np.log1p(np.exp(lo - hi)) + hi
        both_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
        r = np.where(both_inf, np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi))), r)
        nan = np.isnan(x.real) | np.isnan(x.imag) | np.isnan(y.real) | np.isnan(y.imag)
        return np.where(nan, complex(np.nan, np.nan), r)


@impl("logcumsumexp", "Meta")
def logcumsumexp_meta(self, dim):
    _check_logcumsumexp(self)
    _wrap_dim(dim, self.dim())
    return _meta(self._size, self.dtype, device=self._device)


# ---- hash_tensor: the xor of every element's bits, each element widened to 64 bits first (a
# float to float64, an integer or bool to int64), as a uint64 -- a cheap fingerprint of a tensor
def _hash_dims(self, dim):
    if self.numel() == 0 and not dim:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    dims = reduce_dims(self._size, dim)
    for d in dims:
        if self._size[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    if self.dtype.is_complex:
        from .elementwise import not_implemented
        raise not_implemented("xor_sum_cpu", self.dtype)
    return dims


@impl("hash_tensor", "CPU")
def hash_tensor(self, dim=(), keepdim=False, mode=0):
    dims = _hash_dims(self, dim)
    a = self._np
    wide = a.astype(np.float64) if self.dtype.is_floating_point else a.astype(np.int64)
    r = np.bitwise_xor.reduce(wide.view(np.uint64), axis=dims, keepdims=keepdim)
    return _wrap(np.asarray(r, dtype=np.uint64))


@impl("hash_tensor", "Meta")
def hash_tensor_meta(self, dim=(), keepdim=False, mode=0):
    return _meta_reduce(self, _hash_dims(self, dim), keepdim, D.uint64)
