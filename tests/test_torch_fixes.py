"""Fixes found by running PyTorch's test/test_torch.py on ember, each compared with torch: the
torch._check family; TypedStorage's public constructor (sizes, sequences, meta storages and
their errors) and torch.tensor(storage); deepcopy keeping storages shared; bernoulli_ with a
probability tensor into any dtype; cdist / vector_norm gradients at zero distance; the error
order of nll_loss, grid_sampler_2d and index_select; diff's prepend shape check; gradient with
infinite samples; the no-overlap rule of in-place indexing writes."""
import copy
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

from _ported import error_line as _err  # noqa: E402


@pytest.mark.parametrize("case", [
    lambda L: L._check(False),
    lambda L: L._check(L.tensor(True)),
    lambda L: L._check_index(False, lambda: "bad index"),
    lambda L: L._check_value(1 == 2, lambda: "bad value"),
    lambda L: L._check_type(False, lambda: "bad type"),
    lambda L: L._check_not_implemented(False, lambda: "not here"),
    lambda L: L._check_is_size(-1),
    lambda L: L._check_tensor_all(True),
    lambda L: L._check_tensor_all(L.ones(2)),
    lambda L: L._check_tensor_all(L.tensor([True, False]), lambda: L.arange(3)),
    lambda L: L._check_tensor_all_with(IndexError, L.zeros(2, dtype=L.bool)),
    lambda L: L.nn.functional.nll_loss(L.randn(()), L.randn(()), reduction="none"),
    lambda L: L.grid_sampler_2d(L.randn(5, 5, 5, 5, 5), L.randn(1, 1, 1, 4, 4), 0, 0, True),
    lambda L: L.grid_sampler_2d(L.randn(1, 5, 5, 5, 5), L.randn(1, 1, 1, 4, 2), 0, 0, True),
    lambda L: L._grid_sampler_2d_cpu_fallback(L.randn(5, 5, 5, 5), L.randn(1, 1, 4, 4), 0, 0, True),
    lambda L: L.index_select(L.randn(0, 3), 0, L.tensor([0, 1])),
    lambda L: L.index_select(L.randn(2, 3, 4), 1, L.tensor([0, 5])),
    lambda L: L.index_select(L.randn(2, 3, 4), 2, L.tensor([0, 5])),
    lambda L: L.ones(2, 3).diff(dim=0, prepend=L.tensor([[0.0, 1.0]])),
    lambda L: L.rand(3).bernoulli_(L.ones(3, dtype=L.int32)),
    lambda L: L.tensor(L.arange(6.0).storage(), dtype=L.int32),
    lambda L: L.TypedStorage([1, 2], dtype=L.float16, device="meta")[0],
    lambda L: L.TypedStorage([1, 2], dtype=L.float16, device="meta").cpu(),
    lambda L: L.TypedStorage([1, 2], dtype=L.float16, device="meta").share_memory_(),
    lambda L: L.UntypedStorage([1, 2, 3], device="meta")[0],
])
def test_errors_as_torch(case):
    assert _err(case, torch) is not None
    assert _err(case, ember) == _err(case, torch)


@pytest.mark.parametrize("case", [
    lambda L: L.rand(1).expand(6).index_add_(0, L.tensor([2, 1, 0]), L.rand(3)),
    lambda L: (lambda i: i.index_add_(0, i, i.clone()))(L.tensor([2, 1, 0])),
    lambda L: (lambda i: i.index_copy_(0, i.clone(), i))(L.tensor([2, 1, 0])),
    lambda L: (lambda s: s.scatter_(0, L.tensor([2, 1, 0]), s))(L.rand(3)),
    lambda L: (lambda y: y.put_(L.tensor([2, 1, 0]), y[:3]))(L.rand(6)),
    lambda L: (lambda i: i.index_put_((i,), i))(L.tensor([2, 1, 0])),
    lambda L: (lambda m: m[1:].masked_fill_(m[:-1], False))(L.tensor([True, False, True])),
    lambda L: (lambda i: i.index_fill_(0, i, 0))(L.tensor([2, 1, 0])),
])
def test_indexing_writes_refuse_overlap(case):
    assert _err(case, torch)[1].startswith("unsupported operation")
    assert _err(case, ember) == _err(case, torch)


@pytest.mark.parametrize("name", ["index_fill_", "masked_fill_", "index_put_"])
def test_expanded_fill_warns(name):
    msgs = []
    for lib in (torch, ember):
        x = lib.rand(1).expand(6)
        idx, mask = lib.tensor([2, 1, 0]), lib.tensor([True, False] * 3)
        call = {"index_fill_": lambda: x.index_fill_(0, idx, 1.0),
                "masked_fill_": lambda: x.masked_fill_(mask, 0.0),
                "index_put_": lambda: x.index_put_((idx,), lib.rand(3))}[name]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        msgs.append([str(m.message).split(" (Triggered")[0] for m in w])
    assert msgs[0] and msgs[1] == msgs[0]


