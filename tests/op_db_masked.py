"""The op test table's rows for torch.masked: every masked reduction and normalisation on random
masks (some with slices where every element is masked out), broadcast masks, no mask, every dim
spelling and keepdim; gradients against torch's and gradcheck on the samples where the result is
finite.

Same conventions as op_db.py, which appends these rows to its OPS. The mask is a bool tensor
argument, so it gets no gradient.
"""
import numpy as np

from op_db import ALL, NUMBERS, ErrorInput, OpInfo, Sample, T, f32, i64, make

REAL = ("float32", "float64")
WITH_INTS = ("int32", "int64") + REAL


def _mask(rng, shape, *, empty_slice=None, keep_each_row=False):
    """A random bool mask; `empty_slice` (an index) is masked out entirely, `keep_each_row`
    keeps at least one element of every last-dim row."""
    m = rng.random(shape) < 0.6
    if keep_each_row and m.ndim:
        m[..., 0] = True
    if empty_slice is not None:
        m[empty_slice] = False
    return T(m, "bool")


def _reduction_samples(*, dims="multi"):
    """Reductions: small finite samples first (gradcheck takes them), then fully masked-out
    slices, broadcast masks, no mask and non-contiguous inputs."""
    def samples(dtype, rng):
        x = lambda shape, layout="contiguous": make(rng, shape, dtype, layout)  # noqa: E731
        out = [Sample(x((3, 4)), 1, mask=_mask(rng, (3, 4), keep_each_row=True)),
               Sample(x((2, 5)), -1, keepdim=True, mask=_mask(rng, (2, 5),
                                                                     keep_each_row=True)),
               Sample(x((3, 4)), 1, mask=_mask(rng, (3, 4), empty_slice=1)),
               Sample(x((3, 4)), 0, mask=_mask(rng, (4,), empty_slice=2)),
               Sample(x((3, 4)), 0, mask=None),
               Sample(x((2, 3, 4), "transposed"), -1, keepdim=True,
                      mask=_mask(rng, (2, 3, 4), empty_slice=(1, 2))),
               Sample(x((5,)), 0, mask=T(np.zeros(5, bool), "bool"))]
        if dims == "multi":
            out += [Sample(x((2, 3, 4)), (0, 2), mask=_mask(rng, (2, 3, 4), empty_slice=(
                        slice(None), 1))),
                    Sample(x((2, 3, 4), "sliced"), mask=_mask(rng, (3, 1))),
                    Sample(x((3, 4)), None, keepdim=True, mask=_mask(rng, (3, 4))),
                    Sample(x(()), mask=T(np.array(True), "bool"))]
        elif dims == "optional":
            out += [Sample(x((3, 4)), mask=_mask(rng, (3, 4))),
                    Sample(x((2, 3)), None, keepdim=True, mask=_mask(rng, (2, 3)))]
        return out
    return samples


def _normalization_samples(dtype, rng):
    x = lambda shape, layout="contiguous": make(rng, shape, dtype, layout)  # noqa: E731
    return [Sample(x((3, 4)), 1, mask=_mask(rng, (3, 4), keep_each_row=True)),
            Sample(x((2, 5)), -1, mask=_mask(rng, (2, 5), keep_each_row=True)),
            Sample(x((3, 4)), 1, mask=_mask(rng, (3, 4), empty_slice=1)),
            Sample(x((3, 4)), 0, mask=_mask(rng, (4,), empty_slice=0)),
            Sample(x((3, 4)), 0, mask=None),
            Sample(x((2, 3, 4), "transposed"), 1, mask=_mask(rng, (2, 3, 4),
                                                             empty_slice=(0, slice(None), 3)))]


def _masked(name):
    return lambda m, x, *a, **kw: getattr(m.masked, name)(x, *a, **kw)


def _errors(name, *extra):
    def errors():
        out = [ErrorInput(f32(3, 4), 0, mask=T(np.ones((2, 3, 4), bool), "bool"),
                          match="broadcastable"),
               ErrorInput(f32(3, 4), 2, mask=T(np.ones((3, 4), bool), "bool"),
                          match="out of range")]
        return out + [e for e in extra]
    return errors


_TOL = {"float32": (1e-5, 1e-5)}

