"""The op test table's rows for indexing and scatter ops (index_add, index_fill, masked_fill,
scatter and its reductions, masked_scatter, index_copy, put, take, nonzero), the in-place view
ops (t_, transpose_, squeeze_, ...), resize_, roll, poisson, fractional max pooling and
grid_sample(mode='bicubic').

Same conventions as op_db.py, which appends these rows to its OPS. The first two samples of
each row are small (<= 20 elements per tensor) and free of ties and zeros, so gradcheck and
gradgradcheck see a differentiable point; later samples add ties, zeros and repeated indices.
"""
import numpy as np

from op_db import (ALL, FLOATS, NUMBERS, ErrorInput, OpInfo, Sample, T, f32, f64, i64, make,
                   boolean)


def _index(rng, shape, high, unique_along=None):
    """An int64 index tensor with values in [0, high); with `unique_along`, no value repeats
    along that dim (a permutation prefix), which scatter needs for a deterministic result."""
    if unique_along is None:
        return T(rng.integers(0, high, shape), "int64", grad=False)
    d = unique_along
    moved = list(shape)
    n = moved.pop(d)
    rows = [rng.permutation(high)[:n] for _ in range(int(np.prod(moved)))]
    data = np.array(rows).reshape(moved + [n])
    return T(np.moveaxis(data, -1, d), "int64", grad=False)


def _scatter_reduce_samples(reduce):
    def samples(dtype, rng):
        out = []
        for include_self in (True, False):
            out.append(Sample(make(rng, (3, 4), dtype), 0, _index(rng, (3, 4), 3),
                              make(rng, (3, 4), dtype), reduce, include_self=include_self))
        out += [Sample(make(rng, (4, 5), dtype, "transposed"), 1, _index(rng, (3, 5), 5),
                       make(rng, (3, 6), dtype), reduce),
                Sample(make(rng, (5,), dtype), 0, _index(rng, (7,), 5),
                       make(rng, (8,), dtype, "sliced"), reduce, include_self=False),
                Sample(make(rng, (), dtype), 0, T(np.zeros(2, np.int64), "int64"),
                       make(rng, (2,), dtype), reduce)]
        if dtype in ("float32", "float64"):
            # ties with self and between sources, and zeros: amax/amin share, prod divides
            x = T(np.array([[0., 2., 2.], [1., 0., 3.]], dtype), dtype)
            src = T(np.array([[2., 0., 2.], [2., 0., 3.]], dtype), dtype)
            idx = T(np.array([[0, 0, 0], [0, 0, 1]]), "int64")
            out += [Sample(x, 1, idx, src, reduce), Sample(x, 1, idx, src, reduce,
                                                             include_self=False)]
        return out
    return samples


def _scatter_reduce_errors():
    return [ErrorInput(f32(3, 4), 0, i64(2, 4, low=0, high=2), f32(2, 4), "add",
                       match="sum, prod, mean, amax or amin"),
            ErrorInput(f32(3, 4), 0, i64(2, 4, low=0, high=2), f64(2, 4), "sum",
                       match="dtype"),
            ErrorInput(f32(3, 4), 0, T(np.array([[0, 5]]), "int64"), f32(1, 2), "sum",
                       match="out of bounds"),
            ErrorInput(f32(3, 4), 0, i64(2, 4, 1, low=0, high=2), f32(2, 4, 1), "sum",
                       match="same number of dimensions"),
            ErrorInput(boolean(3), 0, T(np.zeros(2, np.int64), "int64"), boolean(2), "mean",
                       match="not implemented")]


def _legacy_scatter_samples(value):
    def samples(dtype, rng):
        def src(shape):
            return 2 if value else make(rng, shape, dtype)
        return [Sample(make(rng, (3, 4), dtype), 0, _index(rng, (2, 4), 3), src((2, 4)),
                       reduce="add"),
                Sample(make(rng, (3, 4), dtype), 1, _index(rng, (3, 3), 4), src((3, 3)),
                       reduce="multiply"),
                Sample(make(rng, (4, 3), dtype, "transposed"), -1, _index(rng, (4, 5), 3),
                       src((4, 5)), reduce="add")]
    return samples


