"""ember.jit: trace records the ops of an example run and replays them (values and gradients
equal eager), warns as PyTorch's tracer does on data-dependent Python; save/load round trip;
script scripts by tracing where that is exact and names what it cannot script."""
import io
import warnings

import numpy as np
import pytest

import ember
from ember import nn

F = nn.functional


def lenet(lib):
    n = lib.nn
    return n.Sequential(n.Conv2d(1, 6, 5), n.BatchNorm2d(6), n.ReLU(), n.MaxPool2d(2),
                        n.Conv2d(6, 16, 5), n.ReLU(), n.MaxPool2d(2), n.Flatten(),
                        n.Linear(256, 120), n.ReLU(), n.Linear(120, 10))


def test_trace_replays_module_with_gradients():
    ember.manual_seed(0)
    m = lenet(ember).eval()
    x = ember.randn(2, 1, 28, 28)
    traced = ember.jit.trace(m, x)
    assert isinstance(traced, ember.jit.ScriptModule) and isinstance(traced, nn.Module)
    x2 = ember.randn(2, 1, 28, 28)
    np.testing.assert_array_equal(traced(x2).detach().numpy(), m(x2).detach().numpy())
    traced(x2).sum().backward()
    g = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    m(x2).sum().backward()
    for a, p in zip(g, m.parameters()):
        np.testing.assert_allclose(a.numpy(), p.grad.numpy(), rtol=1e-6)
    assert list(traced.state_dict()) == list(m.state_dict())
    assert "ops.aten.linear.default" in traced.code and "def forward(self, input)" in traced.code
    assert [c.op.short_name for c in traced.graph.calls][-1] == "linear"


def test_trace_function_and_outputs_structure():
    def f(x, y):
        return {"sum": x + y, "pair": (x * y, y.exp())}
    x, y = ember.randn(3), ember.randn(3)
    tf = ember.jit.trace(f, (x, y))
    a, b = ember.randn(3), ember.randn(3)
    out, want = tf(a, b), f(a, b)
    np.testing.assert_array_equal(out["pair"][1].numpy(), want["pair"][1].numpy())
    np.testing.assert_array_equal(out["sum"].numpy(), want["sum"].numpy())


def _warnings(lib, fn, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.jit.trace(fn, x, check_trace=False)
    return [(type(w.message).__name__, str(w.message)) for w in caught
            if issubclass(w.category, lib.jit.TracerWarning)]


@pytest.mark.parametrize("kind", ["bool", "item", "tolist"])
def test_tracer_warnings_as_torch(kind):
    torch = pytest.importorskip("torch")
    fns = {"bool": lambda x: x * 2 if x.sum() > 0 else x,
           "item": lambda x: x * x.max().item(),
           "tolist": lambda x: x + len(x.tolist())}
    got = [_warnings(lib, fns[kind], lib.ones(3)) for lib in (torch, ember)]
    assert got[0] == got[1] and len(got[1]) == 1


def test_trace_bakes_in_the_branch_taken():
    def f(x):
        return x * 2 if x.sum() > 0 else x - 1
    with pytest.warns(ember.jit.TracerWarning):
        tf = ember.jit.trace(f, ember.ones(2))
    np.testing.assert_array_equal(tf(-ember.ones(2)).numpy(), [-2.0, -2.0])  # as torch's trace


def test_save_load_round_trip(tmp_path):
    ember.manual_seed(0)
    m = lenet(ember).eval()
    x = ember.randn(2, 1, 28, 28)
    traced = ember.jit.trace(m, x)
    path = tmp_path / "lenet.pt"
    ember.jit.save(traced, path)
    loaded = ember.jit.load(path)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), m(x).detach().numpy())
    assert list(loaded.state_dict()) == list(m.state_dict())
    assert loaded.code == traced.code
    import zipfile
    names = zipfile.ZipFile(path).namelist()
    assert "archive/code/forward.py" in names and "archive/graph.json" in names
    assert not any(n.endswith(".pkl") for n in names)
    buf = io.BytesIO()
    tf = ember.jit.trace(lambda a: (a * 2).relu(), ember.randn(4))
    tf.save(buf)
    buf.seek(0)
    lf = ember.jit.load(buf)
    v = ember.randn(4)
    np.testing.assert_array_equal(lf(v).numpy(), (v * 2).relu().numpy())
    with pytest.raises(ValueError, match="does not exist"):
        ember.jit.load(tmp_path / "missing.pt")


