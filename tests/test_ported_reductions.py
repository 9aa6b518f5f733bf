"""Checks ported from PyTorch's test/test_reductions.py and test/test_sort_and_select.py, run
against torch and ember; tests/test_ported_tensor_ops.py has the first batch.

Each check is named after the PyTorch test method it comes from."""
import numpy as np
import pytest

from _ported import same

INF, NAN = float("inf"), float("nan")


def _r(L, *shape, dtype="float32"):
    n = int(np.prod(shape))
    return L.arange(n, dtype=getattr(L, dtype)).reshape(shape)


def _mixed(L, dtype="float32"):
    """A 3x4 tensor with ties, negatives, a NaN-free spread (values as in PyTorch's samples)."""
    return L.tensor([[3., -1., 2., 2.], [0., 5., -7., 5.], [1., 1., 1., -2.]], dtype=getattr(L, dtype))


def _nan(L, dtype="float32"):
    return L.tensor([[1., NAN, 3., -1.], [NAN, NAN, 0., 2.], [4., -INF, INF, 1.]], dtype=getattr(L, dtype))


def _topk_facts(L, x, k, dim=-1, largest=True, sorted=True):
    values, indices = L.topk(x, k, dim, largest, sorted)
    return values, L.equal(x.gather(dim, indices) if x.dim() else x, values), indices.dtype


def _out_errors(L):
    """The errors of (values, indices) ops given out= tensors of the wrong dtypes."""
    x = _mixed(L)
    calls = [lambda o: L.max(x, 0, out=o), lambda o: L.min(x, 0, out=o), lambda o: L.sort(x, 0, out=o),
             lambda o: L.topk(x, 1, out=o), lambda o: L.kthvalue(x, 1, out=o), lambda o: L.mode(x, 0, out=o),
             lambda o: L.median(x, 0, out=o), lambda o: L.nanmedian(x, 0, out=o), lambda o: L.cummax(x, 0, out=o),
             lambda o: L.cummin(x, 0, out=o), lambda o: L.aminmax(x, dim=0, out=o)]
    errors = []
    for call in calls:
        for out in ((L.empty(0), L.empty(0, dtype=L.int32)), (L.empty(0, dtype=L.float64), L.empty(0, dtype=L.long))):
            try:
                call(out)
            except RuntimeError as exc:
                errors.append(exc)
    return errors


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin", "nansum", "nanmean", "logsumexp", "std", "var",
              "norm", "count_nonzero", "any", "all", "argmax", "argmin", "max", "min", "median", "nanmedian", "mode"]


def _reduce(L, name, x, dim=None, keepdim=False):
    f = getattr(L, name)
    if name in ("norm",):
        return f(x, dim=dim, keepdim=keepdim)
    if name == "count_nonzero":
        return f(x) if dim is None else f(x, dim)
    if dim is None:
        return f(x) if name != "logsumexp" else f(x, (0, 1))
    return f(x, dim, keepdim=keepdim)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_dim_reduction(name):
    """test_dim_reduction / test_reduction_vectorize_along_*: every reduction over no dim, each
    dim, negative dims, with keepdim, on contiguous and transposed inputs."""
    def fn(L):
        x = _mixed(L)
        out = [_reduce(L, name, x), _reduce(L, name, x.t())]
        for d in (0, 1, -1):
            for keepdim in (False, True):
                out.append(_reduce(L, name, x, d, keepdim))
        return out
    same(fn)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "amax", "amin", "nansum", "nanmean", "std", "var", "argmax",
                                  "argmin", "max", "min", "median", "nanmedian", "logsumexp", "any", "all"])
def test_reduction_nan_inf(name):
    """test_nan_policy / test_max_with_inf / test_min_with_inf: propagation of NaN and inf."""
    same(lambda L: [_reduce(L, name, _nan(L)), _reduce(L, name, _nan(L), 1), _reduce(L, name, _nan(L), 0, True)])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float64"])