def _masked_scatter_samples(dtype, rng):
    def mask(shape):
        return T(rng.random(shape) < 0.5, "bool", grad=False)
    return [Sample(make(rng, (3, 4), dtype), mask((3, 4)), make(rng, (12,), dtype)),
            Sample(make(rng, (3, 4), dtype), mask((4,)), make(rng, (4, 5), dtype)),
            Sample(make(rng, (4,), dtype), mask((2, 3, 4)), make(rng, (30,), dtype)),
            Sample(make(rng, (5, 3), dtype, "transposed"), mask((5, 3)),
                   make(rng, (20,), dtype, "sliced"))]


def _masked_scatter_inplace_samples(dtype, rng):
    return [s for s in _masked_scatter_samples(dtype, rng) if len(s.args[0].data.shape) >=
            len(s.args[1].data.shape)]


def _masked_scatter_errors():
    return [ErrorInput(f32(3, 4), T(np.ones(4, np.uint8), "uint8"), f32(12), match="boolean"),
            ErrorInput(f32(3, 4), boolean(3, 4), f64(12), match="same dtypes"),
            ErrorInput(f32(3, 4), T(np.ones((3, 4), bool), "bool"), f32(11), match="source"),
            ErrorInput(f32(3, 4), boolean(5), f32(20), match="size")]


def _index_copy_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), 0, T(np.array([2, 0]), "int64"),
                   make(rng, (2, 4), dtype)),
            Sample(make(rng, (3, 4), dtype), -1, T(np.array([3, 1, 0]), "int64"),
                   make(rng, (3, 3), dtype)),
            Sample(make(rng, (4, 5, 2), dtype, "transposed"), 1, _index(rng, (4,), 5, 0),
                   make(rng, (4, 4, 2), dtype, "sliced")),
            Sample(make(rng, (5,), dtype), 0, T(np.array(3), "int64"), make(rng, (), dtype)),
            Sample(make(rng, (), dtype), 0, T(np.array([0]), "int64"), make(rng, (), dtype))]


def _index_copy_errors():
    return [ErrorInput(f32(3, 4), 0, T(np.array([0, 1], np.int32), "int32"), f32(2, 4),
                       match="long tensor"),
            ErrorInput(f32(3, 4), 0, T(np.array([0, 5]), "int64"), f32(2, 4),
                       match="out of bounds"),
            ErrorInput(f32(3, 4), 0, T(np.array([0, 1]), "int64"), f32(2, 3),
                       match="slice shapes"),
            ErrorInput(f32(3, 4), 0, T(np.array([0, 1]), "int64"), f32(3, 4),
                       match="Number of indices"),
            ErrorInput(f32(3, 4), 0, T(np.array([0, 1]), "int64"), f64(2, 4), match="dtype"),
            ErrorInput(f32(3, 4), 0, T(np.array([[0, 1]]), "int64"), f32(2, 4),
                       match="dimension 1 or 0")]


def _put_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), T(np.array([[2, -1], [5, 7]]), "int64"),
                   make(rng, (2, 2), dtype)),
            Sample(make(rng, (3, 4), dtype), T(np.array([0, 11, 0, -12]), "int64"),
                   make(rng, (4,), dtype), True),
            Sample(make(rng, (4, 3), dtype, "transposed"), _index(rng, (5,), 12),
                   make(rng, (5,), dtype, "sliced"), accumulate=True),
            Sample(make(rng, (), dtype), T(np.array([0, -1]), "int64"), make(rng, (2,), dtype),
                   True)]


def _put_errors():
    return [ErrorInput(f32(3, 4), T(np.array([0, 1], np.int32), "int32"), f32(2),
                       match="long tensor"),
            ErrorInput(f32(3, 4), T(np.array([0, 12]), "int64"), f32(2), match="out of range"),
            ErrorInput(f32(3, 4), T(np.array([0, -13]), "int64"), f32(2), match="out of range"),
            ErrorInput(f32(3, 4), T(np.array([0, 1]), "int64"), f32(3), match="same number"),
            ErrorInput(f32(3, 4), T(np.array([0, 1]), "int64"), f64(2), match="dtype")]


def _take_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), T(np.array([[0, -1], [5, 5]]), "int64")),
            Sample(make(rng, (4, 3), dtype, "transposed"), _index(rng, (6,), 12)),
            Sample(make(rng, (), dtype), T(np.array(0), "int64"))]


