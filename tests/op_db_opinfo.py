"""The op test table's rows for the ops PyTorch's own OpInfo database names and ember added so
that it imports (tests/test_opinfo_fixes.py): the batch-norm entry points _native_batch_norm_legit
(with and without running statistics) and _batch_norm_with_update, native_dropout_backward,
_safe_softmax, aten.copy, _upsample_bilinear2d_aa, _chunk_cat, the masked-index pair,
segment_reduce and hash_tensor.

Same conventions as op_db.py, which appends these rows to its OPS. Arguments that are lists of
tensors are assembled by the row's op from separate tensor arguments.
"""
import numpy as np

from op_db import ALL, FLOATS, ErrorInput, OpInfo, Sample, T, f32, make

HALF_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


def aten(name):
    def op(m, *args, **kwargs):
        return getattr(m.ops.aten, name)(*args, **kwargs)
    op.__name__ = name
    return op


def _stats(rng, c, dtype):
    return (make(rng, (c,), dtype, grad=False), make(rng, (c,), dtype, low=0.5, high=2, grad=False))


def _bn_samples(with_stats, training_flag=True):
    def samples(dtype, rng):
        out = []
        # torch's _batch_norm_with_update cannot run backward without weight: it is always given
        unaffine = with_stats and not training_flag
        for shape, affine, training in (((4, 3), True, True), ((2, 3, 4, 2), unaffine, True),
                                        ((3, 2, 3), True, False)):
            c = shape[1]
            wb = (make(rng, (c,), dtype), make(rng, (c,), dtype)) if affine else (None, None)
            stats = _stats(rng, c, dtype) if with_stats else ()
            flag = (training,) if training_flag else ()
            if not training and not (with_stats and training_flag):
                continue   # evaluation needs running statistics (torch crashes without them)
            out.append(Sample(make(rng, shape, dtype), *wb, *stats, *flag, 0.3, 1e-3))
        return out
    return samples


def _dropout_backward_samples(dtype, rng):
    mask = T(rng.random((3, 4)) > 0.4, "bool", grad=False)
    return [Sample(make(rng, (3, 4), dtype), mask, 2.0),
            Sample(make(rng, (3, 4), dtype, "transposed"), mask, 1.0 / 0.6)]


def _with_minus_inf(rng, shape, dtype, rows):
    data = make(rng, shape, dtype).data.copy()
    if dtype in FLOATS:
        for r in rows:
            data[r] = -np.inf
    return T(data, dtype)


def _safe_softmax_samples(dtype, rng):
    return [Sample(_with_minus_inf(rng, (4, 5), dtype, [1, 3]), -1),
            Sample(_with_minus_inf(rng, (3, 4), dtype, [(slice(None), 2)]), 0),
            Sample(_with_minus_inf(rng, (2, 3, 4), dtype, [(0, 1)]), 2, dtype=None),
            Sample(make(rng, (3, 4), dtype), 1)]


def _copy_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype)),
            Sample(make(rng, (3, 4), dtype), make(rng, (4,), dtype)),
            Sample(make(rng, (4, 3), dtype, "transposed"), make(rng, (1, 3), "float64")),
            Sample(make(rng, (2, 3), dtype), make(rng, (2, 3), "int64", grad=False))]


def _upsample_aa_samples(dtype, rng):
    x = make(rng, (2, 3, 8, 6), dtype)
    return [Sample(x, [4, 3], False), Sample(x, [3, 5], True), Sample(x, [12, 9], False),
            Sample(make(rng, (1, 2, 5, 5), dtype), [2, 2], False, 0.4, 0.4)]


def _upsample_aa_vec_samples(dtype, rng):
    x = make(rng, (2, 3, 8, 6), dtype)
    return [Sample(x, [4, 3], False, None), Sample(x, None, True, [0.6, 1.5])]


def _chunk_cat_samples(dtype, rng):
    return [Sample(make(rng, (5,), dtype), make(rng, (3,), dtype), 0, 2),
            Sample(make(rng, (2, 5), dtype), make(rng, (2, 3), dtype), -1, 3),
            Sample(make(rng, (2, 3, 2), dtype), make(rng, (2, 3), dtype), 1, 2)]


def _chunk_cat_errors():
    return [ErrorInput(f32(2, 3), f32(3, 3), 1, 2, match="same sizes of 0"),
            ErrorInput(f32(2), f32(3), 0, 0, match="positive num_chunks")]


def _masked_index_samples(dtype, rng):
    x = make(rng, (2, 3), dtype)
    idx = T(np.array([0, 1, 2]), "int64", grad=False)   # in range: torch does not clamp in backward
    mask = T(np.array([True, False, True]), "bool", grad=False)
    return [Sample(x, mask, idx, -1.0), Sample(x, mask, idx, 0)]


