"""Fixes found by running PyTorch's test/test_ops_gradients.py (TestBwdGradients) on the op_db
ops named a..l: each case runs the same code on torch and on ember and compares the outcome."""
import typing

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(ember), fn(torch)


# ---- gradcheck: inputs that are lazy conjugate views, complex fast mode

def _conj_leaf(L, transpose=False):
    """A leaf that is a lazy conjugate view (as op_db's conjugated samples are)."""
    base = L.tensor(np.array([[1 + 2j, -0.5 + 1j], [0.25 - 1j, 2 - 0.5j]]))
    view = base.mT.conj() if transpose else base.conj()
    return view.detach().requires_grad_()


def _wrong_conj_backward(L):
    """x * x whose backward forgets the conjugate: a wrong complex gradient."""
    class Square(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * g * x
    return Square.apply


def _gradcheck(L, fn, *inputs, fast_mode):
    from_suite = dict(fast_mode=fast_mode, check_batched_grad=False, raise_exception=False)
    return L.autograd.gradcheck(fn, inputs, **from_suite)


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("case", ["mul", "mm_transposed", "abs", "real_input_complex_output",
                                  "wrong_backward"])
def test_gradcheck_complex_and_conj_inputs(case, fast_mode):
    def run(L):
        c = L.tensor(np.array([[0.5 - 1j, 1.5 + 0.5j], [-1 + 0.25j, 0.75j]]))
        if case == "mul":
            return _gradcheck(L, lambda b: b * c, _conj_leaf(L), fast_mode=fast_mode)
        if case == "mm_transposed":
            return _gradcheck(L, lambda b: L.addmm(c, b, c, alpha=2 + 3j, beta=1 + 2j),
                              _conj_leaf(L, transpose=True), fast_mode=fast_mode)
        if case == "abs":
            return _gradcheck(L, lambda b: b.abs() * 2, _conj_leaf(L), fast_mode=fast_mode)
        if case == "real_input_complex_output":
            y = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
            return _gradcheck(L, lambda y: y.exp() * (1 + 2j), y, fast_mode=fast_mode)
        return _gradcheck(L, _wrong_conj_backward(L), _conj_leaf(L), fast_mode=fast_mode)
    e, t = _both(run)
    assert e is t, (e, t)
    assert t is (case != "wrong_backward")


# ---- as_strided's gradient through an input with a storage offset

@pytest.mark.parametrize("storage_offset", [None, 0, 10])
def test_as_strided_grad_of_offset_view(storage_offset):
    def run(L):
        x = L.arange(20.0, dtype=L.float64)[5:15].requires_grad_()
        kw = {} if storage_offset is None else {"storage_offset": storage_offset}
        y = L.as_strided(x, (2, 2), (1, 2), **kw)
        g, = L.autograd.grad(y, x, L.arange(1.0, 5.0, dtype=L.float64).view(2, 2))
        return y.detach().numpy(), g.numpy()
    (ey, eg), (ty, tg) = _both(run)
    np.testing.assert_array_equal(ey, ty)
    np.testing.assert_array_equal(eg, tg)


# ---- torch.library.infer_schema: a Union[int, float, bool] parameter is a Scalar

def test_infer_schema_number_union_is_scalar():
    def schema(L):
        def f(x: L.Tensor, t: typing.Union[int, float, bool], u: int | float | bool,
              v: typing.Optional[typing.Union[int, float, bool]]) -> L.Tensor:
            raise AssertionError("not called")
        return L.library.infer_schema(f, mutates_args=())
    e, t = _both(schema)
    assert e == t == "(Tensor x, Scalar t, Scalar u, Scalar? v) -> Tensor"


# ---- complex gradients of ldexp and logcumsumexp

def _grads(L, fn, arrays, grad_out):
    inputs = [L.tensor(a, requires_grad=True) for a in arrays]
    out = fn(L, *inputs)
    return [g.resolve_conj().numpy() for g in L.autograd.grad(out, inputs, L.tensor(grad_out))]


def test_ldexp_complex_grad_is_conjugated():
    x = np.array([0.5 + 1j, -2 + 0.25j])
    e = np.array([-1.5 + 2j, 0.5 - 1j])
    g = np.array([1 - 0.5j, 0.25 + 2j])
    ember_grads, torch_grads = _both(lambda L: _grads(L, lambda L, a, b: L.ldexp(a, b),
                                                      [x, e], g))
    for eg, tg in zip(ember_grads, torch_grads):
        np.testing.assert_allclose(eg, tg, rtol=1e-12)


@pytest.mark.parametrize("dim", [0, 1])
def test_logcumsumexp_complex_grad_with_large_values(dim):
    # exp(1e4) overflows: the gradient must stay in log space (it was nan)
    x = np.array([[1e4, 1e4 + 1j, -3 + 2j], [0.5, 0.25j, 1e4]])
    g = np.array([[1 + 1j, 0, -2 + 0.5j], [0, 0.5, 1]])
    (eg,), (tg,) = _both(lambda L: _grads(L, lambda L, a: a.logcumsumexp(dim), [x], g))
    assert np.isfinite(eg).all()
    np.testing.assert_allclose(eg, tg, rtol=1e-10, atol=1e-12)


# ---- x[slice] op= value, where x[slice] has leading size-1 dims

def test_setitem_of_own_slice_with_leading_ones():
    def run(L):
        s = L.arange(2.0, 8.0, dtype=L.float64)
        s[1:2] *= -1.0       # the value is s[1:2] itself, stripped to 0-d and expanded
        s[2:4] = s[0:1]      # an expanded 0-d value that shares memory with the target
        out = [s.numpy().copy()]
        try:
            s[1:4] = s[0:3]  # a partial overlap of the same size stays an error
        except RuntimeError as e:
            out.append(str(e))
        return out
    e, t = _both(run)
    np.testing.assert_array_equal(e[0], t[0])
    assert e[1:] == t[1:] and len(t) == 2


# ---- cdist's p-norm path: _cdist_forward, whose backward is not differentiable again

@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist_pnorm_values_grads_and_node(p):
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (2, 1, 3, 2)).astype(np.float64)   # ties and zero distances
    b = rng.integers(-2, 3, (4, 5, 2)).astype(np.float64)
    g = rng.standard_normal((2, 4, 3, 5))

    def run(L):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        d = L.cdist(x, y, p=p)
        gx, gy = L.autograd.grad(d, (x, y), L.tensor(g), create_graph=True)
        try:
            gx.sum().backward()
            again = None
        except RuntimeError as e:
            again = (type(e).__name__, str(e))
        return (d.detach().numpy(), gx.detach().numpy(), gy.detach().numpy(),
                type(d.grad_fn).__name__, again)
    e, t = _both(run)
    for ev, tv in zip(e[:3], t[:3]):
        np.testing.assert_allclose(ev, tv, rtol=1e-12, atol=1e-12)
    assert e[3] == t[3] == "CdistBackward0"
    assert e[4] == t[4] == ("NotImplementedError",
                            "the derivative for '_cdist_backward' is not implemented.")