def _take_errors():
    return [ErrorInput(f32(3), T(np.array([0], np.int32), "int32"), match="long tensor"),
            ErrorInput(f32(3), T(np.array([3]), "int64"), match="out of range")]


def _inplace_view_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype)), Sample(make(rng, (4, 3), dtype, "transposed")),
            Sample(make(rng, (1, 3, 1), dtype, "sliced"))]


def _restride_samples(dtype, rng):
    """Enough elements for the new geometry: resize_ past the storage would expose the
    uninitialised memory it allocates."""
    return [Sample(make(rng, (3, 4), dtype)), Sample(make(rng, (4, 3), dtype, "transposed")),
            Sample(make(rng, (2, 3, 4), dtype, "sliced"))]


def _fractional_samples(nd):
    def samples(dtype, rng):
        def u(*shape):
            return make(rng, shape, dtype, low=0, high=0.99, grad=False)
        if nd == 2:
            return [Sample(make(rng, (1, 1, 4, 4), dtype), 2, output_size=3,
                           _random_samples=u(1, 1, 2)),
                    Sample(make(rng, (2, 3, 3), dtype), (2, 1), output_size=(2, 3),
                           _random_samples=u(1, 2, 2)),
                    Sample(make(rng, (2, 3, 7, 6), dtype, "transposed"), 3, (3, 2),
                           return_indices=True, _random_samples=u(3, 3, 2)),
                    Sample(make(rng, (2, 2, 9, 8), dtype), 2, output_ratio=(0.5, 0.7),
                           _random_samples=u(2, 2, 2))]
        return [Sample(make(rng, (1, 1, 3, 3, 2), dtype), (2, 2, 1), output_size=(1, 1, 1),
                       _random_samples=u(1, 1, 3)),
                Sample(make(rng, (2, 5, 6, 7), dtype), (2, 3, 2), (3, 3, 5),
                       return_indices=True, _random_samples=u(1, 2, 3)),
                Sample(make(rng, (2, 2, 5, 6, 7), dtype, "sliced"), 2, output_ratio=0.6,
                       _random_samples=u(2, 2, 3))]
    return samples


def _fractional_errors():
    x = f32(2, 3, 7, 6)
    return [ErrorInput(x, 3, output_size=(6, 5), _random_samples=f32(2, 3, 2), match="pool"),
            ErrorInput(x, 3, output_size=2, _random_samples=f32(1, 3, 2), match="batch"),
            ErrorInput(x, 3, output_size=2, _random_samples=f32(2, 3, 3), match="size.2."),
            ErrorInput(x, 3, output_size=2, _random_samples=f64(2, 3, 2), match="dtype"),
            ErrorInput(x, 3, output_size=2, _random_samples=f32(2, 4, 2), match="channel"),
            ErrorInput(x, 3, match="output_size or an output_ratio"),
            ErrorInput(x, 3, output_ratio=0.5),
            ErrorInput(f32(2, 3, 0, 6), 3, output_size=2, _random_samples=f32(2, 3, 2),
                       match="non-zero size")]


def _poisson_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype, low=0, high=5)),
            Sample(make(rng, (5, 4), dtype, "transposed", low=0, high=40)),
            Sample(T(np.array([0.0, 9.5, 10.0, 248.0]), dtype))]  # both sides of rate 10


def _seeded_poisson(m, x):
    return m.poisson(x, m.Generator().manual_seed(7))


def _normal_samples(dtype, rng, tensors=2):
    mean, std = make(rng, (2, 3), dtype), make(rng, (3,), dtype, low=0.1, high=2)
    return [Sample(mean, std) if tensors == 2 else Sample(mean if tensors == "mean" else std)]


def _seeded_normal(mean, std):
    return lambda m, *a: m.normal(*(a if mean is None and std is None else
                                    (a[0], std) if std is not None else (mean, a[0])),
                                  generator=m.Generator().manual_seed(7))