def test_reduction_dtypes(dtype):
    """test_sum_integer_upcast / test_prod_integer_upcast / test_reduction_dtype: result dtypes."""
    def fn(L):
        x = L.tensor([[1, 0, 2], [3, 1, 1]]).to(getattr(L, dtype))
        out = [x.sum(), x.sum(0), x.prod(), x.prod(1), x.cumsum(0), x.cumprod(1), x.amax(), x.amin(0),
               x.max(), x.argmax(), x.count_nonzero(), x.any(), x.all(0), x.nansum() if x.is_floating_point() else x.sum()]
        if x.is_floating_point():
            out += [x.mean(), x.std(), x.var(0), x.logsumexp(1), x.norm(), x.median()]
        else:
            out += [x.median(), x.sum(dtype=L.float32), x.mean(dtype=L.float64)]
        return out
    same(fn)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "nansum", "nanmean", "amax", "amin", "argmax", "argmin",
                                  "max", "min", "std", "var", "logsumexp", "any", "all", "norm", "median",
                                  "count_nonzero", "cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"])
def test_tensor_reduce_ops_empty(name):
    """test_tensor_compare_ops_empty / test_tensor_reduce_ops_empty: reducing a zero-size dim
    gives the identity, or raises where there is none."""
    def fn(L):
        x = L.ones(2, 0, 3)
        f = getattr(L, name)
        out = []
        for d in (0, 1, 2):
            try:
                out.append(f(x, d))
            except (RuntimeError, IndexError) as exc:
                out.append(type(exc).__name__)
        return out
    same(fn)


