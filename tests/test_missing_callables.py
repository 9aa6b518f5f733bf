"""The torch callables added from tools/coverage.py's missing list, where an op-db row cannot say
it: Python-protocol methods (resize, map_, module_load, record_stream), deprecation warnings,
DLPack capsules, the sparse accessors' layout errors, lobpcg's iteration, torch.convolution on
its own arguments, and that every added name exists where torch has it.
(The rows: op_db_nn.py, op_db_sparse.py, op_db_indexing.py.)"""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

ADDED = ("convolution grid_sampler grid_sampler_2d grid_sampler_3d affine_grid_generator "
         "embedding_bag lstm gru rnn_tanh rnn_relu lstm_cell gru_cell rnn_tanh_cell "
         "rnn_relu_cell resize_as_ slice_inverse lobpcg to_dlpack indices_copy values_copy "
         "crow_indices_copy col_indices_copy ccol_indices_copy row_indices_copy smm hspmm "
         "sspaddmm saddmm dsmm hsmm resize_as_sparse_").split()
ADDED_METHODS = ("resize resize_as map_ map2_ module_load record_stream slice_inverse sspaddmm "
                 "resize_as_sparse_ "
                 "crow_indices col_indices ccol_indices row_indices").split()
ADDED_F = "grouped_mm scaled_mm scaled_grouped_mm".split()


@pytest.mark.parametrize("where,names", [("", ADDED), ("Tensor.", ADDED_METHODS),
                                         ("nn.functional.", ADDED_F)])
def test_names_exist_where_torch_has_them(where, names):
    t_ns = {"": torch, "Tensor.": torch.Tensor, "nn.functional.": torch.nn.functional}[where]
    e_ns = {"": ember, "Tensor.": ember.Tensor, "nn.functional.": ember.nn.functional}[where]
    for name in names:
        assert hasattr(t_ns, name), f"torch has no {where}{name} (fix the list)"
        assert callable(getattr(e_ns, name, None)), f"ember.{where}{name} is missing"


def _np(t):
    return t.detach().numpy()


def _error_type(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 -- the type is what is compared
        return type(exc)
    return None


# ---- torch.convolution ----------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ((1, 2, 4, 4), (3, 2, 2, 2), False, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    ((2, 4, 6, 5), (6, 2, 3, 3), True, [2, 1], [1, 2], [1, 1], False, [0, 0], 2),
    ((2, 3, 4, 4), (3, 2, 3, 3), True, [2, 2], [1, 1], [1, 1], True, [1, 0], 1),
    ((2, 3, 7), (4, 3, 2), True, [1], [1], [2], False, [0], 1),
    ((1, 2, 3, 3, 3), (2, 2, 2, 2, 2), False, [1, 1, 1], [0, 1, 0], [1, 1, 1], False,
     [0, 0, 0], 1),
], ids=["plain", "strided_grouped", "transposed", "dilated_1d", "3d"])
def test_convolution_matches_torch(args):
    x_shape, w_shape, bias, *rest = args
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    out_channels = w_shape[1] * rest[-1] if rest[3] else w_shape[0]
    b = rng.standard_normal(out_channels) if bias else None
    results = []
    for lib in (torch, ember):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        bt = None if b is None else lib.tensor(b, requires_grad=True)
        out = lib.convolution(xt, wt, bt, *rest)
        (out * out).sum().backward()
        results.append([_np(out), _np(xt.grad), _np(wt.grad)] +
                       ([] if bt is None else [_np(bt.grad)]))
    for a, e in zip(*results):
        np.testing.assert_allclose(e, a, rtol=1e-10, atol=1e-10)


