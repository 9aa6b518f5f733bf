"""The elementwise math, reductions, scans and sorting ops beyond the op table's reach: their
meta kernels, `out=` and in-place variants, the NumPy fallbacks of the special functions, and
rrelu's random slopes. (The op table, tests/op_db.py, checks values, gradients and errors.)"""
import numpy as np
import pytest
import torch

import ember
from _torch_oracle import check, check_meta, meta_pair

S = (2, 3, 4)

META_OPS = [
    lambda L, x: x.tan(),
    lambda L, x: (x.int().erf(), x.lgamma(), L.polygamma(2, x)),
    lambda L, x: (x.isnan(), x.isfinite(), x.nan_to_num(posinf=1.0)),
    lambda L, x: (x.round(decimals=2), x.int().floor(), x.frac()),
    lambda L, x: (L.fmod(x, 2), L.hypot(x, x[0]), L.atan2(x.int(), x), L.copysign(x, -1)),
    lambda L, x: (x.int() << 2, L.bitwise_right_shift(x.long(), x.long()[0])),
    lambda L, x: (L.lerp(x, x[0], 0.5), L.lerp(x, x, x[:, :1]), L.addcmul(x, x[0], x[:, :1]),
                  L.addcdiv(x, x, x, value=2)),
    lambda L, x: (L.nn.functional.elu(x), L.selu(x), L.nn.functional.hardtanh(x),
                  L.nn.functional.glu(x, 2), L.nn.functional.prelu(x, L.ones(3, device=x.device)),
                  L.nn.functional.logsigmoid(x), L.threshold(x, 0.5, 1),
                  L.nn.functional.softshrink(x), x.hardshrink()),
    lambda L, x: (x.norm(), x.norm(p=1, dim=1), L.linalg.vector_norm(x, 3, (0, 2), True),
                  L.linalg.matrix_norm(x), L.linalg.matrix_norm(x, 1, (0, 2), True)),
    lambda L, x: (x.median(), x.median(1), x.nanmedian(0, True), x.mode(), x.mode(0, True)),
    lambda L, x: (x.nansum(), x.nansum(1, dtype=L.float64), x.int().nansum(0),
                  L.count_nonzero(x, (0, 2)), x.nanmean(1)),
    lambda L, x: (x.cumsum(1), x.int().cumsum(0), x.cumprod(2, dtype=L.float64), x.cummax(1),
                  x.cummin(-1), x.logcumsumexp(0)),
    lambda L, x: (L.aminmax(x), L.aminmax(x, dim=1, keepdim=True), L.var_mean(x, 1),
                  L.std_mean(x, (0, 2), keepdim=True)),
    lambda L, x: (x.sort(), x.sort(0, descending=True), x.argsort(1), x.topk(2),
                  x.topk(1, 0, largest=False), x.kthvalue(2, 1), x.kthvalue(1, 0, True)),
    lambda L, x: (L.searchsorted(x.sort().values, x), L.bucketize(x, L.ones(3, device=x.device)),
                  L.searchsorted(x[0, 0].sort().values, x, out_int32=True), L.histc(x, 7)),
    lambda L, x: (L.quantile(x, 0.3), L.nanquantile(x, 0.5, 1, keepdim=True)),
]


@pytest.mark.parametrize("k", range(len(META_OPS)))
def test_meta(k):
    check_meta(META_OPS[k], S)


@pytest.mark.parametrize("fn", [lambda L, x: L.unique(x), lambda L, x: L.unique(x, dim=0),
                                lambda L, x: L.unique_consecutive(x),
                                lambda L, x: L.bincount(x.long().flatten())])
def test_meta_data_dependent_shapes(fn):
    """unique and bincount cannot know their output shape without data: both refuse."""
    for x in meta_pair(S):
        with pytest.raises(NotImplementedError):
            fn(ember if isinstance(x, ember.Tensor) else torch, x)


X = np.random.default_rng(0).uniform(-3, 3, (3, 4)).astype(np.float32)

OUT_OPS = [
    lambda L, x: L.tan(x, out=L.empty(0)),
    lambda L, x: L.round(x, decimals=1, out=L.empty(3, 4)),
    lambda L, x: L.fmod(x, 1.5, out=L.empty(0)),
    lambda L, x: L.hypot(x, x, out=L.empty(0)),
    lambda L, x: L.lerp(x, x * 2, 0.25, out=L.empty(0)),
    lambda L, x: L.addcmul(x, x, x, value=3, out=L.empty(0)),
    lambda L, x: L.cumsum(x, 1, out=L.empty(0)),
    lambda L, x: L.logcumsumexp(x, 0, out=L.empty(0)),
    lambda L, x: L.nansum(x, 1, out=L.empty(0)),
    lambda L, x: L.norm(x, dim=1, out=L.empty(0)),
    lambda L, x: L.sort(x, 1, out=(L.empty(0), L.empty(0, dtype=L.long))),
    lambda L, x: L.topk(x, 2, out=(L.empty(0), L.empty(0, dtype=L.long))),
    lambda L, x: L.median(x, 0, out=(L.empty(0), L.empty(0, dtype=L.long))),
    lambda L, x: L.cummax(x, 1, out=(L.empty(0), L.empty(0, dtype=L.long))),
    lambda L, x: L.aminmax(x, dim=0, out=(L.empty(0), L.empty(0))),
    lambda L, x: L.searchsorted(L.arange(5.0), x, out=L.empty(0, dtype=L.long)),
    lambda L, x: L.histc(x, 5, out=L.empty(0)),
]


