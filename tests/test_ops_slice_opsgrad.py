"""Gradients found by running PyTorch's test/test_ops_gradients.py and test_ops_fwd_gradients.py
(gradcheck over op_db) on ember: each case computes the same thing in ember and in torch and
compares values, grad_fn names and gradients; gradcheck runs in float64 / complex128."""
import types

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _pair(array, requires_grad=True):
    return (ember.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _close(e, t):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("method, args", [
    ("bernoulli", ()), ("uniform_", ()), ("normal_", ()), ("random_", ()),
    ("random_", (0, 5)), ("exponential_", ()), ("bernoulli_", ()), ("geometric_", (0.5,)),
    ("cauchy_", ()), ("log_normal_", ())])
def test_sampling_ops_have_zero_gradient(method, args):
    # PyTorch: the sample requires grad (a node of its own) and its gradient is zero
    rng = np.random.default_rng(0)
    e, t = _pair(rng.random((3, 4)))
    grads = []
    for L, x in ((ember, e), (torch, t)):
        y = getattr(x.clone(), method)(*args) if method.endswith("_") else getattr(L, method)(x)
        assert y.requires_grad
        (y * 2 + x).sum().backward()
        grads.append(x.grad)
        name = type(y.grad_fn).__name__
        if L is ember:
            e_name = name
    assert e_name == type(y.grad_fn).__name__
    _close(*grads)
    np.testing.assert_array_equal(grads[0].numpy(), np.ones((3, 4)))


def test_sampling_in_place_on_leaf_raises():
    e, t = _pair(np.ones(3))
    for x in (e, t):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.uniform_()


def test_gradcheck_without_differentiable_outputs():
    # fast mode with no output requiring grad: the numerical Jacobian is checked to be zero
    for L in (ember, torch):
        x = L.rand(3, dtype=L.float64, requires_grad=True)
        assert L.autograd.gradcheck(lambda x: (x.detach() > 10).double(), (x,), fast_mode=True)
        with pytest.raises(RuntimeError, match="Numerical gradient for function expected to be zero"):
            L.autograd.gradcheck(lambda x: x.detach() * 2, (x,), fast_mode=True)


@pytest.mark.parametrize("dim", [1, -1])
def test_cat_grad_with_legacy_empty_operand(dim):
    rng = np.random.default_rng(1)
    a, ta = _pair(rng.random((2, 3)))
    b, tb = _pair(np.zeros((0,)))
    g = rng.random((2, 3))
    ember.cat([a, b], dim).backward(ember.tensor(g))
    torch.cat([ta, tb], dim).backward(torch.tensor(g))
    _close(a.grad, ta.grad)
    assert tuple(b.grad.shape) == tuple(tb.grad.shape) == (0,)
    assert ember.autograd.gradcheck(lambda x, y: ember.cat([x, y], dim), (a, b))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_cholesky_grad(upper, dtype):
    # A = L L^H for complex A: the backward uses conjugate transposes
    rng = np.random.default_rng(2)
    m = rng.standard_normal((3, 3)).astype(dtype)
    if dtype == np.complex128:
        m = m + 1j * rng.standard_normal((3, 3))
    a0 = m @ m.conj().T + 3 * np.eye(3)
    g = rng.standard_normal((3, 3)) + (1j * rng.standard_normal((3, 3))
                                      if dtype == np.complex128 else 0)
    grads = []
    for L in (ember, torch):
        a = L.tensor(a0, requires_grad=True)
        out = L.linalg.cholesky(a, upper=upper)
        (out * L.tensor(g)).real.sum().backward() if dtype == np.complex128 else \
            (out * L.tensor(g)).sum().backward()
        grads.append(a.grad)
    _close(*grads)
    a = ember.tensor(a0, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x: ember.linalg.cholesky(x + x.mH, upper=upper), (a,))


def test_upsample_bilinear2d_aa_vec():
    rng = np.random.default_rng(3)
    x0 = rng.random((1, 2, 5, 6))
    g = rng.random((1, 2, 8, 3))
    e, t = _pair(x0)
    # op_db calls the overload packet with keywords, which picks the .vec overload
    kw = dict(output_size=None, align_corners=False, scale_factors=[1.7, 0.6])
    ye = ember.ops.aten._upsample_bilinear2d_aa(e, **kw)
    yt = torch.ops.aten._upsample_bilinear2d_aa(t, **kw)
    _close(ye, yt)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    _close(e.grad, t.grad)
    _close(ember.ops.aten._upsample_bilinear2d_aa.vec(e, [4, 4], True, None),
           torch.ops.aten._upsample_bilinear2d_aa.vec(t, [4, 4], True, None))
    for L, x in ((ember, e), (torch, t)):
        with pytest.raises(RuntimeError, match="exactly one of output_size and scale_factors"):
            L.ops.aten._upsample_bilinear2d_aa.vec(x, [3, 3], False, [1.7, 0.6])


def test_gradients_harness_puts_tensors_back():
    # TestGradients' gradcheck function: the sample's tensors that require grad (in a list
    # input, an arg and a kwarg) become gradcheck's inputs and go back to their places
    from ember.testing._internal.common_utils import _gradcheck_function
    a, b, c = (ember.rand(2, dtype=ember.float64, requires_grad=True) for _ in range(3))
    k = ember.rand(2, dtype=ember.float64, requires_grad=True)
    fixed = ember.ones(2, dtype=ember.float64)
    sample = types.SimpleNamespace(input=[a, fixed, b], args=(c, 2.0), kwargs={"w": k},
                                   output_process_fn_grad=None)
    op = types.SimpleNamespace(gradcheck_wrapper=lambda variant, *args, **kw: variant(*args, **kw))

    def variant(ts, x, s, w):
        return ember.stack(ts).sum(0) * x * s + w

    fn, tensors = _gradcheck_function(op, variant, sample)
    assert [id(t) for t in tensors] == [id(a), id(b), id(c), id(k)]
    expected = (a + fixed + b) * c * 2.0 + k
    _close(fn(*tensors), expected)
    assert ember.autograd.gradcheck(fn, tensors)
