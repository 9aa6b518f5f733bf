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


# ---- Module._apply with a conversion that changes the layout (TestNN.test_overwrite_module_params_on_conversion)

def _sparse(m):
    return m.sparse_coo_tensor(m.tensor([[0], [1]]), m.ones([1]), (10, 20))


@pytest.mark.parametrize("mod", [torch, ember], ids=["torch", "ember"])
def test_parameter_of_sparse_tensor_keeps_its_layout(mod):
    p = mod.nn.Parameter(_sparse(mod))
    assert str(p.layout) == "torch.sparse_coo" and p.is_sparse and p.requires_grad
    np.testing.assert_array_equal(_np(p.to_dense()), _np(_sparse(torch).to_dense()))


@pytest.mark.parametrize("mod", [torch, ember], ids=["torch", "ember"])
def test_apply_to_sparse_replaces_parameter_and_grad(mod):
    m = mod.nn.Linear(20, 10)
    m.weight.grad = mod.randn(10, 20)
    w, g = m.weight, m.weight.grad
    m = m._apply(lambda t: _sparse(mod))
    assert m.weight is not w and str(w.layout) == "torch.strided"
    assert str(m.weight.layout) == "torch.sparse_coo"
    assert str(m.weight.grad.layout) == "torch.sparse_coo" and str(g.layout) == "torch.strided"


# ---- DataParallel's replicas and ParameterDict's | (TestNN.test_ParameterList_replication,
# test_ParameterDict_replication, test_ParameterDict)

@pytest.mark.parametrize("mod", [torch, ember], ids=["torch", "ember"])
def test_parameter_containers_replicate_for_data_parallel(mod):
    nn = mod.nn
    pl = nn.ParameterList([nn.Parameter(mod.randn(2, 2))])
    pd = nn.ParameterDict({"foo": nn.Parameter(mod.randn(2, 2))})
    for c in (pl, pd):
        r = c._replicate_for_data_parallel()
        assert type(r) is type(c) and r._is_replica and dict(r._parameters) == {}
        assert len(list(c.parameters())) == 1   # the original keeps its parameters
        for n, p in c.named_parameters():
            setattr(r, n, p.view_as(p))
        for p, p2 in zip(c.values() if c is pd else c, r.values() if c is pd else r):
            assert p2.grad_fn is not None and p2._base is p
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pl._replicate_for_data_parallel().zero_grad()
    assert any("nn.DataParallel() has no effect" in str(x.message) for x in w)


@pytest.mark.parametrize("mod", [torch, ember], ids=["torch", "ember"])
def test_parameter_dict_or(mod):
    nn = mod.nn
    a = nn.ParameterDict({"p1": nn.Parameter(mod.randn(1)), "p2": nn.Parameter(mod.randn(1))})
    b = nn.ParameterDict({"q": nn.Parameter(mod.randn(1)), "p1": nn.Parameter(mod.randn(2))})
    c = a | b
    assert type(c) is nn.ParameterDict and list(c.keys()) == ["p1", "p2", "q"]
    assert c["p1"] is b["p1"] and list(a.keys()) == ["p1", "p2"] and a["p1"].shape == (1,)
    d = b.__ror__(a)   # other | self
    assert list(d.keys()) == ["p1", "p2", "q"] and d["p1"] is b["p1"]
    a_id = id(a)
    a |= b
    assert id(a) == a_id and list(a.keys()) == ["p1", "p2", "q"]


# ---- ctc_loss checks its arguments in PyTorch's order (TestNN.test_CTCLoss_lengthchecks_cpu):
# the target lengths, the targets' size they imply, then each input length (the first bad one)

def _ctc_error(m, tgt_shape, il, tl):
    g = np.random.default_rng(0)
    lp = m.from_numpy(g.standard_normal((50, 3, 15)).astype(np.float32)).log_softmax(2)
    tgt = m.from_numpy(g.integers(1, 15, tgt_shape).astype(np.int32))
    with pytest.raises(RuntimeError) as e:
        m.nn.functional.ctc_loss(lp, tgt, il, tl)
    return str(e.value)


@pytest.mark.parametrize("tgt_shape", [(3, 29), (75,)])
@pytest.mark.parametrize("il,tl", [([-1, -1, -1], [30, 25, 20]), ([-1, -1, -1], [-1, -1, -1]),
                                   ([20, -4, 70], [5, 6, 7]), ([20, 70, -4], [5, 6, 7]),
                                   ([50, 50, 50], [5, -2, -3])])
def test_ctc_loss_check_order(tgt_shape, il, tl):
    assert _ctc_error(ember, tgt_shape, il, tl) == _ctc_error(torch, tgt_shape, il, tl)


# ---- F.fold: block counts that multiply to the input's size but are non-positive
# (TestNN.test_fold_invalid_arg) get PyTorch's "too small" error, not the size-mismatch one

@pytest.mark.parametrize("kw,shape", [
    (dict(output_size=(4, 5), kernel_size=(2, 2), stride=1, dilation=8, padding=0), (1, 12, 12)),
    (dict(output_size=(4, 5), kernel_size=(2, 3), stride=(2, 2)), (1, 6, 5)),
    (dict(output_size=(4, 5), kernel_size=(2, 3)), (1, 5, 9))])
def test_fold_error_order(kw, shape):
    x = np.zeros(shape, np.float32)
    with pytest.raises(RuntimeError) as te:
        torch.nn.Fold(**kw)(torch.from_numpy(x))
    with pytest.raises(RuntimeError) as ee:
        ember.nn.Fold(**kw)(ember.from_numpy(x))
    assert str(ee.value) == str(te.value)
