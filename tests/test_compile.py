"""ember.compile: compiled training equals eager training (outputs, gradients, buffers) over
several steps; guards recompile exactly when they should; graph breaks run eagerly or raise
under fullgraph; backends and the registry; explain over a compiled call."""
import copy

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.testing import CompileCounter
from ember._dynamo.exc import Unsupported

F = nn.functional


def _train_equal(make, x, y, loss_fn=F.cross_entropy, steps=3, backend="ember"):
    """Train a model and its compiled twin side by side; every step equal to the last bit."""
    ember.manual_seed(0)
    eager = make()
    model = copy.deepcopy(eager)
    compiled = ember.compile(model, backend=backend)
    for step in range(steps):
        ember.manual_seed(step)
        out_c = compiled(x)
        loss_c = loss_fn(out_c, y)
        loss_c.backward()
        ember.manual_seed(step)
        out_e = eager(x)
        loss_e = loss_fn(out_e, y)
        loss_e.backward()
        np.testing.assert_array_equal(out_c.detach().numpy(), out_e.detach().numpy())
        assert out_c.grad_fn is not None
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7,
                                       err_msg=name)
        for b, c in zip(model.buffers(), eager.buffers()):
            np.testing.assert_array_equal(b.numpy(), c.numpy())
        with ember.no_grad():
            for p, q in zip(model.parameters(), eager.parameters()):
                p.sub_(0.05 * p.grad)
                q.sub_(0.05 * q.grad)
                p.grad = q.grad = None
    call = compiled._compiled_call
    assert not call.breaks and len(call.history) == 1
    return compiled


def mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 5))


def lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120),
                         nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def wide_lenet():
    """LeNet's layers for 28x52 inputs: the second convolution's maps are 8x20, so its kernels
    take im2col and col2im (LeNet's 8x8 maps take the NHWC columns and shifted products: Note
    [Small maps in NHWC], Note [Input gradient by shifted products]; from 256 pixels the
    forward fuses its columns per sample), the routes the compiled lowerings reproduce."""
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 4 * 10, 10))


def test_mlp_training_equals_eager():
    _train_equal(mlp, ember.randn(8, 20), ember.randint(0, 5, (8,)))


def test_lenet_training_equals_eager():
    _train_equal(lenet, ember.randn(4, 1, 28, 28), ember.randint(0, 10, (4,)))


def test_batchnorm_inplace_relu_dropout_equal_eager():
    def net():
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                             nn.Dropout(0.3), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    _train_equal(net, ember.randn(4, 3, 8, 8), ember.randint(0, 5, (4,)))


@pytest.mark.slow  # conv, batch norm, in-place relu: also in the fast test above
def test_resnet18_training_equals_eager():
    from ember.vision.models import resnet18
    _train_equal(lambda: resnet18(num_classes=10), ember.randn(2, 3, 16, 16),
                 ember.randint(0, 10, (2,)), steps=2)


def test_transformer_encoder_layer_training_equals_eager():
    _train_equal(lambda: nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True),
                 ember.randn(2, 5, 16), ember.randn(2, 5, 16), loss_fn=F.mse_loss)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_debug_backends_equal_eager(backend):
    _train_equal(lenet, ember.randn(2, 1, 28, 28), ember.randint(0, 10, (2,)), backend=backend)


def test_compiled_function_and_its_gradients():
    def f(x, w):
        return (x @ w).tanh() * 2 + x.sum()
    x = ember.randn(3, 4, requires_grad=True)
    w = ember.randn(4, 4, requires_grad=True)
    cf = ember.compile(f)
    out = cf(x, w)
    out.sum().backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    f(x, w).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), f(x, w).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-6)
    assert out.grad_fn.name() == "CompiledFunctionBackward"


