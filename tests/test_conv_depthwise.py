"""Depthwise convolution (groups == in channels == out channels) by kernel taps (Note
[Depthwise convolution] in ember/_aten/conv.py): values, gradients and node names as torch's, for
1-d/2-d/3-d, strides, padding, dilation, transposed, and a long kernel that im2col could not
hold in memory."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")
import ember  # noqa: E402

CASES = [  # (N, C, spatial, kernel, stride, padding, dilation)
    (2, 3, (7, 6), (3, 3), 1, 1, 1),
    (2, 4, (9, 8), (3, 2), 2, (1, 0), (2, 1)),
    (1, 2, (11,), (5,), 3, 2, 1),
    (1, 2, (5, 6, 7), (3, 1, 2), (1, 2, 1), (1, 0, 1), 1),
]


def _run(L, x, w, b, case, dtype, transposed):
    n, c, sp, k, stride, pad, dil = case
    nd = len(sp)
    dt = getattr(L, dtype)
    xt = L.tensor(x, dtype=dt, requires_grad=True)
    wt = L.tensor(w, dtype=dt, requires_grad=True)
    bt = L.tensor(b, dtype=dt, requires_grad=True)
    F = L.nn.functional
    if transposed:
        y = getattr(F, f"conv_transpose{nd}d")(xt, wt, bt, stride, pad, 0, c, dil)
    else:
        y = getattr(F, f"conv{nd}d")(xt, wt, bt, stride, pad, dil, c)
    weights = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=dt)
    (y * weights).sum().backward()
    return [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()], \
        y.grad_fn.name()


@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "transposed"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_depthwise_as_torch(case, dtype, transposed):
    rng = np.random.default_rng(0)
    n, c, sp, k = case[:4]
    x = rng.standard_normal((n, c) + sp)
    w = rng.standard_normal((c, 1) + k)
    b = rng.standard_normal(c)
    mine, my_name = _run(ember, x, w, b, case, dtype, transposed)
    theirs, their_name = _run(torch, x, w, b, case, dtype, transposed)
    assert my_name == their_name
    tol = 1e-10 if dtype == "float64" else 1e-4
    for m, t in zip(mine, theirs):
        assert m.shape == t.shape and m.dtype == t.dtype
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


def test_long_depthwise_kernel_needs_no_columns():
    # a (1, 129) kernel over a 1024x1024 image: im2col would hold 129 copies of the input
    # (1.5 GiB for 3 channels); the taps need only the output
    from ember._aten import conv
    x = np.random.default_rng(1).standard_normal((1, 3, 64, 1024)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((3, 1, 1, 129)).astype(np.float32)
    expected = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                          padding=(0, 64), groups=3).numpy()
    got = ember.nn.functional.conv2d(ember.from_numpy(x), ember.from_numpy(w), padding=(0, 64),
                                     groups=3).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert conv._depthwise(w.shape, 3) and not conv._depthwise(w.shape, 1)
