"""Fixes found by running PyTorch's test_nn.py on ember: each case runs the same code in ember
and torch and compares (values, exception types)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402

LIBS = (ember, torch)


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # the builtin class of the exception
        return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


@pytest.mark.parametrize("call", [
    lambda lib: ((lib.device("cpu"), True), {}), lambda lib: ((lib.long,), {}),
    lambda lib: ((None, True), {}), lambda lib: (([],), {}),
    lambda lib: (({},), {"non_blocking": True}),
    lambda lib: ((lib.tensor(3),), {"non_blocking": True}),
    lambda lib: (("cpu",), {"copy": True}), lambda lib: (("cpu", lib.float64), {}),
    lambda lib: ((), {"dtype": lib.float16}), lambda lib: ((lib.zeros(1, dtype=lib.float64),), {}),
    lambda lib: ((float,), {}),
])
def test_module_to_parses_as_torch(call):
    got = []
    for lib in LIBS:
        args, kwargs = call(lib)
        m = lib.nn.Linear(2, 2)
        got.append(_outcome(lambda: str(m.to(*args, **kwargs).weight.dtype)))
    assert got[0] == got[1]


def test_module_init_and_buffer_assignment():
    for lib in LIBS:
        nn = lib.nn

        class Mixin:
            def __init__(self, *a, **kw):
                super().__init__(*a, **kw)
                self.mixin_init = True

        class After(nn.Module, Mixin):
            call_super_init = True

        assert After().mixin_init

        m = nn.Module()
        m.attr = 5
        with pytest.raises(KeyError):
            m.attr = nn.Buffer(lib.rand(2))

        class OldStyle(nn.Linear):   # register_buffer without `persistent`
            def __init__(self):
                super().__init__(2, 2)
                self.bar = nn.Buffer(lib.ones(2))

            def register_buffer(self, name, value):
                super().register_buffer(name, value, True)

        assert OldStyle().bar.sum().item() == 2
        with pytest.raises(RuntimeError, match="without the persistent argument"):
            OldStyle().baz = nn.Buffer(lib.ones(1), persistent=False)


@pytest.mark.parametrize("op", ["relu", "elu", "sigmoid_"])
def test_inplace_on_view_double_backward(op):
    """The saved output of an in-place op on a view is that view of the written base."""
    grads = []
    for lib in LIBS:
        F = lib.nn.functional
        v = lib.tensor([1.0, -1.0, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
        x = v.clone()
        view = x.narrow(0, 1, 2)
        if op == "sigmoid_":
            view.sigmoid_()
        else:
            getattr(F, op)(view, inplace=True)
        g = lib.tensor([0.3, -0.7, 1.1, 0.5], dtype=lib.float64, requires_grad=True)
        gv, = lib.autograd.grad(x, v, g, create_graph=True)
        gg = lib.autograd.grad((gv * gv).sum(), [v, g], allow_unused=True)
        grads.append([None if t is None else t.detach().numpy() for t in gg])
        if op == "relu":
            assert lib.autograd.gradgradcheck(lambda r: F.relu(r.clone().narrow(0, 1, 2),
                                                               inplace=True), [v])
    for e, t in zip(*grads):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-9)


def test_numerical_jacobian_and_empty_gradcheck():
    out = []
    for lib in LIBS:
        import importlib
        g = importlib.import_module(lib.__name__ + ".autograd.gradcheck")
        x = lib.arange(6., dtype=lib.float64).reshape(2, 3).requires_grad_()
        w = lib.linspace(0.5, 1.5, 3, dtype=lib.float64).requires_grad_()
        f = lambda a: (a * w).sin().sum(0)   # noqa: E731
        jx = g._get_numerical_jacobian(f, (x,), eps=1e-6)
        jw = g._get_numerical_jacobian(f, (x,), target=w, eps=1e-6)
        tensors = list(g._iter_tensors(([x, (w,)], x), True))
        empty = lib.randn(0, 3, dtype=lib.float64, requires_grad=True)
        ok = lib.autograd.gradcheck(lambda a: a * 2, (empty,))
        out.append((jx[0][0].numpy(), jw[0][0].numpy(), len(tensors), ok))
    np.testing.assert_allclose(out[0][0], out[1][0], atol=1e-8)
    np.testing.assert_allclose(out[0][1], out[1][1], atol=1e-8)
    assert out[0][2:] == out[1][2:]


def test_reduction_enum():
    from ember.nn import _reduction as er
    from torch.nn import _reduction as tr
    for args in [(None, None), (False, True), (True, False), (False, False)]:
        assert er.legacy_get_string(*args, emit_warning=False) == \
            tr.legacy_get_string(*args, emit_warning=False)
        assert er.legacy_get_enum(*args, emit_warning=False) == \
            tr.legacy_get_enum(*args, emit_warning=False)
    with pytest.raises(ValueError):
        er.get_enum("bogus")


def test_pickle_module_with_default_activation():
    """TransformerEncoderLayer's default activation (F.relu, taken before ember gave F its
    __torch_function__ wrappers) pickles, as in PyTorch."""
    import io
    for lib in LIBS:
        m = lib.nn.TransformerEncoderLayer(4, 2, 8, 0.0)
        buf = io.BytesIO()
        lib.save(m, buf)
        buf.seek(0)
        m2 = lib.load(buf, weights_only=False)
        x = lib.randn(2, 3, 4)
        assert lib.equal(m.eval()(x), m2.eval()(x))


def test_sparse_zero_():
    out = []
    for lib in LIBS:
        s = lib.tensor([1., 0., 3., 2.]).to_sparse()
        s.zero_()
        out.append((s._nnz(), s.is_coalesced(), tuple(s._indices().shape), s.to_dense().tolist()))
    assert out[0] == out[1]


def test_gradcheck_fast_mode():
    for lib in LIBS:
        x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradcheck(lambda a: a.sin() * a.sum(), (x,), fast_mode=True)

        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

        assert not lib.autograd.gradcheck(Wrong.apply, (x,), fast_mode=True,
                                          raise_exception=False)