@pytest.mark.parametrize("k", range(len(OUT_OPS)))
def test_out(k):
    """`out=` gives the same values, dtype and shape (resizing an empty out tensor)."""
    check(OUT_OPS[k], X, grad=False)


def test_out_returns_the_out_tensors():
    x = ember.tensor(X)
    values, indices = ember.empty(0), ember.empty(0, dtype=ember.long)
    r = ember.sort(x, out=(values, indices))
    assert r.values is values and r.indices is indices
    o = ember.empty(0)
    assert ember.erf(x, out=o) is o


INPLACE_OPS = [
    lambda L, x: x.clone().atan_(),
    lambda L, x: L.exp_(x.clone()),
    lambda L, x: x.clone().digamma_(),
    lambda L, x: x.clone().round_(decimals=2),
    lambda L, x: x.clone().hypot_(x),
    lambda L, x: x.clone().lerp_(x * 3, 0.75),
    lambda L, x: x.clone().addcdiv_(x, x + 4, value=0.5),
    lambda L, x: x.clone().cumprod_(1),
    lambda L, x: L.nn.functional.elu_(x.clone()),
    lambda L, x: L.nn.functional.mish(x.clone(), inplace=True),
    lambda L, x: L.celu_(x.clone(), 0.5),
    lambda L, x: L.rrelu_(x.clone(), 0.1, 0.2),
]


@pytest.mark.parametrize("k", range(len(INPLACE_OPS)))
def test_inplace_through_clone(k):
    """In-place ops on a clone: values and the gradient through them."""
    check(INPLACE_OPS[k], X / 4)


def test_inplace_returns_self_and_names_its_node():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        assert y.tan_() is y and y.cumsum_(0) is y
        assert type(y.grad_fn).__name__ == "CumsumBackward0"


METHOD_NAMES = (
    "tan asin acos atan sinh cosh asinh acosh atanh arcsin arccos arctan arcsinh arccosh "
    "arctanh log2 log10 exp2 reciprocal erf erfc erfinv lgamma digamma polygamma trunc fix "
    "floor ceil round frac isnan isinf isfinite nan_to_num fmod hypot atan2 arctan2 copysign "
    "bitwise_left_shift bitwise_right_shift lerp addcmul addcdiv prelu norm median nanmedian "
    "mode quantile nanquantile nansum nanmean count_nonzero cumsum cumprod cummax cummin "
    "logcumsumexp aminmax sort argsort msort topk kthvalue unique unique_consecutive histc "
    "bincount hardshrink").split()


def test_every_method_and_function_torch_has():
    for name in METHOD_NAMES:
        assert hasattr(ember.Tensor, name) == hasattr(torch.Tensor, name), name
        assert hasattr(ember, name) == hasattr(torch, name), name
        if hasattr(torch.Tensor, name + "_"):
            assert hasattr(ember.Tensor, name + "_"), name + "_"
        if hasattr(torch, name + "_"):
            assert hasattr(ember, name + "_"), name + "_"
    for name in ("elu selu celu leaky_relu prelu rrelu hardtanh hardsigmoid hardswish mish "
                 "logsigmoid softsign tanhshrink threshold glu relu6 hardshrink softshrink "
                 "softmin").split():
        assert hasattr(ember.nn.functional, name), name
        if hasattr(torch.nn.functional, name + "_"):
            assert hasattr(ember.nn.functional, name + "_"), name + "_"


def test_rrelu_training_draws_the_same_slopes():
    """In training, rrelu's slopes come from the generator in PyTorch's order."""
    x = np.random.default_rng(1).uniform(-2, 2, (4, 5))
    for seed in (0, 3):
        outs = []
        for m in (ember, torch):
            g = m.Generator().manual_seed(seed)
            outs.append(m.rrelu(m.tensor(x), training=True, generator=g).numpy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


# ---- the NumPy fallbacks of the special functions -------------------------------------------
SPECIAL = [
    ("erf", lambda L, x: L.erf(x), np.linspace(-6, 6, 241)),
    ("erfc", lambda L, x: L.erfc(x), np.linspace(-6, 26, 321)),
    ("erfinv", lambda L, x: L.erfinv(x), np.concatenate([np.linspace(-1, 1, 201),
                                                         [1 - 1e-12, -1 + 1e-15, 1.5]])),
    ("lgamma", lambda L, x: L.lgamma(x), np.concatenate([np.linspace(-7.7, 30, 378),
                                                         [0, -1, -2, 1e-8, 1e5, -np.inf]])),
    ("digamma", lambda L, x: L.digamma(x), np.concatenate([np.linspace(-7.7, 30, 378),
                                                           [0, -0.0, -1, 1e-8, 1e5]])),
    ("polygamma1", lambda L, x: L.polygamma(1, x), np.linspace(-7.7, 30, 378)),
    ("polygamma3", lambda L, x: L.polygamma(3, x), np.linspace(-7.7, 30, 378)),
]


@pytest.mark.parametrize("name, fn, x", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_special_functions_without_scipy(monkeypatch, name, fn, x):
    """With SciPy missing, the NumPy fallbacks give PyTorch's float64 values."""
    from ember._aten import _special
    monkeypatch.setattr(_special, "_scipy", False)
    e = fn(ember, ember.tensor(x)).numpy()
    t = fn(torch, torch.tensor(x)).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-12, equal_nan=True)