def test_guards_recompile_exactly_when_they_should():
    cnt = CompileCounter()
    model = mlp()
    cm = ember.compile(model, backend=cnt)
    x = ember.randn(8, 20)
    cm(x)
    cm(ember.randn(8, 20))                # same signature: no compile
    assert cnt.frame_count == 1
    cm(ember.randn(4, 20))                # shape
    assert cnt.frame_count == 2
    cm(ember.randn(8, 20, requires_grad=True))  # requires_grad
    assert cnt.frame_count == 3
    model.eval()                          # training mode
    cm(x)
    assert cnt.frame_count == 4
    with ember.no_grad():                 # grad mode
        cm(x)
    assert cnt.frame_count == 5
    model.train()
    cm(x)                                 # back to a cached signature
    cm(ember.randn(4, 20))
    assert cnt.frame_count == 5
    model.double()                        # parameter dtypes
    cm(x.double())
    assert cnt.frame_count == 6
    entry = cm._compiled_call.history[-1]
    assert "changed" in entry.reason
    x = x.double()
    model[2] = nn.Linear(32, 32).double()  # a submodule replaced: its parameters are new
    cm(x)
    assert cnt.frame_count == 7
    model[0].weight = nn.Parameter(model[0].weight.detach().clone())  # a parameter replaced
    out = cm(x)
    assert cnt.frame_count == 8
    np.testing.assert_array_equal(out.detach().numpy(), model(x).detach().numpy())
    cm(x)
    assert cnt.frame_count == 8


def test_recompile_limit_falls_back_to_eager():
    cnt = CompileCounter()
    cf = ember.compile(lambda x: x * 2, backend=cnt, recompile_limit=2)
    for n in range(1, 5):
        with pytest.warns(UserWarning, match="recompile_limit") if n == 3 else _nothing():
            np.testing.assert_array_equal(cf(ember.ones(n)).numpy(), np.full(n, 2.0))
    assert cnt.frame_count == 2


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_graph_break_runs_eagerly_and_fullgraph_raises():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1
    cnt = CompileCounter()
    cf = ember.compile(f, backend=cnt)
    pos, neg = ember.ones(3), -ember.ones(3)
    np.testing.assert_array_equal(cf(pos).numpy(), f(pos).numpy())
    np.testing.assert_array_equal(cf(neg).numpy(), f(neg).numpy())  # no baked-in branch
    assert cnt.frame_count == 0
    assert "Python boolean" in next(iter(cf.breaks.values()))
    with pytest.raises(Unsupported, match="graph break"):
        ember.compile(f, fullgraph=True)(pos)
    with pytest.raises(Unsupported, match="Python number"):
        ember.compile(lambda x: x * x.max().item(), fullgraph=True)(pos)


def test_graph_break_undoes_capture_side_effects():
    bn = nn.BatchNorm1d(3)
    twin = copy.deepcopy(bn)

    def f(x):
        y = bn(x)
        return y * float(y.sum())
    x = ember.randn(4, 3)
    ember.compile(f)(x)
    twin(x)
    np.testing.assert_array_equal(bn.running_mean.numpy(), twin.running_mean.numpy())


def test_backend_registry_and_errors():
    from ember._dynamo import register_backend, list_backends, lookup_backend
    from ember._dynamo.exc import TorchDynamoException
    assert "ember" in ember.compiler.list_backends()  # the debug ones only on request, as torch
    assert {"eager", "aot_eager", "ember"} <= set(list_backends(exclude_tags=()))
    seen = []

    @register_backend(name="test_recording_backend")
    def recording(graph, example_inputs):
        seen.append([c.op.short_name for c in graph.forward.calls])
        return graph.forward.run_list
    assert "test_recording_backend" in list_backends()
    assert lookup_backend("test_recording_backend") is recording
    out = ember.compile(lambda x: x.exp() + 1, backend="test_recording_backend")(ember.zeros(2))
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0])
    assert seen == [["exp", "add.Tensor"]]
    with pytest.raises(TorchDynamoException, match="Invalid backend"):
        ember.compile(lambda x: x, backend="nope")
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        ember.compile(lambda x: x, mode="fastest")


def test_mode_and_options_errors_as_torch():
    # torch 2.13's messages for the same calls
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest, should be one of"):
        ember.compile(lambda x: x, mode="fastest")
    with pytest.raises(RuntimeError, match="Either mode or options can be specified, but both "
                                           "can't be specified at the same time."):
        ember.compile(lambda x: x, mode="default", options={})