@pytest.mark.parametrize("case", ["half", "long", "mixed", "mode", "zero_dim", "empty_backward"])
def test_cdist_forward_backward_errors_and_empties(case):
    def run(L):
        A, f = L.ops.aten, lambda *s, **kw: L.ones(*s, **kw)
        try:
            if case == "half":
                r = A._cdist_forward(f(4, 3).half(), f(2, 3).half(), 1.0, None)
            elif case == "long":
                r = A._cdist_backward(f(2, 4, 5).long(), f(2, 4, 2).long(), f(5, 2).long(), 1.5,
                                      f(2, 4, 5).long())
            elif case == "mixed":
                r = A._cdist_forward(f(4, 3), f(2, 3).double(), 1.0, None)
            elif case == "mode":
                r = A._cdist_forward(f(2, 3), f(2, 3), 1.0, 5)
            elif case == "zero_dim":
                r = A._cdist_backward(L.tensor(1.0), L.tensor(1.0), L.tensor(1.0), 1.5,
                                      L.tensor(1.0))
            else:
                r = A._cdist_backward(f(2, 4, 0, 5), f(2, 1, 0, 2), f(4, 5, 2), 1.5, f(2, 4, 0, 5))
            return tuple(r.shape), str(r.dtype)
        except Exception as e:
            return type(e).__name__, str(e)
    e, t = _both(run)
    assert e == t


def test_lu_deprecation_message():
    def run(L):
        L.set_warn_always(True)
        try:
            with pytest.warns(UserWarning) as record:
                L.lu(L.eye(2))
        finally:
            L.set_warn_always(False)
        return [str(w.message).split(" (Triggered internally")[0] for w in record
                if "torch.lu is deprecated" in str(w.message)]
    e, t = _both(run)
    assert e == t and len(t) == 1
