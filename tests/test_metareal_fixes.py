"""Fixes found by running PyTorch's test/test_meta.py on ember (the meta device: tensors that
describe a real one's shape, dtype, strides, storage offset and autograd flags without data),
each checked against PyTorch on the same inputs."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _meta_utils(lib):
    import importlib
    return importlib.import_module(lib.__name__ + "._subclasses.meta_utils")


def _describe(t):
    """Everything MetaConverter keeps of a tensor, recursing into a view's base."""
    d = (str(t.dtype).split(".")[-1], tuple(t.shape), t.stride(),
         t.storage_offset(), t.requires_grad, t.is_leaf, t._is_view(), t.is_conj())
    return d + ((_describe(t._base),) if t._is_view() else ())


# each builds (the tensors to convert, the converted tensor that is compared)
CASES = {
    "leaf": lambda L: L.randn(4, requires_grad=True),
    "non_leaf": lambda L: L.randn(4, requires_grad=True).neg(),
    "channels_last_non_leaf":
        lambda L: L.empty(2, 3, 4, 5, memory_format=L.channels_last, requires_grad=True) + 2,
    "non_dense_leaf": lambda L: L.empty_strided((2, 2), (4, 2), requires_grad=True),
    "view_of_leaf": lambda L: L.randn(4, requires_grad=True)[1:],
    "view_of_non_leaf": lambda L: L.randn(4, requires_grad=True).neg()[::2],
    "view_as_real": lambda L: L.view_as_real(L.randn(4, dtype=L.complex64)),
    "view_as_complex": lambda L: L.view_as_complex(L.randn(4, 2)),
    "imag": lambda L: L.randn(4, dtype=L.complex64).imag,
    "transposed": lambda L: L.randn(3, 4).t(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_meta_converter_describes_the_tensor(case):
    def run(L):
        t = CASES[case](L)
        m = _meta_utils(L).MetaConverter()(t)
        assert m.device.type == "meta" and (m._base is None or m._base.device.type == "meta")
        return _describe(m), _describe(t)

    ember_meta, ember_real = run(ember)
    assert ember_meta == run(torch)[0] == ember_real


def test_meta_converter_memo_views_share_base_and_version():
    for L in (ember, torch):
        y = L.randn(4, requires_grad=True).neg()
        conv = _meta_utils(L).MetaConverter()
        m1, m2 = conv(y[:]), conv(y[:])
        assert m1 is not m2 and m1._base is m2._base and m1.device.type == "meta"
        with L.no_grad():
            m1._base.add_(3)
        assert m1._version == m2._version > 0
        assert conv(y) is m1._base and conv.successful()
        assert conv(3) == 3


def test_meta_converter_memo_forgets_dead_tensors():
    import gc
    for L in (ember, torch):
        conv = _meta_utils(L).MetaConverter()
        x = L.randn(4, 4)
        xv = x.view(16)
        m, mv = conv(x), conv(xv)
        assert conv(x) is m and mv is not m and mv._base is m
        assert (len(conv.tensor_memo), len(conv.storage_memo)) == (2, 1)
        del m, mv
        gc.collect()
        assert len(conv.tensor_memo) == 0   # the memo holds its meta tensors weakly
    # ember keys its memo by the real tensor's id, so it also forgets a tensor that dies (as
    # PyTorch did before 2.x: test_meta's test_weakref), lest a new tensor reuse the id
    conv = _meta_utils(ember).MetaConverter()
    x = ember.randn(4, 4)
    m = conv(x)
    del x
    gc.collect()
    conv.check_for_expired_weak_storages()
    assert (len(conv.tensor_memo), len(conv.storage_memo)) == (0, 0) and m.shape == (4, 4)


def test_set_onto_meta_storage():
    def run(L):
        r = L.empty((0,), device="meta")
        s = L.UntypedStorage(480, device="meta")
        r.set_(s, 3, (2, 3, 4), (1, 8, 2))
        return r.device.type, tuple(r.shape), r.stride(), r.storage_offset(), \
            r.untyped_storage().nbytes()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("make", [
    lambda L, d: L.empty(2, 3, 4, 5, memory_format=L.channels_last, device=d),
    lambda L, d: L.empty(3, 4, device=d).t(),
    lambda L, d: L.empty(2, 3, 4, device=d).permute(2, 0, 1)])
def test_clone_preserve_format_keeps_strides(make, device):
    def run(L):
        return make(L, device).clone(memory_format=L.preserve_format).stride()
    assert run(ember) == run(torch)


def test_schema_returns_alias_info():
    def run(L):
        out = []
        for op in (L.ops.aten.transpose.int, L.ops.aten.add.Tensor, L.ops.aten.add_.Tensor,
                   L.ops.aten.max.dim):
            for r in op._schema.returns:
                a = r.alias_info
                out.append((r.name, None if a is None else (a.before_set, a.is_write)))
            a = op._schema.arguments[0].alias_info
            out.append(None if a is None else (a.before_set, a.is_write))
        return out
    assert run(ember) == run(torch)


def test_harness_names():
    for L in (ember, torch):
        assert isinstance(L.ops.aten.add.Tensor, L._ops.OpOverload)
        assert not isinstance(L.ops.aten.add.Tensor, L.ScriptMethod)
        assert L.functional.unique is L.unique and L.functional.einsum is L.einsum
        a, b = L.empty(3, 4).t(), L.empty(4, 3)
        pc = L._prims_common
        assert pc.check_significant_strides(a, b) == (True, None)
        assert pc.check_significant_strides(a, b, only_cuda=False) == (False, 0)
        assert pc.check_all_strides(L.empty(1, 3), L.empty(1, 3).t().t(),
                                    only_cuda=False) == (True, None)


INDEXINGS = {
    "long_indices": lambda L, x: x[L.tensor([0, 2])],
    "bool_mask": lambda L, x: x[L.tensor([True, False, True])],
    "2d_mask": lambda L, x: x[L.tensor([[True, False, True, True]] * 3)],
    "second_dim": lambda L, x: x[:, L.tensor([1, 3])],
    "mask_mismatch": lambda L, x: x[L.tensor([True, False])],
    "index_put": lambda L, x: x.index_put((L.tensor([True, False, True]),), L.ones(4, device="meta")),
    "index_put_": lambda L, x: x.index_put_((L.tensor([0, 2]),), L.ones(4, device="meta")),
}


@pytest.mark.parametrize("case", sorted(INDEXINGS))
def test_meta_tensor_indexed_with_cpu_indices(case):
    def run(L):
        x = L.empty(3, 4, device="meta")
        try:
            r = INDEXINGS[case](L, x)
        except Exception as e:  # noqa: BLE001  (the exception is the outcome compared)
            return type(e).__name__, str(e)
        return r.device.type, tuple(r.shape)
    assert run(ember) == run(torch)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5), (2, 1, 5, 2), (0, 3, 3)])