def test_passes_cse_fold_dce_and_fusion():
    def f(x):
        a = (x * 2).exp()
        b = (x * 2).exp()            # the same: CSE merges it
        unused = x.sin()             # noqa: F841  dead code
        c = ember.ones(3) * 4        # constants only: folded
        return ((a + b) * c).relu().neg()
    cf = ember.compile(f)
    x = ember.randn(3)
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-6)
    entry = cf.history[0]
    fwd_code, _ = entry.captured.compiled
    ops = [c.op.short_name for c in entry.captured.forward.calls]
    assert ops.count("exp") == 1 and "sin" not in ops and "ones" not in ops
    assert [len(g.calls) for g in fwd_code.fusion] == [2, 4]  # exp is read twice after CSE
    assert "def fused_0" in fwd_code.code and "out=out" in fwd_code.code


def test_memory_plan_reuses_buffers_across_steps():
    model = mlp()
    cm = ember.compile(model)
    x = ember.randn(8, 20)
    cm(x).sum().backward()
    fwd, bwd = cm._compiled_call.history[0].captured.compiled
    before = [id(b) for b in fwd.buffers + bwd.buffers if b is not None]
    assert before
    outs = [cm(x) for _ in range(2)]  # outputs escape: never in a reused buffer
    assert not np.shares_memory(outs[0].detach().numpy(), outs[1].detach().numpy())
    outs[0].sum().backward()
    assert [id(b) for b in fwd.buffers + bwd.buffers if b is not None] == before


def test_explain_shows_graph_fusion_guards_and_recompilations():
    cm = ember.compile(mlp())
    with ember.explain() as ex:
        cm(ember.randn(8, 20)).sum().backward()
        cm(ember.randn(3, 20))
    text = str(ex)
    assert "captured forward graph" in text and "captured backward graph" in text
    assert "linear(" in text and "threshold_backward" in text
    assert "guards:" in text and "input 0: shape [3, 20]" in text
    assert "recompilations: 1" in text and "fusion groups (forward)" in text


def test_optimized_module_state_dict_and_decorator():
    model = mlp()
    cm = ember.compile(model)
    assert list(cm.state_dict()) == list(model.state_dict())
    assert cm._orig_mod is model

    @ember.compile
    def g(x):
        return x + 1
    np.testing.assert_array_equal(g(ember.zeros(2)).numpy(), [1.0, 1.0])


def test_closed_over_parameters_get_gradients():
    model = mlp()
    twin = copy.deepcopy(model)
    x, y = ember.randn(8, 20), ember.randint(0, 5, (8,))
    step = ember.compile(lambda x, y: F.cross_entropy(model(x), y))
    step(x, y).backward()
    F.cross_entropy(twin(x), y).backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_module_graph_break_compiles_the_submodules_around_it():
    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
            self.second = nn.Linear(8, 3)

        def forward(self, x):
            h = self.first(x)
            if h.mean() > 0:   # a graph break: Python reads a tensor's value
                h = h * 2
            return self.second(h)
    ember.manual_seed(0)
    model = Gate()
    twin = copy.deepcopy(model)
    cnt = CompileCounter()
    cm = ember.compile(model, backend=cnt)
    x = ember.randn(4, 6)
    for _ in range(2):
        out = cm(x)
        out.sum().backward()
        twin(x).sum().backward()
        np.testing.assert_array_equal(out.detach().numpy(), twin(x).detach().numpy())
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    assert cnt.frame_count == 2  # first and second, each once
    assert isinstance(model.first, nn.Sequential)  # the module is left as it was
    with pytest.raises(Unsupported):
        ember.compile(Gate(), fullgraph=True)(x)


def test_dynamo_explain_counts_graphs_and_breaks():
    from ember._dynamo import explain

    def f(x):
        return (x * 2).sum()
    out = explain(f)(ember.ones(3))
    assert (out.graph_count, out.graph_break_count, out.op_count) == (1, 0, 2)
    out = explain(lambda x: x * x.sum().item())(ember.ones(3))
    assert out.graph_count == 0 and out.graph_break_count == 1
    assert "Python number" in out.break_reasons[0] and "Graph Break Count: 1" in str(out)


def test_break_between_compiled_submodules_keeps_the_graph_behind_it():
    class Breaker(nn.Module):
        def forward(self, x):
            return x * 2 if float(x.sum()) > -1e9 else x
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), Breaker(), nn.Linear(5, 3), nn.Sigmoid())
    twin = copy.deepcopy(model)
    cm = ember.compile(model)
    x = ember.randn(2, 4)
    for _ in range(2):  # the second call reuses every compiled child
        (cm(x) ** 2).sum().backward()
        (twin(x) ** 2).sum().backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)
    children = cm._compiled_call.children
    assert [len(children[n]._compiled_call.history) for n in "0134"] == [1, 1, 1, 1]
    assert children["2"]._compiled_call.breaks


