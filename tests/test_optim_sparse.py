"""Optimizers given sparse gradients (nn.Embedding(sparse=True)), against torch.optim.

SGD, Adagrad, SparseAdam and LBFGS take sparse gradients and must follow PyTorch's trajectory
(to float32 rounding: PyTorch fuses the multiply-add of `add_(sparse, alpha=)`); every other
optimizer, and the option combinations PyTorch refuses, must raise PyTorch's exception with its
message. State dicts holding sparse-gradient state cross between the libraries.
"""
import io
import pickle
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle these tests compare against")
import ember  # noqa: E402

STEPS = 6
BATCHES = [[1, 2, 2, 5], [0, 5, 9], [3, 3, 3, 1], [7], [2, 8, 1, 2], [5, 5, 0, 4]]


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's sparse-invariant-checks notice
        yield


def embedding(lib, weight):
    emb = lib.nn.Embedding(*weight.shape, sparse=True)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(weight))
    return emb


def backward(lib, emb, batch, k):
    out = emb(lib.tensor(batch))
    (out.pow(2).sum() * (1 + k % 3) + out.sum()).backward()


def dense(x):
    x = x.detach()
    return (x.to_dense() if x.is_sparse else x).numpy()


def assert_state_same(opt_e, opt_t, pe, pt, what):
    np.testing.assert_allclose(pe.detach().numpy(), pt.detach().numpy(), rtol=1e-6, atol=1e-6,
                               err_msg=what)
    se, st = opt_e.state[pe], opt_t.state[pt]
    assert sorted(se) == sorted(st), what
    for key, vt in st.items():
        ve = se[key]
        if isinstance(vt, torch.Tensor):
            assert ve.is_sparse == vt.is_sparse and str(ve.dtype) == str(vt.dtype), key
            np.testing.assert_allclose(dense(ve), dense(vt), rtol=1e-6, atol=1e-6,
                                       err_msg=f"{what}: state[{key!r}]")
        else:
            assert type(ve) is type(vt) and ve == vt, key


def run_pair(name, kw, steps=STEPS):
    weight = np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32)
    emb_t, emb_e = embedding(torch, weight), embedding(ember, weight)
    opt_t = getattr(torch.optim, name)(emb_t.parameters(), **kw)
    opt_e = getattr(ember.optim, name)(emb_e.parameters(), **kw)
    for k in range(steps):
        for lib, emb, opt in ((torch, emb_t, opt_t), (ember, emb_e, opt_e)):
            opt.zero_grad()
            if name == "LBFGS":
                def closure(lib=lib, emb=emb, opt=opt, k=k):
                    opt.zero_grad()
                    backward(lib, emb, BATCHES[k], k)
                    return emb(lib.tensor(BATCHES[k])).pow(2).sum()
                opt.step(closure)
            else:
                backward(lib, emb, BATCHES[k], k)
                assert emb.weight.grad.is_sparse
                opt.step()
        what = f"{name} {kw} step {k}"
        if name == "LBFGS":  # its history state is compared in test_optim.py
            np.testing.assert_allclose(dense(emb_e.weight), dense(emb_t.weight), rtol=1e-5,
                                       atol=1e-5, err_msg=what)
        else:
            assert_state_same(opt_e, opt_t, emb_e.weight, emb_t.weight, what)
    return (emb_e, opt_e), (emb_t, opt_t)


TRAJECTORIES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, maximize=True, foreach=True)),
    ("SGD", dict(lr=0.05, momentum=0.5, nesterov=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2, eps=1e-6,
                     maximize=True, foreach=True)),
    ("SparseAdam", dict()),
    ("SparseAdam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, maximize=True)),
    ("LBFGS", dict(lr=0.5, max_iter=3)),
]


@pytest.mark.parametrize("name,kw", TRAJECTORIES, ids=lambda v: str(v))
def test_sparse_grad_trajectory_matches_torch(name, kw):
    run_pair(name, kw)


