"""Pooling, batch norm and convolution on channels_last / channels_last_3d memory: values,
gradients and the strides of every result equal PyTorch's, for contiguous and channels-last
inputs (the kernels work on NHWC / NDHWC memory directly)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle for these tests")

FORMATS = {"contiguous": None, "channels_last": "channels_last",
           "channels_last_3d": "channels_last_3d"}


def _pair(shape, fmt, seed=0, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if fmt is not None:
        e = e.contiguous(memory_format=getattr(ember, fmt))
        t = t.contiguous(memory_format=getattr(torch, fmt))
    return e, t


def _same(e, t, atol=1e-4, rtol=1e-4):
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride(), (e.stride(), t.stride())
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol)


def _check(fn, shape, fmt, seed=1, grad_fmt=True, grad_strides=True):
    """fn(lib, F, x) on the same input in both libraries: outputs and input gradients equal,
    strides too (the gradient's only when grad_strides); the gradient is fed in the output's
    layout and, when grad_fmt, contiguous."""
    ex, tx = _pair(shape, FORMATS[fmt], seed)
    ex.requires_grad_(), tx.requires_grad_()
    eo, to = fn(ember, ember.nn.functional, ex), fn(torch, torch.nn.functional, tx)
    eo, to = (eo, to) if isinstance(to, tuple) else ((eo,), (to,))
    for e, t in zip(eo, to):
        _same(e, t)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(to[0].shape)).astype(np.float32)
    feeds = [lambda lib, o: lib.empty_like(o).copy_(lib.from_numpy(g))]
    if grad_fmt:
        feeds.append(lambda lib, o: lib.from_numpy(g.copy()))
    for feed in feeds:
        e = ember.autograd.grad(eo[0], ex, feed(ember, eo[0]), retain_graph=True)[0]
        t = torch.autograd.grad(to[0], tx, feed(torch, to[0]), retain_graph=True)[0]
        if grad_strides:
            _same(e, t)
        else:
            np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-4, rtol=1e-4)


POOL_2D = [
    lambda L, F, x: F.max_pool2d(x, 2, return_indices=True),
    lambda L, F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
    lambda L, F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
    lambda L, F, x: F.max_pool2d(x, (3, 2), (1, 2), (1, 0), dilation=(1, 2),
                                 return_indices=True),
    lambda L, F, x: F.max_pool2d(x, 2, 1),
    lambda L, F, x: F.avg_pool2d(x, 2),
    lambda L, F, x: F.avg_pool2d(x, 3, 2, 1),
    lambda L, F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda L, F, x: F.avg_pool2d(x, (3, 2), (2, 1), (1, 1), divisor_override=3),
    lambda L, F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    lambda L, F, x: F.adaptive_avg_pool2d(x, 1),
    lambda L, F, x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
]


@pytest.mark.parametrize("fmt", ["contiguous", "channels_last"])
@pytest.mark.parametrize("i", range(len(POOL_2D)))
def test_pool2d(i, fmt):
    _check(POOL_2D[i], (2, 5, 9, 8), fmt)


POOL_3D = [
    lambda L, F, x: F.max_pool3d(x, 2, return_indices=True),
    lambda L, F, x: F.max_pool3d(x, 3, 2, 1, return_indices=True),
    lambda L, F, x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), ceil_mode=True),
    lambda L, F, x: F.avg_pool3d(x, 2),
    lambda L, F, x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
    lambda L, F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
    lambda L, F, x: F.adaptive_avg_pool3d(x, 1),
    lambda L, F, x: F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
]


@pytest.mark.parametrize("fmt", ["contiguous", "channels_last_3d"])
@pytest.mark.parametrize("i", range(len(POOL_3D)))
def test_pool3d(i, fmt):
    _check(POOL_3D[i], (2, 3, 5, 7, 6), fmt)


def test_max_pool_ties_nan_and_padding_windows():
    """Ties keep the first index, NaN wins, and an all-padding-or--inf window points at its
    first element inside the input, in NHWC memory too."""
    a = np.zeros((2, 3, 6, 6), np.float32)
    a[0, 1, 2, 3] = np.nan
    a[1, :, :2, :2] = -np.inf
    e = ember.from_numpy(a.copy()).contiguous(memory_format=ember.channels_last)
    t = torch.from_numpy(a.copy()).contiguous(memory_format=torch.channels_last)
    for args in ((2,), (3, 2, 1), (3, 1, 1)):
        ev, ei = ember.nn.functional.max_pool2d(e, *args, return_indices=True)
        tv, ti = torch.nn.functional.max_pool2d(t, *args, return_indices=True)
        _same(ev, tv)
        assert ei.stride() == ti.stride()
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_pool_dtypes_channels_last(dtype):
    ex, tx = _pair((2, 3, 6, 5), "channels_last", 3, np.float64)
    if dtype is np.int64:
        ex, tx = (ex * 10).to(ember.int64), (tx * 10).to(torch.int64)
    for fn in (lambda F, x: F.max_pool2d(x, 2), lambda F, x: F.avg_pool2d(x, 3, 1, 1)):
        _same(fn(ember.nn.functional, ex), fn(torch.nn.functional, tx))


@pytest.mark.parametrize("fmt", ["contiguous", "channels_last", "channels_last_3d"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(fmt, training):
    shape = (3, 5, 4, 6, 2) if fmt == "channels_last_3d" else (4, 5, 6, 7)
    mod = "BatchNorm3d" if len(shape) == 5 else "BatchNorm2d"
    ebn, tbn = getattr(ember.nn, mod)(5), getattr(torch.nn, mod)(5)
    with torch.no_grad():
        tbn.weight.uniform_(0.5, 1.5), tbn.bias.uniform_(-1, 1)
        tbn.running_mean.uniform_(-1, 1), tbn.running_var.uniform_(0.5, 2)
    ebn.load_state_dict({k: ember.from_numpy(v.numpy().copy())
                         for k, v in tbn.state_dict().items()})
    ebn.train(training), tbn.train(training)
    ex, tx = _pair(shape, FORMATS[fmt], 7)
    ex = (ex * 3 + 2).detach().requires_grad_()
    tx = (tx * 3 + 2).detach().requires_grad_()
    eo, to = ebn(ex), tbn(tx)
    _same(eo, to)
    g = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    egrads = ember.autograd.grad(eo, [ex] + list(ebn.parameters()), ember.from_numpy(g))
    tgrads = torch.autograd.grad(to, [tx] + list(tbn.parameters()), torch.from_numpy(g))
    _same(egrads[0], tgrads[0])
    for e, t in zip(egrads[1:], tgrads[1:]):
        np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-3, rtol=1e-4)
    np.testing.assert_allclose(ebn.running_mean.numpy(), tbn.running_mean.numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ebn.running_var.numpy(), tbn.running_var.numpy(), rtol=1e-5)


@pytest.mark.parametrize("fmt", ["contiguous", "channels_last"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_several_blocks(fmt, training):
    """64 channels of 5 x 60 x 60: the channels-last kernels' (18000, 64) matrix is walked in
    row blocks of 4096 rows, the last shorter, with the per-channel vectors tiled to a block
    (from 4 blocks up); over NCHW, blocks of channels."""
    ebn, tbn = ember.nn.BatchNorm2d(64), torch.nn.BatchNorm2d(64)
    with torch.no_grad():
        tbn.weight.uniform_(0.5, 1.5), tbn.bias.uniform_(-1, 1)
        tbn.running_mean.uniform_(-1, 1), tbn.running_var.uniform_(0.5, 2)
    ebn.load_state_dict({k: ember.from_numpy(v.numpy().copy())
                         for k, v in tbn.state_dict().items()})
    ebn.train(training), tbn.train(training)
    ex, tx = _pair((5, 64, 60, 60), FORMATS[fmt], 9)
    ex.requires_grad_(), tx.requires_grad_()
    eo, to = ebn(ex), tbn(tx)
    _same(eo, to)
    g = np.random.default_rng(10).standard_normal((5, 64, 60, 60)).astype(np.float32)
    egrads = ember.autograd.grad(eo, [ex] + list(ebn.parameters()), ember.from_numpy(g))
    tgrads = torch.autograd.grad(to, [tx] + list(tbn.parameters()), torch.from_numpy(g))
    _same(egrads[0], tgrads[0])
    for e, t in zip(egrads[1:], tgrads[1:]):
        np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-3, rtol=1e-4)
    np.testing.assert_allclose(ebn.running_var.numpy(), tbn.running_var.numpy(), rtol=1e-5)


@pytest.mark.parametrize("case", [dict(padding=1, stride=(1, 2, 1)),
                                  dict(padding=(0, 1, 2), dilation=(1, 2, 1), groups=3)])
@pytest.mark.parametrize("where", ["input", "weight"])
def test_conv3d_channels_last_3d(where, case):
    groups = case.get("groups", 1)
    ex, tx = _pair((2, 6, 5, 6, 4), "channels_last_3d" if where == "input" else None, 1)
    ew, tw = _pair((6, 6 // groups, 2, 3, 2), "channels_last_3d" if where == "weight" else None,
                   2)
    eb, tb = _pair((6,), None, 3)
    for a in (ex, tx, ew, tw, eb, tb):
        a.requires_grad_()
    eo = ember.nn.functional.conv3d(ex, ew, eb, **case)
    to = torch.nn.functional.conv3d(tx, tw, tb, **case)
    _same(eo, to)
    g = np.random.default_rng(4).standard_normal(tuple(to.shape)).astype(np.float32)
    eg = ember.autograd.grad(eo, (ex, ew, eb), ember.empty_like(eo).copy_(ember.from_numpy(g)))
    tg = torch.autograd.grad(to, (tx, tw, tb), torch.empty_like(to).copy_(torch.from_numpy(g)))
    for e, t in zip(eg, tg):
        _same(e, t, atol=1e-3)


def test_meta_strides():
    """The Meta kernels give the strides the CPU kernels give."""
    for fmt, shape, fn in (
            ("channels_last", (2, 3, 6, 5), lambda F, x: F.max_pool2d(x, 2, return_indices=True)),
            ("channels_last", (2, 3, 6, 5), lambda F, x: F.avg_pool2d(x, 2)),
            ("channels_last_3d", (2, 3, 4, 6, 5), lambda F, x: F.max_pool3d(x, 2)),
            ("channels_last_3d", (2, 3, 4, 6, 5), lambda F, x: F.avg_pool3d(x, 2)),
            ("channels_last_3d", (2, 3, 4, 6, 5),
             lambda F, x: F.batch_norm(x, None, None, training=True))):
        x = ember.empty(shape, device="meta").contiguous(memory_format=getattr(ember, fmt))
        c = ember.zeros(shape).contiguous(memory_format=getattr(ember, fmt))
        F = ember.nn.functional
        em, ec = fn(F, x), fn(F, c)
        em, ec = (em, ec) if isinstance(em, tuple) else ((em,), (ec,))
        for m, r in zip(em, ec):
            assert m.stride() == r.stride()


def test_resnet_stem_channels_last_3d_train_step():
    """conv3d -> bn3d -> relu -> max_pool3d, channels_last_3d end to end: every activation and
    the input gradient keep the layout, as in PyTorch."""
    def net(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Conv3d(3, 4, 3, padding=1, bias=False),
                                 lib.nn.BatchNorm3d(4), lib.nn.ReLU(inplace=True),
                                 lib.nn.MaxPool3d(2))
    em = net(ember).to(memory_format=ember.channels_last_3d)
    tm = net(torch).to(memory_format=torch.channels_last_3d)
    em.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in tm.state_dict().items()})
    ex, tx = _pair((2, 3, 4, 6, 6), "channels_last_3d", 5)
    ex.requires_grad_(), tx.requires_grad_()
    eo, to = em(ex), tm(tx)
    _same(eo, to)
    _same(ember.autograd.grad(eo.sum(), ex)[0], torch.autograd.grad(to.sum(), tx)[0])


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d", "transposed"])
def test_ops_with_contiguous_results(fmt):
    """masked_fill and (log_)softmax return contiguous results (and gradients) for any input
    layout, as PyTorch's CPU kernels do."""
    if fmt == "transposed":
        ex, tx = _pair((5, 4), None, 2)
        ex, tx = ex.t(), tx.t()
    else:
        ex, tx = _pair((2, 3, 4, 5, 2)[:4 if fmt == "channels_last" else 5], fmt, 2)
    ex.requires_grad_(), tx.requires_grad_()
    for fn in (lambda L, x: x.masked_fill(x > 0, 0.5), lambda L, x: L.softmax(x, 1),
               lambda L, x: L.log_softmax(x, 0)):
        eo, to = fn(ember, ex), fn(torch, tx)
        _same(eo, to)
        g = np.random.default_rng(3).standard_normal(tuple(to.shape)).astype(np.float32)
        _same(ember.autograd.grad(eo, ex, ember.empty_like(ex).copy_(ember.from_numpy(g)))[0],
              torch.autograd.grad(to, tx, torch.empty_like(tx).copy_(torch.from_numpy(g)))[0])


@pytest.mark.parametrize("fmt", ["contiguous", "channels_last", "channels_last_3d"])
def test_constant_pad_keeps_layout(fmt):
    shape = (2, 3, 4, 5, 3) if fmt == "channels_last_3d" else (2, 3, 4, 5)
    ex, tx = _pair(shape, FORMATS[fmt], 6)
    for pad in ((1, 1), (1, 2, 0, 1), (-1, 1)):
        _same(ember.nn.functional.pad(ex, pad, value=0.5),
              torch.nn.functional.pad(tx, pad, value=0.5))


# (the upsampling gradients' strides are not PyTorch's yet: ember's interpolate is composite,
# its gradient laid out by index_select / matmul backward -- only values are compared)
UPSAMPLING = [
    (4, lambda L, F, x: F.interpolate(x, scale_factor=2, mode="nearest")),
    (4, lambda L, F, x: F.interpolate(x, size=(5, 7), mode="bilinear")),
    (4, lambda L, F, x: F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=True)),
    (5, lambda L, F, x: F.interpolate(x, scale_factor=2, mode="trilinear")),
    (5, lambda L, F, x: F.interpolate(x, scale_factor=2, mode="nearest")),
]


