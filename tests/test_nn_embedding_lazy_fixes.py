"""Regression tests for what PyTorch's test/nn/test_embedding.py and test/nn/test_lazy_modules.py
found, and for the activations' backward ops (torch.ops.aten.silu_backward, ...): each compares
ember with torch on the same inputs."""
import pickle

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the exception itself is compared
        return e
    return None


def _same_error(t_fn, e_fn):
    te, ee = _raises(t_fn), _raises(e_fn)
    assert te is not None and ee is not None, (te, ee)
    assert type(ee).__name__ == type(te).__name__
    assert str(ee) == str(te)


# ---- embedding_bag --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 8])
@pytest.mark.parametrize("bad", [-1, 11])
def test_embedding_bag_out_of_range_message(dtype, mode, padding_idx, bad):
    """PyTorch's FBGEMM path (sum/mean of float/half/bf16, no padding_idx) and its other path
    word the error differently."""
    def run(m):
        w = m.arange(20.).view(10, 2).to(getattr(m, dtype))
        return m.nn.functional.embedding_bag(m.tensor([[bad, 1]]), w, mode=mode,
                                             padding_idx=padding_idx)
    _same_error(lambda: run(torch), lambda: run(ember))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 8, 61])
@pytest.mark.parametrize("offsets", [[0, 3, 3], [0, 1, 3], [0, 3, 4]])
def test_embedding_bag_include_last_offset_last_bag(dtype, mode, padding_idx, offsets):
    """With include_last_offset, the last bag's sum stops at the last offset only on PyTorch's
    FBGEMM path; otherwise (a padding_idx, float64) it runs to the input's end."""
    def run(m):
        w = m.arange(200.).view(100, 2).to(getattr(m, dtype)).requires_grad_()
        out = m.nn.functional.embedding_bag(m.tensor([0, 1, 2, 3]), w, m.tensor(offsets),
                                            mode=mode, include_last_offset=True,
                                            padding_idx=padding_idx)
        out.backward(m.ones_like(out))
        return out.detach().float().numpy(), w.grad.float().numpy()
    (to, tg), (eo, eg) = run(torch), run(ember)
    np.testing.assert_allclose(eo, to, rtol=1e-2)
    # on the FBGEMM path PyTorch's gradient rows of indices past the last offset are left
    # uninitialized (ember's are 0): only the others are compared
    fbgemm = mode != "max" and dtype != "float64" and padding_idx is None
    rows = offsets[-1] if fbgemm else 4
    np.testing.assert_allclose(eg[:rows], tg[:rows], rtol=1e-2)
    np.testing.assert_array_equal(eg[4:], tg[4:])


def test_embedding_bag_input_dimension_message():
    for name in ("_embedding_bag", "_embedding_bag_forward_only"):
        def run(m):
            w = m.zeros(2, 6, dtype=m.float64)
            idx = m.full((2, 0, 0, 6, 6), 2, dtype=m.int64)
            return getattr(m, name)(w, idx, m.zeros(2, dtype=m.int64))
        _same_error(lambda: run(torch), lambda: run(ember))


def test_embedding_bag_2d_input_kernel_reads_it_flattened():
    def run(m):
        w = m.arange(20.).view(10, 2)
        return m._embedding_bag(w, m.tensor([[0, 1, 2], [3, 4, 5]]), m.tensor([0, 1]))[0]
    np.testing.assert_array_equal(run(ember).numpy(), run(torch).numpy())


# ---- lazy modules ---------------------------------------------------------------------------
def _lazy_module(m, buffer=False):
    class Lazy(m.nn.modules.lazy.LazyModuleMixin, m.nn.Module):
        pass
    mod = Lazy()
    if buffer:
        mod.test_buffer = m.nn.parameter.UninitializedBuffer()
    else:
        mod.register_parameter("test_param", m.nn.parameter.UninitializedParameter())
    return mod


@pytest.mark.parametrize("buffer", [False, True])
def test_script_refuses_uninitialized_lazy_module(buffer):
    _same_error(lambda: torch.jit.script(_lazy_module(torch, buffer)),
                lambda: ember.jit.script(_lazy_module(ember, buffer)))