def _bicubic_grid_samples(dtype, rng):
    out = []
    for padding_mode in ("zeros", "border", "reflection"):
        for ac in (False, True):
            kw = dict(mode="bicubic", padding_mode=padding_mode, align_corners=ac)
            out.append(Sample(make(rng, (1, 1, 3, 3), dtype),
                              make(rng, (1, 2, 2, 2), dtype, low=-1.3, high=1.3), **kw))
            out.append(Sample(make(rng, (2, 3, 4, 5), dtype, "transposed"),
                              make(rng, (2, 3, 6, 2), dtype, low=-1.7, high=1.7), **kw))
    return out


def _index_add_samples(dtype, rng):
    return [Sample(make(rng, (4, 3), dtype), 0, _index(rng, (2,), 4, unique_along=0),
                   make(rng, (2, 3), dtype)),
            Sample(make(rng, (3, 5), dtype, "transposed"), 1, _index(rng, (4,), 5),
                   make(rng, (3, 4), dtype), alpha=2)]


def _index_fill_samples(dtype, rng):
    value = True if dtype == "bool" else 2
    return [Sample(make(rng, (4, 3), dtype), 0, _index(rng, (2,), 4), value),
            Sample(make(rng, (3, 5), dtype, "transposed"), -1, _index(rng, (3,), 5), value),
            # a 0-d tensor value, differentiable (index_fill.int_Tensor)
            Sample(make(rng, (4, 3), dtype), 1, T(np.array([2, 0, 2]), "int64"),
                   make(rng, (), dtype))]


def _masked_fill_samples(dtype, rng):
    value = False if dtype == "bool" else -1
    return [Sample(make(rng, (3, 4), dtype), boolean(3, 4), value),
            Sample(make(rng, (2, 3), dtype, "sliced"), boolean(3), value),
            # a 0-d tensor value, differentiable (masked_fill.Tensor)
            Sample(make(rng, (3, 4), dtype), boolean(4), make(rng, (), dtype))]


def _scatter_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), 0, _index(rng, (2, 4), 3, unique_along=0),
                   make(rng, (2, 4), dtype)),
            Sample(make(rng, (4, 3), dtype, "transposed"), 1, _index(rng, (4, 2), 3,
                                                                    unique_along=1),
                   make(rng, (4, 3), dtype))]


def _scatter_add_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), 0, _index(rng, (5, 4), 3), make(rng, (5, 4), dtype)),
            Sample(make(rng, (4, 3), dtype, "sliced"), 1, _index(rng, (4, 2), 3),
                   make(rng, (4, 3), dtype))]


def _pair_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype)),
            Sample(make(rng, (2, 3), dtype, "transposed"), make(rng, (3,), dtype),
                   rtol=0.5, atol=1.0, equal_nan=True)]


def _one_tensor(*shapes, layout="contiguous"):
    return lambda dtype, rng: [Sample(make(rng, s, dtype, layout if i else "contiguous"))
                               for i, s in enumerate(shapes)]


def _index_reduce_samples(reduce):
    def samples(dtype, rng):
        # (PyTorch has no bool kernel for include_self=False)
        exclude = dtype != "bool"
        out = [Sample(make(rng, (3, 4), dtype), 0, T(np.array([2, 0, 2]), "int64"),
                      make(rng, (3, 4), dtype), reduce, include_self=inc)
               for inc in (True, False)[:1 + exclude]]
        out += [Sample(make(rng, (4, 3), dtype, "transposed"), -1, T(np.array([1, 1, 0, 2, 1]),
                                                                     "int64"),
                       make(rng, (4, 5), dtype), reduce),
                *[Sample(make(rng, (5,), dtype), 0, T(np.array([4, 0, 4]), "int32"),
                         make(rng, (3,), dtype, "sliced"), reduce, include_self=False)
                  for _ in range(exclude)]]  # (nor for a 1-d bool self)
        if dtype in ("float32", "float64"):
            x = T(np.array([[0.0, 2.0], [2.0, 1.0]], dtype), dtype)
            src = T(np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 1.0]], dtype), dtype)
            idx = T(np.array([0, 0, 1]), "int64")
            out += [Sample(x, 0, idx, src, reduce),
                    Sample(x, 0, idx, src, reduce, include_self=False)]
        return out
    return samples