# ---- deprecated out-of-place resize, resize_as_ -----------------------------------------------
def test_resize_and_resize_as_warn_reshape_and_differentiate():
    for lib in (torch, ember):
        x = lib.arange(6.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = x.resize(2, 3)
            s = x.resize_as(lib.ones(3, 2))
        assert [str(w.message) for w in caught] == ["non-inplace resize is deprecated",
                                                    "non-inplace resize_as is deprecated"]
        assert {w.category for w in caught} == {UserWarning}
        assert tuple(r.shape) == (2, 3) and tuple(s.shape) == (3, 2)
        assert type(r.grad_fn).__name__ == "ResizeBackward"
        (r.sum() * 2 + (s * s).sum()).backward()
        assert x.grad.tolist() == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="can only change the shape"):
                x.resize(4)
            t = lib.arange(6.0).reshape(2, 3).t()    # non-contiguous: a contiguous copy
            assert t.resize(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_resize_as__function():
    for lib in (torch, ember):
        y = lib.ones(3)
        assert lib.resize_as_(y, lib.ones(2, 2)) is y and tuple(y.shape) == (2, 2)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            lib.resize_as_(lib.ones(3, requires_grad=True), lib.ones(2))


# ---- map_, map2_, module_load, record_stream -------------------------------------------------
def test_map_and_map2_():
    for lib in (torch, ember):
        a = lib.ones(2, 3)
        a.map_(lib.arange(3.0), lambda u, v: u + 2 * v)
        assert a.tolist() == [[1.0, 3.0, 5.0]] * 2
        b = lib.zeros(2, 3)
        b.map2_(lib.arange(3.0), lib.ones(2, 1), lambda u, v, w: u + v * w + 1)
        assert b.tolist() == [[1.0, 2.0, 3.0]] * 2
    for fn in (lambda m: m.ones(3, dtype=m.int64).map_(m.ones(3), lambda u, v: u),
               lambda m: m.ones(3, requires_grad=True).map_(m.ones(3), lambda u, v: u),
               lambda m: m.ones(3).map_(m.ones(2), lambda u, v: u)):
        assert _error_type(lambda: fn(ember)) is _error_type(lambda: fn(torch)) is not None


def test_module_load_copies_or_assigns():
    for lib in (torch, ember):
        p = lib.zeros(2)
        loaded = p.module_load(lib.ones(2))
        assert loaded is not p and p.tolist() == [1.0, 1.0] and not loaded.requires_grad
        other = lib.full((2,), 3.0, requires_grad=True)
        assigned = p.module_load(other, assign=True)
        assert assigned.tolist() == [3.0, 3.0] and not assigned.requires_grad
        assert p.tolist() == [1.0, 1.0]


def test_record_stream_raises_on_cpu_as_torch():
    assert _error_type(lambda: ember.ones(2).record_stream(ember.cpu.Stream())) is \
        _error_type(lambda: torch.ones(2).record_stream(torch.cpu.Stream())) is RuntimeError
    assert _error_type(lambda: ember.ones(2).record_stream(None)) is \
        _error_type(lambda: torch.ones(2).record_stream(None)) is RuntimeError


# ---- DLPack ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16", "bool"])
def test_to_dlpack_round_trips_with_torch_both_ways(dtype):
    import ember.utils.dlpack as edl
    import torch.utils.dlpack as tdl
    e = ember.arange(6).reshape(2, 3).t().to(getattr(ember, dtype))
    t = tdl.from_dlpack(edl.to_dlpack(e))
    assert t.dtype == getattr(torch, dtype) and t.stride() == e.stride()
    assert t.data_ptr() == e.data_ptr() and t.tolist() == e.tolist()
    back = edl.from_dlpack(tdl.to_dlpack(t))
    assert back.data_ptr() == t.data_ptr() and back.tolist() == e.tolist()
    assert torch.from_dlpack(ember.to_dlpack(e)).tolist() == e.tolist()


def test_a_capsule_is_consumed_once():
    for make, consume in ((ember.to_dlpack, torch.from_dlpack),
                          (torch.to_dlpack, ember.from_dlpack)):
        lib = ember if make is ember.to_dlpack else torch
        capsule = make(lib.ones(2, requires_grad=True))  # PyTorch exports these too
        consume(capsule)
        with pytest.raises(RuntimeError, match="consumed only once"):
            consume(capsule)


def test_numpy_reads_ember_capsules():
    a = np.from_dlpack(ember.arange(4.0))
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ember.utils.dlpack.DLDeviceType.kDLCPU == torch.utils.dlpack.DLDeviceType.kDLCPU


# ---- sparse accessors and products -----------------------------------------------------------
def _sparse(lib):
    return lib.tensor([[0, 1.0], [2, 0]]).to_sparse()


@pytest.mark.parametrize("name", ["indices_copy", "values_copy", "crow_indices_copy",
                                  "col_indices_copy", "ccol_indices_copy", "row_indices_copy"])
def test_copy_accessors_raise_as_torch(name):
    for make in (_sparse, lambda lib: lib.ones(2)):
        assert _error_type(lambda: getattr(ember, name)(make(ember))) is \
            _error_type(lambda: getattr(torch, name)(make(torch))) is not None


@pytest.mark.parametrize("name", ["crow_indices", "col_indices", "ccol_indices", "row_indices"])
def test_compressed_accessors_on_coo_and_strided(name):
    for make in (_sparse, lambda lib: lib.ones(2)):
        with pytest.raises(RuntimeError) as caught:
            getattr(make(ember), name)()
        with pytest.raises(RuntimeError) as expected:
            getattr(make(torch), name)()
        assert str(caught.value) == str(expected.value)


@pytest.mark.parametrize("name", ["hspmm", "smm", "hsmm"])
def test_sparse_products_backward_raises_as_torch(name):
    for lib in (torch, ember):
        s = _sparse(lib).requires_grad_()
        r = getattr(lib, name)(s, lib.ones(2, 3))
        assert r.is_sparse and r.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::.* is not implemented"):
            r.to_dense().sum().backward()


def test_saddmm_is_sspaddmm():
    for lib in (torch, ember):
        s = _sparse(lib)
        a, b = lib.saddmm(s, s, lib.ones(2, 2), beta=2, alpha=3), \
            lib.sspaddmm(s, s, lib.ones(2, 2), beta=2, alpha=3)
        assert a.to_dense().tolist() == b.to_dense().tolist()
    assert ember.saddmm(_sparse(ember), _sparse(ember), ember.ones(2, 2)).to_dense().tolist() == \
        torch.saddmm(_sparse(torch), _sparse(torch), torch.ones(2, 2)).to_dense().tolist()


@pytest.mark.parametrize("template", [(1, 5), (3, 4, 5), "dense"])
def test_resize_as_sparse__refuses_as_torch(template):
    def call(m):
        t = m.ones(3, 3) if template == "dense" else m.zeros(*template).to_sparse()
        return _sparse(m).resize_as_sparse_(t)
    with pytest.raises(RuntimeError) as caught:
        call(ember)
    with pytest.raises(RuntimeError) as expected:
        call(torch)
    assert str(caught.value) == str(expected.value)


def test_dense_first_operand_errors():
    d = (lambda lib: lib.ones(2, 2))
    for fn in (lambda m: m.smm(d(m), d(m)), lambda m: m.sspaddmm(d(m), _sparse(m), d(m)),
               lambda m: m.hspmm(d(m), d(m))):
        assert _error_type(lambda: fn(ember)) is _error_type(lambda: fn(torch)) is not None


# ---- lobpcg ---------------------------------------------------------------------------------
def _spd(rng, m):
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    return (q * np.linspace(1, m, m) ** 1.5) @ q.T


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_eigenvalues_match_torch(method, largest):
    rng = np.random.default_rng(1)
    A, X = _spd(rng, 18), rng.standard_normal((18, 3))
    values = {}
    for lib in (torch, ember):
        E, V = lib.lobpcg(lib.tensor(A), k=3, X=lib.tensor(X), largest=largest, method=method)
        values[lib] = _np(E)
        np.testing.assert_allclose(A @ _np(V), _np(V) * _np(E), atol=1e-6)
    exact = np.sort(np.linalg.eigvalsh(A))
    exact = exact[::-1][:3] if largest else exact[:3]
    np.testing.assert_allclose(values[ember], values[torch], rtol=1e-10)
    np.testing.assert_allclose(values[ember], exact, rtol=1e-8)


def test_lobpcg_generalized_batched_and_sparse():
    rng = np.random.default_rng(2)
    A = np.stack([_spd(rng, 15), _spd(rng, 15)])
    B = np.stack([_spd(rng, 15) / 15 + np.eye(15)] * 2)
    X = rng.standard_normal((2, 15, 2))
    out = [_np(lib.lobpcg(lib.tensor(A), k=2, B=lib.tensor(B), X=lib.tensor(X))[0])
           for lib in (torch, ember)]
    np.testing.assert_allclose(out[1], out[0], rtol=1e-8)
    sparse = [_np(lib.lobpcg(lib.tensor(A[0]).to_sparse(), k=1, X=lib.tensor(X[0, :, :1]))[0])
              for lib in (torch, ember)]
    np.testing.assert_allclose(sparse[1], sparse[0], rtol=1e-8)


def test_lobpcg_gradient_matches_torch():
    rng = np.random.default_rng(3)
    A, X, G = _spd(rng, 12), rng.standard_normal((12, 2)), rng.standard_normal((12, 2))
    grads = []
    for lib in (torch, ember):
        a = lib.tensor(A, requires_grad=True)
        E, V = lib.lobpcg(a, k=2, X=lib.tensor(X))
        # each eigenvector's sign is LAPACK's choice (NumPy's and torch's builds differ), so
        # the loss reads V through squares of its column projections, which a sign keeps
        (E.sum() + ((V * lib.tensor(G)).sum(0) ** 2).sum()).backward()
        grads.append(_np(a.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-6)


def test_lobpcg_errors_as_torch():
    for fn in (lambda m: m.lobpcg(m.eye(5), k=2), lambda m: m.lobpcg(m.ones(4, 5)),
               lambda m: m.lobpcg(m.eye(9), k=2, B=m.eye(8))):
        assert _error_type(lambda: fn(ember)) is _error_type(lambda: fn(torch)) is not None


@pytest.mark.parametrize("case", ["B", "sparse A"])
def test_lobpcg_backward_refuses_B_and_sparse_A_as_torch(case):
    """The forward runs; PyTorch's backward raises ValueError for these."""
    rng = np.random.default_rng(5)
    A, X = _spd(rng, 12), rng.standard_normal((12, 2))
    for lib in (torch, ember):
        a = lib.tensor(A)
        a = a.to_sparse().requires_grad_() if case == "sparse A" else a.requires_grad_()
        B = lib.eye(12, dtype=lib.float64) if case == "B" else None
        E, V = lib.lobpcg(a, k=2, B=B, X=lib.tensor(X))
        assert E.requires_grad
        with pytest.raises(ValueError, match="lobpcg.backward does not support"):
            E.sum().backward()


# ---- the float8 products ---------------------------------------------------------------------
def test_scaled_mm_refuses_non_float8_operands_as_torch():
    F, TF = ember.nn.functional, torch.nn.functional
    e = _error_type(lambda: F.scaled_mm(ember.randn(16, 32), ember.randn(32, 16),
                                        ember.tensor(1.0), F.ScalingType.TensorWise,
                                        ember.tensor(1.0), F.ScalingType.TensorWise))
    t = _error_type(lambda: TF.scaled_mm(torch.randn(16, 32), torch.randn(32, 16),
                                         torch.tensor(1.0), TF.ScalingType.TensorWise,
                                         torch.tensor(1.0), TF.ScalingType.TensorWise))
    assert e is t is ValueError
    assert int(F.ScalingType.RowWise) == TF.ScalingType.RowWise.value


def test_scaled_grouped_mm_has_no_cpu_kernel_as_torch():
    F, TF = ember.nn.functional, torch.nn.functional
    offs = [lib.tensor([8, 16], dtype=lib.int32) for lib in (ember, torch)]
    e = _error_type(lambda: F.scaled_grouped_mm(
        ember.randn(16, 32), ember.randn(2, 32, 16), ember.ones(16), F.ScalingType.RowWise,
        ember.ones(2, 16), F.ScalingType.RowWise, offs=offs[0]))
    t = _error_type(lambda: TF.scaled_grouped_mm(
        torch.randn(16, 32), torch.randn(2, 32, 16), torch.ones(16), TF.ScalingType.RowWise,
        torch.ones(2, 16), TF.ScalingType.RowWise, offs=offs[1]))
    assert e is t is NotImplementedError


def test_grouped_mm_gradients_match_torch_in_bfloat16():
    """PyTorch's CPU backward of grouped_mm runs in bfloat16 (its float32 one fails on a
    broadcast gradient), so the op-db row compares values; this compares gradients."""
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, (24, 16)), rng.uniform(-1, 1, (3, 16, 8))
    g = rng.uniform(-1, 1, (24, 8))
    grads = []
    for lib in (torch, ember):
        at = lib.tensor(a, dtype=lib.bfloat16, requires_grad=True)
        bt = lib.tensor(b, dtype=lib.bfloat16, requires_grad=True)
        out = lib.nn.functional.grouped_mm(at, bt, offs=lib.tensor([8, 16, 24], dtype=lib.int32))
        out.backward(lib.tensor(g, dtype=lib.bfloat16))
        grads.append([at.grad.float().numpy(), bt.grad.float().numpy()])
    for e, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(e, t, rtol=2e-2, atol=2e-2)


# ---- the functional recurrent ops beyond the op-db rows --------------------------------------
def test_lstm_with_projections_and_dropout_stream():
    """Projections are recognised from h0 and c0 having different sizes, as in PyTorch; with
    dropout between layers and train=True both draw the same stream from the same seed."""
    rng = np.random.default_rng(6)
    x, h0, c0 = rng.standard_normal((5, 2, 3)), rng.standard_normal((2, 2, 2)), \
        rng.standard_normal((2, 2, 4))
    shapes = [(16, 3), (16, 2), (16,), (16,), (2, 4), (16, 2), (16, 2), (16,), (16,), (2, 4)]
    params = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        out, h, c = lib.lstm(lib.tensor(x), (lib.tensor(h0), lib.tensor(c0)), ps, True, 2, 0.5,
                             True, False, False)
        (out.sum() + h.sum() + c.sum()).backward()
        results.append([_np(out), _np(h), _np(c)] + [_np(p.grad) for p in ps])
    for e, t in zip(results[1], results[0]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_recurrent_ops_raise_as_torch():
    x, h = (lambda m: m.randn(4, 3, 2)), (lambda m: m.zeros(1, 3, 3))
    ps = (lambda m: [m.randn(9, 2), m.randn(9, 3)])
    for fn in (lambda m: m.gru(x(m), h(m), ps(m), False, 2, 0.0, False, False, False),
               lambda m: m.gru(x(m), h(m), ps(m)[:1], False, 1, 0.0, False, False, False),
               lambda m: m.lstm(x(m), (h(m),), ps(m), False, 1, 0.0, False, False, False),
               lambda m: m.lstm_cell(m.randn(3, 2), (m.randn(3, 3),), m.randn(12, 2),
                                     m.randn(12, 3))):
        assert _error_type(lambda: fn(ember)) is _error_type(lambda: fn(torch)) is not None
