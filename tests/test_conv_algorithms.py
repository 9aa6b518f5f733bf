"""Convolution algorithms chosen by shape (ember/_aten/conv.py) against torch: the direct
GEMM route of 1x1 convolutions with many pixels per sample, forward and both gradients."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")


@pytest.mark.parametrize("stride, groups, size", [(1, 1, 32), (2, 1, 64), (1, 2, 33)])
def test_direct_1x1_convolution_matches_torch(stride, groups, size):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, size, size)).astype(np.float32)
    w = rng.standard_normal((6, 4 // groups, 1, 1)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    outs, grads = [], []
    for lib in (torch, ember):
        xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.conv2d(xt, wt, bt, stride=stride, groups=groups)
        y.backward(lib.tensor(np.cos(np.arange(y.numel(), dtype=np.float32)).reshape(y.shape)))
        outs.append(y.detach().numpy())
        grads.append([t.grad.numpy() for t in (xt, wt, bt)])
    assert outs[0].shape == outs[1].shape
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
    for ge, gt in zip(grads[1], grads[0]):
        np.testing.assert_allclose(ge, gt, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape, weight, kwargs", [
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(padding=1)),
    ((2, 4, 33, 32), (6, 2, 1, 1), dict(groups=2)),
    ((1, 4, 7, 7), (5, 4, 3, 2), dict(stride=2, dilation=(1, 2))),
])
def test_benchmark_mode_matches_torch(shape, weight, kwargs, monkeypatch):
    """ember.backends.cudnn.benchmark times the algorithms at a shape's first use and caches
    the fastest; every choice agrees with torch, and deterministic mode skips the timing."""
    from ember._aten import conv
    monkeypatch.setattr(ember.backends.cudnn, "benchmark", True)
    monkeypatch.setattr(conv, "_chosen", {})
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(weight).astype(np.float32)
    expected = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), **kwargs)
    for _ in range(2):   # first use: timed and cached; second: the cached choice
        r = ember.nn.functional.conv2d(ember.from_numpy(x), ember.from_numpy(w), **kwargs)
        assert r.stride() == expected.stride()
        np.testing.assert_allclose(r.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
    assert len(conv._chosen) == 1
    assert next(iter(conv._chosen.values())) in ("im2col", "direct_1x1", "nhwc", "winograd")
    pair = lambda v: v if isinstance(v, tuple) else (v, v)
    names = conv._algorithms(x, w, pair(kwargs.get("stride", 1)), pair(kwargs.get("padding", 0)),
                             pair(kwargs.get("dilation", 1)), kwargs.get("groups", 1))
    assert ("winograd" in names) == (weight[2:] == (3, 3) and "stride" not in kwargs)
    for name in names:   # each algorithm on its own
        conv._chosen = {k: name for k in conv._chosen}
        r = ember.nn.functional.conv2d(ember.from_numpy(x), ember.from_numpy(w), **kwargs)
        np.testing.assert_allclose(r.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(ember.backends.cudnn, "deterministic", True)
    monkeypatch.setattr(conv, "_chosen", {})
    ember.nn.functional.conv2d(ember.from_numpy(x), ember.from_numpy(w), **kwargs)
    assert conv._chosen == {}


@pytest.mark.parametrize("n, c, h, w, o, padding", [
    (2, 3, 9, 8, 4, 1), (3, 5, 7, 10, 6, 0), (1, 2, 3, 3, 3, 0), (2, 4, 6, 5, 3, 2),
    (1, 1, 28, 28, 8, 0), (2, 16, 13, 11, 7, (1, 0)), (1, 3, 4, 17, 2, (0, 3)),
])
def test_winograd_matches_torch(n, c, h, w, o, padding):
    """Winograd F(2x2, 3x3) over odd and even sizes and paddings, in float32 and float64."""
    from ember._aten import conv
    pad = padding if isinstance(padding, tuple) else (padding, padding)
    rng = np.random.default_rng(n * 100 + c)
    for dt in (np.float32, np.float64):
        x = rng.standard_normal((n, c, h, w)).astype(dt)
        k = rng.standard_normal((o, c, 3, 3)).astype(dt)
        r = conv._conv_winograd(x, k, pad)
        expected = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(k),
                                              padding=pad).numpy()
        assert r.shape == expected.shape and r.dtype == expected.dtype
        tol = 1e-5 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(r, expected, rtol=tol * 10, atol=tol * 10 * np.sqrt(c * 9))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n, c, h, w, o, padding", [
    (9, 32, 16, 16, 32, 1),    # chunks of 4 samples: each thread takes its own
    (5, 32, 9, 7, 40, 1),      # odd maps, one chunk: each step shared over the threads
    (33, 64, 4, 4, 64, 1),     # ResNet's last stage, one chunk
    (3, 32, 12, 11, 64, 0),    # no padding (MNIST's second convolution), O > C
    (4, 48, 11, 12, 32, 2),    # a padding wider than the kernel's reach
])
def test_winograd_gradients_match_torch(monkeypatch, threads, n, c, h, w, o, padding):
    """The rule of thumb picks Winograd for these 3x3 convolutions (32+ channels): output,
    input gradient and weight gradient against torch, in float32 and float64, with the work
    split over threads (by chunks of samples, or step by step)."""
    from ember._aten import _parallel, conv
    assert conv._winograd_pays((o, c, 3, 3), np.dtype(np.float32), (1, 1), (1, 1), 1)
    monkeypatch.setattr(_parallel, "MIN_ELEMENTS", 1)
    before = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        rng = np.random.default_rng(n * 100 + c)
        for dt in (np.float32, np.float64):
            x = rng.standard_normal((n, c, h, w)).astype(dt)
            k = rng.standard_normal((o, c, 3, 3)).astype(dt)
            tx, tk = (torch.from_numpy(a).requires_grad_() for a in (x, k))
            ty = torch.nn.functional.conv2d(tx, tk, padding=padding)
            g = rng.standard_normal(tuple(ty.shape)).astype(dt)
            expected = [ty.detach()] + list(torch.autograd.grad(ty, (tx, tk), torch.from_numpy(g)))
            ex, ek = (ember.from_numpy(a).requires_grad_() for a in (x, k))
            ey = ember.nn.functional.conv2d(ex, ek, padding=padding)
            got = [ey.detach()] + list(ember.autograd.grad(ey, (ex, ek), ember.from_numpy(g)))
            tol = 2e-5 if dt == np.float32 else 1e-12
            for e, t in zip(got, expected):
                assert tuple(e.shape) == tuple(t.shape) and e.is_contiguous()
                scale = np.abs(t.numpy()).max()
                np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=0, atol=tol * scale)
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape, weight, kwargs", [
    ((64, 6, 12, 12), (16, 6, 5, 5), {}),                            # LeNet's second layer
    ((3, 4, 9, 11), (7, 4, 3, 2), dict(padding=(1, 2))),
    ((2, 5, 10, 9), (8, 5, 3, 3), dict(padding=2, dilation=(2, 1))),
])
def test_input_gradient_by_shifted_products_matches_torch(monkeypatch, threads, shape, weight,
                                                          kwargs):
    """Note [Input gradient by shifted products]: stride-1 convolutions whose input
    gradient is one product per kernel tap added at the tap's shift, on one thread and split
    over samples on two; and the transposed convolution's forward, which is that gradient."""
    from ember._aten import _parallel, conv
    monkeypatch.setattr(_parallel, "_WORKERS", threads)
    monkeypatch.setattr(_parallel, "MIN_ELEMENTS", 1)
    out = [s + 2 * p - d * (k - 1) for s, k, p, d in zip(
        shape[2:], weight[2:], _pair(kwargs.get("padding", 0)), _pair(kwargs.get("dilation", 1)))]
    assert conv._by_shifts(weight[2:], (1, 1), 1, shape[1], out)   # the route under test
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(weight).astype(np.float32)
    g = rng.standard_normal((shape[0], weight[0], *out)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        lib.nn.functional.conv2d(xt, wt, **kwargs).backward(lib.tensor(g))
        # conv_transpose2d of g with the same weight is the same input gradient
        tr = lib.nn.functional.conv_transpose2d(lib.tensor(g), lib.tensor(w), **kwargs)
        results.append((xt.grad.numpy(), wt.grad.numpy(), tr.numpy()))
    for e, t in zip(results[1], results[0]):
        assert e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-4)