def test_script_by_tracing_and_what_it_refuses():
    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = ember.randn(2, 4)
    s = ember.jit.script(m, example_inputs=[(x,)])
    np.testing.assert_array_equal(s(x).detach().numpy(), m(x).detach().numpy())
    with pytest.raises(RuntimeError, match="scripted for inputs float32\\[2, 4\\]"):
        s(ember.randn(3, 4))
    with pytest.raises(RuntimeError, match="has no TorchScript graph, so it has no 'save'"):
        ember.jit.script(m).save(io.BytesIO())

    def f(x):
        return x if x.sum() > 0 else -x
    with pytest.raises(RuntimeError, match="cannot script a conversion of a tensor to a Python "
                                           "boolean"):
        ember.jit.script(f, example_inputs=[(x,)])


def test_script_decorator_on_a_function_runs_it_as_python():
    """`@torch.jit.script` on a helper function (loops, ints, tensor ops) gives TorchScript's
    results by running the function (PyTorch's PYTORCH_JIT=0 behaviour); asking it for the
    compiled graph names what is missing."""
    import torch

    def double_n(x, n: int):
        for _ in range(n):
            x = x * 2
        return x if x.sum() > 0 else -x

    ours, theirs = ember.jit.script(double_n), torch.jit.script(double_n)
    for v in ([1., -3.], [-1., -2.]):
        np.testing.assert_array_equal(ours(ember.tensor(v), 3).numpy(),
                                      theirs(torch.tensor(v), 3).numpy())
    assert ours.__name__ == "double_n"
    with pytest.raises(RuntimeError, match="has no TorchScript graph, so it has no 'graph'"):
        ours.graph
    with pytest.raises(AttributeError):
        ours.no_such_attribute


def test_script_of_a_module_without_examples_runs_its_python():
    """`torch.jit.script(model)` with data-dependent control flow: a RecursiveScriptModule
    tree sharing the model's tensors, printed and called as PyTorch's; no graph to save."""
    torch = pytest.importorskip("torch")

    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.ReLU())

            def forward(self, x, n: int = 2):
                for _ in range(n):
                    x = self.body(x)
                if x.sum() > 0:
                    x = x * 2
                return x
        lib.manual_seed(0)
        return M()
    ours, theirs = build(ember), build(torch)
    s, t = ember.jit.script(ours), torch.jit.script(theirs)
    assert repr(s) == repr(t)
    assert type(s).__name__ == type(t).__name__ == "RecursiveScriptModule"
    assert s.original_name == t.original_name == "M"
    assert list(s.state_dict()) == list(t.state_dict())
    assert s.body[0].weight is ours.body[0].weight
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    for n in (1, 3):
        np.testing.assert_allclose(s(ember.tensor(x), n).detach().numpy(),
                                   t(torch.tensor(x), n).detach().numpy(), rtol=1e-6)
    s.eval()
    assert not s.training and ours.training == theirs.training
    for name in ("save", "code", "graph"):
        with pytest.raises(RuntimeError, match=f"so it has no '{name}'"):
            getattr(s, name)
    with pytest.raises(RuntimeError, match="so it has no 'save'"):
        ember.jit.save(s, io.BytesIO())


def test_freeze_and_optimize_for_inference():
    """Deployment code's `torch.jit.freeze(torch.jit.script(m).eval())` and
    `optimize_for_inference`: same results, PyTorch's errors for an unscripted or training
    module."""
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
        x = lib.ones(1, 3)
        for fn in (lib.jit.freeze, lib.jit.optimize_for_inference):
            with pytest.raises(RuntimeError, match="expects a ScriptModule as input"):
                fn(m)
        with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
            lib.jit.freeze(lib.jit.script(m))
        assert lib.equal(lib.jit.freeze(lib.jit.script(m).eval())(x), m(x))
        assert lib.equal(lib.jit.optimize_for_inference(lib.jit.script(m))(x), m(x))
