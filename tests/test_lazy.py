"""The lazy device (torch._lazy's LazyTensor core): ops on `device="lazy"` are recorded and run
later as one compiled graph. Every expression is run eagerly on CPU and on the lazy device, and
the values must agree; the metrics counters show what was recorded, compiled and reused."""
import copy

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._lazy import metrics

L = "lazy"


@pytest.fixture(autouse=True)
def fresh_graph():
    ember._lazy.mark_step()
    metrics.reset()
    yield
    ember._lazy.mark_step()


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((3, 4)).astype(np.float32),
            rng.standard_normal((3, 4)).astype(np.float32))


def _leaves(out):
    if isinstance(out, ember.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _leaves(o)]
    return [out]


def _compare(eager, lazy):
    e_leaves, l_leaves = _leaves(eager), _leaves(lazy)
    assert len(e_leaves) == len(l_leaves)
    for e, lz in zip(e_leaves, l_leaves):
        if not isinstance(e, ember.Tensor):
            assert e == lz
            continue
        assert lz.device == ember.device("lazy", 0)
        assert lz.dtype == e.dtype and lz.shape == e.shape
        np.testing.assert_allclose(lz.cpu().numpy(), e.numpy(), rtol=1e-6, atol=1e-6)


def _z(x, y):
    return x.clone()