def test_closed_over_tensors_are_read_on_every_call():
    table = ember.ones(3)
    cf = ember.compile(lambda x: x + table * 2)
    x = ember.zeros(3)
    np.testing.assert_array_equal(cf(x).numpy(), [2.0, 2.0, 2.0])
    table.fill_(5.0)  # not folded into the graph: the change is seen
    np.testing.assert_array_equal(cf(x).numpy(), [10.0, 10.0, 10.0])


def test_module_compile_in_place():
    ember.manual_seed(0)
    model = mlp()
    twin = copy.deepcopy(model)
    model.compile()
    x, y = ember.randn(8, 20), ember.randint(0, 5, (8,))
    F.cross_entropy(model(x), y).backward()
    F.cross_entropy(twin(x), y).backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)
    assert model(x).grad_fn.name() == "CompiledFunctionBackward"
    assert list(model.state_dict()) == list(twin.state_dict())


def test_group_norm_backward_has_no_graph_break():
    # the derivative asks whether mean/rstd received gradients from the graph, not the data
    def net():
        return nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(4, 8), nn.ReLU(), nn.Flatten(),
                             nn.Linear(8 * 6 * 6, 5))
    _train_equal(net, ember.randn(2, 3, 8, 8), ember.randint(0, 5, (2,)))
    cm = ember.compile(net(), fullgraph=True)
    cm(ember.randn(2, 3, 8, 8)).sum().backward()  # fullgraph: a break would raise


def test_group_norm_mean_and_rstd_gradients_match_torch():
    torch = pytest.importorskip("torch", reason="torch is the oracle for this test")
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 6, 5)), rng.standard_normal(6), rng.standard_normal(6)
    a, c, d = rng.standard_normal((2, 6, 5)), rng.standard_normal((2, 3)), \
        rng.standard_normal((2, 3))
    grads = []
    for lib in (ember, torch):
        xs = lib.tensor(x, requires_grad=True)
        ws = lib.tensor(w, requires_grad=True)
        out, mean, rstd = lib.native_group_norm(xs, ws, lib.tensor(b), 2, 6, 5, 3, 1e-5)
        # torch adds the mean/rstd terms only when both got gradients; the weight's gradient
        # comes from the output's alone
        for use in ((1, 0, 0), (1, 1, 0), (1, 0, 1), (1, 1, 1), (0, 1, 0), (0, 0, 1), (0, 1, 1)):
            loss = sum((t * lib.tensor(s)).sum() for u, t, s in
                       zip(use, (out, mean, rstd), (a, c, d)) if u)
            gx, gw = lib.autograd.grad(loss, [xs, ws], retain_graph=True, allow_unused=True)
            grads.append(tuple(None if g is None else g.detach().numpy() for g in (gx, gw)))
    n = len(grads) // 2
    for mine, theirs in zip(grads[:n], grads[n:]):
        for e, t in zip(mine, theirs):
            assert (e is None) == (t is None)
            if e is not None:
                np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 16, 6, 24, 5, 1, 0, 1), (8, 8, 3, 11, 3, 2, 1, 1),
                                   (2, 4, 3, 9, 3, 2, 2, 2), (3, 5, 2, 10, 4, 3, 1, 1)])
def test_conv_input_grad_lowering_equals_the_kernel(shape):
    from ember._inductor import conv_backward
    n, o, c, h, k, s, p, d = shape
    out = (h + 2 * p - d * (k - 1) - 1) // s + 1
    g, w = ember.randn(n, o, out, out), ember.randn(o, c, k, k)
    args = (g, w, [n, c, h, h], [s, s], [p, p], [d, d], False, [0, 0], 1)
    assert conv_backward.applies(g.numpy(), w.numpy(), *args[2:])
    mine = conv_backward.conv_input_grad(g.numpy(), w.numpy(), (n, c, h, h), [s, s], [p, p],
                                         [d, d])
    ref = ember.ops.aten._convolution_backward_input.default(*args).numpy()
    np.testing.assert_array_equal(mine, ref)


