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
