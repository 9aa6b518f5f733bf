"""ember.optim against torch.optim: the same parameters and gradients give the same trajectory.

Every optimizer runs side by side with PyTorch's for 50 steps and the parameters and every state
tensor are compared after each step. Tolerance: 1e-6 relative to the tensor's largest entry, i.e.
float32 rounding accumulated over 50 steps. Bit-for-bit equality is out of reach (see Note
[rounding] in ember/optim/_foreach.py): PyTorch fuses some multiply-adds and takes float32 square
roots from MKL; each elementwise primitive is checked to be within one ulp of PyTorch's op.
"""
import copy
import importlib
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.optim import _foreach

STEPS = 50

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, weight_decay=0.05, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1,
                     eps=1e-8, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.05, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, weight_decay=0.05)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.05, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.05, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.05, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, weight_decay=0.05)),
    ("RAdam", dict(lr=0.01, weight_decay=0.05, decoupled_weight_decay=True, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=10, weight_decay=0.05, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 1), maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=2.0, weight_decay=0.05,
                       maximize=True)),
]


def config_id(config):
    name, kw = config
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


def assert_close(e, t, what=""):
    e = e.detach().numpy() if isinstance(e, ember.Tensor) else np.asarray(e)
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    assert e.shape == t.shape and e.dtype == t.dtype, what
    scale = float(np.abs(t).max()) if t.size else 0.0
    np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-6 * scale, err_msg=what)


def assert_same_state(opt_e, opt_t, params_e, params_t, step=None):
    for i, (pe, pt) in enumerate(zip(params_e, params_t)):
        assert_close(pe, pt, f"step {step}: param {i}")
        se, st = opt_e.state.get(pe, {}), opt_t.state.get(pt, {})
        assert sorted(se) == sorted(st), f"state keys of param {i}"
        for key, vt in st.items():
            ve = se[key]
            if isinstance(vt, torch.Tensor):
                assert isinstance(ve, ember.Tensor), key
                assert_close(ve, vt, f"step {step}: state[{i}][{key!r}]")
            else:
                assert ve == vt, key


@pytest.fixture(autouse=True, scope="module")
def torch_single_thread():
    """PyTorch's intra-op threads only slow these small steps down on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of 1000 elements, so that small parameters exercise the block loop (PyTorch would
    go multi-threaded on tensors as large as ember's real blocks, which is slow on a busy
    machine)."""
    monkeypatch.setattr(_foreach, "BLOCK", 1000)
    monkeypatch.setattr(_foreach, "_scratch", {})


SHAPES = [(3, 2), (5,), (2, 1500)]  # the last one is updated in blocks, with a remainder


def hand_set_run(name, kw, shapes=SHAPES, steps=STEPS, dtype=np.float32, transpose=False):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if dtype == np.complex64:
        init = [a + 1j * rng.standard_normal(a.shape).astype(np.float32) for a in init]

    def leaf(lib, a):
        t = lib.tensor(a.T.copy()).t() if transpose else lib.tensor(a)
        return t.detach().requires_grad_()
    params_t = [leaf(torch, a) for a in init]
    params_e = [leaf(ember, a) for a in init]
    opt_t = getattr(torch.optim, name)(params_t, **kw)
    opt_e = getattr(ember.optim, name)(params_e, **kw)
    for k in range(steps):
        for pt, pe in zip(params_t, params_e):
            g = (rng.standard_normal(pt.shape) * (1 + k % 3)).astype(np.float32)
            if dtype == np.complex64:
                g = g + 1j * rng.standard_normal(pt.shape).astype(np.float32)
            pt.grad, pe.grad = torch.tensor(g), ember.tensor(g)
        opt_t.step()
        opt_e.step()
        assert_same_state(opt_e, opt_t, params_e, params_t, step=k)
    return opt_e, opt_t, params_e, params_t


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_trajectory_hand_set_grads(config):
    name, kw = config
    hand_set_run(name, kw)


def mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))