@pytest.mark.parametrize("i", range(len(UPSAMPLING)))
def test_upsampling_keeps_layout(i):
    nd, fn = UPSAMPLING[i]
    shape = (2, 4, 4, 5, 3) if nd == 5 else (2, 4, 4, 6)
    _check(fn, shape, "channels_last_3d" if nd == 5 else "channels_last", grad_strides=False)


LAYOUT_KEEPING = [
    (4, lambda L, F, x: F.interpolate(x, size=(3, 2), mode="area")),
    (5, lambda L, F, x: F.interpolate(x, size=(2, 3, 2), mode="area")),
    (4, lambda L, F, x: F.group_norm(x, 2, L.ones(4), L.zeros(4))),
    (5, lambda L, F, x: F.group_norm(x, 4)),
    (4, lambda L, F, x: F.pixel_shuffle(x, 2)),
]


@pytest.mark.parametrize("i", range(len(LAYOUT_KEEPING)))
def test_ops_keeping_layout(i):
    """Area interpolation, group norm and pixel shuffle: results and gradients in PyTorch's
    layout for channels_last(_3d) inputs."""
    nd, fn = LAYOUT_KEEPING[i]
    shape = (2, 4, 4, 5, 3) if nd == 5 else (2, 4, 4, 6)
    _check(fn, shape, "channels_last_3d" if nd == 5 else "channels_last", grad_fmt=True)