def test_lenet_lowerings_are_used_and_checked(monkeypatch):
    from ember._inductor import conv_backward
    cm = ember.compile(wide_lenet())
    cm(ember.randn(4, 1, 28, 52)).sum().backward()
    fwd, bwd = cm._compiled_call.history[0].captured.compiled
    assert fwd.code.count("_convolution_with_columns") == 2   # columns kept for backward
    assert "_conv_input_grad(" in bwd.code
    # a lowering that does not reproduce the kernel is not used
    real = conv_backward.conv_input_grad
    monkeypatch.setattr(conv_backward, "conv_input_grad", lambda *a: real(*a) * 1.0000001)
    cm = ember.compile(wide_lenet())
    cm(ember.randn(4, 1, 28, 52)).sum().backward()
    _, bwd = cm._compiled_call.history[0].captured.compiled
    assert "_conv_input_grad(" not in bwd.code and "_convolution_backward_input" in bwd.code


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("shape", [(4, 6, 24, 24), (3, 5, 7, 9), (2, 6, 6), (1, 1, 2, 3)])
def test_max_pool_tiles_equals_the_kernel_ties_and_nan(shape):
    from ember._inductor import pool_tiles
    op = ember.ops.aten.max_pool2d_with_indices.default
    x = ember.randn(*shape).relu()              # zeros: ties everywhere
    flat = x.numpy().reshape(-1)
    flat[:4] = 1.0                               # ties between positive values too
    flat[-1] = -0.0
    assert pool_tiles.applies(x.numpy(), [2], [], [0], [1], False)
    v, i = op(x, [2], [2], [0], [1], False)
    mine = pool_tiles.max_pool_tiles(x.numpy(), lambda: None)
    np.testing.assert_array_equal(_bits(mine[0]), _bits(v.numpy()))
    np.testing.assert_array_equal(mine[1], i.numpy())
    assert mine[1].dtype == np.int64 and mine[0].flags.c_contiguous
    flat[1] = float("nan")                       # PyTorch's NaN rule: the kernel's
    assert pool_tiles.max_pool_tiles(x.numpy(), lambda: "kernel") == "kernel"
    assert pool_tiles.max_pool_tiles(x.numpy().swapaxes(-1, -2), lambda: "kernel") == "kernel"
    assert not pool_tiles.applies(x.numpy(), [3], [2], [0], [1], False)
    assert not pool_tiles.applies(x.numpy(), [2], [2], [1], [1], False)
    g = ember.randn(*v.shape)
    g.numpy().reshape(-1)[0] = -0.0
    g.numpy().reshape(-1)[-1] = float("nan")
    ref = ember.ops.aten.max_pool2d_with_indices_backward.default(g, x, [2], [2], [0], [1],
                                                                  False, i)
    mine = pool_tiles.max_pool_tiles_backward(g.numpy(), i.numpy(), tuple(x.shape))
    np.testing.assert_array_equal(_bits(mine), _bits(ref.numpy()))


@pytest.mark.parametrize("shape", [(4, 3, 10, 9, 6, 3, 0, True), (2, 1, 8, 8, 5, 5, 2, False),
                                   (3, 2, 6, 7, 4, 1, 1, True)])
def test_conv_forward_lowering_equals_the_kernel(shape):
    from ember._inductor import conv_forward
    n, c, h, w_, o, k, p, bias = shape
    x, w = ember.randn(n, c, h, w_), ember.randn(o, c, k, k)
    b = ember.randn(o) if bias else None
    args = ([1, 1], [p, p], [1, 1], 1)
    assert conv_forward.applies(x.numpy(), w.numpy(), None if b is None else b.numpy(), *args)
    y, cols = ember.ops.aten._convolution_with_columns.default(x, w, b, *args)
    y2, cols2 = conv_forward.conv_with_columns(x.numpy(), w.numpy(), None if b is None else b.numpy(), [p, p])
    np.testing.assert_array_equal(_bits(y2), _bits(y.numpy()))
    np.testing.assert_array_equal(_bits(cols2), _bits(cols.numpy()))
    assert cols2.shape == tuple(cols.shape) and y2.flags.c_contiguous
    assert not conv_forward.applies(x.numpy(), w.numpy(), None, [2, 2], [p, p], [1, 1], 1)
    assert conv_forward.conv_with_columns(x.numpy().transpose(0, 1, 3, 2), w.numpy(), None,
                                          [p, p], lambda: "kernel") == "kernel"