def test_lu_factorizations_on_meta(shape):
    def run(L):
        A = L.empty(shape, device="meta")
        rs = L.linalg.lu_factor_ex(A) + L.linalg.lu(A) + L.linalg.lu_factor(A)
        return [(r.device.type, str(r.dtype), tuple(r.shape), r.stride()) for r in rs]
    assert run(ember) == run(torch)


@pytest.mark.parametrize("make", [
    lambda L, M: L.linspace(L.tensor(0., **M), L.tensor(1., **M), 5, **M),
    lambda L, M: L.linspace(L.tensor(0., **M), 3, 4, dtype=L.int32, **M),
    lambda L, M: L.logspace(L.tensor(0., **M), L.tensor(1., **M), 5, **M),
    lambda L, M: L.logspace(L.tensor(0., **M), 2, 4, base=2, dtype=L.int64, **M)])
def test_linspace_logspace_tensor_ends_on_meta(make):
    def run(L):
        r = make(L, dict(device="meta"))
        return r.device.type, str(r.dtype), tuple(r.shape)
    assert run(ember) == run(torch)


@pytest.mark.parametrize("make", [
    lambda L, M: L.normal(L.empty(3, **M), L.empty(3, **M)),
    lambda L, M: L.normal(0., L.empty(2, 3, **M)),
    lambda L, M: L.normal(L.empty(3, 1, **M), L.empty(4, **M))])
def test_normal_with_meta_std(make):
    def run(L):
        r = make(L, dict(device="meta"))
        return r.device.type, str(r.dtype), tuple(r.shape), r.stride()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("make", [
    lambda L, M: L.isin(L.empty(20, **M), L.empty(5, **M)),
    lambda L, M: L.isin(L.empty(2, 3, **M), 1.0),
    lambda L, M: L.isin(L.empty(2, 3, dtype=L.int64, **M), L.empty(5, **M), invert=True)])
def test_isin_on_meta(make):
    def run(L):
        r = make(L, dict(device="meta"))
        return r.device.type, str(r.dtype), tuple(r.shape), r.stride()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("make", [
    lambda L, x: L.nn.functional.rrelu(x, training=True),
    lambda L, x: L.nn.functional.rrelu(x.clone(), training=True, inplace=True),
    lambda L, x: L.nn.functional.rrelu(x.t())])
def test_rrelu_training_on_meta(make):
    def run(L):
        r = make(L, L.empty(3, 4, device="meta"))
        return r.device.type, str(r.dtype), tuple(r.shape), r.stride()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("shape", [(1, 1), (2, 3, 3)])
def test_matrix_power_zero_on_meta(shape):
    def run(L):
        r = L.linalg.matrix_power(L.empty(shape, device="meta"), 0)
        return r.device.type, str(r.dtype), tuple(r.shape), r.stride()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("make", [
    lambda L, M: L.lu_unpack(L.empty(3, 3, **M), L.ones(3, dtype=L.int32, **M)),
    lambda L, M: L.lu_unpack(L.empty(2, 4, 3, **M), L.ones(2, 3, dtype=L.int32, **M)),
    lambda L, M: L.lu_unpack(L.empty(3, 5, **M), L.ones(3, dtype=L.int32, **M),
                             unpack_pivots=False)])
def test_lu_unpack_on_meta(make):
    def run(L):
        return [(r.device.type, str(r.dtype), tuple(r.shape), r.stride())
                for r in make(L, dict(device="meta"))]
    assert run(ember) == run(torch)


def test_householder_product_on_meta():
    def run(L):
        r = L.linalg.householder_product(L.empty(2, 4, 3, device="meta"),
                                         L.empty(2, 2, device="meta"))
        return r.device.type, str(r.dtype), tuple(r.shape)   # (PyTorch's is column-major)
    assert run(ember) == run(torch)
