"""Fixes found by running PyTorch's test/test_sort_and_select.py and
test/test_scatter_gather_ops.py on ember: isclose (so assert_close) seeing bfloat16 NaNs,
unique(dim=...) leaving rows with NaNs in the order libstdc++'s std::sort leaves them, the
barebones unsigned types' missing gather/scatter/topk/kthvalue/searchsorted/isin/bincount
kernels, and isin comparing in result_type. Each compares ember with torch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

from _ported import error_line as _err  # noqa: E402
from _torch_oracle import assert_same  # noqa: E402


def _same_values(e, t):
    """Same dtype, shape and values, NaN where NaN (assert_same's allclose treats NaN alike)."""
    assert_same(e, t, atol=0, rtol=0)


# ---- isclose / assert_close on bfloat16 NaN ----------------------------------------------------
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_isclose_equal_nan_low_precision(dtype):
    vals = [float("nan"), 1.0, float("inf"), 2.0]
    other = [float("nan"), 1.0, float("inf"), float("nan")]
    for equal_nan in (False, True):
        for tol in ({}, {"rtol": 0.016, "atol": 1e-5}, {"rtol": 0, "atol": 0}):
            e = ember.isclose(ember.tensor(vals, dtype=getattr(ember, dtype)),
                              ember.tensor(other, dtype=getattr(ember, dtype)),
                              equal_nan=equal_nan, **tol)
            t = torch.isclose(torch.tensor(vals, dtype=getattr(torch, dtype)),
                              torch.tensor(other, dtype=getattr(torch, dtype)),
                              equal_nan=equal_nan, **tol)
            _same_values(e, t)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_assert_close_bfloat16_nan(lib):
    x = lib.tensor([float("nan"), float("inf"), 1e4, 0], dtype=lib.bfloat16)
    lib.testing.assert_close(x.topk(4).values, x, equal_nan=True)   # NaN first, equal to NaN
    with pytest.raises(AssertionError):
        lib.testing.assert_close(x, x)


# ---- unique(dim=...) with NaNs: std::sort's order ----------------------------------------------
def _nan_rows(n, width, seed):
    rng = np.random.RandomState(seed)
    a = rng.randint(0, 4, size=(n, width)).astype(np.float64)
    a[rng.rand(n, width) < 0.3] = np.nan
    return a


@pytest.mark.parametrize("n,width", [(6, 1), (17, 1), (40, 1), (300, 1), (40, 2), (300, 3)])
def test_unique_dim_with_nan_rows(n, width):
    a = _nan_rows(n, width, seed=n + width)
    if width == 1:
        a = a.reshape(-1)
    for dim in range(a.ndim):
        e = ember.unique(ember.tensor(a), dim=dim, return_inverse=True, return_counts=True)
        t = torch.unique(torch.tensor(a), dim=dim, return_inverse=True, return_counts=True)
        for ours, theirs in zip(e, t):
            _same_values(ours, theirs)


def test_unique_dim_with_nan_the_test_file_case():
    vals = [float("nan"), 0, 0, float("nan"), float("nan"), 1]
    for dtype in ("float32", "float16", "bfloat16"):
        e = ember.unique(ember.tensor(vals, dtype=getattr(ember, dtype)), dim=0,
                         return_inverse=True, return_counts=True)
        t = torch.unique(torch.tensor(vals, dtype=getattr(torch, dtype)), dim=0,
                         return_inverse=True, return_counts=True)
        for ours, theirs in zip(e, t):
            _same_values(ours, theirs)


def test_std_sort_heap_fallback_sorts():
    """Past its depth limit introsort heap-sorts; with a proper order that must sort."""
    from ember._aten._std_sort import _heap_sort, std_sort
    rng = np.random.RandomState(0)
    for n in (2, 7, 16, 33, 200):
        vals = rng.randint(0, 50, n).tolist()
        items = list(vals)
        _heap_sort(items, 0, n, lambda x, y: x < y)
        assert items == sorted(vals)
        assert std_sort(list(vals), lambda x, y: x < y) == sorted(vals)


# ---- barebones unsigned types: PyTorch's dtype errors and where they come --------------------
def _u16(L):
    return L.arange(6).to(L.uint16)


_IDX = [[0, 1], [2, 0]]

_BAREBONES_CASES = {
    "gather": lambda L: L.gather(_u16(L).reshape(2, 3), 1, L.tensor(_IDX)),
    "gather_oob": lambda L: L.gather(_u16(L), 0, L.tensor([7])),   # dtype before bounds
    "gather_empty": lambda L: L.gather(_u16(L), 0, L.tensor([], dtype=L.long)),
    "gather_0d": lambda L: L.gather(_u16(L)[0], 0, L.tensor(0)),
    "take_along_dim": lambda L: L.take_along_dim(_u16(L).reshape(2, 3), L.tensor(_IDX), 1),
    "scatter_src": lambda L: L.zeros(2, 3, dtype=L.uint32).scatter_(
        1, L.tensor(_IDX), _u16(L).reshape(2, 3).to(L.uint32)),
    "scatter_value": lambda L: L.zeros(2, 3, dtype=L.uint64).scatter(1, L.tensor(_IDX), 3),
    "scatter_add": lambda L: L.zeros(2, 3, dtype=L.uint16).scatter_add_(
        1, L.tensor(_IDX), _u16(L).reshape(2, 3)),
    "scatter_add_empty": lambda L: L.zeros(2, 3, dtype=L.uint16).scatter_add_(
        1, L.empty(0, 0, dtype=L.long), _u16(L).reshape(2, 3)),
    "scatter_reduce_add": lambda L: L.zeros(2, 3, dtype=L.uint16).scatter_(
        1, L.tensor(_IDX), 2, reduce="add"),
    "topk": lambda L: _u16(L).topk(2),
    "topk_empty": lambda L: _u16(L)[:0].topk(0),
    "topk_0d": lambda L: _u16(L)[1].topk(1),
    "kthvalue": lambda L: _u16(L).kthvalue(2),
    "kthvalue_0d": lambda L: _u16(L)[1].kthvalue(1),
    "searchsorted": lambda L: L.searchsorted(_u16(L), _u16(L)),
    "searchsorted_scalar": lambda L: L.searchsorted(_u16(L), 3),
    "searchsorted_empty": lambda L: L.searchsorted(_u16(L), _u16(L)[:0]),
    "bucketize": lambda L: L.bucketize(_u16(L), _u16(L)),
    "bincount": lambda L: _u16(L).bincount(),
    "isin_few": lambda L: L.isin(_u16(L), _u16(L)),
    "isin_many": lambda L: L.isin(_u16(L)[:2], L.arange(1000).to(L.uint16)),
    "isin_scalar": lambda L: L.isin(_u16(L), 3),
    "isin_mixed": lambda L: L.isin(_u16(L), L.arange(3)),
    "sort": lambda L: _u16(L).sort(descending=True),
}


@pytest.mark.parametrize("name", sorted(_BAREBONES_CASES))
def test_barebones_unsigned_kernels_as_torch(name):
    case = _BAREBONES_CASES[name]
    assert _err(case, ember) == _err(case, torch)
    if _err(case, torch) is None:
        assert_same(case(ember), case(torch), atol=0, rtol=0)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_barebones_scatter_reduce_kernel_names(reduce, include_self):
    def case(L):
        return L.zeros(2, 3, dtype=L.uint16).scatter_reduce_(
            1, L.tensor(_IDX), _u16(L).reshape(2, 3), reduce, include_self=include_self)
    assert _err(case, torch) is not None
    assert _err(case, ember) == _err(case, torch)


# ---- isin compares in result_type --------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda L: L.isin(L.tensor(0.1, dtype=L.float64), L.tensor([0.1], dtype=L.float32)),
    lambda L: L.isin(L.tensor([0.1] * 30, dtype=L.float32), L.tensor(0.1, dtype=L.float64)),
    lambda L: L.isin(L.tensor([44, 1], dtype=L.int8), 300),
    lambda L: L.isin(300, L.tensor([44, 1], dtype=L.int8)),
    lambda L: L.isin(L.tensor([1, 2]), 2.0),
    lambda L: L.isin(L.tensor([1, 2]), 2.5),
    lambda L: L.isin(L.tensor([1, 2, 3], dtype=L.uint8), L.tensor([3.0, 4.0])),
])
def test_isin_result_type(case):
    _same_values(case(ember), case(torch))