def outcome(lib, name, kw, grad_kind="sparse"):
    """(exception type name, message) of building `name` and stepping it on one sparse grad."""
    emb = lib.nn.Embedding(10, 3, sparse=grad_kind == "sparse")
    before = emb.weight.detach().clone()
    try:
        opt = getattr(lib.optim, name)(emb.parameters(), **kw)
        backward(lib, emb, BATCHES[0], 0)
        opt.step()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e), bool((emb.weight.detach() == before).all())
    return None


REFUSED = [(name, {}) for name in ("Adadelta", "Adafactor", "Adam", "Adamax", "AdamW", "ASGD",
                                   "NAdam", "RAdam", "RMSprop", "Rprop")] + [
    ("Adam", dict(foreach=True)), ("AdamW", dict(fused=True)),
    ("RMSprop", dict(momentum=0.9)),
    ("Adagrad", dict(weight_decay=0.1)), ("Adagrad", dict(fused=True)),
    ("SGD", dict(fused=True)), ("SGD", dict(weight_decay=0.1)),
]


@pytest.mark.parametrize("name,kw", REFUSED, ids=lambda v: str(v))
def test_refused_sparse_grads_raise_as_torch(name, kw):
    expected = outcome(torch, name, dict(lr=0.1, **kw))
    assert expected is not None
    assert outcome(ember, name, dict(lr=0.1, **kw)) == expected


def test_sparse_adam_refuses_what_torch_refuses():
    assert outcome(torch, "SparseAdam", {}, grad_kind="dense")[0] == "RuntimeError"
    assert outcome(ember, "SparseAdam", {}, grad_kind="dense") == \
        outcome(torch, "SparseAdam", {}, grad_kind="dense")
    for kw in (dict(lr=0.0), dict(lr=-1.0), dict(eps=0.0), dict(betas=(1.0, 0.9)),
               dict(betas=(0.9, -0.1)), dict(weight_decay=0.1), dict(foreach=True)):
        assert outcome(ember, "SparseAdam", kw) == outcome(torch, "SparseAdam", kw), kw

    def bad_params(lib, which):
        dense_p = lib.zeros(3, requires_grad=True)
        other = (lib.zeros(2, 2).to_sparse().requires_grad_() if which == "sparse"
                 else lib.zeros(2, dtype=lib.complex64, requires_grad=True))
        try:
            lib.optim.SparseAdam([{"params": [dense_p]}, {"params": [dense_p.detach().clone()
                                                                      .requires_grad_(), other]}])
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    for which in ("sparse", "complex"):
        assert bad_params(ember, which) == bad_params(torch, which)
        assert bad_params(torch, which)[0] == "ValueError"


def test_dense_and_sparse_grads_in_one_group():
    """SGD and Adagrad take both kinds in one group; Adam refuses before any parameter moves."""
    for name, kw in (("SGD", dict(lr=0.1, momentum=0.9)), ("Adagrad", dict(lr=0.1)),
                     ("Adam", dict(lr=0.1))):
        results = []
        for lib in (torch, ember):
            lib.manual_seed(0)
            emb = lib.nn.Embedding(6, 2, sparse=True)
            lin = lib.nn.Linear(2, 1)
            with lib.no_grad():
                emb.weight.copy_(lib.arange(12.0).reshape(6, 2) / 10)
                lin.weight.fill_(0.5)
                lin.bias.fill_(-0.2)
            params = [lin.weight, emb.weight, lin.bias]
            opt = getattr(lib.optim, name)(params, **kw)
            try:
                for k in range(3):
                    opt.zero_grad()
                    lin(emb(lib.tensor(BATCHES[k]) % 6)).pow(2).sum().backward()
                    opt.step()
                error = None
            except RuntimeError as e:
                error = str(e)
            results.append((error, [p.detach().numpy().copy() for p in params]))
        (err_t, params_t), (err_e, params_e) = results
        assert err_e == err_t
        for a, b in zip(params_e, params_t):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def to_plain(obj):
    """A state dict with tensors as NumPy arrays, sparse ones as ("sparse", indices, values,
    size), through pickle."""
    def conv(x):
        if isinstance(x, (torch.Tensor, ember.Tensor)):
            x = x.detach()
            if x.is_sparse:
                return ("sparse", x._indices().numpy().copy(), x._values().numpy().copy(),
                        tuple(x.shape), x.is_coalesced())
            return x.numpy().copy()
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        if isinstance(x, list):
            return [conv(v) for v in x]
        return x
    return pickle.loads(pickle.dumps(conv(obj)))


