"""Fixes found by running PyTorch's test_modules.py (TestModule over common_modules' module_db)
on ember, each checked against PyTorch on the same inputs: nn.LinearCrossEntropyOptions and the
loss with options, complex ConvTranspose, batch_norm's eps checks, the max/avg pooling messages
of 2.13, and the harness pieces the file imports (mock_wrapper, get_tensors_from,
torch._subclasses.meta_utils.assert_metadata_eq)."""
import dataclasses
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn):
    """(exception class, message) if fn raises, else ("ok", dtype, shape, rounded values)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001 - the class itself is what is compared
        return type(e).__name__, str(e)
    if hasattr(r, "dtype") and hasattr(r, "detach"):
        return "ok", str(r.dtype), tuple(r.shape), np.round(r.detach().numpy(), 5).tolist()
    return "ok", r


def _same(fn):
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


@pytest.mark.parametrize("kwargs", [
    {}, {"allow_retain_graph": True, "batch_chunk_size": 2},
    {"chunking_method": "aspect_ratio:4"}, {"chunking_method": None, "acc_policy": "compact"},
    {"acc_policy": "fast"}, {"chunking_method": "aspect:2"}, {"chunking_method": "aspect_ratio:0"},
    {"batch_chunk_size": 0}, {"batch_chunk_size": 1.5}, {"acc_dtype": "int32"},
])
def test_linear_cross_entropy_options_fields_defaults_and_validation(kwargs):
    def make(lib):
        kw = dict(kwargs)
        if kw.get("acc_dtype") == "int32":
            kw["acc_dtype"] = lib.int32
        o = lib.nn.LinearCrossEntropyOptions(**kw)
        return repr(o).replace("torch.", "")
    _same(make)
    assert "LinearCrossEntropyOptions" in ember.nn.modules.__all__
    with pytest.raises(dataclasses.FrozenInstanceError):
        ember.nn.LinearCrossEntropyOptions().batch_chunk_size = 3


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", [None, {"batch_chunk_size": 2, "allow_retain_graph": True}])
def test_linear_cross_entropy_loss_with_options_values_and_grads(reduction, options):
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((8, 5)), rng.standard_normal((4, 5)), rng.standard_normal(4)
    t = np.array([0, 3, 1, 2, 2, 0, 1, 3])

    def run(lib):
        opts = None if options is None else lib.nn.LinearCrossEntropyOptions(**options)
        m = lib.nn.LinearCrossEntropyLoss(5, 4, bias=True, dtype=lib.float64, reduction=reduction,
                                          options=opts)
        with lib.no_grad():
            m.linear.weight.copy_(lib.tensor(w))
            m.linear.bias.copy_(lib.tensor(b))
        xi = lib.tensor(x, requires_grad=True)
        out = m(xi, lib.tensor(t))
        out.sum().backward()
        return out, xi.grad, m.linear.weight.grad, m.linear.bias.grad

    for e, r in zip(run(ember), run(torch)):
        np.testing.assert_allclose(e.detach().numpy(), r.detach().numpy(), rtol=1e-10)


def test_linear_cross_entropy_options_fall_back_with_a_warning():
    def run(lib):
        m = lib.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=0.1,
                                          options=lib.nn.LinearCrossEntropyOptions())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(lib.zeros(2, 3), lib.zeros(2, dtype=lib.int64))
        return [str(x.message) for x in w]
    assert run(ember) == run(torch)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_complex_conv_transpose(nd):
    rng = np.random.default_rng(nd)
    shape_x, shape_w = (2, 3) + (4,) * nd, (3, 2) + (2,) * nd
    x = rng.standard_normal(shape_x) + 1j * rng.standard_normal(shape_x)
    w = rng.standard_normal(shape_w) + 1j * rng.standard_normal(shape_w)
    b = rng.standard_normal(2) + 1j * rng.standard_normal(2)

    def run(lib):
        f = getattr(lib.nn.functional, f"conv_transpose{nd}d")
        xi = lib.tensor(x, requires_grad=True)
        out = f(xi, lib.tensor(w), lib.tensor(b), stride=2, padding=1, output_padding=1)
        out.abs().sum().backward()
        return out, xi.grad

    for e, r in zip(run(ember), run(torch)):
        assert e.dtype == ember.complex128 and e.shape == r.shape
        np.testing.assert_allclose(e.detach().numpy(), r.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("eps", [-1.0, 0.0])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_eps_errors(eps, training):
    def run(lib):
        m = lib.nn.BatchNorm2d(3, eps=eps).train(training)
        return m(lib.ones(2, 3, 2, 2, dtype=lib.float64) * 2)   # also: checked before dtypes
    _same(run)


@pytest.mark.parametrize("pool,shape", [
    ("max_pool2d", (3, 4)), ("max_pool2d", (1, 2, 3, 4, 5)), ("max_pool2d", (2, 0, 4, 4)),
    ("max_pool2d", (0, 4, 4)), ("avg_pool2d", (2, 0, 4, 4)), ("max_pool3d", (3, 4)),
    ("max_pool3d", (2, 3, 4, 0, 4)), ("avg_pool3d", (3, 4)), ("avg_pool3d", (2, 0, 4, 4, 4)),
    ("max_pool2d", (0, 2, 4, 4)),
])
def test_pooling_input_dimension_messages(pool, shape):
    _same(lambda lib: getattr(lib.nn.functional, pool)(lib.zeros(shape), 2))


def test_mock_wrapper_and_get_tensors_from():
    from unittest.mock import patch
    from ember.testing._internal.common_utils import get_tensors_from, mock_wrapper

    a, b = ember.zeros(1), ember.ones(1)
    assert get_tensors_from((a, 1), {"k": b, "n": 2}) == {a, b}
    new = mock_wrapper(ember.nn.Parameter.__new__)
    with patch.object(ember.nn.Parameter, "__new__", new):
        p = ember.nn.Linear(2, 3, bias=False).weight
    assert isinstance(p, ember.nn.Parameter) and p.shape == (3, 2)
    assert len(new.mock.call_args_list) == 1
    register = mock_wrapper(ember.nn.Module.register_buffer)
    with patch.object(ember.nn.Module, "register_buffer", register):
        ember.nn.BatchNorm1d(4)
    assert [c.args[0] for c in register.mock.call_args_list] == [
        "running_mean", "running_var", "num_batches_tracked"]


def test_assert_metadata_eq():
    from ember._subclasses.meta_utils import assert_metadata_eq

    def eq(a, b):
        assert a == b, (a, b)

    with ember.device("meta"):
        m = ember.nn.Linear(3, 2)
    assert_metadata_eq(eq, m.weight, ember.nn.Linear(3, 2).weight)
    x = ember.zeros(4, 6)
    assert_metadata_eq(eq, x.t(), ember.ones(4, 6).t())
    with pytest.raises(AssertionError):
        assert_metadata_eq(eq, x.t(), ember.ones(6, 4))


@pytest.mark.parametrize("module", ["Conv2d", "ConvTranspose2d"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("input_cl,weight_cl", [(False, False), (True, False), (False, True),
                                                (True, True)])
def test_conv_weight_gradient_takes_the_channels_last_layout(module, batched, input_cl,
                                                             weight_cl):
    if input_cl and not batched:
        pytest.skip("a 3-d input has no channels_last layout")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 5) if batched else (3, 5, 5))

    def run(lib):
        m = getattr(lib.nn, module)(3, 4, 3).double()
        if weight_cl:
            m.to(memory_format=lib.channels_last)
        xi = lib.tensor(x)
        if input_cl:
            xi = xi.to(memory_format=lib.channels_last)
        xi.requires_grad_()
        out = m(xi)
        gx, gw = lib.autograd.grad(out, [xi, m.weight], lib.ones_like(out))
        return out.stride(), gx.stride(), gw.stride()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("x_shape,t_shape,t_long", [
    ((4, 2), (5, 2), False), ((4, 2), (5,), True), ((4, 2, 3), (5, 3), True),
    ((4, 2, 3), (4, 2, 5), False), ((4, 2), (4, 2, 1), True), ((4, 2), (4, 2), True),
])
def test_nll_and_cross_entropy_check_the_batch_size_first(x_shape, t_shape, t_long):
    def run(lib, fn):
        t = lib.zeros(t_shape, dtype=lib.int64 if t_long else lib.float32)
        return getattr(lib.nn.functional, fn)(lib.zeros(x_shape), t)
    for fn in ("cross_entropy", "nll_loss"):
        _same(lambda lib: run(lib, fn))