def test_typed_storage_constructors():
    for dtype in ("float16", "int32", "bool"):
        got = []
        for lib in (torch, ember):
            dt = getattr(lib, dtype)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = lib.TypedStorage(dtype=dt)
                b = lib.TypedStorage(4, dtype=dt)
                c = lib.TypedStorage([1, 0, 1], dtype=dt)
                m = lib.TypedStorage([1, 0, 1], dtype=dt, device="meta")
                m.resize_(7)
                u = lib.UntypedStorage([1, 2, 3], device="meta")
            got.append((a.size(), b.size(), c.tolist(), m.size(), m.nbytes(), m.data_ptr(),
                        u.nbytes(), lib.storage._dtype_to_storage_type_map()[dt]))
        assert got[0] == got[1]


def test_tensor_from_storage():
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.arange(6.0)
            whole = lib.tensor(a.untyped_storage())   # the bytes read as int64
            halves = lib.tensor(a.untyped_storage(), dtype=lib.int16)
            typed = lib.tensor(a.storage())
        got = (str(whole.dtype), tuple(whole.shape), tuple(halves.shape), typed.tolist())
        if lib is torch:
            expected = got
    assert got == expected


def test_deepcopy_keeps_storage_sharing():
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.arange(6.0).reshape(2, 3)
            q = [a, a.storage(), a.view(6)[1:]]
            w = copy.deepcopy(q)
        w[0].add_(1)
        assert w[1].tolist() == (a + 1).reshape(-1).tolist()
        assert w[2].tolist() == (a + 1).reshape(-1)[1:].tolist()
        assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_bernoulli_p_tensor_into_any_dtype():
    got = []
    for lib in (torch, ember):
        lib.manual_seed(3)
        a = lib.zeros(16).bernoulli_(lib.full((16,), 0.5, dtype=lib.float64))
        b = lib.zeros(16, dtype=lib.int16).bernoulli_(lib.full((16,), 0.5))
        c = lib.zeros(2, dtype=lib.bool)
        lib.bernoulli(lib.full((8,), 0.5), out=c)
        got.append((a.tolist(), b.tolist(), str(c.dtype), c.tolist()))
    assert got[0] == got[1]


def test_cdist_zero_distance_gradients():
    x0 = np.random.RandomState(0).randn(1, 27, 8).astype(np.float32)
    grads = []
    for lib in (torch, ember):
        out = []
        for p in (2.0, 0.5):
            x = lib.tensor(x0, requires_grad=True)
            lib.cdist(x, lib.tensor(x0), p=p).sum().backward()
            out.append(x.grad.numpy())
        y = lib.tensor([[1.0, 2.0]], requires_grad=True)
        lib.cdist(y, lib.tensor([[1.0, 2.0], [1.0, 3.0]]), p=0.5).sum().backward()
        out.append(y.grad.numpy())
        grads.append(out)
    for e, t in zip(grads[1], grads[0]):
        assert np.isfinite(e).all()
        np.testing.assert_allclose(e, t, atol=1e-3)


def test_gradient_with_infinite_samples():
    v = [2, -2, np.inf, np.inf, -np.inf, 3, -np.inf, 2, np.nan, 3, np.inf]
    for edge_order in (1, 2):
        t = torch.gradient(torch.tensor(v), edge_order=edge_order)[0]
        e = ember.gradient(ember.tensor(v), edge_order=edge_order)[0]
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_tensor_classes_and_quantized_backend():
    assert {c.__name__ for c in ember._tensor_classes} <= {c.__name__ for c in torch._tensor_classes}
    assert all(not c.is_xpu for c in ember._tensor_classes)
    import ember.backends.quantized as q
    assert q.engine in q.supported_engines
    with pytest.raises(RuntimeError):
        q.supported_engines = []


def test_dtype_shortcuts_take_memory_format():
    got = []
    for lib in (torch, ember):
        x = lib.randn(2, 3, 4, 4).contiguous(memory_format=lib.channels_last)
        got.append([(getattr(x, fn)(memory_format=lib.contiguous_format).is_contiguous(),
                     getattr(x, fn)().stride())
                    for fn in ("byte", "double", "half", "long", "bool", "bfloat16")])
    assert got[0] == got[1]


@pytest.mark.parametrize("case", [
    lambda L: L.empty_like(L.randn(2, 3).to_sparse(), memory_format=L.preserve_format),
    lambda L: L.zeros_like(L.randn(2, 3).to_sparse(), memory_format=L.contiguous_format),
    lambda L: L.ones_like(L.randn(2, 3).to_sparse()),
])
def test_sparse_like_factories_errors(case):
    (e_type, e_msg), (t_type, t_msg) = _err(case, ember), _err(case, torch)
    assert e_type == t_type and t_msg.startswith(e_msg[:60])


def test_sparse_like_factories():
    got = []
    for lib in (torch, ember):
        sp = lib.randn(2, 3, 2).to_sparse(2)
        got.append([(str(r.layout), tuple(r.shape), r._nnz(), r.sparse_dim(), str(r.dtype))
                    for r in (lib.empty_like(sp), lib.zeros_like(sp, dtype=lib.float64))])
    assert got[0] == got[1]