def from_plain(lib, obj):
    if isinstance(obj, np.ndarray):
        return lib.tensor(obj)
    if isinstance(obj, tuple) and obj and obj[0] == "sparse":
        _, idx, vals, size, coalesced = obj
        return lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals), size,
                                     is_coalesced=coalesced)
    if isinstance(obj, dict):
        return {k: from_plain(lib, v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [from_plain(lib, v) for v in obj]
    return obj


ROUND_TRIP = [("SparseAdam", dict(lr=0.05)), ("Adagrad", dict(lr=0.1, lr_decay=0.1)),
              ("SGD", dict(lr=0.1, momentum=0.9))]


@pytest.mark.parametrize("name,kw", ROUND_TRIP, ids=lambda v: str(v))
@pytest.mark.parametrize("direction", ["torch_to_ember", "ember_to_torch"])
def test_state_dict_crosses_libraries(name, kw, direction):
    src, dst = (torch, ember) if direction == "torch_to_ember" else (ember, torch)
    weight = np.random.default_rng(1).standard_normal((10, 3)).astype(np.float32)
    emb_s = embedding(src, weight)
    opt_s = getattr(src.optim, name)(emb_s.parameters(), **kw)
    for k in range(3):
        opt_s.zero_grad()
        backward(src, emb_s, BATCHES[k], k)
        opt_s.step()
    plain = to_plain(opt_s.state_dict())
    emb_d = embedding(dst, emb_s.weight.detach().numpy())
    opt_d = getattr(dst.optim, name)(emb_d.parameters(), lr=123.0)
    opt_d.load_state_dict(from_plain(dst, plain))
    assert to_plain(opt_d.state_dict())["param_groups"] == plain["param_groups"]
    for k in range(3, STEPS):  # training resumes identically
        for lib, emb, opt in ((src, emb_s, opt_s), (dst, emb_d, opt_d)):
            opt.zero_grad()
            backward(lib, emb, BATCHES[k], k)
            opt.step()
    if src is torch:
        assert_state_same(opt_d, opt_s, emb_d.weight, emb_s.weight, direction)
    else:
        assert_state_same(opt_s, opt_d, emb_s.weight, emb_d.weight, direction)


def test_sparse_adam_state_dict_saved_by_ember_loads_in_torch():
    (emb_e, opt_e), (emb_t, opt_t) = run_pair("SparseAdam", dict(lr=0.05), steps=3)
    buf = io.BytesIO()
    ember.save(opt_e.state_dict(), buf)
    buf.seek(0)
    loaded = torch.load(buf)
    reference = opt_t.state_dict()
    assert loaded["param_groups"] == reference["param_groups"]
    assert loaded["state"][0]["step"] == reference["state"][0]["step"] == 3
    for key in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_allclose(loaded["state"][0][key].numpy(),
                                   reference["state"][0][key].numpy(), rtol=1e-6, atol=1e-7)


def test_sparse_scalar_arithmetic_rounds_as_torch():
    """SGD's momentum `buf.mul_(momentum)` on a sparse buffer is a float32 multiply, as the
    division by a scalar, and adding sparse entries without alpha is exact."""
    rng = np.random.default_rng(3)
    idx = rng.permutation(50)[None, :40]  # distinct rows (coalescing's sums are not compared)
    vals = rng.standard_normal((40, 4)).astype(np.float32)
    dense_part = rng.standard_normal((50, 4)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        s = lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals), (50, 4))
        other = lib.sparse_coo_tensor(lib.tensor(idx[:, ::2].copy()),
                                      lib.tensor(vals[::2].copy() * 3), (50, 4))
        results.append([s.clone().mul_(0.9)._values(), (s / 0.7)._values(),
                        s.coalesce().add(other.coalesce())._values(),
                        lib.tensor(dense_part).add_(s)])
    for k, (e, t) in enumerate(zip(*results)):
        np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=str(k))