EXPRESSIONS = {
    # elementwise chains (fused into one NumPy kernel by the compile step)
    "chain": lambda x, y: ((x * 2 + y).exp().tanh() - x / 3).sqrt().neg(),
    "mixed_ops": lambda x, y: ember.where(x > 0, x.sigmoid(), y.relu()) + x.abs().clamp(0.1, 1),
    "int_and_bool": lambda x, y: ((x > y).to(ember.int64) * 3 + 1, (x > 0) & (y < 0)),
    "scalar_cpu_tensor": lambda x, y: x * ember.tensor(2.5) + ember.tensor(1.0),
    "dtype_promotion": lambda x, y: x.double() * y,
    # matmul family
    "matmul": lambda x, y: x @ y.t(),
    "linear": lambda x, y: F.linear(x, y, x[0, :3]),
    "bmm": lambda x, y: ember.bmm(x.unsqueeze(0), y.t().unsqueeze(0)),
    # reductions
    "sum_mean": lambda x, y: (x.sum(), x.mean(1), y.sum(0, keepdim=True)),
    "max_dim": lambda x, y: x.max(1),
    "argmax_var_std": lambda x, y: (x.argmax(0), x.var(1), y.std()),
    "softmax_logsumexp": lambda x, y: (x.softmax(-1), x.log_softmax(0), y.logsumexp(1)),
    # views
    "views": lambda x, y: (x.t(), x[1:, ::2], x.view(-1), x.unsqueeze(0).expand(2, 3, 4),
                           x.permute(1, 0).contiguous(), x.reshape(2, 6), x[:, 1]),
    "split_unbind": lambda x, y: (x.split(3, 1), y.unbind(0), x.chunk(2, 1)),
    "cat_stack": lambda x, y: (ember.cat([x, y], 1), ember.stack([x, y])),
    # indexing
    "gather_index": lambda x, y: (x.gather(1, (y > 0).to(ember.int64)), x[[0, 2]],
                                  x.index_select(1, ember.tensor([3, 0]).to(x.device))),
    "masked_fill": lambda x, y: x.masked_fill(y > 0, -1.0),
    # in-place ops, on fresh tensors, on views, and on bases with views
    "inplace": lambda x, y: _z(x, y).add_(y).mul_(2).clamp_(-1, 1),
    "inplace_on_view": lambda x, y: (lambda z: (z[1].mul_(3), z[:, 0].zero_(), z)[-1])(_z(x, y)),
    "write_through_view_of_result": lambda x, y: (lambda z: (z.view(-1)[::2].fill_(7), z)[-1])(
        x * 2),
    "write_base_read_view": lambda x, y: (lambda z, v: (z.add_(1), v)[-1])(*(lambda z: (z, z.t()))(
        x * 2)),
    "setitem": lambda x, y: (lambda z: (z.__setitem__((slice(None), 1), 5.0), z)[-1])(_z(x, y)),
    "copy_into_view": lambda x, y: (lambda z: (z[0].copy_(y[2]), z)[-1])(_z(x, y)),
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_values_equal_eager(name):
    fn = EXPRESSIONS[name]
    a, b = _arrays()
    eager = fn(ember.tensor(a), ember.tensor(b))
    lazy = fn(ember.tensor(a).to(L), ember.tensor(b).to(L))
    _compare(eager, lazy)


def test_ops_are_recorded_then_compiled_once_and_reused():
    a, b = _arrays()

    def step(x, y):
        return ((x * y + 1).relu() @ y.t()).sum(1)

    out = step(ember.tensor(a).to(L), ember.tensor(b).to(L))
    assert metrics.counter_value("lazy::mul") == 1 and metrics.counter_value("lazy::sum") == 1
    assert metrics.counter_value("UncachedCompile") is None  # nothing ran yet
    text = ember._lazy.debug.dump_ir([out], "text")
    assert "mul.Tensor" in text and "relu" in text and "matmul" in text
    code = ember._lazy.debug.dump_ir([out], "backend")  # ember/_inductor's fused NumPy code
    assert "def fused_0" in code and "np.multiply" in code
    np.testing.assert_allclose(out.cpu().numpy(),
                               step(ember.tensor(a), ember.tensor(b)).numpy(), rtol=1e-6)
    assert metrics.counter_value("UncachedCompile") == 1
    for seed in (1, 2):  # the same structure on new data: the compiled graph is reused
        a2, b2 = _arrays(seed)
        out = step(ember.tensor(a2).to(L), ember.tensor(b2).to(L))
        np.testing.assert_allclose(out.tolist(), step(ember.tensor(a2), ember.tensor(b2)).tolist(),
                                   rtol=1e-6)
    assert metrics.counter_value("UncachedCompile") == 1
    assert metrics.counter_value("CachedCompile") == 3  # one hit was dump_ir's
    step(ember.ones(2, 4, device=L), ember.ones(2, 4, device=L)).tolist()  # a new shape
    assert metrics.counter_value("UncachedCompile") == 2


def _materialisations():
    return metrics.counter_value("SyncedTensorsWithIR") or 0


@pytest.mark.parametrize("read", [
    lambda t: t.sum().item(), lambda t: t.tolist(), lambda t: bool(t[0, 0] > 0),
    lambda t: float(t[1, 1]), lambda t: int(t[1, 1]), lambda t: f"{t.sum():.3f}",
    lambda t: repr(t), lambda t: t.cpu(), lambda t: t.to("cpu"), lambda t: t.to(device="cpu"),
    lambda t: ember.empty(3, 4).copy_(t), lambda t: ember._lazy.to_cpu([t]),
    lambda t: ember._lazy.mark_step(),
], ids=["item", "tolist", "bool", "float", "int", "format", "repr", "cpu", "to_cpu",
        "to_device_kw", "copy_to_cpu", "_lazy.to_cpu", "mark_step"])
def test_materialisation_triggers(read):
    a, _ = _arrays()
    t = ember.tensor(a).to(L) * 3
    assert _materialisations() == 0
    read(t)
    assert _materialisations() >= 1
    assert "mul" not in ember._lazy.debug.dump_ir([t], "text")  # the pending graph ran
    np.testing.assert_allclose(t.cpu().numpy(), a * 3, rtol=1e-6)


def test_printing_and_device_as_pytorch():
    t = ember.tensor([1.0, 2.5], device=L)
    assert repr(t) == "tensor([1.0000, 2.5000], device='lazy:0')"
    assert repr(ember.ones(2, device=L, requires_grad=True)) == \
        "tensor([1., 1.], device='lazy:0', requires_grad=True)"
    assert repr(ember.device("lazy")) == "device(type='lazy')"
    assert t.device == ember.device("lazy:0") and str(t.device) == "lazy:0"
    assert t.get_device() == 0 and not t.is_cpu and t.data_ptr() == 0
    assert t.to("lazy") is t
    with pytest.raises(TypeError, match="can't convert lazy:0 device type tensor to numpy"):
        t.numpy()


def test_pytorch_agrees_on_device_strings_and_numpy_error():
    torch = pytest.importorskip("torch")
    assert repr(torch.device("lazy")) == repr(ember.device("lazy"))
    assert str(torch.device("lazy:0")) == str(ember.device("lazy:0"))


def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


@pytest.mark.parametrize("optimizer,kwargs,compiles", [
    ("SGD", dict(lr=0.1), 1),
    ("SGD", dict(lr=0.1, momentum=0.9), 2),   # step 1 starts the momentum buffer
    ("Adam", dict(lr=0.01), 2),               # step 1 creates the state
], ids=["sgd", "sgd_momentum", "adam"])
def test_mlp_training_equals_eager_and_stops_compiling(optimizer, kwargs, compiles):
    eager = _mlp()
    lazy = copy.deepcopy(eager).to(L)
    assert all(p.device == ember.device("lazy:0") and isinstance(p, nn.Parameter)
               for p in lazy.parameters())
    opt_e = getattr(ember.optim, optimizer)(eager.parameters(), **kwargs)
    opt_l = getattr(ember.optim, optimizer)(lazy.parameters(), **kwargs)
    rng = np.random.default_rng(0)
    steps = 5
    for _ in range(steps):
        x = ember.tensor(rng.standard_normal((6, 8)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 4, 6))
        loss_e = F.cross_entropy(eager(x), y)
        opt_e.zero_grad()
        loss_e.backward()
        opt_e.step()
        loss_l = F.cross_entropy(lazy(x.to(L)), y.to(L))
        opt_l.zero_grad()
        loss_l.backward()
        opt_l.step()
        ember._lazy.mark_step()
        assert abs(loss_e.item() - loss_l.item()) < 1e-6
    for pe, pl in zip(eager.parameters(), lazy.parameters()):
        assert pl.device == ember.device("lazy:0") and pl.grad.device == pl.device
        np.testing.assert_allclose(pl.detach().cpu().numpy(), pe.detach().numpy(), rtol=1e-5,
                                   atol=1e-7)
    for state in opt_l.state.values():
        assert all(v.device == ember.device("lazy:0") for k, v in state.items() if k != "step")
    assert metrics.counter_value("UncachedCompile") == compiles
    assert metrics.counter_value("CachedCompile") == steps - compiles
    assert metrics.counter_value("MarkStep") == steps
    assert metrics.counter_value("lazy::_optimizer_update_") == 4 * steps


def test_backward_is_recorded_and_gradients_are_lazy():
    a, b = _arrays()
    we, wl = ember.tensor(a, requires_grad=True), ember.tensor(a).to(L).requires_grad_()
    for w in (we, wl):
        z = w * 2 + 1
        z[1:, 1:3].mul_(3)  # an in-place op on a view of a tensor that requires grad
        (z.tanh() * ember.tensor(b).to(w.device)).sum().backward()
    assert metrics.counter_value("lazy::tanh_backward") == 1
    assert wl.grad.device == ember.device("lazy:0")
    np.testing.assert_allclose(wl.grad.cpu().numpy(), we.grad.numpy(), rtol=1e-6)


def test_views_keep_sharing_memory_across_graphs():
    x = ember.zeros(3, 4, device=L)
    row = x[1]
    ember._lazy.mark_step()  # both become device data, the row a view of x's
    row.add_(5)
    col = x[:, 2]
    ember._lazy.mark_step()
    col.mul_(2)
    expected = np.zeros((3, 4), np.float32)
    expected[1] += 5
    expected[:, 2] *= 2
    np.testing.assert_array_equal(x.cpu().numpy(), expected)
    np.testing.assert_array_equal(row.cpu().numpy(), expected[1])


def test_data_dependent_ops_run_eagerly_on_device_data():
    a, b = _arrays()
    x = ember.tensor(a).to(L)
    nz = (x > 0).nonzero()
    assert metrics.counter_value("aten::nonzero") == 1 and nz.device == x.device
    np.testing.assert_array_equal(nz.cpu().numpy(), np.argwhere(a > 0))
    np.testing.assert_allclose(x[x > 0.5].cpu().numpy(), a[a > 0.5])
    assert ember.equal(x, ember.tensor(a).to(L))


def test_unsupported_ops_raise_naming_the_op():
    lib = ember.library.Library("lazytest", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    try:
        assert ember.ops.lazytest.twice(ember.ones(2)).tolist() == [2.0, 2.0]
        with pytest.raises(NotImplementedError, match="lazytest::twice.*no Meta kernel"):
            ember.ops.lazytest.twice(ember.ones(2, device=L))
    finally:
        lib._destroy()
    with pytest.raises(NotImplementedError, match="aten::t_"):
        ember.ones(2, 3, device=L).t_()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ember.ones(3, device=L) + ember.ones(3)
    with pytest.raises(RuntimeError, match="invalid python storage"):
        ember.save(ember.ones(2, device=L), __import__("io").BytesIO())


def test_shape_errors_raise_when_the_op_is_recorded():
    with pytest.raises(RuntimeError, match="size of tensor a"):
        ember.ones(2, 3, device=L) + ember.ones(4, device=L)
    assert ember._lazy.debug.dump_ir([], "text").count("=") == 0


def test_factories_modules_and_api():
    ember._lazy.ts_backend.init()
    z = ember.zeros(2, 3, device=L)
    assert z.device == ember.device("lazy:0") and z.tolist() == [[0.0] * 3] * 2
    assert ember.ones_like(z).sum().item() == 6.0
    assert ember.full((2,), 1.5, device="lazy").tolist() == [1.5, 1.5]
    assert ember.arange(4, device=L).tolist() == [0, 1, 2, 3]
    m = nn.BatchNorm1d(3).to(L)
    assert m.running_mean.device == ember.device("lazy:0")
    m(ember.randn(4, 3).to(L))
    assert m.num_batches_tracked.item() == 1
    sd = {k: v for k, v in nn.Linear(2, 2).state_dict().items()}
    lin = nn.Linear(2, 2).to(L)
    lin.load_state_dict(sd)  # copy_ from CPU into lazy parameters
    np.testing.assert_array_equal(lin.weight.detach().cpu().numpy(), sd["weight"].numpy())
    assert ember._lazy.get_tensor_id(lin.weight) == ember._lazy.get_tensor_id(lin.weight.detach())
    ember._lazy.wait_device_ops()
    ember._lazy.sync_multi([z], [])
    seen = []
    ember._lazy.add_step_closure(lambda t: seen.append(t.item()), args=(z.sum() + 1,))
    ember._lazy.mark_step()
    assert seen == [1.0]
    assert "MarkStep" in metrics.counter_names() and "Counter: MarkStep" in metrics.metrics_report()


def test_random_ops_draw_in_recorded_order():
    ember.manual_seed(3)
    eager = F.dropout(ember.ones(64), 0.5)
    ember.manual_seed(3)
    lazy = F.dropout(ember.ones(64, device=L), 0.5)
    np.testing.assert_array_equal(lazy.cpu().numpy(), eager.numpy())


@pytest.mark.parametrize("name", ["Adagrad", "Adadelta", "RMSprop", "Adamax", "AdamW", "NAdam",
                                  "RAdam", "ASGD", "Rprop"])
def test_every_elementwise_optimizer_steps_lazy_parameters(name):
    eager = _mlp()
    lazy = copy.deepcopy(eager).to(L)
    opt_e = getattr(ember.optim, name)(eager.parameters(), lr=0.05)
    opt_l = getattr(ember.optim, name)(lazy.parameters(), lr=0.05)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((6, 8)).astype(np.float32))
        for model, opt, dev in ((eager, opt_e, "cpu"), (lazy, opt_l, L)):
            opt.zero_grad(set_to_none=False)
            model(x.to(dev)).square().mean().backward()
            opt.step()
        ember._lazy.mark_step()
    for pe, pl in zip(eager.parameters(), lazy.parameters()):
        np.testing.assert_allclose(pl.detach().cpu().numpy(), pe.detach().numpy(), rtol=1e-4,
                                   atol=1e-6)
    assert metrics.counter_value("UncachedCompile") == 2  # the first step makes the state


def test_lbfgs_refuses_lazy_parameters():
    p = nn.Parameter(ember.ones(3, device=L))
    with pytest.raises(NotImplementedError, match="LBFGS"):
        ember.optim.LBFGS([p]).step(lambda: p.sum())


def test_reading_a_value_mid_step_splits_the_step_into_two_cached_graphs():
    model = _mlp().to(L)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.randn(6, 8).to(L)
    losses = []
    for _ in range(4):
        loss = model(x).square().mean()
        losses.append(loss.item())  # runs the forward graph, saved activations included
        opt.zero_grad()
        loss.backward()
        opt.step()
        ember._lazy.mark_step()
    assert losses == sorted(losses, reverse=True)
    assert metrics.counter_value("UncachedCompile") == 2
    assert metrics.counter_value("CachedCompile") == 6


def test_gradients_cross_devices_back_to_the_input():
    w = ember.ones(3, requires_grad=True)
    (w.to(L) * 2).sum().backward()
    assert w.grad.device == ember.device("cpu") and w.grad.tolist() == [2.0, 2.0, 2.0]
    v = ember.ones(3, device=L, requires_grad=True)
    (v.cpu() * 3).sum().backward()
    (v.double() * 3).sum().backward()
    assert v.grad.device == ember.device("lazy:0") and v.grad.tolist() == [6.0, 6.0, 6.0]


MODULES = {
    "embedding_bag": (lambda: nn.EmbeddingBag(10, 4), lambda: ember.randint(0, 10, (3, 5))),
    "lstm": (lambda: nn.LSTM(4, 6, batch_first=True), lambda: ember.randn(2, 5, 4)),
    "conv_bn_pool": (lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3),
                                           nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1)),
                     lambda: ember.randn(2, 2, 8, 8)),
    "transformer_layer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                             batch_first=True),
                          lambda: ember.randn(2, 3, 8)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_forward_and_backward_equal_eager(name):
    make, inputs = MODULES[name]
    ember.manual_seed(0)
    eager = make()
    lazy = copy.deepcopy(eager).to(L)
    x = inputs()
    out_e, out_l = eager(x), lazy(x.to(L))
    out_e = out_e[0] if isinstance(out_e, tuple) else out_e
    out_l = out_l[0] if isinstance(out_l, tuple) else out_l
    out_e.square().sum().backward()
    out_l.square().sum().backward()
    np.testing.assert_allclose(out_l.detach().cpu().numpy(), out_e.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    for pe, pl in zip(eager.parameters(), lazy.parameters()):
        np.testing.assert_allclose(pl.grad.cpu().numpy(), pe.grad.numpy(), rtol=1e-5, atol=1e-6)
    for be, bl in zip(eager.buffers(), lazy.buffers()):
        np.testing.assert_allclose(bl.cpu().numpy(), be.numpy(), rtol=1e-5, atol=1e-6)