def test_script_refuses_uninitialized_lazy_submodule():
    """The message names the submodule's class (by its own module path: ember's LazyLinear is
    defined in ember.nn.modules.lazy)."""
    def run(m):
        return m.jit.script(m.nn.Sequential(m.nn.LazyLinear(3)))
    te, ee = _raises(lambda: run(torch)), _raises(lambda: run(ember))
    assert type(te) is type(ee) is RuntimeError
    assert str(te).split(".LazyLinear")[1] == str(ee).split(".LazyLinear")[1]


@pytest.mark.parametrize("fn", ["weight_norm", "spectral_norm"])
def test_norm_reparametrizations_refuse_uninitialized_parameters(fn):
    _same_error(lambda: getattr(torch.nn.utils, fn)(torch.nn.LazyLinear(7)),
                lambda: getattr(ember.nn.utils, fn)(ember.nn.LazyLinear(7)))


def test_materialized_lazy_linear_scripts_and_pickles():
    m = ember.nn.LazyLinear(4)
    m(ember.ones(2, 3))
    assert ember.jit.script(m)(ember.ones(2, 3)).shape == (2, 4)
    assert type(pickle.loads(pickle.dumps(m))) is ember.nn.Linear


def test_typename():
    class Net(torch.nn.Module):
        pass

    class ENet(ember.nn.Module):
        pass
    for t_obj, e_obj in ((Net, ENet), (Net(), ENet()), ([], []), (len, len), (3, 3),
                         (torch.zeros(1), ember.zeros(1)),
                         (torch.zeros(1, dtype=torch.int64), ember.zeros(1, dtype=ember.int64))):
        assert ember.typename(e_obj).replace("ENet", "Net") == torch.typename(t_obj)


# ---- the activations' backward ops ----------------------------------------------------------
BOUNDARY = [-np.inf, -20.0, -3.0, -2.0, -1.5, -1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 0.8, 1.0, 1.5, 2.0,
            3.0, 20.0, 30.0, np.inf, np.nan]

CASES = [("silu_backward", ()), ("softplus_backward", (1, 20)), ("softplus_backward", (2, 1)),
         ("mish_backward", ()), ("hardswish_backward", ()), ("hardsigmoid_backward", ()),
         ("hardtanh_backward", (-1, 1)), ("hardtanh_backward", (-2.0, 0.5)),
         ("leaky_relu_backward", (0.01, False)), ("leaky_relu_backward", (-0.2, False)),
         ("hardshrink_backward", (0.5,)), ("softshrink_backward", (1.5,)),
         ("gelu_backward", ()), ("threshold_backward", (0.5,)),
         ("elu_backward", (1, 1, 1, False)), ("elu_backward", (0.5, 2, 1.5, False)),
         ("elu_backward", (1.0, 1.05, 1, True)), ("logit_backward", ()),
         ("logit_backward", (0.2,))]


def _call(m, name, g, x, extra):
    """elu_backward takes its tensor input last."""
    op = getattr(m.ops.aten, name)
    return op(g, *extra, x) if name == "elu_backward" else op(g, x, *extra)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("name,extra", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_activation_backward_op_values(name, extra, dtype):
    """Values (at the kinks, infinities and NaN too), dtype and shape as torch's kernel."""
    x = np.array(BOUNDARY)
    g = np.linspace(-2, 3, x.size)
    outs = []
    for m in (torch, ember):
        dt = getattr(m, dtype)
        outs.append(_call(m, name, m.tensor(g, dtype=dt), m.tensor(x, dtype=dt), extra))
    t, e = outs
    assert e.dtype == getattr(ember, dtype) and e.shape == t.shape
    tol = 1e-6 if dtype in ("float32", "float64") else 1e-2
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,extra", [c for c in CASES if c[0] != "gelu_backward"],
                         ids=[f"{c[0]}{c[1]}" for c in CASES if c[0] != "gelu_backward"])
