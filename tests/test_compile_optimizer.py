"""ember.compile(opt.step): the compiled step equals the eager step bit for bit over many steps
(SGD with every option, Adam, AdamW, amsgrad; with the model compiled too), and torch's to
float32 rounding; guards recompile when hyperparameters or the parameters with gradients
change and not when the learning rate does; a compiled function calling opt.step() runs it
compiled; the state dict keeps its structure. Also the ReLU epilogues of ember's generated
forward code (linear and convolution)."""
import copy

import numpy as np
import pytest

import ember
from ember import nn

F = nn.functional

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    ("SGD", dict(lr=1.0, momentum=0.5, dampening=0.1, maximize=True, weight_decay=0.01)),
    ("Adam", dict(lr=1e-3)),
    ("Adam", dict(lr=1e-3, betas=(0.6, 0.99), weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=1e-3, amsgrad=True)),
    ("AdamW", dict(lr=1e-2, weight_decay=0.1, betas=(0.5, 0.9), eps=1e-6)),
]


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def _mlp(lib):
    lib.manual_seed(0)
    # 80,000 weights: more than one block of the generated update
    return lib.nn.Sequential(lib.nn.Linear(40, 2000), lib.nn.ReLU(), lib.nn.Linear(2000, 10))


def _train(lib, kind, hyper, steps, compile_model=False, compile_step=False):
    """Parameters after `steps` SGD/Adam steps on a fixed batch, and the compiled step."""
    model = _mlp(lib)
    opt = getattr(lib.optim, kind)(model.parameters(), **hyper)
    run = lib.compile(model) if compile_model else model
    step = lib.compile(opt.step) if compile_step else opt.step
    g = np.random.default_rng(1)
    x = lib.tensor(g.standard_normal((16, 40)).astype(np.float32))
    y = lib.tensor(g.integers(0, 10, 16))
    for _ in range(steps):
        opt.zero_grad()
        lib.nn.functional.cross_entropy(run(x), y).backward()
        step()
    return [p.detach().numpy().copy() for p in model.parameters()], opt, step


@pytest.mark.parametrize("kind,hyper", CASES)
def test_compiled_step_equals_eager_bit_for_bit(kind, hyper):
    eager, opt_e, _ = _train(ember, kind, hyper, 20)
    compiled, opt_c, step = _train(ember, kind, hyper, 20, compile_step=True)
    for a, b in zip(eager, compiled):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    stateless = kind == "SGD" and "momentum" not in hyper  # else the first step makes state
    assert len(step.history) == 1 and step.compiled_calls == (20 if stateless else 19)
    sd_e, sd_c = opt_e.state_dict(), opt_c.state_dict()
    assert sd_e["param_groups"] == sd_c["param_groups"]
    assert sd_e["state"].keys() == sd_c["state"].keys()
    for k in sd_e["state"]:
        assert sd_e["state"][k].keys() == sd_c["state"][k].keys()
        for name, t in sd_e["state"][k].items():
            np.testing.assert_array_equal(_bits(t.numpy()), _bits(sd_c["state"][k][name].numpy()))


@pytest.mark.parametrize("kind,hyper", [CASES[2], CASES[5]])
def test_compiled_model_and_step_match_torch(kind, hyper):
    torch = pytest.importorskip("torch", reason="torch is the oracle")
    ours, _, _ = _train(ember, kind, hyper, 5, compile_model=True, compile_step=True)
    theirs, _, _ = _train(torch, kind, hyper, 5)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _setup(**hyper):
    model = _mlp(ember)
    opt = ember.optim.SGD(model.parameters(), **hyper)
    x, y = ember.randn(8, 40), ember.randint(0, 10, (8,))

    def grads():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
    return model, opt, grads


def test_lr_read_at_call_time_without_recompiling():
    model, opt, grads = _setup(lr=0.1, momentum=0.9)
    twin = copy.deepcopy(model)
    opt_t = ember.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    step = ember.compile(opt.step)
    x, y = ember.randn(8, 40), ember.randint(0, 10, (8,))
    for k in range(5):
        for m, o, s in ((model, opt, step), (twin, opt_t, opt_t.step)):
            o.zero_grad()
            F.cross_entropy(m(x), y).backward()
            s()
            o.param_groups[0]["lr"] = 0.1 * 0.5 ** (k + 1)
    opt.param_groups[0]["lr"] = 1.0   # alpha -1: the eager update's subtract branch
    opt_t.param_groups[0]["lr"] = 1.0
    for m, o, s in ((model, opt, step), (twin, opt_t, opt_t.step)):
        o.zero_grad()
        F.cross_entropy(m(x), y).backward()
        s()
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_array_equal(_bits(p.detach().numpy()), _bits(q.detach().numpy()))
    assert len(step.history) == 1


def test_guards_recompile_on_momentum_and_param_set():
    model, opt, grads = _setup(lr=0.1, momentum=0.9)
    step = ember.compile(opt.step)
    grads(), step(), grads(), step()
    assert len(step.history) == 1
    opt.param_groups[0]["momentum"] = 0.5
    grads(), step()
    assert len(step.history) == 2 and "hyperparameters" in step.history[-1].reason
    assert "np.multiply(s0, 0.5, out=s0)" in step.code
    grads()
    model[0].bias.grad = None          # one parameter without a gradient: a new param set
    before = model[0].bias.detach().clone()
    step()
    assert len(step.history) == 3 and "parameters" in step.history[-1].reason
    np.testing.assert_array_equal(model[0].bias.detach().numpy(), before.numpy())
    # load_state_dict replaces the state tensors: the guard on their arrays recompiles
    opt.load_state_dict(copy.deepcopy(opt.state_dict()))
    grads(), step()
    assert len(step.history) == 4