def test_lenet_pool_and_conv_lowerings_used_and_fall_back_at_run_time():
    ember.manual_seed(0)
    model = wide_lenet()
    twin = copy.deepcopy(model)
    cm = ember.compile(model)
    x = ember.randn(4, 1, 28, 52)
    cm(x).sum().backward()
    fwd, _ = cm._compiled_call.history[0].captured.compiled
    assert fwd.code.count("_max_pool_tiles(") == 2 and fwd.code.count("_conv_with_columns(") == 2
    assert cm._compiled_call.history[0].captured.compiled[1].code.count(
        "_max_pool_tiles_backward(") == 2
    # an input the lowerings do not take (a NaN: PyTorch's pooling rule; a non-contiguous
    # input: the kernel's route) runs the kernels, with eager's results
    xn = x.clone()
    xn[0, 0, 3, 3] = float("nan")
    xt = ember.randn(4, 1, 28, 52).transpose(2, 3)
    for inp in (xn, xt):
        got, want = cm(inp), twin(inp)
        np.testing.assert_array_equal(_bits(got.detach().numpy()), _bits(want.detach().numpy()))


@pytest.mark.parametrize("pool", [(2, 2), (3, 2)])   # tiling and overlapping windows
def test_relu_mask_moves_in_front_of_the_pool_scatter(pool):
    def net():
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU(), nn.MaxPool2d(*pool), nn.Flatten(),
                             nn.Linear(27 if pool == (2, 2) else 18, 4))
    x = ember.randn(3, 2, 9, 8)
    x[0, 0] = -1.0                    # whole windows <= 0 after the ReLU: masked gradients
    cm = _train_equal(net, x, ember.randint(0, 4, (3,)))
    bwd = cm._compiled_call.history[0].captured.backward
    ops = [c.op.short_name for c in bwd.calls]
    k = ops.index("threshold_backward")
    assert ops[k + 1] == "max_pool2d_with_indices_backward"   # masked, then scattered
    assert bwd.calls[k].outs[0] is bwd.calls[k + 1].args[0]


def test_optimizer_step_breaks_the_graph_and_stays_correct():
    # the optimizers update NumPy arrays behind the dispatcher: a captured graph would miss it
    ember.manual_seed(0)
    model = nn.Linear(4, 3)
    twin = copy.deepcopy(model)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_twin = ember.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    step = ember.compile(lambda: opt.step())
    x = ember.randn(5, 4)
    for _ in range(3):
        for m, o, s in ((model, opt, step), (twin, opt_twin, opt_twin.step)):
            o.zero_grad()
            (m(x) ** 2).sum().backward()
            s()
        np.testing.assert_array_equal(model.weight.detach().numpy(), twin.weight.detach().numpy())
    assert "SGD.step()" in next(iter(step.breaks.values()))
    with pytest.raises(Unsupported, match="SGD.step"):
        ember.compile(lambda: opt.step(), fullgraph=True)()
    ember._dynamo.graph_break()  # outside a capture: nothing


def test_chains_write_in_place_only_over_dead_arrays():
    w = ember.randn(6, 6, requires_grad=True)

    def f(x):
        y = x @ w                    # read again after the ReLU: not overwritten
        a = y.relu() * 2 + y
        p = x @ w                    # a view of it is read later: not overwritten
        v = p.view(36)
        b = p.tanh()
        q = (x * 3) @ w              # dies in the chain: overwritten in place
        c = q.relu() - 1
        return a, b, v * 1, c
    cf = ember.compile(f)
    x = ember.randn(6, 6)
    for _ in range(2):
        for got, want in zip(cf(x), f(x)):
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    code = cf.history[0].captured.compiled[0].code
    assert code.count("(in place over") == 1


def test_in_place_chains_never_write_over_inputs():
    def f(x):
        return x.contiguous().relu() * 2, x.clone().neg(), x.to(ember.float32).exp()
    cf = ember.compile(f)
    x = ember.randn(4, 5)
    before = x.numpy().copy()
    for _ in range(2):
        for got, want in zip(cf(x), f(x)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(x.numpy(), before)
    assert cf.history[0].captured.compiled[0].code.count("(in place over") == 1  # the clone
