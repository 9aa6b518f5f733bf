"""Regressions from running PyTorch's test/test_nn.py (TestNN's generated module/criterion tests,
TestAddRelu and hand-written TestNN tests) under ember: each compares ember with torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# ---- torch._VF._add_relu / torch._add_relu (TestAddRelu)

@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float32", "float64"])
def test_add_relu_values(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((7, 11)) * 10).astype(dtype)
    b = (rng.standard_normal((1, 11)) * 10).astype(dtype)
    for alpha in (1, -2):
        t = torch._VF._add_relu(torch.from_numpy(a), torch.from_numpy(b), alpha=alpha)
        e = ember._VF._add_relu(ember.from_numpy(a), ember.from_numpy(b), alpha=alpha)
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(_np(e), _np(t))
    # a Python number operand, and the in-place form
    t = torch._add_relu(torch.from_numpy(a), 3)
    e = ember._add_relu(ember.from_numpy(a), 3)
    np.testing.assert_array_equal(_np(e), _np(t))
    ta, ea = torch.from_numpy(a.copy()), ember.from_numpy(a.copy())
    assert torch._VF._add_relu_(ta, torch.from_numpy(b)) is ta
    assert ember._VF._add_relu_(ea, ember.from_numpy(b)) is ea
    np.testing.assert_array_equal(_np(ea), _np(ta))


def test_add_relu_clamps_infinity_to_max():
    x = np.array([np.inf, -np.inf, 1.0, -1.0], dtype=np.float32)
    t = torch._add_relu(torch.from_numpy(x), torch.zeros(4))
    e = ember._add_relu(ember.from_numpy(x), ember.zeros(4))
    np.testing.assert_array_equal(_np(e), _np(t))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "float16", "bfloat16", "complex64"])
def test_add_relu_refuses_dtypes(dtype):
    with pytest.raises(RuntimeError, match="Unsupported datatype for add_relu") as te:
        torch._add_relu(torch.ones(2, dtype=getattr(torch, dtype)),
                        torch.ones(2, dtype=getattr(torch, dtype)))
    with pytest.raises(RuntimeError) as ee:
        ember._add_relu(ember.ones(2, dtype=getattr(ember, dtype)),
                        ember.ones(2, dtype=getattr(ember, dtype)))
    assert str(te.value).endswith(str(ee.value))


def test_add_relu_has_no_derivative():
    t = torch._add_relu(torch.randn(3, requires_grad=True), torch.randn(3))
    e = ember._add_relu(ember.randn(3, requires_grad=True), ember.randn(3))
    assert t.requires_grad and e.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::_add_relu is not implemented"):
        t.sum().backward()
    with pytest.raises(RuntimeError, match="derivative for aten::_add_relu is not implemented"):
        e.sum().backward()


# ---- gradcheck's fast mode scales atol by sum(u) * sum(v), as PyTorch's does
# (TestNN.test_LayerNorm_3d_no_affine_large_feature: a float32 layer norm over 175616 features)

def test_fast_gradcheck_atol_scales_with_vector_sums():
    # float32 input: the central difference is mostly rounding noise, which the per-entry atol,
    # summed over the u_a * v_b weights of u^T J v, covers in PyTorch
    x = np.random.default_rng(0).standard_normal((2, 64, 64, 16)).astype(np.float32)

    def run(m):
        inp = m.from_numpy(x.copy()).requires_grad_()
        fn = lambda i: m.nn.functional.layer_norm(i, [64, 64, 16], None, None, 1e-5)  # noqa: E731
        return m.autograd.gradcheck(fn, (inp,), fast_mode=True, raise_exception=False)

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(torch) is True
        assert run(ember) is True


def test_fast_gradcheck_still_catches_a_wrong_gradient():
    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(Wrong.apply, (x,), fast_mode=True,
                                    raise_exception=False) is False
