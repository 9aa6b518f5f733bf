"""memory_format=channels_last as PyTorch's: conversions, and convolution, batch norm, pooling
and ReLU (forward and backward) keeping channels_last results, with torch as the oracle for
values and strides."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle for these tests")


def _pair(shape, seed=0, cl=True):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if cl:
        e, t = e.contiguous(memory_format=ember.channels_last), \
            t.contiguous(memory_format=torch.channels_last)
    return e, t


def _same(e, t, atol=1e-4, rtol=1e-4):
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride(), (e.stride(), t.stride())
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol)


def test_conversions():
    e, t = _pair((2, 3, 4, 5), cl=False)
    for lib, x in ((ember, e), (torch, t)):
        assert not x.is_contiguous(memory_format=lib.channels_last)
    _same(e.to(memory_format=ember.channels_last), t.to(memory_format=torch.channels_last))
    _same(e.to(ember.float64, memory_format=ember.channels_last),
          t.to(torch.float64, memory_format=torch.channels_last))
    ec, tc = e.contiguous(memory_format=ember.channels_last), \
        t.contiguous(memory_format=torch.channels_last)
    assert ec.is_contiguous(memory_format=ember.channels_last) and not ec.is_contiguous()
    assert ec.to(memory_format=ember.channels_last) is ec      # already so: no copy
    _same(ec.contiguous(), tc.contiguous())
    _same(ec.to(memory_format=ember.contiguous_format), tc.to(memory_format=torch.contiguous_format))
    with pytest.raises(RuntimeError):
        ember.randn(2, 3, 4).to(memory_format=ember.channels_last)
    with pytest.raises(RuntimeError):
        torch.randn(2, 3, 4).to(memory_format=torch.channels_last)


def test_module_to_and_elementwise():
    em = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4))
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    em, tm = em.to(memory_format=ember.channels_last), tm.to(memory_format=torch.channels_last)
    assert em[0].weight.stride() == tm[0].weight.stride()
    assert em[0].bias.stride() == tm[0].bias.stride() and em[1].weight.stride() == tm[1].weight.stride()
    e, t = _pair((2, 3, 5, 6))
    for fn in (lambda lib, x: x + 1, lambda lib, x: lib.relu(x), lambda lib, x: lib.sigmoid(x),
               lambda lib, x: x * x, lambda lib, x: lib.empty_like(x).zero_(),
               lambda lib, x: x + lib.ones(3, 1, 1), lambda lib, x: x.clone(),
               lambda lib, x: lib.nn.functional.relu(x.clone(), inplace=True)):
        _same(fn(ember, e), fn(torch, t))


@pytest.mark.parametrize("case", [
    dict(x=(2, 3, 9, 8), w=(4, 3, 3, 3)),
    dict(x=(2, 4, 9, 7), w=(6, 2, 3, 2), stride=2, padding=1, groups=2),
    dict(x=(1, 3, 8, 8), w=(5, 3, 1, 1)),
    dict(x=(2, 3, 10, 9), w=(4, 3, 3, 3), padding=2, dilation=2),
    dict(x=(2, 6, 7, 7), w=(6, 1, 3, 3), padding=1, groups=6),
    dict(x=(3, 4, 11, 6), w=(8, 4, 5, 3), stride=(3, 2), padding=(2, 1)),
])
@pytest.mark.parametrize("where", ["input", "weight", "both"])
def test_conv2d_forward_backward(case, where):
    case = dict(case)
    xs, ws = case.pop("x"), case.pop("w")
    ex, tx = _pair(xs, 1, cl=where in ("input", "both"))
    ew, tw = _pair(ws, 2, cl=where in ("weight", "both"))
    eb, tb = _pair((ws[0],), 3, cl=False)
    for a in (ex, tx, ew, tw, eb, tb):
        a.requires_grad_()
    eo = ember.nn.functional.conv2d(ex, ew, eb, **case)
    to = torch.nn.functional.conv2d(tx, tw, tb, **case)
    _same(eo, to)
    g = np.random.default_rng(4).standard_normal(tuple(to.shape)).astype(np.float32)
    # autograd.grad: the kernels' own layouts (a leaf's .grad takes the leaf's layout)
    # (grad_output in the output's layout, as the layers after a convolution give it)
    egrads = ember.autograd.grad(eo, (ex, ew, eb), ember.empty_like(eo).copy_(ember.from_numpy(g)))
    tgrads = torch.autograd.grad(to, (tx, tw, tb), torch.empty_like(to).copy_(torch.from_numpy(g)))
    _same(egrads[0], tgrads[0])
    for e, t in zip(egrads[1:], tgrads[1:]):
        np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-3, rtol=1e-4)


def test_conv_transpose2d_keeps_channels_last():
    ex, tx = _pair((2, 4, 5, 5), 5)
    ew, tw = _pair((4, 3, 3, 3), 6, cl=False)
    _same(ember.nn.functional.conv_transpose2d(ex, ew, stride=2),
          torch.nn.functional.conv_transpose2d(tx, tw, stride=2))


def test_batch_norm_forward_backward():
    for training in (True, False):
        ex, tx = _pair((4, 5, 6, 7), 7)
        ex.requires_grad_(), tx.requires_grad_()
        ebn, tbn = ember.nn.BatchNorm2d(5), torch.nn.BatchNorm2d(5)
        with torch.no_grad():
            tbn.weight.uniform_(0.5, 1.5), tbn.bias.uniform_(-1, 1)
            tbn.running_mean.uniform_(-1, 1), tbn.running_var.uniform_(0.5, 2)
        ebn.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in tbn.state_dict().items()})
        ebn.train(training), tbn.train(training)
        eo, to = ebn(ex), tbn(tx)
        _same(eo, to)
        g = np.random.default_rng(8).standard_normal(tuple(to.shape)).astype(np.float32)
        egrads = ember.autograd.grad(eo, [ex] + list(ebn.parameters()), ember.from_numpy(g))
        tgrads = torch.autograd.grad(to, [tx] + list(tbn.parameters()), torch.from_numpy(g))
        _same(egrads[0], tgrads[0])
        for e, t in zip(egrads[1:], tgrads[1:]):
            np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-3, rtol=1e-4)
        np.testing.assert_allclose(ebn.running_var.numpy(), tbn.running_var.numpy(), rtol=1e-5)


@pytest.mark.parametrize("pool", [
    lambda F, x: F.max_pool2d(x, 2),
    lambda F, x: F.max_pool2d(x, 3, 2, 1),
    lambda F, x: F.avg_pool2d(x, 2),
    lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    lambda F, x: F.adaptive_avg_pool2d(x, 1),
    # known gap: a non-tiling adaptive average pool's input gradient is not channels_last
    lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    lambda F, x: F.adaptive_max_pool2d(x, 3),
])
def test_pooling_forward_backward(pool):
    ex, tx = _pair((2, 3, 8, 7), 9)
    ex.requires_grad_(), tx.requires_grad_()
    eo, to = pool(ember.nn.functional, ex), pool(torch.nn.functional, tx)
    _same(eo, to)
    g = np.random.default_rng(10).standard_normal(tuple(to.shape)).astype(np.float32)
    _same(ember.autograd.grad(eo, ex, ember.from_numpy(g))[0],
          torch.autograd.grad(to, tx, torch.from_numpy(g))[0])


def test_max_pool_indices():
    ex, tx = _pair((2, 3, 8, 8), 11)
    ev, ei = ember.nn.functional.max_pool2d(ex, 2, return_indices=True)
    tv, ti = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    _same(ev, tv)
    assert ei.stride() == ti.stride()
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


def test_resnet_block_keeps_channels_last():
    def block(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Conv2d(3, 8, 3, padding=1, bias=False), lib.nn.BatchNorm2d(8),
                                 lib.nn.ReLU(inplace=True), lib.nn.MaxPool2d(2),
                                 lib.nn.Conv2d(8, 8, 1), lib.nn.AdaptiveAvgPool2d(1))
    em, tm = block(ember).to(memory_format=ember.channels_last), \
        block(torch).to(memory_format=torch.channels_last)
    em.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in tm.state_dict().items()})
    ex, tx = _pair((2, 3, 8, 8), 12)
    ex.requires_grad_(), tx.requires_grad_()
    eo, to = em(ex), tm(tx)
    _same(eo, to)
    _same(ember.autograd.grad(eo.sum(), ex)[0], torch.autograd.grad(to.sum(), tx)[0])