# ---- layouts: sort keeps the input's, unique(dim=...) gives its moved block's -----------------
def _layouts(L):
    x = L.arange(60.0).reshape(3, 4, 5).flip(2)
    return (("c", x), ("t02", x.transpose(0, 2)), ("perm", x.permute(1, 2, 0)),
            ("slice", x[:, ::2]), ("empty_t", L.empty(0, 3).t()), ("col", L.arange(5.0).reshape(1, 5).t()))


@pytest.mark.parametrize("layout", ["c", "t02", "perm", "slice", "empty_t", "col"])
def test_sort_and_unique_dim_strides(layout):
    def run(L):
        t = dict(_layouts(L))[layout]
        outs = []
        for d in range(t.dim()):
            outs += [*t.sort(d), t.argsort(dim=d, descending=True), t.msort(),
                     *t.topk(min(2, t.shape[d]), d)]
            if t.numel():
                outs += [L.unique(t, dim=d), L.unique_consecutive(t, dim=d)]
        return outs
    ours, theirs = run(ember), run(torch)
    assert_same(ours, theirs, strides=True)


# ---- check order: shape checks before the dtype ones; each kernel's name -------------------
@pytest.mark.parametrize("case", [
    lambda L: L.tensor([True, False]).topk(5),
    lambda L: L.tensor([True, False]).topk(-1),
    lambda L: L.tensor([True, False]).topk(1, dim=3),
    lambda L: L.tensor([True, False]).topk(1),
    lambda L: L.tensor(True).topk(1),
    lambda L: L.tensor([1j, 2]).topk(5),
    lambda L: L.tensor([1j, 2]).topk(1),
    lambda L: L.tensor([True, False]).kthvalue(3),
    lambda L: L.tensor([True, False]).kthvalue(1),
    lambda L: L.tensor(True).kthvalue(1),
    lambda L: L.tensor([1j, 2]).kthvalue(0),
    lambda L: L.tensor([1j, 2]).kthvalue(1),
    lambda L: L.tensor(1j).kthvalue(1),
    lambda L: L.empty(3, dtype=L.bool, device="meta").topk(5),
    lambda L: L.empty(3, dtype=L.bool, device="meta").topk(1).values.shape,
    lambda L: L.empty(3, dtype=L.bool, device="meta").kthvalue(1).values.shape,
    lambda L: L.tensor([[1j, 2]]).unique_consecutive(dim=1),
    lambda L: L.tensor([[1j, 2]]).unique_consecutive(),
    lambda L: L.tensor([1j, 2]).unique_consecutive(dim=0),
    lambda L: L.tensor([1j, 2]).unique_consecutive(dim=-1),
    lambda L: L.searchsorted(L.tensor([False, True]), True),
    lambda L: L.searchsorted(L.tensor([False, True]), 2),
    lambda L: L.searchsorted(L.tensor([False, True]), L.tensor([False])[:0]),
    lambda L: L.bucketize(L.tensor([False, True]), L.tensor([0, 1])),
    lambda L: L.tensor([[False, True]]).median(),
    lambda L: L.tensor([[False, True]]).median(1),
    lambda L: L.tensor([[False, True]]).nanmedian(),
    lambda L: L.tensor([[False, True]]).nanmedian(0),
    lambda L: L.tensor([[False, True]]).median(5),
    lambda L: L.tensor([[False, True]], device="meta").median(1).values.shape,
    lambda L: L.tensor([True, False]).histc(3, 0, 1),
    lambda L: L.tensor([1, 2], dtype=L.uint16).histc(),
    lambda L: L.tensor([1, 2], dtype=L.uint16).histc(3, 0, 1),
    lambda L: L.tensor([1j, 2]).histc(),
    lambda L: L.tensor([1j, 2]).histc(3, 0, 1),
    lambda L: L.tensor([1, 2]).histc(0),
    lambda L: L.tensor([1, 2]).histc(3, 2, 1),
    lambda L: L.unique(L.empty(5, 0, 0), dim=1),
    lambda L: L.unique(L.empty(5, 0, 5), dim=2),
    lambda L: L.unique_consecutive(L.empty(5, 0, 0), dim=1),
    lambda L: L.unique_consecutive(L.empty(5, 0, 5), dim=2),
    lambda L: L.unique_consecutive(L.empty(5, 0), dim=1, return_inverse=True, return_counts=True),
])
def test_selection_errors_as_torch(case):
    assert _err(case, ember) == _err(case, torch)
    if _err(case, torch) is None:
        assert_same(case(ember), case(torch), atol=0, rtol=0)
