"""Fixes found by running PyTorch's test/nn/test_convolution.py under ember: the convolution
backend hook, slow_conv3d's shape checks, _convolution_double_backward and channels-last
depthwise convolutions -- each compared with torch on the same inputs."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402


def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 -- the exception is the result compared
        return exc
    return None


@pytest.mark.parametrize("shape, wshape, transposed, dilation", [
    ((2, 6, 7), (12, 2, 3), False, 1), ((2, 6, 7), (6, 4, 3), True, 1),
    ((2, 6, 7), (12, 2, 3), False, 2), ((2, 6, 7, 8), (12, 2, 3, 3), False, 1),
    ((2, 6, 7, 8), (12, 2, 3, 3), False, 2), ((2, 6, 7, 8), (6, 4, 3, 3), True, 2),
    ((2, 6, 7, 8, 9), (12, 2, 3, 3, 3), False, 1), ((2, 6, 7, 8, 9), (12, 2, 3, 3, 3), False, 2),
    ((2, 6, 7, 8, 9), (6, 4, 3, 3, 3), True, 1), ((0, 6, 7, 8), (12, 2, 3, 3), False, 1),
    ((2, 0, 7), (12, 2, 3), False, 1)])
def test_select_conv_backend_matches_torch_without_mkldnn(shape, wshape, transposed, dilation):
    nd = len(shape) - 2
    args = ((1,) * nd, (0,) * nd, (dilation,) * nd, transposed, (0,) * nd, 3)
    with torch.backends.mkldnn.flags(enabled=False):
        t = _raised(lambda: torch._C._select_conv_backend(torch.randn(shape), torch.randn(wshape),
                                                          None, *args))
        expected = t if isinstance(t, Exception) else \
            torch._C._select_conv_backend(torch.randn(shape), torch.randn(wshape), None, *args)
    got = _raised(lambda: ember._C._select_conv_backend(ember.randn(shape), ember.randn(wshape),
                                                        None, *args))
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected)
        return
    got = ember._C._select_conv_backend(ember.randn(shape), ember.randn(wshape), None, *args)
    assert (got.name, int(got), str(got)) == (expected.name, int(expected), str(expected))
    assert repr(ember._mkldnn) == repr(torch._mkldnn)


@pytest.mark.parametrize("shapes, kernel, stride, padding", [
    (((0, 7, 9, 1, 5), (9, 1)), [5, 5, 5], [5, 5, 5], [2 ** 62] * 3),
    (((0, 7, 9, 1, 5), (9, 1)), [2 ** 32] * 3, [5, 5, 5], [2 ** 31] * 3),
    (((1, 2, 5, 5, 5), (3, 2, 3, 3, 3)), [3, 3, 3], [1, 1, 1], [0, 0, 2 ** 62]),
    (((1, 2, 5, 5, 5), (3, 2, 3, 3, 3)), [0, 3, 3], [1, 1, 1], [0, 0, 0]),
    (((1, 2, 5, 5, 5), (3, 2, 3, 3, 3)), [3, 3, 9], [1, 1, 1], [0, 0, 0]),
    (((1, 0, 5, 5, 5), (3, 2, 3, 3, 3)), [3, 3, 3], [1, 1, 1], [0, 0, 0]),
    (((0, 2, 5, 5, 5), (3, 2, 3, 3, 3)), [3, 3, 3], [1, 1, 1], [0, 0, 0])])
def test_slow_conv3d_shape_checks(shapes, kernel, stride, padding):
    def run(m):
        x, w = (m.zeros(s) for s in shapes)
        return m.ops.aten.slow_conv3d(x, w, kernel_size=kernel, bias=None, stride=stride,
                                      padding=padding)
    t, e = _raised(lambda: run(torch)), _raised(lambda: run(ember))
    if t is None:
        assert e is None and tuple(run(torch).shape) == tuple(run(ember).shape)
    else:
        assert type(e) is type(t) and str(e) == str(t)


@pytest.mark.parametrize("drop", [None, 0, 1, 2, (0, 1, 2)])
@pytest.mark.parametrize("case", [((2, 3, 6), (3, 3, 3), (2,), (1,), (1,), False, 1),
                                  ((2, 4, 3, 4), (4, 2, 2, 3), (2, 1), (0, 1), (1, 2), True, 2)])
def test_convolution_double_backward(case, drop):
    xs, ws, st, pad, dil, tr, groups = case
    rs = np.random.RandomState(0)
    x, w, b = rs.randn(*xs), rs.randn(*ws), rs.randn(ws[1] * groups if tr else ws[0])
    args = (st, pad, dil, tr, (0,) * len(st), groups)
    out = torch.ops.aten.convolution(torch.tensor(x), torch.tensor(w), torch.tensor(b), *args)
    gO = rs.randn(*out.shape)
    gg = [rs.randn(*xs), rs.randn(*ws), rs.randn(*b.shape)]
    dropped = drop if isinstance(drop, tuple) else (drop,)

    def run(m):
        ins = [None if i in dropped else m.tensor(a) for i, a in enumerate(gg)]
        return m.ops.aten._convolution_double_backward(
            *ins, m.tensor(gO), m.tensor(w), m.tensor(x), *args, [True, False, True])
    for t, e in zip(run(torch), run(ember)):
        assert (t is None) == (e is None)
        if t is not None:
            assert t.shape == e.shape
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape, kernel, stride, padding, dilation", [
    ((2, 4, 9, 11), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 4, 9, 11), (3, 2), (2, 3), (1, 0), (2, 1)),
    ((1, 3, 40, 300), (1, 41), (1, 1), (0, 3), (1, 1))])
def test_channels_last_depthwise_conv(shape, kernel, stride, padding, dilation):
    """A channels_last depthwise convolution (taps, no K-times columns): values, strides and
    the three gradients as torch's."""
    rs = np.random.RandomState(1)
    x = rs.rand(*shape).astype(np.float32)
    w = rs.rand(shape[1], 1, *kernel).astype(np.float32)
    res = []
    for m in (torch, ember):
        mx = m.tensor(x).to(memory_format=m.channels_last).requires_grad_()
        mw = m.tensor(w).requires_grad_()
        out = m.nn.functional.conv2d(mx, mw, None, stride, padding, dilation, shape[1])
        g = np.random.RandomState(2).rand(*out.shape).astype(np.float32)
        out.backward(m.tensor(g))
        res.append((out, mx.grad, mw.grad))
    for t, e in zip(*res):
        assert tuple(t.stride()) == tuple(e.stride())
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-4)