@pytest.mark.parametrize("config", CONFIGS[::2], ids=config_id)
def test_trajectory_through_model(config):
    """Parameters of a real model, gradients from a real backward in each library; torch's
    gradient values are written into ember's gradient tensors so both optimizers see the same
    numbers (the backward passes themselves agree only to rounding)."""
    name, kw = config
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 5)).astype(np.float32)
    y = rng.standard_normal((16, 3)).astype(np.float32)
    model_t, model_e = mlp(torch), mlp(ember)
    for pt, pe in zip(model_t.parameters(), model_e.parameters()):
        np.testing.assert_array_equal(pe.detach().numpy(), pt.detach().numpy())
    opt_t = getattr(torch.optim, name)(model_t.parameters(), **kw)
    opt_e = getattr(ember.optim, name)(model_e.parameters(), **kw)
    for k in range(STEPS):
        opt_t.zero_grad()
        opt_e.zero_grad()
        torch.nn.functional.mse_loss(model_t(torch.tensor(x)), torch.tensor(y)).backward()
        ember.nn.functional.mse_loss(model_e(ember.tensor(x)), ember.tensor(y)).backward()
        for pt, pe in zip(model_t.parameters(), model_e.parameters()):
            assert pe.grad.shape == pt.grad.shape
            pe.grad._np[...] = pt.grad.numpy()
        opt_t.step()
        opt_e.step()
        assert_same_state(opt_e, opt_t, list(model_e.parameters()), list(model_t.parameters()),
                          step=k)


@pytest.mark.parametrize("config", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", {}),
                                    ("RMSprop", dict(centered=True)), ("Rprop", {}),
                                    ("Adagrad", {}), ("NAdam", {})], ids=config_id)
def test_complex_params(config):
    """Complex parameters go through their real view."""
    name, kw = config
    hand_set_run(name, kw, shapes=[(3, 2), (4,)], steps=10, dtype=np.complex64)


@pytest.mark.parametrize("config", [("SGD", dict(lr=0.1, momentum=0.9)), ("AdamW", {})],
                         ids=config_id)
def test_non_contiguous_params(config):
    """Transposed (non-contiguous) parameters, large enough to be updated whole, not in blocks."""
    name, kw = config
    opt_e, *_ = hand_set_run(name, kw, shapes=[(60, 40), (2, 3)], steps=5, transpose=True)
    p = opt_e.param_groups[0]["params"][0]
    assert not p.is_contiguous()


def test_param_groups_with_own_options():
    def run(lib, params):
        return lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.5,
                                                       "momentum": 0.5}], lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(4).astype(np.float32) for _ in range(3)]
    pt = [torch.tensor(a, requires_grad=True) for a in init]
    pe = [ember.tensor(a, requires_grad=True) for a in init]
    ot, oe = run(torch, pt), run(ember, pe)
    assert [sorted(g) for g in oe.param_groups] == [sorted(g) for g in ot.param_groups]
    for k in range(5):
        for a, b in zip(pt, pe):
            g = rng.standard_normal(4).astype(np.float32)
            a.grad, b.grad = torch.tensor(g), ember.tensor(g)
        ot.step()
        oe.step()
        assert_same_state(oe, ot, pe, pt, step=k)


def test_params_without_grad_are_skipped():
    pt = [torch.ones(3, requires_grad=True), torch.ones(2, requires_grad=True)]
    pe = [ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)]
    ot, oe = torch.optim.Adam(pt), ember.optim.Adam(pe)
    pt[0].grad, pe[0].grad = torch.ones(3), ember.ones(3)
    ot.step()
    oe.step()
    assert pe[1] not in oe.state and pt[1] not in ot.state
    assert_same_state(oe, ot, pe, pt)


# ---- the elementwise primitives agree with PyTorch's ops to one rounding ------------------------

def test_primitives_within_one_rounding_of_torch():
    """Where PyTorch fuses a multiply-add, ember rounds once more: the results differ by at most
    one ulp of the terms added (not of the result, which may be much smaller)."""
    rng = np.random.default_rng(0)
    n = 10_003
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    z = np.abs(rng.standard_normal(n)).astype(np.float32) + 0.1
    tmp = np.empty(n, np.float32)

    def T(a):
        return torch.tensor(a)

    def check(e, t, *terms):
        ulp = np.spacing(sum(np.abs(term) for term in terms).astype(np.float32))
        assert np.all(np.abs(e - t.numpy()) <= ulp)
    for alpha in [-0.0123, 0.7, 1.0, -1.0, 3.3]:
        check(_foreach.add(x, y, alpha, np.empty_like(x), tmp), T(x).add_(T(y), alpha=alpha),
              x, alpha * y)
    for w in [0.1, 0.001, 0.4999, 0.5, 0.9, -0.3, 1.7]:
        check(_foreach.lerp_(x.copy(), y, w, tmp), T(x).lerp_(T(y), w), x, y, w * (y - x))
    for v in [1.0, 0.001, -0.37]:
        check(_foreach.addcmul_(x.copy(), y, z, v, tmp), T(x).addcmul_(T(y), T(z), value=v),
              x, v * y * z)
        # addcdiv has no fused step in PyTorch: the same roundings, the same bits
        np.testing.assert_array_equal(_foreach.addcdiv_(x.copy(), y, z, v, tmp),
                                      T(x).addcdiv_(T(y), T(z), value=v).numpy())