def _masked_put_samples(dtype, rng):
    mask = T(np.array([True, False, True, True]), "bool", grad=False)
    idx = T(np.array([0, 1, 2, 0]), "int64", grad=False)
    return [Sample(make(rng, (3,), dtype), mask, idx, make(rng, (4,), dtype))]


def _segment_samples(dtype, rng):
    out = []
    cases = (((5,), 0, [0, 1, 2, 2]), ((5,), 0, [2, 0, 3, 0]), ((5, 3), 0, [1, 2, 0, 2]),
             ((3, 5), 1, [[2, 0, 3, 0], [0, 1, 2, 2], [3, 0, 2, 0]]))
    for (shape, axis, lengths), reduce, initial in (
            (c, r, i) for c in cases for r in ("sum", "mean", "max", "min", "prod")
            for i in (None, 2)):
        lengths = np.array(lengths)
        out.append(Sample(make(rng, shape, dtype), reduce, lengths=T(lengths, "int64", grad=False),
                          axis=axis, initial=initial))
    offsets = T(np.array([0, 2, 2, 5]), "int64", grad=False)
    out.append(Sample(make(rng, (5,), dtype), "sum", offsets=offsets))
    return out


def _segment_errors():
    return [ErrorInput(f32(5), "sum", lengths=T(np.array([1, 1]), "int64", grad=False),
                       match="sum to data.size")]


def _hash_samples(dtype, rng):
    x = make(rng, (3, 4), dtype)
    return [Sample(x), Sample(x, 1, keepdim=True), Sample(x, [0, 1]),
            Sample(make(rng, (4, 3), dtype, "transposed"), 0)]


OPINFO_OPS = [
    OpInfo("aten._native_batch_norm_legit", aten("_native_batch_norm_legit"), FLOATS,
           _bn_samples(True), tol=HALF_TOL),
    OpInfo("_native_batch_norm_legit.no_stats",
           lambda m, *args: m._native_batch_norm_legit(*args), FLOATS, _bn_samples(False),
           tol=HALF_TOL),
    OpInfo("aten._batch_norm_with_update", aten("_batch_norm_with_update"), FLOATS,
           _bn_samples(True, training_flag=False), tol=HALF_TOL),
    OpInfo("aten.native_dropout_backward", aten("native_dropout_backward"), FLOATS,
           _dropout_backward_samples, other_dtypes_raise=False),
    OpInfo("aten._safe_softmax", aten("_safe_softmax"), FLOATS, _safe_softmax_samples,
           tol=HALF_TOL),
    # torch has no derivative for aten.copy, _chunk_cat or native_dropout_backward (ember's
    # composites have theirs); the values are compared
    OpInfo("aten.copy", aten("copy"), FLOATS, _copy_samples, grad=False,
           other_dtypes_raise=False),
    # torch's antialiased kernel has no float16/bfloat16 CPU version (ember's has: not checked)
    OpInfo("aten._upsample_bilinear2d_aa", aten("_upsample_bilinear2d_aa"),
           ("uint8", "float32", "float64"), _upsample_aa_samples, gradcheck=False,
           other_dtypes_raise=False),
    OpInfo("aten._upsample_bilinear2d_aa.vec",
           lambda m, *a: m.ops.aten._upsample_bilinear2d_aa.vec(*a),
           ("float32", "float64"), _upsample_aa_vec_samples, gradcheck=False,
           other_dtypes_raise=False),
    OpInfo("_chunk_cat", lambda m, a, b, dim, n: m._chunk_cat([a, b], dim, n), ALL,
           _chunk_cat_samples, errors=_chunk_cat_errors, grad=False),
    OpInfo("aten._unsafe_masked_index",
           lambda m, x, mask, idx, fill: m.ops.aten._unsafe_masked_index(x, mask, [None, idx],
                                                                         fill),
           FLOATS, _masked_index_samples, other_dtypes_raise=False),
    OpInfo("aten._unsafe_masked_index_put_accumulate",
           lambda m, x, mask, idx, v: m.ops.aten._unsafe_masked_index_put_accumulate(
               x, mask, [idx], v), FLOATS, _masked_put_samples, other_dtypes_raise=False),
    OpInfo("segment_reduce", lambda m, *args, **kwargs: m.segment_reduce(*args, **kwargs),
           ("float32", "float64"), _segment_samples, errors=_segment_errors,
           other_dtypes_raise=False),
    OpInfo("hash_tensor", lambda m, *args, **kwargs: m.hash_tensor(*args, **kwargs), ALL,
           _hash_samples, grad=False),
]