def _index_reduce_errors():
    x = f32(3, 2)
    return [ErrorInput(x, 0, T(np.array([0, 0]), "int64"), f32(2, 2), "sum", match="amax"),
            ErrorInput(x, 0, T(np.array([0, 5]), "int64"), f32(2, 2), "prod",
                       match="out of range"),
            ErrorInput(x, 0, T(np.array([0, 0]), "int64"), f64(2, 2), "prod",
                       match="scalar type"),
            ErrorInput(x, 0, T(np.array([0, 0, 1]), "int64"), f32(2, 2), "prod",
                       match="Number of indices"),
            ErrorInput(x, 0, T(np.array([[0, 0]]), "int64"), f32(2, 2), "prod", match="vector"),
            ErrorInput(x, 0, T(np.array([0, 0]), "int64"), f32(2, 3), "prod", match="shape"),
            ErrorInput(boolean(3), 0, T(np.array([0]), "int64"), boolean(1), "amax",
                       include_self=False, match="Bool")]


INDEXING_OPS = [
    *(OpInfo(f"scatter_reduce.{r}", lambda m, x, *a, **kw: x.scatter_reduce(*a, **kw),
             ALL if r != "mean" else NUMBERS, _scatter_reduce_samples(r),
             errors=_scatter_reduce_errors if r == "sum" else None)
      for r in ("sum", "prod", "mean", "amax", "amin")),
    OpInfo("torch.scatter_reduce_", lambda m, x, *a, **kw: x.clone().scatter_reduce_(*a, **kw),
           ALL, _scatter_reduce_samples("prod")),
    OpInfo("torch.scatter_reduce", lambda m, *a, **kw: m.scatter_reduce(*a, **kw), ALL,
           _scatter_reduce_samples("amax")),
    OpInfo("scatter_reduce.max", lambda m, x, *a, **kw: x.scatter_reduce(*a, **kw), ALL,
           _scatter_reduce_samples("max"), gradcheck=False),  # PyTorch: no backward for "max"
    # scatter(reduce=) has no derivative in PyTorch: backward must raise alike
    OpInfo("scatter.reduce", lambda m, x, *a, **kw: x.scatter(*a, **kw), ALL,
           _legacy_scatter_samples(False),
           errors=lambda: [ErrorInput(f32(3, 4), 0, i64(2, 4, low=0, high=2), f32(2, 4),
                                      reduce="sum", match="add or multiply")],
           gradcheck=False),
    OpInfo("scatter.value_reduce", lambda m, x, *a, **kw: x.scatter(*a, **kw), ALL,
           _legacy_scatter_samples(True), gradcheck=False),
    OpInfo("scatter_.reduce", lambda m, x, *a, **kw: x.clone().scatter_(*a, **kw), ALL,
           _legacy_scatter_samples(False), gradcheck=False),
    OpInfo("masked_scatter", lambda m, x, *a: x.masked_scatter(*a), ALL,
           _masked_scatter_samples, errors=_masked_scatter_errors),
    OpInfo("masked_scatter_", lambda m, x, *a: x.clone().masked_scatter_(*a), ALL,
           _masked_scatter_inplace_samples),
    OpInfo("torch.masked_scatter", lambda m, *a: m.masked_scatter(*a), ALL,
           _masked_scatter_samples),
    OpInfo("index_copy", lambda m, *a: m.index_copy(*a), ALL, _index_copy_samples,
           errors=_index_copy_errors),
    OpInfo("index_copy_", lambda m, x, *a: x.clone().index_copy_(*a), ALL, _index_copy_samples),
    OpInfo("put", lambda m, x, *a, **kw: x.put(*a, **kw), ALL, _put_samples,
           errors=_put_errors),
    OpInfo("put_", lambda m, x, *a, **kw: x.clone().put_(*a, **kw), ALL, _put_samples),
    OpInfo("torch.put", lambda m, *a, **kw: m.put(*a, **kw), ALL, _put_samples),
    OpInfo("take", lambda m, x, i: x.take(i), ALL, _take_samples, errors=_take_errors),
    OpInfo("torch.take", lambda m, x, i: m.take(x, i), ALL, _take_samples),
    # in-place view ops: the result is `self` with new sizes and strides, gradients flow back
    OpInfo("t_", lambda m, x: x.clone().t_(), ALL,
           lambda dtype, rng: [Sample(make(rng, s, dtype)) for s in ((3, 4), (4,), ())],
           errors=lambda: [ErrorInput(f32(2, 3, 4), match="dimensions")]),
    OpInfo("transpose_", lambda m, x: x.clone().transpose_(0, -1), ALL, _inplace_view_samples),
    OpInfo("swapdims_", lambda m, x: x.clone().swapdims_(1, 0), ALL, _inplace_view_samples),
    OpInfo("swapaxes_", lambda m, x: x.clone().swapaxes_(-1, -2), ALL, _inplace_view_samples),
    OpInfo("squeeze_", lambda m, x: x.clone().squeeze_(), ALL, _inplace_view_samples),
    OpInfo("squeeze_.dim", lambda m, x: x.clone().squeeze_(-1), ALL, _inplace_view_samples),
    OpInfo("squeeze_.dims", lambda m, x: x.clone().squeeze_((0, -1)), ALL,
           _inplace_view_samples),
    OpInfo("unsqueeze_", lambda m, x, d: x.clone().unsqueeze_(d), ALL,
           lambda dtype, rng: [Sample(x.args[0], d) for x, d in
                               zip(_inplace_view_samples(dtype, rng), (1, -1, 0))],
           errors=lambda: [ErrorInput(f32(2, 3), 3, match="range")]),
    OpInfo("as_strided_", lambda m, x: x.detach().clone().as_strided_((2, 2), (1, 3), 1), ALL,
           _restride_samples, grad=False),
    OpInfo("resize_", lambda m, x: x.detach().clone().resize_(2, 5), ALL,
           _restride_samples, grad=False),
    OpInfo("resize_as_", lambda m, x: x.detach().clone().resize_as_(m.empty(2, 2)), ALL,
           _restride_samples, grad=False),
    # normal with tensor mean/std: seeded draws equal torch's, zero gradients (NormalBackward1-3)
    OpInfo("normal.Tensor_Tensor", _seeded_normal(None, None), FLOATS, _normal_samples,
           gradcheck=False),
    OpInfo("normal.Tensor_float", _seeded_normal(None, 2.0), FLOATS,
           lambda dt, rng: _normal_samples(dt, rng, "mean"), gradcheck=False),
    OpInfo("normal.float_Tensor", _seeded_normal(1.0, None), FLOATS,
           lambda dt, rng: _normal_samples(dt, rng, "std"), gradcheck=False),
    OpInfo("poisson", _seeded_poisson, FLOATS, _poisson_samples, gradcheck=False,
           errors=lambda: [ErrorInput(T(np.array([-1.0]), "float32"), match="non-negative")]),
    OpInfo("F.fractional_max_pool2d",
           lambda m, *a, **kw: m.nn.functional.fractional_max_pool2d(*a, **kw), FLOATS,
           _fractional_samples(2), errors=_fractional_errors,
           tol={"bfloat16": (2e-2, 2e-2)}),
    OpInfo("F.fractional_max_pool3d",
           lambda m, *a, **kw: m.nn.functional.fractional_max_pool3d(*a, **kw), FLOATS,
           _fractional_samples(3), tol={"bfloat16": (2e-2, 2e-2)}),
    OpInfo("F.grid_sample.bicubic",
           lambda m, *a, **kw: m.nn.functional.grid_sample(*a, **kw), ("float32", "float64"),
           _bicubic_grid_samples, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(1, 1, 2, 2, 2), f32(1, 1, 1, 1, 3), mode="bicubic",
                                      align_corners=False, match="4D")]),
    # in half precision the grid's gradient is rounding noise in both libraries: values only
    OpInfo("F.grid_sample.bicubic.half",
           lambda m, *a, **kw: m.nn.functional.grid_sample(*a, **kw), ("float16", "bfloat16"),
           _bicubic_grid_samples, grad=False, other_dtypes_raise=False,
           tol={"float16": (5e-2, 5e-2), "bfloat16": (2e-1, 2e-1)}),
    *(OpInfo(f"index_reduce.{r}", lambda m, x, *a, **kw: x.index_reduce(*a, **kw),
             NUMBERS if r == "mean" else ALL,
             _index_reduce_samples(r), errors=_index_reduce_errors if r == "prod" else None)
      for r in ("prod", "mean", "amax", "amin")),
    OpInfo("index_reduce_", lambda m, x, *a, **kw: x.clone().index_reduce_(*a, **kw), ALL,
           _index_reduce_samples("amin")),
    OpInfo("torch.index_reduce", lambda m, *a, **kw: m.index_reduce(*a, **kw), ALL,
           _index_reduce_samples("prod")),
    OpInfo("index_add", lambda m, x, *a, **kw: x.index_add(*a, **kw), NUMBERS,
           _index_add_samples, other_dtypes_raise=False),
    OpInfo("index_add_", lambda m, x, *a, **kw: x.clone().index_add_(*a, **kw), NUMBERS,
           _index_add_samples, other_dtypes_raise=False),
    OpInfo("index_fill", lambda m, x, *a: x.index_fill(*a), ALL, _index_fill_samples),
    OpInfo("index_fill_", lambda m, x, *a: x.clone().index_fill_(*a), ALL, _index_fill_samples),
    OpInfo("masked_fill", lambda m, x, *a: x.masked_fill(*a), ALL, _masked_fill_samples),
    OpInfo("masked_fill_", lambda m, x, *a: x.clone().masked_fill_(*a), ALL,
           _masked_fill_samples),
    OpInfo("scatter.src", lambda m, x, *a: m.scatter(x, *a), ALL, _scatter_samples),
    OpInfo("scatter_.src", lambda m, x, *a: x.clone().scatter_(*a), ALL, _scatter_samples),
    OpInfo("scatter_.value_reduce", lambda m, x, d, i, s: x.clone().scatter_(
        d, i, 2.0, reduce="multiply"), FLOATS, _scatter_samples, gradcheck=False,
        other_dtypes_raise=False),  # PyTorch has no derivative for scatter(reduce=)
    OpInfo("scatter_add", lambda m, x, *a: m.scatter_add(x, *a), NUMBERS, _scatter_add_samples,
           tol={"float16": (2e-3, 2e-3)}, other_dtypes_raise=False),
    OpInfo("scatter_add_", lambda m, x, *a: x.clone().scatter_add_(*a), NUMBERS,
           _scatter_add_samples, tol={"float16": (2e-3, 2e-3)}, other_dtypes_raise=False),
    OpInfo("nonzero.as_tuple", lambda m, x: m.nonzero(x, as_tuple=True), ALL,
           _one_tensor((3, 4), (5,), ()), grad=False),
    OpInfo("where(condition)", lambda m, x: m.where(x), ALL, _one_tensor((3, 4)), grad=False),
    OpInfo("isclose", lambda m, x, y, **kw: m.isclose(x, y, **kw), FLOATS, _pair_samples,
           grad=False, other_dtypes_raise=False),
    OpInfo("repeat", lambda m, x: x.repeat(2, 1, 3), ALL, _one_tensor((3, 4), (2, 1),
                                                                      layout="sliced")),
    OpInfo("roll", lambda m, x: m.roll(x, 1), ALL, _one_tensor((5,), (3, 4), layout="sliced")),
    OpInfo("roll.dims", lambda m, x: x.roll((1, -2), (0, 1)), ALL, _one_tensor((3, 4))),
    OpInfo("squeeze.dims", lambda m, x: m.squeeze(x, (0, -1)), ALL, _one_tensor((1, 3, 1))),
    OpInfo("getitem.ellipsis", lambda m, x: x[...], ALL, _one_tensor((2, 3))),
    OpInfo("tril_", lambda m, x: x.clone().tril_(1), ALL, _one_tensor((3, 4))),
    OpInfo("triu_", lambda m, x: x.clone().triu_(-1), ALL, _one_tensor((3, 4))),
    # slice_inverse: the slice `x[1:6:2]` of a base viewed back with the base's geometry (it
    # aliases all of x, which gradcheck's perturbations see and autograd does not, in PyTorch
    # too: gradients are compared with torch's instead)
    OpInfo("slice_inverse",
           lambda m, x: m.slice_inverse(x[1:6:2], x.detach(), 0, 1, 6, 2) * 1, ALL,
           _one_tensor((6, 3)), gradcheck=False),
]