# ---- the step runs outside autograd and bumps versions --------------------------------------

def test_step_builds_no_graph_and_bumps_versions():
    p = ember.ones(4, requires_grad=True)
    p.grad = ember.ones(4)
    opt = ember.optim.Adam([p], lr=0.1)
    v = p._version
    with ember.enable_grad():
        opt.step()
    assert p.grad_fn is None and p.is_leaf and p.requires_grad
    assert p._version > v
    exp_avg = opt.state[p]["exp_avg"]
    v = exp_avg._version
    opt.step()
    assert exp_avg._version > v
    assert opt.state[p]["step"].dtype is ember.float32 and opt.state[p]["step"].dim() == 0


def test_closure_is_called_with_grad_enabled():
    for lib in (torch, ember):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)

        def closure():
            opt.zero_grad()
            assert lib.is_grad_enabled()
            loss = (p * p).sum()
            loss.backward()
            return loss
        with lib.no_grad():
            loss = opt.step(closure)
        assert loss.item() == 3.0
        assert p.tolist() == pytest.approx([0.8] * 3)


def test_differentiable_step_on_a_leaf_raises_like_torch():
    """differentiable=True updates the parameter in place with autograd on: a leaf that requires
    grad is refused, as in PyTorch (tests/test_optim_fixes.py checks the recorded update)."""
    for lib in (torch, ember):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, differentiable=True)
        assert opt.defaults["differentiable"] is True
        p.grad = lib.ones(2)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            opt.step()


# ---- the Optimizer base class ------------------------------------------------------------------

def both_raise(fn):
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(type(t_info.value)) as e_info:
        fn(ember)
    assert str(e_info.value) == str(t_info.value)


def test_bad_params_raise_like_torch():
    both_raise(lambda lib: lib.optim.SGD(lib.ones(2), lr=0.1))
    both_raise(lambda lib: lib.optim.SGD([], lr=0.1))
    both_raise(lambda lib: lib.optim.SGD([1.0], lr=0.1))
    both_raise(lambda lib: lib.optim.SGD([lib.ones(1)], lr=0.1).add_param_group(
        {"params": {lib.ones(2)}}))
    both_raise(lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1))
    both_raise(lambda lib: lib.optim.SGD([lib.ones(1)], lr=-1.0))
    both_raise(lambda lib: lib.optim.SGD([lib.ones(1)], lr=0.1, nesterov=True))
    both_raise(lambda lib: lib.optim.Adam([lib.ones(1)], betas=(1.0, 0.9)))
    both_raise(lambda lib: lib.optim.Rprop([lib.ones(1)], etas=(1.5, 1.2)))
    both_raise(lambda lib: lib.optim.LBFGS([{"params": [lib.ones(1)]},
                                            {"params": [lib.ones(1)]}]))

    def in_two_groups(lib):
        p = lib.ones(2)
        lib.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    both_raise(in_two_groups)

    def mixed_names(lib):
        opt = lib.optim.SGD([("a", lib.ones(1))], lr=0.1)
        opt.add_param_group({"params": [lib.ones(1)]})
    both_raise(mixed_names)


def test_duplicate_param_warns():
    for lib in (torch, ember):
        p = lib.ones(1)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([p, p], lr=0.1)


def test_add_param_group_fills_defaults_and_repr_matches():
    def build(lib):
        a, b = lib.ones(2), lib.ones(3)
        opt = lib.optim.Adam([a], lr=0.1)
        opt.add_param_group({"params": b, "betas": (0.5, 0.6)})
        return opt
    oe, ot = build(ember), build(torch)
    for ge, gt in zip(oe.param_groups, ot.param_groups):
        assert {k: v for k, v in ge.items() if k != "params"} == \
            {k: v for k, v in gt.items() if k != "params"}
    assert repr(oe) == repr(ot)


def test_named_parameters_store_param_names():
    def build(lib):
        model = mlp(lib)
        return lib.optim.SGD(model.named_parameters(), lr=0.1)
    oe, ot = build(ember), build(torch)
    assert oe.param_groups[0]["param_names"] == ot.param_groups[0]["param_names"]
    assert oe.state_dict()["param_groups"] == ot.state_dict()["param_groups"]


def test_zero_grad():
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0, 0, 0]
    opt.zero_grad()
    assert p.grad is None