MASKED_OPS = [
    OpInfo("masked.sum", _masked("sum"), ALL, _reduction_samples(),
           other_dtypes_raise=False,
           errors=_errors("sum", ErrorInput(f32(3, 4), (0, 0), mask=None, match="multiple"))),
    OpInfo("masked.sum.dtype", lambda m, x, **kw: m.masked.sum(x, 1, dtype=m.float64, **kw),
           ("int32", "float32"),
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), mask=_mask(rng, (3, 4)))],
           other_dtypes_raise=False),
    OpInfo("masked.prod", _masked("prod"), ALL, _reduction_samples(),
           other_dtypes_raise=False, tol=_TOL, errors=_errors("prod")),
    OpInfo("masked.amax", _masked("amax"), WITH_INTS, _reduction_samples(),
           other_dtypes_raise=False, errors=_errors("amax")),
    OpInfo("masked.amin", _masked("amin"), WITH_INTS, _reduction_samples(),
           other_dtypes_raise=False, errors=_errors("amin")),
    OpInfo("masked.argmax", _masked("argmax"), WITH_INTS, _reduction_samples(dims="optional"),
           grad=False, other_dtypes_raise=False),
    OpInfo("masked.argmin", _masked("argmin"), WITH_INTS, _reduction_samples(dims="optional"),
           grad=False, other_dtypes_raise=False),
    OpInfo("masked.mean", _masked("mean"), REAL, _reduction_samples(), other_dtypes_raise=False,
           errors=_errors("mean", ErrorInput(i64(3, 4), 1, mask=None, match="floating"))),
    OpInfo("masked.median", _masked("median"), REAL, _reduction_samples(dims="single"),
           other_dtypes_raise=False, errors=_errors("median")),
    OpInfo("masked.median.int", _masked("median"), ("int64",),
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), 1,
                                      mask=_mask(rng, (3, 4), keep_each_row=True))],
           other_dtypes_raise=False,
           errors=lambda: [ErrorInput(i64(3, 4), 1, mask=T(np.zeros((3, 4), bool), "bool"),
                                      match="fully masked")]),
    OpInfo("masked.logsumexp", _masked("logsumexp"), REAL, _reduction_samples(),
           other_dtypes_raise=False, errors=_errors("logsumexp")),
    OpInfo("masked.norm", lambda m, x, *a, **kw: m.masked.norm(x, 2.0, *a, **kw), REAL,
           _reduction_samples(), other_dtypes_raise=False, tol=_TOL, errors=_errors("norm")),
    OpInfo("masked.norm.ord", lambda m, x, o, *a, **kw: m.masked.norm(x, o, *a, **kw), REAL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), o, 1,
                                      mask=_mask(rng, (3, 4), keep_each_row=True))
                               for o in (1.0, 3.0, float("inf"), float("-inf"))] +
           [Sample(make(rng, (3, 4), dtype), float("-inf"), 1,
                   mask=_mask(rng, (3, 4), empty_slice=0))],
           other_dtypes_raise=False, tol=_TOL),
    OpInfo("masked.var", _masked("var"), REAL, _reduction_samples(), other_dtypes_raise=False,
           tol=_TOL, errors=_errors("var", ErrorInput(f32(3, 4), 1, True, correction=1,
                                                      mask=None))),
    OpInfo("masked.var.correction", lambda m, x, **kw: m.masked.var(x, 1, **kw), REAL,
           lambda dtype, rng: [Sample(make(rng, (3, 5), dtype), unbiased=False,
                                      mask=_mask(rng, (3, 5), keep_each_row=True)),
                               Sample(make(rng, (3, 5), dtype), correction=2, keepdim=True,
                                      mask=_mask(rng, (3, 5), keep_each_row=True)),
                               Sample(make(rng, (3, 5), dtype), correction=0, mask=None)],
           other_dtypes_raise=False, tol=_TOL),
    OpInfo("masked.var.int", lambda m, x, **kw: m.masked.var(x, 1, **kw), ("int64",),
           lambda dtype, rng: [Sample(make(rng, (3, 5), dtype), mask=_mask(rng, (3, 5)))],
           other_dtypes_raise=False),
    OpInfo("masked.std", _masked("std"), REAL, _reduction_samples(), other_dtypes_raise=False,
           tol=_TOL, errors=_errors("std")),
    # bool raises in both (the scan keeps the input's dtype, and has no bool kernel)
    OpInfo("masked.cumsum", _masked("cumsum"), NUMBERS, _normalization_samples,
           errors=_errors("cumsum")),
    OpInfo("masked.cumprod", _masked("cumprod"), NUMBERS, _normalization_samples, tol=_TOL,
           errors=_errors("cumprod")),
    OpInfo("masked.softmax", _masked("softmax"), REAL, _normalization_samples,
           other_dtypes_raise=False, errors=_errors("softmax")),
    OpInfo("masked.softmax.dtype", lambda m, x, **kw: m.masked.softmax(x, 1, dtype=m.float64,
                                                                         **kw),
           ("float32",), lambda dtype, rng: [Sample(make(rng, (3, 4), dtype),
                                                    mask=_mask(rng, (3, 4)))],
           other_dtypes_raise=False),
    OpInfo("masked.log_softmax", _masked("log_softmax"), REAL, _normalization_samples,
           other_dtypes_raise=False, errors=_errors("log_softmax")),
    OpInfo("masked.softmin", _masked("softmin"), REAL, _normalization_samples,
           other_dtypes_raise=False, errors=_errors("softmin")),
    OpInfo("masked.normalize", lambda m, x, *a, **kw: m.masked.normalize(x, 2.0, *a, **kw),
           REAL, _normalization_samples, other_dtypes_raise=False, tol=_TOL,
           errors=_errors("normalize")),
    OpInfo("masked.normalize.ord", lambda m, x, **kw: m.masked.normalize(x, 1.0, 1, **kw),
           REAL, lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), eps=0.5,
                                            mask=_mask(rng, (3, 4), keep_each_row=True)),
                                     Sample(make(rng, (3, 4), dtype), mask=_mask(rng, (4,)))],
           other_dtypes_raise=False, tol=_TOL),
    # gradcheck sees only the unmasked sample (the masked ones have more than 20 elements): a
    # masked-out operand is -inf, where logaddexp's second derivative is NaN, in torch as well
    OpInfo("masked.logaddexp", lambda m, x, y, **kw: m.masked.logaddexp(x, y, **kw), REAL,
           lambda dtype, rng: [
               Sample(make(rng, (2, 3), dtype), make(rng, (2, 3), dtype), dtype=None),
               Sample(make(rng, (3, 7), dtype), make(rng, (3, 7), dtype),
                      input_mask=_mask(rng, (3, 7)), other_mask=_mask(rng, (3, 7))),
               Sample(make(rng, (3, 7), dtype), make(rng, (3, 7), dtype),
                      input_mask=_mask(rng, (7,))),
               Sample(make(rng, (3, 7), dtype), make(rng, (3, 7), dtype),
                      other_mask=_mask(rng, (3, 7)))],
           other_dtypes_raise=False),
]