def test_first_step_eager_and_unsupported_optimizers_run_eagerly():
    model, opt, grads = _setup(lr=0.1, momentum=0.9)
    step = ember.compile(opt.step)
    grads(), step()
    assert step.eager_reasons == ["optimizer state not created yet (the first step)"]
    assert not step.history
    rms = ember.optim.RMSprop(model.parameters(), lr=0.01)
    twin = copy.deepcopy(model)
    rms_t = ember.optim.RMSprop(twin.parameters(), lr=0.01)
    step = ember.compile(rms.step)
    for p, q in zip(model.parameters(), twin.parameters()):
        q.grad = p.grad.clone()
    step(), rms_t.step()
    assert "RMSprop" in step.eager_reasons[0]
    with pytest.raises(ember._dynamo.exc.Unsupported, match="RMSprop"):
        ember.compile(rms.step, fullgraph=True)
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_hooks_and_closure_run_as_for_step():
    model, opt, grads = _setup(lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: seen.append("post"))
    step = ember.compile(opt.step)
    grads()
    assert step() is None and seen == ["pre", "post"]
    x, y = ember.randn(8, 40), ember.randint(0, 10, (8,))

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss
    assert isinstance(step(closure), ember.Tensor)


def test_compiled_function_calling_step_runs_it_compiled():
    model, opt, _ = _setup(lr=0.1, momentum=0.9)
    twin = copy.deepcopy(model)
    opt_t = ember.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    x, y = ember.randn(8, 40), ember.randint(0, 10, (8,))

    @ember.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(4):
        train_step(x, y)
        opt_t.zero_grad()
        F.cross_entropy(twin(x), y).backward()
        opt_t.step()
    compiled = opt._compiled_in_region
    assert len(compiled.history) == 1 and compiled.compiled_calls == 3
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_array_equal(_bits(p.detach().numpy()), _bits(q.detach().numpy()))


def test_complex_and_float64_parameters():
    g = np.random.default_rng(0)
    p = ember.tensor(g.standard_normal((5, 3)) + 1j * g.standard_normal((5, 3)),
                     requires_grad=True)
    q = ember.tensor(g.standard_normal(7), requires_grad=True)
    pe, qe = p.detach().clone().requires_grad_(), q.detach().clone().requires_grad_()
    opt = ember.optim.Adam([p, q], lr=0.1)
    opt_e = ember.optim.Adam([pe, qe], lr=0.1)
    step = ember.compile(opt.step)
    for k in range(4):
        for a, b, o, s in ((p, q, opt, step), (pe, qe, opt_e, opt_e.step)):
            o.zero_grad()
            ((a * a.conj()).real.sum() * (k + 1) + (b ** 3).sum()).backward()
            s()
    np.testing.assert_array_equal(p.detach().numpy(), pe.detach().numpy())
    np.testing.assert_array_equal(q.detach().numpy(), qe.detach().numpy())
    assert len(step.history) == 1 and "float64" in step.code


@pytest.mark.parametrize("threads", [1, 2])
def test_relu_epilogues_in_generated_code(threads):
    """Conv + bias + ReLU and linear + bias + ReLU in one call each; at 2 threads the kernel
    splits the convolution's product by rows, and the lowering must too to pass its check."""
    before = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        ember.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(4), nn.Flatten(),
                              nn.Linear(6 * 6 * 6, 16), nn.ReLU(), nn.Linear(16, 3))
        twin = copy.deepcopy(model)
        cm = ember.compile(model)
        x = ember.randn(64, 1, 28, 28)   # a product big enough to be split over 2 threads
        for inp in (x, x.transpose(2, 3).contiguous().transpose(2, 3)):  # 2nd: kernel's route
            out = cm(inp)
            out.sum().backward()
            ref = twin(inp)
            ref.sum().backward()
            np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
            for p, q in zip(model.parameters(), twin.parameters()):
                np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5,
                                           atol=1e-5)
        fwd = cm._compiled_call.history[0].captured.compiled[0]
        assert "_conv_with_columns(" in fwd.code and "relu=True" in fwd.code
        assert fwd.code.count("(in the epilogue above)") == 2
    finally:
        ember.set_num_threads(before)


def test_threshold_backward_mask_matches_the_kernel_with_nan():
    from ember._inductor.codegen import _threshold_backward_into
    g = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        grad = g.standard_normal((6, 7)).astype(dt)
        x = g.standard_normal((6, 7)).astype(dt)
        x[0, :3] = [np.nan, 0.0, -0.0]
        ref = ember.ops.aten.threshold_backward.default(ember.tensor(grad), ember.tensor(x), 0.0)
        out = np.empty_like(grad)
        _threshold_backward_into(grad, x, 0.0, out)
        np.testing.assert_array_equal(_bits(out), _bits(ref.numpy()))


def test_step_wrapped_by_a_scheduler_still_compiles():
    """A scheduler replaces opt.step by a plain wrapper: compiling it captures a function
    that breaks at step(), which then runs compiled (with the scheduler's bookkeeping)."""
    model, opt, grads = _setup(lr=0.1, momentum=0.9)
    twin = copy.deepcopy(model)
    opt_t = ember.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    scheds = [ember.optim.lr_scheduler.StepLR(o, 1, 0.5) for o in (opt, opt_t)]
    step = ember.compile(opt.step)
    x, y = ember.randn(8, 40), ember.randint(0, 10, (8,))
    for _ in range(4):
        for m, o, s, sched in ((model, opt, step, scheds[0]), (twin, opt_t, opt_t.step,
                                                                scheds[1])):
            o.zero_grad()
            F.cross_entropy(m(x), y).backward()
            s()
            sched.step()
    assert opt._compiled_in_region.compiled_calls == 3
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_array_equal(_bits(p.detach().numpy()), _bits(q.detach().numpy()))