def test_step_hooks():
    for lib in (torch, ember):
        calls = []
        p = lib.ones(1, requires_grad=True)
        p.grad = lib.ones(1)
        opt = lib.optim.SGD([p], lr=0.1)

        def pre(o, args, kwargs):
            calls.append(("pre", args[1:], dict(kwargs)))
            return (args[0],), {"closure": lambda: 7.0}

        h1 = opt.register_step_pre_hook(pre)
        h2 = opt.register_step_post_hook(lambda o, a, k: calls.append(("post", k["closure"]())))
        optimizer_module = importlib.import_module(lib.__name__ + ".optim.optimizer")
        h3 = optimizer_module.register_optimizer_step_pre_hook(
            lambda o, a, k: calls.append("global"))
        assert opt.step() == 7.0
        h1.remove()
        h2.remove()
        h3.remove()
        opt.step()
        assert calls == ["global", ("pre", (), {}), ("post", 7.0)]


def test_state_dict_hooks():
    for lib in (torch, ember):
        p = lib.ones(1, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        log = []
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_state_dict_post_hook(lambda o, sd: log.append("first"), prepend=True)
        sd = opt.state_dict()
        assert sd["extra"] == 1 and log == ["pre", "first"]

        def set_lr(o, sd):
            sd = copy.deepcopy(sd)
            sd["param_groups"][0]["lr"] = 0.5
            return sd
        opt.register_load_state_dict_pre_hook(set_lr)
        opt.register_load_state_dict_post_hook(lambda o: log.append("loaded"))
        opt.load_state_dict(sd)
        assert opt.param_groups[0]["lr"] == 0.5 and log[-1] == "loaded"


def test_load_state_dict_errors_match_torch():
    def mismatch(lib, groups):
        opt = lib.optim.SGD([lib.ones(1)], lr=0.1)
        sd = opt.state_dict()
        sd["param_groups"] = groups(sd["param_groups"])
        opt.load_state_dict(sd)
    both_raise(lambda lib: mismatch(lib, lambda g: g + g))
    both_raise(lambda lib: mismatch(lib, lambda g: [{**g[0], "params": [0, 1]}]))


# ---- state dicts cross between the libraries ----------------------------------------------------

def to_plain(obj):
    """A state dict with every tensor replaced by a NumPy array, through pickle."""
    def conv(x):
        if isinstance(x, (torch.Tensor, ember.Tensor)):
            return x.detach().numpy().copy()
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(conv(v) for v in x)
        return x
    return pickle.loads(pickle.dumps(conv(obj)))


def from_plain(lib, obj):
    if isinstance(obj, np.ndarray):
        return lib.tensor(obj)
    if isinstance(obj, dict):
        return {k: from_plain(lib, v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(from_plain(lib, v) for v in obj)
    return obj


ROUND_TRIP = [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(amsgrad=True)),
              ("AdamW", {}), ("Adagrad", dict(lr_decay=0.1)), ("RMSprop", dict(centered=True,
                                                                               momentum=0.5)),
              ("NAdam", {}), ("ASGD", dict(t0=3)), ("Rprop", {}), ("Adadelta", {}),
              ("Adamax", {}), ("RAdam", {}), ("Adafactor", {})]


@pytest.mark.parametrize("config", ROUND_TRIP, ids=config_id)
@pytest.mark.parametrize("direction", ["torch_to_ember", "ember_to_torch"])
def test_state_dict_crosses_libraries(config, direction):
    name, kw = config
    src_lib, dst_lib = (torch, ember) if direction == "torch_to_ember" else (ember, torch)
    rng = np.random.default_rng(0)
    shapes = [(3, 2), (4,)]
    params_src = [src_lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
                  for s in shapes]
    opt_src = getattr(src_lib.optim, name)(params_src, **kw)
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(10)]
    for k in range(5):
        for p, g in zip(params_src, grads[k]):
            p.grad = src_lib.tensor(g)
        opt_src.step()

    plain = to_plain(opt_src.state_dict())
    params_dst = [dst_lib.tensor(p.detach().numpy().copy(), requires_grad=True)
                  for p in params_src]
    opt_dst = getattr(dst_lib.optim, name)(params_dst, lr=123.0)  # overwritten by the load
    opt_dst.load_state_dict(from_plain(dst_lib, plain))
    assert to_plain(opt_dst.state_dict()).keys() == plain.keys()
    assert to_plain(opt_dst.state_dict())["param_groups"] == plain["param_groups"]

    for k in range(5, 10):  # training resumes identically
        for p, q, g in zip(params_src, params_dst, grads[k]):
            p.grad, q.grad = src_lib.tensor(g), dst_lib.tensor(g)
        opt_src.step()
        opt_dst.step()
    if src_lib is torch:
        assert_same_state(opt_dst, opt_src, params_dst, params_src)
    else:
        assert_same_state(opt_src, opt_dst, params_src, params_dst)


def test_state_dict_layout_matches_torch():
    def build(lib):
        a, b, c = (lib.ones(2, requires_grad=True) for _ in range(3))
        opt = lib.optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}])
        for p in (a, c):
            p.grad = lib.ones(2)
        opt.step()
        return opt.state_dict()
    se, st = build(ember), build(torch)
    assert se["param_groups"] == st["param_groups"]
    assert sorted(se["state"]) == sorted(st["state"]) == [0, 2]
    for i in se["state"]:
        assert sorted(se["state"][i]) == sorted(st["state"][i])