def test_activation_backward_op_double_backward(name, extra):
    """The backward op's own gradients (double backward) as torch's, or the same error where
    PyTorch has no derivative for it."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, 12)
    g = rng.uniform(-1, 1, 12)
    v = rng.uniform(-1, 1, 12)

    def run(m):
        gt = m.tensor(g, requires_grad=True)
        xt = m.tensor(x, requires_grad=True)
        out = _call(m, name, gt, xt, extra)
        out.backward(m.tensor(v))
        return (gt.grad.numpy(), None if xt.grad is None else xt.grad.numpy())
    te, ee = _raises(lambda: run(torch)), _raises(lambda: run(ember))
    if te is not None or ee is not None:
        assert te is not None and ee is not None and type(te) is type(ee) and str(te) == str(ee)
        return
    (tg, tx), (eg, ex) = run(torch), run(ember)
    np.testing.assert_allclose(eg, tg, rtol=1e-10, atol=1e-12)
    if tx is None:
        assert ex is None or not np.any(ex)
    else:
        np.testing.assert_allclose(ex, tx, rtol=1e-10, atol=1e-12)


def test_backward_on_result_with_negative_slope_raises():
    _same_error(lambda: torch.ops.aten.leaky_relu_backward(torch.ones(3), torch.ones(3), -0.2, True),
                lambda: ember.ops.aten.leaky_relu_backward(ember.ones(3), ember.ones(3), -0.2, True))
    _same_error(lambda: torch.ops.aten.elu_backward(torch.ones(3), -1, 1, 1, True, torch.ones(3)),
                lambda: ember.ops.aten.elu_backward(ember.ones(3), -1, 1, 1, True, ember.ones(3)))


@pytest.mark.parametrize("name,extra,x", [
    ("softplus_backward", (1, 0), [-3.0, 0.0, 3.0, 1.0]),
    ("softplus_backward", (2, 1), [-1.0, 0.5, 0.25, 1.0]),
    ("hardswish_backward", (), [-3.0, 0.0, 3.0, 1.0]),
    ("elu_backward", (1.0, 1.0, 1.0, False), [-0.0, 0.0, 1.0, -1.0]),
    ("elu_backward", (1.0, 1.0, 1.0, True), [-0.0, 0.0, 1.0, -0.5])])
def test_activation_double_backward_at_kinks(name, extra, x):
    """Which side of the kink a boundary point's second derivative takes."""
    def run(m):
        g = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        xt = m.tensor(x, dtype=m.float64, requires_grad=True)
        _call(m, name, g, xt, extra).sum().backward()
        return g.grad.numpy(), xt.grad.numpy()
    for e, t in zip(run(ember), run(torch)):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-15)



def test_activation_gradients_go_through_the_backward_ops_as_torchs():
    # the forward activations' derivatives call their *_backward ops, as PyTorch's
    # derivatives.yaml does: the same double-backward nodes and values, in-place forms too
    import ember
    torch = pytest.importorskip("torch")

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor([-2., -0.5, 0.3, 2.5, 4.0], dtype=lib.float64, requires_grad=True)
        out = []
        for f in (F.hardswish, lambda x: F.leaky_relu(x, 0.1), F.elu, F.hardtanh, F.softplus,
                  F.hardshrink, F.softshrink, lambda x: F.elu(x.clone(), inplace=True),
                  lambda x: F.leaky_relu(x.clone(), 0.2, inplace=True)):
            y = f(x)
            g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
            gg, = lib.autograd.grad(g.sum(), x)
            out.append((y.grad_fn.name(), g.grad_fn.name(), g.tolist(), gg.tolist()))
        return out

    for (n1, m1, g1, gg1), (n2, m2, g2, gg2) in zip(run(ember), run(torch)):
        assert (n1, m1) == (n2, m2)
        np.testing.assert_allclose(g1, g2, rtol=1e-12)
        np.testing.assert_allclose(gg1, gg2, rtol=1e-12)
    with pytest.raises(RuntimeError, match="negative slope"):
        x = ember.randn(3, dtype=ember.float64, requires_grad=True)
        ember.nn.functional.leaky_relu(x.clone(), -0.1, inplace=True).sum().backward()
