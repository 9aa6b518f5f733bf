"""ember.nn.utils.prune against torch.nn.utils.prune on the same module: state_dict keys,
masks, pruned weights, forward outputs and gradients, hooks, remove, global pruning."""
import numpy as np
import pytest

import ember
import ember.nn.utils.prune as eprune
from _torch_oracle import assert_same

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402


def twin_models():
    """The same small conv net in both libraries (torch's weights copied into ember's)."""
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(6 * 4 * 4, 10))
    e = ember.nn.Sequential(ember.nn.Conv2d(3, 6, 3), ember.nn.ReLU(), ember.nn.Flatten(),
                            ember.nn.Linear(6 * 4 * 4, 10))
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return e, t


def assert_same_module(e, t, tol=0.0):
    """Same state_dict keys and masks; values equal (to `tol` after a training step, whose
    float32 conv gradients round differently in the two libraries)."""
    es, ts = e.state_dict(), t.state_dict()
    assert list(es) == list(ts)
    for k in ts:
        exact = k.endswith("_mask")
        assert_same(es[k], ts[k], atol=0 if exact else tol, rtol=0 if exact else tol, path=k)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    for (name, em), (_, tm) in zip(e.named_modules(), t.named_modules()):
        for attr in ("weight", "bias"):
            if hasattr(tm, attr):
                assert_same(getattr(em, attr), getattr(tm, attr), atol=tol, rtol=tol,
                            path=f"{name}.{attr}")
                pruned_e = (getattr(em, attr) == 0).numpy()
                assert (pruned_e == (getattr(tm, attr) == 0).numpy()).all()
        assert len(em._forward_pre_hooks) == len(tm._forward_pre_hooks)
    assert eprune.is_pruned(e) == tprune.is_pruned(t)
    # forward and backward through the reparametrisation
    x = np.random.default_rng(0).normal(size=(2, 3, 6, 6)).astype(np.float32)
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    assert_same(ye, yt, atol=1e-5, rtol=1e-5)
    e.zero_grad()
    t.zero_grad()
    ye.square().sum().backward()
    yt.square().sum().backward()
    for (n, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
        assert_same(pe.grad, pt.grad, atol=1e-4, rtol=1e-4, path=f"{n}.grad")


PRUNINGS = {
    "identity": lambda P, m: P.identity(m[0], "weight"),
    "random_unstructured": lambda P, m: P.random_unstructured(m[0], "weight", amount=0.3),
    "random_unstructured_int": lambda P, m: P.random_unstructured(m[3], "bias", amount=4),
    "l1_unstructured": lambda P, m: P.l1_unstructured(m[0], "weight", amount=0.4),
    "l1_unstructured_scores": lambda P, m: P.l1_unstructured(
        m[3], "weight", amount=25, importance_scores=m[3].weight.detach().flip(0)),
    "random_structured": lambda P, m: P.random_structured(m[0], "weight", amount=2, dim=0),
    "ln_structured": lambda P, m: P.ln_structured(m[0], "weight", amount=0.5, n=2, dim=0),
    "ln_structured_l1_dim1": lambda P, m: P.ln_structured(m[3], "weight", amount=10, n=1, dim=1),
    "custom_from_mask": lambda P, m: P.custom_from_mask(
        m[3], "bias", mask=(m[3].bias.detach() > 0).to(m[3].bias.dtype)),
    "iterative": lambda P, m: (P.l1_unstructured(m[0], "weight", amount=0.3),
                               P.ln_structured(m[0], "weight", amount=2, n=2, dim=0),
                               P.random_unstructured(m[0], "weight", amount=0.2),
                               P.l1_unstructured(m[3], "bias", amount=0.5)),
}


@pytest.mark.parametrize("name", sorted(PRUNINGS))
def test_pruning_matches_torch(name):
    e, t = twin_models()
    ember.manual_seed(1)
    torch.manual_seed(1)
    PRUNINGS[name](eprune, e)
    PRUNINGS[name](tprune, t)
    assert_same_module(e, t)
    # a training step keeps pruned entries at zero: the hook recomputes weight each forward
    for model, lib in ((e, ember), (t, torch)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        model(lib.ones(1, 3, 6, 6)).sum().backward()
        opt.step()
    assert_same_module(e, t, tol=1e-5)


@pytest.mark.parametrize("name", ["l1_unstructured", "iterative", "ln_structured"])
def test_remove_matches_torch(name):
    e, t = twin_models()
    ember.manual_seed(2)
    torch.manual_seed(2)
    PRUNINGS[name](eprune, e)
    PRUNINGS[name](tprune, t)
    for P, m in ((eprune, e), (tprune, t)):
        P.remove(m[0], "weight")
        if name == "iterative":
            P.remove(m[3], "bias")
    assert_same_module(e, t)
    assert isinstance(e[0].weight, ember.nn.Parameter)
    with pytest.raises(ValueError) as ee:
        eprune.remove(e[0], "weight")
    with pytest.raises(ValueError) as te:
        tprune.remove(t[0], "weight")
    assert str(ee.value).split(" of module")[0] == str(te.value).split(" of module")[0]


def test_global_unstructured_matches_torch():
    e, t = twin_models()
    for P, m in ((eprune, e), (tprune, t)):
        P.l1_unstructured(m[3], "weight", amount=0.1)  # an existing mask is respected
        P.global_unstructured([(m[0], "weight"), (m[0], "bias"), (m[3], "weight")],
                              pruning_method=P.L1Unstructured, amount=0.35)
    assert_same_module(e, t)
    total = sum(int((b == 0).sum()) for n, b in e.named_buffers() if n.endswith("_mask"))
    assert total == sum(int((b == 0).sum()) for n, b in t.named_buffers() if n.endswith("_mask"))
    assert isinstance(e[3]._forward_pre_hooks[next(iter(e[3]._forward_pre_hooks))],
                      eprune.PruningContainer)


def test_pruning_method_prune_and_container():
    t = ember.tensor([[0.5, -2.0, 0.1], [3.0, -0.2, 1.0]])
    out = eprune.L1Unstructured(amount=2).prune(t)
    assert out.tolist() == [[0.5, -2.0, 0.0], [3.0, -0.0, 1.0]]
    lin = ember.nn.Linear(3, 2)
    m = eprune.L1Unstructured.apply(lin, "weight", amount=1)
    assert isinstance(m, eprune.L1Unstructured) and m._tensor_name == "weight"
    m2 = eprune.RandomUnstructured.apply(lin, "weight", amount=1)
    assert isinstance(m2, eprune.PruningContainer) and len(m2) == 2
    assert int((lin.weight_mask == 0).sum()) == 2


@pytest.mark.parametrize("call,exc", [
    (lambda P, m: P.l1_unstructured(m[3], "weight", amount=-1), ValueError),
    (lambda P, m: P.l1_unstructured(m[3], "weight", amount=1.5), ValueError),
    (lambda P, m: P.l1_unstructured(m[3], "weight", amount="a"), TypeError),
    (lambda P, m: P.l1_unstructured(m[3], "bias", amount=11), ValueError),
    (lambda P, m: P.ln_structured(m[3], "bias", amount=1, n=2, dim=0), ValueError),
    (lambda P, m: P.ln_structured(m[3], "weight", amount=1, n=2, dim=2), IndexError),
    (lambda P, m: P.global_unstructured([(m[3], "weight")], P.LnStructured, amount=1, n=2, dim=0),
     TypeError),
    (lambda P, m: P.global_unstructured([(m[3], "weight")], P.L1Unstructured,
                                        importance_scores=[1], amount=1), TypeError),
])
def test_errors_match_torch(call, exc):
    e, t = twin_models()
    with pytest.raises(exc) as te:
        call(tprune, t)
    with pytest.raises(exc) as ee:
        call(eprune, e)
    # messages may name the module or the class: compare up to the first mention of either
    cut = lambda s: s.split(" of module")[0].split("<class")[0]  # noqa: E731
    assert cut(str(ee.value)) == cut(str(te.value))
    # a failed first pruning leaves the parameter as it was
    assert "bias" in dict(e[3].named_parameters()) and "weight" in dict(e[3].named_parameters())