CHECKS = {
    # test_reductions: TestReductions
    "dim_arg_reduction_scalar": lambda L: (L.tensor(5.).sum(0), L.tensor(5.).argmax(0), L.tensor(5.).max(0),
                                           L.tensor(5.).sum(-1, keepdim=True), L.tensor(5.).argmin(), L.tensor(5.).mean(()),
                                           L.tensor(5.).std(0), L.tensor(5.).cumsum(0), L.tensor(5.).logsumexp(0)),
    "dim_reduction_less_than_64": (lambda L: L.ones(1).view((1,) * 65).sum(64), "only tensors with up to 64 dims are supported|Dimension out of range"),
    "dim_reduction_fns_bad_dim": (lambda L: _mixed(L).amax(2), "Dimension out of range \\(expected to be in range of \\[-2, 1\\], but got 2\\)"),
    "sum_dim_none": lambda L: (_mixed(L).sum(None), _mixed(L).sum(dim=None, keepdim=True), L.sum(_mixed(L), dim=[])),
    "sum_out_dtype": lambda L: (L.sum(_r(L, 3, dtype="int32"), 0, out=L.empty((), dtype=L.int64)),
                                L.sum(_r(L, 3), 0, dtype=L.float64, out=L.empty((), dtype=L.float64))),
    "sum_vs_numpy_large": lambda L: (L.ones(10000, dtype=L.float16).sum(), L.full((5000,), 0.1).sum(),
                                     L.full((2, 4097), 1e-3, dtype=L.float16).sum(1)),
    "prod_bool": lambda L: (L.tensor([True, True]).prod(), L.tensor([True, False]).prod(0), L.tensor([[True], [False]]).prod(1)),
    "prod_gpu_zero": lambda L: (L.tensor([0., 2., INF]).prod(), L.tensor([-0., 2.]).prod(), L.tensor([[0, 2], [3, 4]]).prod(0)),
    "mean_int_with_optdtype": lambda L: (_r(L, 3, dtype="int64").mean(dtype=L.float32), L.mean(L.tensor([1, 2]), 0, dtype=L.float64)),
    "mean_dtype_errors": (lambda L: L.tensor([1., 2.]).mean(dtype=L.int64), "mean\\(\\): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: Long"),
    "values_indices_out_dtypes": lambda L: [type(e).__name__ + ": " + str(e) for e in _out_errors(L)],
    "nansum_out_dtype": lambda L: (L.nansum(L.tensor([1., NAN]), dtype=L.float64), L.nansum(L.tensor([1, 2], dtype=L.int8)),
                                   L.nansum(L.tensor([1, 2]), dtype=L.float32)),
    "nanmean_integral": (lambda L: L.nanmean(L.tensor([1, 2])), "nanmean\\(\\): expected input to have floating point or complex dtype but got Long"),
    "logsumexp": lambda L: (L.logsumexp(_mixed(L), 1), L.logsumexp(_mixed(L), (0, 1), keepdim=True),
                            L.logsumexp(L.tensor([[INF, -INF], [NAN, 1.]]), 1), L.logsumexp(L.tensor([1e30, 1e30]), 0),
                            L.logsumexp(L.tensor([[1, 2]], dtype=L.int64), 1), L.logsumexp(L.tensor([1j, 2.]), 0)),
    "logsumexp_out": lambda L: L.logsumexp(_mixed(L), 1, out=L.empty(3)),
    "logsumexp_integral_promotion": lambda L: L.logsumexp(L.tensor([True, False]), 0),
    "logcumsumexp": lambda L: (L.logcumsumexp(_mixed(L), 1), L.logcumsumexp(L.tensor([-INF, -INF, 0., INF, NAN]), 0),
                               L.logcumsumexp(L.tensor([1j, 2 + 1j]), 0)),
    "logcumsumexp_int_raises": (lambda L: L.logcumsumexp(L.tensor([1, 2]), 0), "not implemented for 'Long'"),
    "argminmax_multiple": lambda L: (L.argmax(L.tensor([2., 5., 5., 1.])), L.argmin(L.tensor([1., 0., 0.])),
                                     L.argmax(L.tensor([[1, 3], [3, 3]]), 0), L.argmax(L.tensor([NAN, 2., NAN])),
                                     L.argmin(L.tensor([2., NAN, -INF]))),
    "argminmax_large_axis": lambda L: (L.argmax(L.arange(10000.) % 997), L.argmin(-L.arange(5000.), 0, keepdim=True)),
    "argminmax_axis_with_dim_one": lambda L: (L.argmax(L.ones(1, 3), 0), L.argmin(L.ones(3, 1), 1, keepdim=True)),
    "amin_amax_some_dims": lambda L: (L.amax(_r(L, 2, 3, 4), (0, -1)), L.amin(_r(L, 2, 3, 4), (1,), keepdim=True),
                                      L.amax(_r(L, 2, 3, 4), ()), L.amax(L.tensor([True, False]))),
    "aminmax": lambda L: (L.aminmax(_mixed(L)), L.aminmax(_mixed(L), dim=0, keepdim=True), L.aminmax(L.tensor([NAN, 1.])),
                          L.aminmax(L.tensor([3], dtype=L.uint8))),
    "aminmax_empty": (lambda L: L.aminmax(L.ones(0)), "aminmax\\(\\): cannot compute aminmax over an empty dimension as the operation has no identity"),
    "minmax_illegal_dtype": (lambda L: L.max(_mixed(L), 0, out=(L.empty(0), L.empty(0, dtype=L.int32))),
                             "Expected out tensor to have dtype long int, but got int instead"),
    "max_min_complex_raises": (lambda L: L.max(L.tensor([1j])), "\"max_all\" not implemented for 'ComplexFloat'"),
    "amax_complex_raises": (lambda L: L.amax(L.tensor([1j])), "\"max_values_cpu\" not implemented for 'ComplexFloat'"),
    "max_elementwise_vs_reduce": lambda L: (L.max(_mixed(L), _mixed(L).flip(0)), L.min(_mixed(L), L.tensor(0.))),
    "mode": lambda L: (L.mode(_mixed(L)), L.mode(_mixed(L), 0), L.mode(L.tensor([[2, 2, 1, 1]]), 1),
                       L.mode(L.tensor(3.))),  # (no NaN sample: torch's std::sort of NaNs is unspecified)
    "median_real_values": lambda L: (L.median(_mixed(L)), L.median(_mixed(L), 1), L.median(_mixed(L), 0, keepdim=True),
                                     L.median(L.tensor([4, 1, 3, 2]))),
    "median_nan_values": lambda L: (L.median(_nan(L)), L.median(_nan(L), 1), L.nanmedian(_nan(L)), L.nanmedian(_nan(L), 1),
                                    L.nanmedian(L.tensor([NAN, NAN])), L.nanmedian(L.tensor([[NAN, NAN]]), 1)),
    "median_empty": (lambda L: L.median(L.ones(0)), ""),
    "var_stability": lambda L: (L.tensor([2281.5, 2281.25]).var(), L.tensor([1e8 + 1, 1e8 + 2, 1e8 + 3], dtype=L.float64).var(),
                                L.full((1000,), 1e4).std()),
    "std_correction": lambda L: [(_mixed(L).std(1, correction=c), _mixed(L).var(correction=c), L.std_mean(_mixed(L), 0, correction=c))
                                 for c in (0, 1, 2, 3.5, 5)],
    "var_unbiased_single": lambda L: (L.tensor([1.]).var(0), L.tensor([[1., 2.]]).var(0), L.tensor([1.]).std(unbiased=False)),
    "var_complex": lambda L: (L.tensor([1j, 1 + 1j, 2.]).var(), L.var_mean(L.tensor([[1j, 2 - 1j]]), 1)),
    "var_integral_raises": (lambda L: L.tensor([1, 2]).var(), "std and var only support floating point and complex dtypes"),
    "std_mean_var_mean_out_dtype": lambda L: (L.std_mean(_mixed(L, "float64"), (0, 1)), L.var_mean(_mixed(L), 1, keepdim=True)),
    "cumsum_integral_promotion": lambda L: (L.tensor([100, 100], dtype=L.uint8).cumsum(0), L.tensor([True, True, False]).cumprod(0),
                                            L.cumsum(L.tensor([1, 2], dtype=L.int8), 0, dtype=L.int8),
                                            L.cumsum(_mixed(L), 0, out=L.empty(0, dtype=L.float64))),
    "cumsum_scalar_and_empty": lambda L: (L.tensor(3.).cumsum(0), L.ones(0, 3).cumsum(1).shape, L.tensor(2).cumprod(-1)),
    "cumprod_zeros_grad": lambda L: (lambda x: (L.cumprod(x, 0).sum().backward(), x.grad)[1])(
        L.tensor([2., 0., 3., 0., 4.], requires_grad=True)),
    "cummax_cummin": lambda L: (L.cummax(_mixed(L), 1), L.cummin(_mixed(L), 0), L.cummax(L.tensor([1., NAN, 2., NAN]), 0),
                                L.cummin(L.tensor([True, False, True]), 0), L.cummax(L.tensor(2.), 0)),
    "diff": lambda L: (L.diff(_mixed(L)), L.diff(_mixed(L), 2, 0), L.diff(_mixed(L), prepend=L.zeros(3, 1), append=L.ones(3, 2)),
                       L.diff(L.tensor([True, False, False])), L.diff(L.tensor([1, 5, 2], dtype=L.uint8)), L.diff(_mixed(L), 5).shape),
    "diff_errors": (lambda L: L.diff(L.tensor(1.)), "diff expects input to be at least one-dimensional"),
    "count_nonzero_dims": lambda L: (L.count_nonzero(_nan(L)), L.count_nonzero(_mixed(L), (0, 1)), L.count_nonzero(L.tensor([1j, 0j]))),
    "all_any_with_dim": lambda L: (L.all(_mixed(L), 0), L.any(_mixed(L) > 4, 1, keepdim=True), L.all(_mixed(L), (0, 1)),
                                   L.any(L.tensor([[0, 0], [0, 1]], dtype=L.uint8), 1), L.all(L.tensor([NAN]))),
    "all_any_out": lambda L: (L.all(_mixed(L), 0, out=L.empty(0, dtype=L.bool)), L.any(L.tensor([1, 0], dtype=L.uint8), 0, out=L.empty(0, dtype=L.uint8))),
    "bincount": lambda L: (L.bincount(L.tensor([0, 4, 4, 1])), L.bincount(L.tensor([], dtype=L.long)), L.bincount(L.tensor([1, 1]), minlength=0),
                           L.bincount(L.tensor([2, 0]), L.tensor([0.5, 2.0], dtype=L.float64)),
                           L.bincount(L.tensor([1], dtype=L.uint8), L.tensor([3], dtype=L.int32))),
    "bincount_errors": (lambda L: L.bincount(L.tensor([-1, 0])), "bincount only supports 1-d non-negative integral inputs."),
    "bincount_float": (lambda L: L.bincount(L.tensor([1.])), "\"bincount_cpu\" not implemented for 'Float'"),
    "bincount_weights_size": (lambda L: L.bincount(L.tensor([1, 2]), L.tensor([1.])), "weights should be 1-d and have the same length as input"),
    "histc": lambda L: (L.histc(L.tensor([1., 2, 1, 4]), bins=4), L.histc(L.tensor([1., 1.]), bins=3),
                        L.histc(L.tensor([0., 5., 10.]), bins=5, min=0, max=10), L.histc(L.tensor([], dtype=L.float64), 3),
                        L.histc(L.tensor([-1., 0.5, 2.]), 2, 0, 1)),
    "histc_errors": (lambda L: L.histc(L.tensor([1., 2.]), bins=-1), "torch.histogram\\(\\): bins must be > 0, but got -1 for dimension 0"),
    "histc_minmax": (lambda L: L.histc(L.tensor([1., 2.]), 3, 2, 1), "max must be larger than min"),
    "histc_int": (lambda L: L.histc(L.tensor([1, 2]), 3), "\"histogram_cpu\" not implemented for 'Long'"),
    "histogram": lambda L: (L.histogram(L.tensor([1., 2., 1.]), bins=4, range=(0., 3.)),
                            L.histogram(L.tensor([1., 2., 1.]), bins=L.tensor([0., 1., 2.5, 3.])),
                            L.histogram(L.tensor([1., 2., 1.]), bins=3, weight=L.tensor([1., 2., 4.]), density=True)),
    "histogramdd": lambda L: (L.histogramdd(L.tensor([[0., 1.], [1., 0.], [2., 0.], [2., 2.]]), bins=[3, 3], weight=L.tensor([1., 2., 4., 8.])),
                              L.histogramdd(L.tensor([[0., 0.], [1., 1.], [2., 2.]]), bins=[2, 2], range=[0., 1., 0., 2.], density=True)),
    "quantile_errors": (lambda L: L.quantile(L.tensor([1., 2.]), 1.5), "quantile\\(\\) q must be in the range \\[0, 1\\] but got 1.5"),
    "quantile_interpolations": lambda L: [L.quantile(_mixed(L), L.tensor([0.0, 0.3, 0.5, 1.0]), dim=1, interpolation=m)
                                          for m in ("linear", "lower", "higher", "midpoint", "nearest")],
    "quantile_dtype_error": (lambda L: L.quantile(L.tensor([1, 2]), 0.5), "quantile\\(\\) input tensor must be either float or double dtype"),
    "nanquantile_all_nan": lambda L: (L.nanquantile(L.tensor([NAN, NAN]), 0.5), L.quantile(L.tensor([NAN, 1.]), 0.5),
                                      L.nanquantile(_nan(L), L.tensor([0.25, 0.75]), 1)),
    "norm_dtypes_and_p": lambda L: [L.norm(_mixed(L), p) for p in (0, 1, 2, 3, 0.5, INF, -INF)] + [
        L.norm(L.tensor([3 + 4j])), L.norm(_mixed(L), dtype=L.float64), L.norm(_mixed(L), "nuc"), L.norm(_mixed(L), p="fro", dim=1)],
    "linalg_vector_norm": lambda L: [L.linalg.vector_norm(_nan(L), o) for o in (0, 1, 2, INF, -INF)] +
                                    [L.linalg.vector_norm(_mixed(L), 2, dim=(0, 1), keepdim=True)],
    "vector_norm_empty_inf": (lambda L: L.linalg.vector_norm(L.ones(0), INF), "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an identity"),
    # test_sort_and_select: TestSortAndSelect
    "sort_discontiguous": lambda L: (L.sort(_mixed(L).t(), 0), L.sort(_mixed(L)[:, ::2], 1, descending=True)),
    "sort_1d_output_discontiguous": lambda L: (lambda v, i: (L.sort(L.tensor([3., 1., 2.]), out=(v[::2], i[::2])), v, i)[1:])(
        L.zeros(6), L.zeros(6, dtype=L.long)),
    "sort_expanded_tensor": lambda L: L.sort(L.tensor([[3., 1., 2.]]).expand(2, 3), 1),
    "sort_restride": lambda L: (lambda v, i: (L.sort(_mixed(L), 1, out=(v, i)), v.stride(), v, i)[1:])(
        L.empty(4, 3).t(), L.empty(4, 3, dtype=L.long).t()),
    "sort_overflow": lambda L: L.sort(L.tensor([127, -128, 0], dtype=L.int8), descending=True),
    "sort_empty": lambda L: (L.sort(L.ones(0, 3), 0), L.sort(L.ones(3, 0), 1, descending=True), L.argsort(L.ones(0))),
    "sort_scalar": lambda L: (L.sort(L.tensor(3.)), L.sort(L.tensor(3.), 0), L.argsort(L.tensor(3))),
    "sort_dtypes": lambda L: [L.sort(L.tensor([3, 1, 2, 1, 0]).to(getattr(L, d)), stable=True) for d in
                              ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float64", "bool")],
    "sort_complex_raises": (lambda L: L.sort(L.tensor([1j])), "Sort does not support complex dtypes on CPU"),
    "stable_sort_descending_ties": lambda L: L.sort(L.tensor([1, 3, 1, 3, 2, 3] * 5), stable=True, descending=True),
    "sort_with_nan_inf_ordering": lambda L: (L.sort(L.tensor([NAN, INF, -INF, 0., -0., NAN, 1.])),
                                             L.sort(L.tensor([NAN, INF, -INF, 0., NAN, 1.]), descending=True),
                                             L.argsort(L.tensor([NAN, 1., NAN, 0.]), stable=True)),
    # which of tied elements topk returns is unspecified: as test_topk, compare the values and
    # that the indices point at them
    "topk": lambda L: [_topk_facts(L, x, *args) for x, args in ((_mixed(L), (2,)), (_mixed(L), (2, 0, False)),
                                                                 (_mixed(L), (0, 1)), (L.tensor(3.), (1,)),
                                                                 (_mixed(L).t(), (3, 0, True, True)))],
    "topk_integral": lambda L: [L.topk(L.tensor([5, -3, 7, 7, 0]).to(getattr(L, d)), 3) for d in ("int8", "uint8", "int16", "int32", "int64")],
    "topk_nonfinite": lambda L: (L.topk(L.tensor([NAN, INF, -INF, 1., NAN]), 3), L.topk(L.tensor([NAN, INF, -INF, 1.]), 2, largest=False)),
    "topk_4d": lambda L: L.topk(_r(L, 2, 3, 4, 5) % 7, 3, 2).values.shape,
    "topk_k_errors": (lambda L: L.topk(_mixed(L), 5), "selected index k out of range"),
    "topk_negative_k": (lambda L: L.topk(_mixed(L), -1), "selected index k out of range"),
    "topk_bool_raises": (lambda L: L.topk(L.tensor([True, False]), 1), "topk does not support bool dtypes on CPU"),
    "kthvalue": lambda L: (L.kthvalue(_mixed(L), 1), L.kthvalue(_mixed(L), 3, 0, True), L.kthvalue(L.tensor([NAN, 1., 2.]), 3),
                           L.kthvalue(L.tensor(5.), 1)),
    "kthvalue_errors": (lambda L: L.kthvalue(_mixed(L), 5), "kthvalue\\(\\): selected number k out of range for dimension 1"),
    "kthvalue_scalar_error": (lambda L: L.kthvalue(L.tensor(5.), 2), "kthvalue\\(\\): selected number k out of range for dimension 0"),
    "isin": lambda L: (L.isin(_r(L, 3, 4), L.tensor([1., 5., 100.])), L.isin(_r(L, 4), L.tensor([1., 2.]), invert=True),
                       L.isin(3, L.tensor([1, 3])), L.isin(L.tensor([1, 2]), 2), L.isin(L.tensor([NAN]), L.tensor([NAN])),
                       L.isin(L.tensor([1, 2]), L.tensor([1, 2]), assume_unique=True)),
    "isin_different_dtypes": lambda L: (L.isin(L.tensor([1, 2], dtype=L.int8), L.tensor([1.5, 2.])),
                                        L.isin(L.tensor([1., 2.]), L.tensor([2], dtype=L.uint8))),
    "isin_different_devices_or_types": (lambda L: L.isin(1, 2), "isin\\(\\) received an invalid combination of arguments|received an invalid combination"),
    "isin_complex_raises": (lambda L: L.isin(L.tensor([1j]), L.tensor([1j])), "Unsupported input type encountered for isin\\(\\): ComplexFloat"),
    "unique_dim_empty": lambda L: (L.unique(L.ones(0, 3), dim=0), L.unique(L.ones(3, 0), dim=0, return_counts=True)),
    "unique_sorted_false": lambda L: L.unique(L.tensor([3, 1, 3])).shape,
    "unique_consecutive_float_nan": lambda L: L.unique_consecutive(L.tensor([NAN, NAN, 1., 1., NAN]), return_counts=True),
    "msort_errors": lambda L: (L.msort(_mixed(L).t()), L.msort(L.tensor([2, 1]))),
}


XFAIL = {"dim_reduction_less_than_64": "NumPy arrays have at most 64 dims: ember cannot make the 65-dim view"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=XFAIL[n], strict=True))
                                  if n in XFAIL else n for n in CHECKS])
def test_reductions_sort_select(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match or None)