# ---- LBFGS --------------------------------------------------------------------------------------

def lbfgs_problem(lib, **kw):
    """A smooth convex objective computed in float64 NumPy from the parameters' values, so both
    libraries see identical losses and gradients; only the optimizer's arithmetic differs."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 10))
    a = a.T @ a / 30 + 0.1 * np.eye(10)
    b = rng.standard_normal(10)
    x0 = rng.standard_normal(10).astype(np.float32)
    p = lib.tensor(x0[:6].copy(), requires_grad=True)
    q = lib.tensor(x0[6:].reshape(2, 2).copy(), requires_grad=True)
    opt = lib.optim.LBFGS([p, q], **kw)

    def closure():
        x = np.concatenate([p.detach().numpy().ravel(), q.detach().numpy().ravel()])
        x = x.astype(np.float64)
        f = 0.5 * x @ a @ x - b @ x + 0.25 * np.sum(x ** 4)
        g = (a @ x - b + x ** 3).astype(np.float32)
        p.grad, q.grad = lib.tensor(g[:6]), lib.tensor(g[6:].reshape(2, 2))
        return lib.tensor(f, dtype=lib.float32)
    return opt, [p, q], closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch(line_search_fn):
    kw = dict(lr=1, max_iter=4, history_size=3, line_search_fn=line_search_fn)
    opt_t, params_t, closure_t = lbfgs_problem(torch, **kw)
    opt_e, params_e, closure_e = lbfgs_problem(ember, **kw)
    for k in range(8):
        loss_t, loss_e = opt_t.step(closure_t), opt_e.step(closure_e)
        assert float(loss_e) == float(loss_t)
        for pe, pt in zip(params_e, params_t):
            assert_close(pe, pt, what=f"step {k}")
        se, st = opt_e.state[params_e[0]], opt_t.state[params_t[0]]
        assert se["func_evals"] == st["func_evals"] and se["n_iter"] == st["n_iter"]
        assert sorted(se) == sorted(st)
        # near the optimum the gradient is rounding noise: compare on the gradient's scale (~1)
        for key in ("d", "prev_flat_grad"):
            np.testing.assert_allclose(se[key].numpy(), st[key].numpy(), rtol=1e-5, atol=1e-6)
        assert len(se["old_dirs"]) == len(st["old_dirs"])


def test_lbfgs_trains_a_model_with_real_backward():
    for lib in (torch, ember):
        model = mlp(lib)
        x, y = lib.randn(16, 5), lib.randn(16, 3)
        opt = lib.optim.LBFGS(model.parameters(), max_iter=5, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss
        first = opt.step(closure).item()
        for _ in range(3):
            last = opt.step(closure).item()
        assert last < first


def test_lbfgs_state_dict_crosses_libraries():
    kw = dict(lr=1, max_iter=3, history_size=3, line_search_fn="strong_wolfe")
    opt_t, params_t, closure_t = lbfgs_problem(torch, **kw)
    opt_e, params_e, closure_e = lbfgs_problem(ember, **kw)
    for _ in range(2):
        opt_t.step(closure_t)
    opt_e.load_state_dict(from_plain(ember, to_plain(opt_t.state_dict())))
    for pe, pt in zip(params_e, params_t):
        pe.detach().copy_(ember.tensor(pt.detach().numpy()))
    for _ in range(2):
        assert float(opt_e.step(closure_e)) == float(opt_t.step(closure_t))
    for pe, pt in zip(params_e, params_t):
        assert_close(pe, pt)


def test_warnings_are_not_raised_by_a_plain_step():
    p = ember.ones(3, requires_grad=True)
    p.grad = ember.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.optim.AdamW([p]).step()
