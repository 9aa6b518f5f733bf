"""The nn.* slice of PyTorch's test_ops.py (OpInfos named nn.functional.*), compared with torch
directly: the order of the pooling ops' argument checks, max_pool1d's and adaptive max pooling's
messages, out= on the torch._C._nn bindings and the F functions that are those bindings in
PyTorch (F.gelu, F.linear, F.avg_pool2d, ...), transposed convolutions whose output_padding
reaches the stride (backward), complex F.rms_norm, F.unfold and F.fold, and the checks of the
margin losses, rrelu, padding='same', F.bilinear (complex with grad) and F.pdist (dtypes)."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    """fn(lib) as comparable data: (dtype, shape, values) per tensor, or (exception type, text)."""
    try:
        result = fn(lib)
    except Exception as e:  # noqa: BLE001 -- the exception is the outcome compared
        return type(e).__name__, str(e)
    results = result if isinstance(result, (tuple, list)) else (result,)
    return [(str(t.dtype), tuple(t.shape), np.round(t.detach().cpu().resolve_conj().numpy(), 6))
            for t in results]


def _same(fn):
    ours, theirs = _outcome(fn, ember), _outcome(fn, torch)
    assert type(ours) is type(theirs), (ours, theirs)
    if isinstance(ours, tuple):          # both raised
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for (d1, s1, v1), (d2, s2, v2) in zip(ours, theirs):
        assert (d1, s1) == (d2, s2)
        np.testing.assert_allclose(v1, v2, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    # a negative padding is named before an empty input (pooling_output_shape runs first)
    lambda t: t.nn.functional.avg_pool2d(t.zeros(0, 1, 49), 2, 50, -1),
    lambda t: t.nn.functional.avg_pool3d(t.zeros(0, 1, 49, 50), 2, 50, -1),
    lambda t: t.nn.functional.max_pool2d(t.zeros(0, 1, 49), 2, 50, -1, return_indices=True),
    lambda t: t.nn.functional.max_pool3d(t.zeros(0, 1, 49, 50), 2, 50, -1,
                                         return_indices=True),
    # ... and an empty input still after a kernel size of zero
    lambda t: t.nn.functional.max_pool2d(t.zeros(1, 0, 4), 0),
    # max_pool1d: only the batch dim may be empty; the output width is checked by name
    lambda t: t.nn.functional.max_pool1d(t.zeros(0, 10, requires_grad=True), 1),
    lambda t: t.nn.functional.max_pool1d(t.zeros(2, 0), 1),
    lambda t: t.nn.functional.max_pool1d(t.zeros(0, 10), 1, return_indices=True),
    lambda t: t.nn.functional.max_pool1d(t.zeros(1, 2, 3, 4), 1, return_indices=True),
    lambda t: t.nn.functional.max_pool1d(t.ones(2, 2, 2), 5, 1),
    lambda t: t.nn.functional.max_pool1d(t.ones(2, 2, 2, requires_grad=True), 5, 1),
    lambda t: t.nn.functional.max_pool1d(t.ones(3, 2), 1),
    # adaptive max pooling finds a negative output size when it allocates the output
    lambda t: t.nn.functional.adaptive_max_pool1d(t.ones(1, 1, 1), (-1,)),
    lambda t: t.nn.functional.adaptive_max_pool2d(t.ones(1, 1, 1, 1), (-1, 0)),
    lambda t: t.nn.functional.adaptive_max_pool3d(t.ones(1, 1, 1, 1, 1), (-1, 0, 2)),
    lambda t: t.nn.functional.adaptive_max_pool2d(t.ones(1, 1, 4, 4), (2, 3)),
], ids=lambda _: "")
def test_pooling_checks_as_torch(call):
    _same(call)


def _nn_out(get_op, make_args, kwargs=None):
    """torch._C._nn.<name>(*args, out=...) with an out of the right shape, an empty one (resized),
    a wrong-shaped one (resized, with or without PyTorch's warning) and a long one (refused)."""
    def run(t):
        args = make_args(t)
        kw = kwargs or {}
        op = get_op(t)
        expected = op(*args, **kw)
        results = []
        for out in (t.full_like(expected, float("nan")), t.empty(0)):
            got = op(*args, **kw, out=out)
            assert got is out
            results.append(out)

        wrong = t.empty(*expected.shape[:-1], expected.shape[-1] + 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            op(*args, **kw, out=wrong)
        warned = any("An output with one or more elements" in str(w.message) for w in caught)
        results += [wrong, t.tensor(float(warned))]
        try:
            op(*args, **kw, out=t.empty(expected.shape, dtype=t.long))
            raise AssertionError("an unsafe cast into out= was allowed")
        except RuntimeError:
            pass
        return results
    _same(run)


@pytest.mark.parametrize("name, make_args, kwargs", [
    ("avg_pool2d", lambda t: (t.arange(32.).reshape(2, 1, 4, 4), 2), None),
    ("avg_pool3d", lambda t: (t.arange(64.).reshape(1, 1, 4, 4, 4), 2), None),
    ("gelu", lambda t: (t.linspace(-3, 3, 7),), {"approximate": "tanh"}),
    ("softplus", lambda t: (t.linspace(-3, 3, 7), 2.0, 1.0), None),
    ("softshrink", lambda t: (t.linspace(-3, 3, 7), 0.7), None),
    ("log_sigmoid", lambda t: (t.linspace(-3, 3, 7),), None),
    ("linear", lambda t: (t.arange(6.).reshape(2, 3), t.ones(4, 3), t.arange(4.)), None),
])
@pytest.mark.parametrize("where", ["_C._nn", "nn.functional"])
def test_nn_bindings_take_out(name, make_args, kwargs, where):
    # PyTorch's F.gelu, F.linear, F.avg_pool2d, ... are these bindings (F.logsigmoid is
    # log_sigmoid's)
    if where == "nn.functional" and name == "log_sigmoid":
        name = "logsigmoid"
    _nn_out(lambda t: getattr(t._C._nn if where == "_C._nn" else t.nn.functional, name),
            make_args, kwargs)


def test_hardshrink_takes_out():
    # PyTorch's F.hardshrink is torch.hardshrink, out= included
    _same(lambda t: t.nn.functional.hardshrink(t.linspace(-2, 2, 9), 0.5, out=t.empty(0)))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_output_padding_past_stride_backward(nd):
    # output_padding (allowed up to max(stride, dilation) - 1) may reach the stride: the
    # input gradient drops the positions no input reached
    def run(t):
        g = t.Generator().manual_seed(0)
        x = t.randn((2, 2) + (4,) * nd, generator=g, dtype=t.float64, requires_grad=True)
        w = t.randn((2, 2) + (3,) * nd, generator=g, dtype=t.float64, requires_grad=True)
        b = t.randn(4, generator=g, dtype=t.float64, requires_grad=True)
        f = getattr(t.nn.functional, f"conv_transpose{nd}d")
        y = f(x, w, b, stride=(3, 2, 1)[:nd], padding=(1, 2, 3)[:nd],
              output_padding=(2, 3, 1)[:nd], groups=2, dilation=4)
        return (y,) + t.autograd.grad(y.sin().sum(), (x, w, b))
    _same(run)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_rms_norm_unfold_fold(dtype):
    def run(t):
        dt = getattr(t, dtype)
        g = t.Generator().manual_seed(0)
        x = t.randn(2, 3, generator=g, dtype=dt, requires_grad=True)
        w = t.randn(3, generator=g, dtype=dt)
        r = t.nn.functional.rms_norm(x, (3,), w)
        r2 = t.nn.functional.rms_norm(x, (3,), eps=0.5)
        im = t.randn(1, 2, 4, 4, generator=g, dtype=dt, requires_grad=True)
        u = t.nn.functional.unfold(im, (3, 3))
        cols = t.randn(1, 18, 4, generator=g, dtype=dt, requires_grad=True)
        f = t.nn.functional.fold(cols, (4, 4), (3, 3))
        grads = t.autograd.grad(r.abs().sum() + u.abs().sum() + f.abs().sum(), (x, im, cols))
        return (r, r2, u, f) + grads
    _same(run)


@pytest.mark.parametrize("call", [
    # margin losses: shapes (and multi_margin_loss's weight), then the input dtype, then a long
    # target, then its range
    lambda t: t.nn.functional.multi_margin_loss(t.ones(5, 4), t.ones(5, 4)),
    lambda t: t.nn.functional.multi_margin_loss(t.ones(5, 4), t.zeros(5)),
    lambda t: t.nn.functional.multi_margin_loss(t.ones(5, 4), t.full((5,), 7),
                                                weight=t.ones(5)),
    lambda t: t.nn.functional.multi_margin_loss(t.ones(5, 4).half(), t.full((5,), 7)),
    lambda t: t.nn.functional.multi_margin_loss(t.ones(5, 4, dtype=t.long), t.zeros(5).long()),
    lambda t: t.nn.functional.multi_margin_loss(t.arange(20.).reshape(5, 4), t.arange(5) % 4),
    lambda t: t.nn.functional.multilabel_margin_loss(t.ones(5, 4), t.ones(4)),
    lambda t: t.nn.functional.multilabel_margin_loss(t.ones(5, 4), t.ones(5, 4)),
    lambda t: t.nn.functional.multilabel_margin_loss(t.ones(5, 4).bfloat16(), t.ones(5, 4)),
    lambda t: t.nn.functional.multilabel_margin_loss(t.ones(5, 4, dtype=t.uint8),
                                                     t.ones(5, 4).long()),
    # rrelu's bounds, in every variant
    lambda t: t.nn.functional.rrelu(t.ones(3), 0.3, 0.1),
    lambda t: t.nn.functional.rrelu(t.ones(3), 0.3, 0.1, training=True),
    lambda t: t.nn.functional.rrelu(t.ones(3), 0.3, 0.1, inplace=True),
    lambda t: t.rrelu(t.ones(3), 0.2, 0.2),
    # padding='same' checks the weight's dimensions against the (batched) input's
    lambda t: t.nn.functional.conv2d(t.ones(1, 1, 4, 3), t.ones(1, 2, 2), padding="same"),
    lambda t: t.nn.functional.conv2d(t.ones(1, 4, 3), t.ones(1, 1, 1, 2, 2), padding="same"),
    lambda t: t.nn.functional.conv2d(t.ones(1, 4, 3), t.ones(2, 2), padding="same"),
    lambda t: t.nn.functional.conv3d(t.ones(1, 1, 4, 3, 5), t.ones(1, 1, 2, 2),
                                     padding="same"),
    # bilinear runs _trilinear, which has no complex derivative (without grad it runs)
    lambda t: t.nn.functional.bilinear(t.ones(3, dtype=t.complex64, requires_grad=True),
                                       t.ones(4, dtype=t.complex64), t.ones(5, 3, 4).cfloat()),
    lambda t: t.nn.functional.bilinear(t.ones(3).cfloat(), t.ones(4).cfloat(),
                                       t.ones(5, 3, 4).cfloat(), t.ones(5).cfloat()),
    # pdist's kernel runs in float and double only (and not at all below two rows)
    lambda t: t.nn.functional.pdist(t.ones(4, 3).half()),
    lambda t: t.nn.functional.pdist(t.ones(4, 3).bfloat16()),
    lambda t: t.nn.functional.pdist(t.ones(1, 3).half()),
    lambda t: t.nn.functional.pdist(t.ones(4, 3).to(t.complex64)),
], ids=lambda _: "")
def test_loss_activation_conv_pdist_checks_as_torch(call):
    _same(call)
