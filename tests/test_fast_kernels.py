"""The fast paths of hot training kernels against torch, bit for bit where torch is exact:
threshold_backward (ReLU's backward, computed by masking bits), Bernoulli masks drawn by
comparing 53-bit integers (dropout), and the convolution at the MNIST example's shapes."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from _torch_oracle import check, to_numpy  # noqa: E402


def _bits_equal(e, t):
    """Same dtype, shape and bytes (so +0.0 and -0.0, and NaN payloads, must agree)."""
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    ours = e.detach().contiguous()
    theirs = t.detach().contiguous()
    if t.dtype is torch.bfloat16:
        ours, theirs = ours.view(ember.int16), theirs.view(torch.int16)
    assert ours.numpy().tobytes() == theirs.numpy().tobytes()


# ---- threshold_backward -----------------------------------------------------------------------
def _special_values(rng, shape):
    a = rng.standard_normal(shape)
    flat = a.reshape(-1)
    flat[:8] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5]
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32",
                                   "int64", "uint8"])
@pytest.mark.parametrize("threshold", [0, 0.5, -1])
def test_threshold_backward_bits(dtype, threshold):
    rng = np.random.default_rng(0)
    x = _special_values(rng, (5, 7))
    g = _special_values(rng, (5, 7))[::-1]          # the special values meet other ones
    if dtype.startswith(("int", "uint")):
        x, g = np.nan_to_num(x * 10), np.nan_to_num(g * 10)
        x, g = np.clip(x, -100, 100), np.clip(g, -100, 100)
        if dtype == "uint8":
            x, g = np.abs(x), np.abs(g)
    e_args = [ember.tensor(a.copy()).to(getattr(ember, dtype)) for a in (g, x)]
    t_args = [torch.tensor(a.copy()).to(getattr(torch, dtype)) for a in (g, x)]
    _bits_equal(ember.ops.aten.threshold_backward(*e_args, threshold),
                torch.ops.aten.threshold_backward(*t_args, threshold))


def test_threshold_backward_broadcasts_and_strided():
    rng = np.random.default_rng(1)
    x = _special_values(rng, (6, 4)).astype(np.float32)
    g = rng.standard_normal((4, 6)).astype(np.float32)
    column = rng.standard_normal((4, 1)).astype(np.float32)
    for grad in (g, column):                     # a gradient that broadcasts against x.T
        _bits_equal(ember.ops.aten.threshold_backward(ember.tensor(grad), ember.tensor(x).T, 0),
                    torch.ops.aten.threshold_backward(torch.tensor(grad), torch.tensor(x).T, 0))


def test_relu_backward_at_mnist_shape():
    """ReLU after conv2 of the MNIST example: input and gradient through autograd."""
    x = np.random.default_rng(2).standard_normal((64, 64, 24, 24)).astype(np.float32)
    check(lambda lib, t: lib.nn.functional.relu(t), x)


def test_threshold_backward_gradcheck():
    x = ember.tensor([[-1.5, 0.25, 2.0], [0.75, -0.1, 3.0]], dtype=ember.float64,
                     requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.nn.functional.threshold(t, 0.5, -2.0), (x,))


# ---- Bernoulli masks (dropout) ----------------------------------------------------------------
def _drawn_uniform(seed, n):
    """The float64 uniforms torch's bernoulli_(p) compares against, from the same seed."""
    g = torch.Generator().manual_seed(seed)
    return torch.empty(n, dtype=torch.float64).uniform_(generator=g).numpy()


@pytest.mark.parametrize("which", ["equal", "just_above", "just_below"])
def test_bernoulli_p_on_a_drawn_value(which):
    """p exactly equal to a drawn uniform (u < p is false there) and one ulp either side: the
    integer comparison must draw the line where torch's double comparison does."""
    u = _drawn_uniform(5, 64)
    p = float(u[17])
    p = {"equal": p, "just_above": np.nextafter(p, 2.0),
         "just_below": np.nextafter(p, -1.0)}[which]
    ours = ember.empty(64, dtype=ember.float64).bernoulli_(
        p, generator=ember.Generator().manual_seed(5))
    theirs = torch.empty(64, dtype=torch.float64).bernoulli_(
        p, generator=torch.Generator().manual_seed(5))
    _bits_equal(ours, theirs)
    assert ours[17].item() == (1.0 if which == "just_above" else 0.0)


@pytest.mark.parametrize("p", [2.0**-53, 1 - 2.0**-53, 0.1, 1 / 3])
def test_bernoulli_extreme_p(p):
    ours = ember.empty(3, 1000).bernoulli_(p, generator=ember.Generator().manual_seed(9))
    theirs = torch.empty(3, 1000).bernoulli_(p, generator=torch.Generator().manual_seed(9))
    _bits_equal(ours, theirs)


@pytest.mark.parametrize("shape,p", [((64, 9216), 0.25), ((16, 64, 1024), 0.1)], ids=str)
def test_dropout_mask_matches_torch(shape, p):
    """Same seed, same mask, same scaled values; the default generators stay in step."""
    ember.manual_seed(123)
    torch.manual_seed(123)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    ours = ember.nn.functional.dropout(ember.tensor(x), p)
    theirs = torch.nn.functional.dropout(torch.tensor(x), p)
    _bits_equal(ours, theirs)
    _bits_equal(ember.rand(5), torch.rand(5))


# ---- convolution at the MNIST example's shapes -------------------------------------------------
@pytest.mark.parametrize("c_in,c_out,size,input_grad", [(1, 32, 28, False), (32, 64, 26, True)])
def test_conv2d_mnist_shapes_float64(c_in, c_out, size, input_grad):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, c_in, size, size))         # the example's batch is 64
    w = rng.standard_normal((c_out, c_in, 3, 3)) * 0.1
    b = rng.standard_normal(c_out)

    def conv(lib, x, w, b):
        if not input_grad:
            x = x.detach()
        return lib.nn.functional.conv2d(x, w, b)
    check(conv, x, w, b, atol=1e-9, rtol=1e-9)
