"""F.cross_entropy on (N, C) logits and class indices against torch, on both paths of the fused
kernel: every sample counted once (no class weights, no target equal to ignore_index: no
per-sample weights are built) and the weighted one, each also with label smoothing folded in.
Values, dtypes, gradients, the node names, double backward, and the errors for targets out of
range."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle these tests compare against")
import ember  # noqa: E402


def run(lib, x, y, **kw):
    xt = lib.tensor(x, requires_grad=True)
    if "weight" in kw:
        kw["weight"] = lib.tensor(kw["weight"])
    out = lib.nn.functional.cross_entropy(xt, lib.tensor(y), **kw)
    g = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).astype(x.dtype)
    out.backward(lib.tensor(g))
    return out.detach().numpy(), xt.grad.numpy()


CASES = [dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=3),
         dict(ignore_index=3, reduction="none"), dict(ignore_index=-1), dict(ignore_index=50),
         dict(weight=True), dict(weight=True, ignore_index=2, reduction="sum"),
         dict(label_smoothing=0.1), dict(label_smoothing=0.2, ignore_index=3, reduction="none"),
         dict(label_smoothing=0.1, weight=True, ignore_index=1)]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("shape", [(64, 10), (128, 1000), (1, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_matches_torch(case, shape, dtype):
    rng = np.random.default_rng(shape[1])
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    y = rng.integers(0, shape[1], shape[0])
    kw = dict(case)
    if kw.get("weight"):
        kw["weight"] = rng.random(shape[1]).astype(dtype)
    got, want = run(ember, x, y, **dict(kw)), run(torch, x, y, **dict(kw))
    for e, t in zip(got, want):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-5 if dtype == np.float32 else 1e-12, equal_nan=True)


def test_all_samples_ignored_and_empty_batch_match_torch():
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for kw, y, xs in ((dict(ignore_index=1), np.ones(4, np.int64), x),
                      (dict(), np.zeros(0, np.int64), x[:0]),
                      (dict(reduction="sum"), np.zeros(0, np.int64), x[:0])):
        got, want = run(ember, xs, y, **kw), run(torch, xs, y, **kw)
        for e, t in zip(got, want):
            np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("bad", [10, -2, -100])
@pytest.mark.parametrize("ignore_index", [-100, 4])
def test_out_of_range_targets_raise_as_torch(bad, ignore_index):
    x = np.zeros((3, 10), np.float32)
    y = np.array([1, bad, 4])
    errors = []
    for lib in (ember, torch):
        try:
            lib.nn.functional.cross_entropy(lib.tensor(x), lib.tensor(y),
                                            ignore_index=ignore_index)
            errors.append(None)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            errors.append((type(e).__name__, str(e).split("\n")[0]))
    if bad == -100 and ignore_index == -100:
        assert errors == [None, None]
    else:
        assert errors[0] is not None and errors[0][0] == errors[1][0]


@pytest.mark.parametrize("kw", [dict(), dict(label_smoothing=0.2),
                                dict(label_smoothing=0.3, ignore_index=1, reduction="sum")],
                         ids=str)
def test_node_names_match_torch(kw):
    names = []
    for lib in (torch, ember):
        x = lib.zeros(4, 3, requires_grad=True)
        names.append(lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2, 1]),
                                                     **kw).grad_fn.name())
    assert names[0] == names[1]


@pytest.mark.parametrize("kw", [dict(label_smoothing=0.25),
                                dict(label_smoothing=0.4, weight=True, ignore_index=2),
                                dict(label_smoothing=0.1, reduction="none", ignore_index=0)],
                         ids=str)
def test_label_smoothing_double_backward(kw):
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((5, 4))
    y = ember.tensor([0, 2, 3, 1, 2])
    kw = dict(kw)
    if kw.pop("weight", False):
        kw["weight"] = ember.tensor(rng.random(4) + 0.5)
    x = ember.tensor(x0, requires_grad=True)

    def f(x):
        return ember.nn.functional.cross_entropy(x, y, **kw)
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))