@pytest.mark.parametrize("fmt", ["contiguous", "channels_last"])
def test_max_pool_backward_nonfinite_grad(fmt):
    """A NaN / inf in the gradient reaches only the element its index names."""
    ex, tx = _pair((2, 3, 6, 5), FORMATS[fmt], 4)
    ex.requires_grad_(), tx.requires_grad_()
    eo, to = ember.nn.functional.max_pool2d(ex, 2), torch.nn.functional.max_pool2d(tx, 2)
    g = np.ones(tuple(to.shape), np.float32)
    g[0, 1, 1, 1], g[1, 2, 0, 0] = np.nan, np.inf
    _same(ember.autograd.grad(eo, ex, ember.from_numpy(g))[0],
          torch.autograd.grad(to, tx, torch.from_numpy(g))[0])


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
def test_reductions_and_scans_contiguous(fmt):
    """Reductions and scans of a channels-last input return contiguous results, as PyTorch's."""
    ex, tx = _pair((2, 3, 4, 5, 2)[:4 if fmt == "channels_last" else 5], fmt, 9)
    for fn in (lambda L, x: x.sum(2, keepdim=True), lambda L, x: x.mean((2, 3)),
               lambda L, x: x.var(2), lambda L, x: x.amax(3), lambda L, x: x.logsumexp(2),
               lambda L, x: L.linalg.vector_norm(x, dim=2), lambda L, x: (x > 0).all(2),
               lambda L, x: x.prod(2), lambda L, x: x.cumsum(2), lambda L, x: x.cummax(3)[0],
               lambda L, x: x.max(2)[0], lambda L, x: x.argmax(2)):
        _same(fn(ember, ex), fn(torch, tx))