def test_input_gradient_by_shifted_products_gradcheck():
    x = ember.randn(2, 4, 6, 7, dtype=ember.float64, requires_grad=True)
    w = ember.randn(5, 4, 3, 2, dtype=ember.float64, requires_grad=True)
    f = lambda x, w: ember.nn.functional.conv2d(x, w, padding=(1, 1), dilation=(1, 2))
    assert ember.autograd.gradcheck(f, (x, w))
    assert ember.autograd.gradgradcheck(f, (x, w))


def _pair(v):
    return v if isinstance(v, tuple) else (v, v)


@pytest.mark.parametrize("shape, weight, kwargs", [
    ((16, 6, 12, 12), (16, 6, 5, 5), {}),                            # LeNet's second layer
    ((4, 8, 16, 16), (16, 8, 3, 3), dict(stride=2, padding=1)),
    ((3, 5, 9, 10), (7, 5, 3, 2), dict(padding=(2, 1), dilation=(2, 1))),
])
def test_small_maps_in_nhwc_match_torch(shape, weight, kwargs):
    """Note [Small maps in NHWC]: outputs at most 12 wide take the NHWC columns in the
    forward and the weight gradient; values, NCHW-contiguous strides and both gradients."""
    from ember._aten import conv
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(weight).astype(np.float32)
    b = rng.standard_normal(weight[0]).astype(np.float32)
    results = []
    for lib in (torch, ember):
        xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.conv2d(xt, wt, bt, **kwargs)
        y.backward(lib.tensor(np.sin(np.arange(y.numel(), dtype=np.float32)).reshape(y.shape)))
        results.append((y.stride(), y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(),
                        wt.grad.stride(), bt.grad.numpy()))
    assert conv._small_maps(weight, 1, results[0][1].shape[2:])   # the route under test
    assert results[1][0] == results[0][0] and results[1][4] == results[0][4]
    for e, t in zip(results[1][1:], results[0][1:]):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-4)
