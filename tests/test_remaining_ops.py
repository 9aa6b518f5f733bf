"""The remaining operator-library ops beyond what the op table checks: in-place view ops and
autograd, resize_, poisson's random stream, sparse embedding gradients, scatter(reduce=)'s
warning, and meta-device shapes of the new ops."""
import warnings

import numpy as np
import pytest

import ember
from _torch_oracle import check_meta

torch = pytest.importorskip("torch")

DATA = np.arange(12.0).reshape(3, 4) / 7 - 0.5


def _raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


# ---- in-place view ops ------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda t: t.t_(), lambda t: t.transpose_(0, 1), lambda t: t.swapaxes_(1, 0),
    lambda t: t.unsqueeze_(1), lambda t: t[None].squeeze_(), lambda t: t.squeeze_(0),
    lambda t: t[:, :1].squeeze_(1),
])
def test_inplace_view_values_strides_and_gradients(op):
    out = []
    for m in (ember, torch):
        a = m.tensor(DATA, requires_grad=True)
        b = a * 2
        v = b._version
        r = op(b)
        w = m.arange(r.numel(), dtype=m.float64).reshape(r.shape)
        (r * w).sum().backward()
        out.append((r.detach().numpy(), r.stride(), b._version - v, a.grad.numpy()))
    (re, se, ve, ge), (rt, st, vt, gt) = out
    np.testing.assert_array_equal(re, rt)
    assert se == st and ve == vt
    np.testing.assert_array_equal(ge, gt)


def test_inplace_view_on_a_view_keeps_the_base_history():
    grads = []
    for m in (ember, torch):
        a = m.tensor(DATA, requires_grad=True)
        b = a * 1
        row = b[1]
        row.unsqueeze_(0)
        (row * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum().backward()
        assert type(row.grad_fn).__name__ == "UnsqueezeBackward1"
        grads.append(a.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_inplace_view_on_a_leaf_that_requires_grad_raises_and_no_grad_allows():
    for m in (ember, torch):
        a = m.tensor(DATA, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            a.t_()
        with m.no_grad():
            a.t_()
        assert a.shape == (4, 3) and a.is_leaf and a.stride() == (1, 4)


def test_as_strided_inplace_forward():
    for m in (ember, torch):
        x = m.arange(12.0)
        assert x.as_strided_((2, 3), (1, 2), 3) is x
        assert x.tolist() == [[3.0, 5.0, 7.0], [4.0, 6.0, 8.0]] and x.storage_offset() == 3


# ---- resize_ ----------------------------------------------------------------------------------
def test_resize_shrinks_grows_and_restrides_like_torch():
    results = []
    for m in (ember, torch):
        x = m.arange(6.0)
        r = [x.resize_(2, 2).tolist(), x.stride()]
        x.resize_(3, 4)
        r += [tuple(x.shape), x.untyped_storage().nbytes(), x.reshape(-1)[:6].tolist()]
        t = m.arange(6.0).view(2, 3).t()
        r += [t.resize_(3, 2).stride(), t.resize_(2, 3).stride()]
        c = m.arange(24.0).resize_(1, 2, 3, 4, memory_format=m.channels_last)
        r += [c.stride(), m.arange(6.0).resize_as_(m.empty(2, 1)).tolist()]
        y = m.arange(6.0)[2:]
        y.resize_(5)
        r += [y.storage_offset(), y.untyped_storage().nbytes(), y[:4].tolist()]
        results.append(r)
    assert results[0] == results[1]


def test_resize_refuses_tensors_that_require_grad():
    for m in (ember, torch):
        a = m.ones(2, 3, requires_grad=True)
        for fn in (lambda: a.resize_(3), lambda: (a * 1).resize_(6),
                   lambda: a.resize_as_(m.ones(6))):
            with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
                fn()
        with m.no_grad(), pytest.raises(RuntimeError, match="require grad"):
            a.resize_(3)
    x = ember.empty(2, 3, device="meta")
    x.resize_(4, 5)
    assert x.shape == (4, 5) and x.stride() == (5, 1) and x.device.type == "meta"


# ---- poisson --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_draws_torch_stream(dtype):
    """The same integers as PyTorch's sampler from the same generator state, and the same
    state afterwards (both rejection branches: rates below and above 10)."""
    out = []
    for m in (ember, torch):
        m.manual_seed(11)
        rates = (m.rand(30, 20, dtype=getattr(m, dtype)) * 40).t()
        draws = m.poisson(rates)
        g = m.Generator().manual_seed(3)
        out.append((draws.numpy(), draws.dtype == rates.dtype, m.rand(3).numpy(),
                    m.poisson(m.full((5,), 2.5, dtype=getattr(m, dtype)), g).numpy()))
    for e, t in zip(*out):
        np.testing.assert_array_equal(e, t)


def test_poisson_errors_and_gradient():
    for m in (ember, torch):
        for bad in (m.tensor([-1.0]), m.tensor([float("nan")])):
            with pytest.raises(RuntimeError, match="non-negative"):
                m.poisson(bad)
        with pytest.raises(NotImplementedError):
            m.poisson(m.tensor([1, 2]))
        x = m.tensor([1.0, 20.0], requires_grad=True)
        y = m.poisson(x)
        assert type(y.grad_fn).__name__ == "PoissonBackward0"
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]


def test_fractional_max_pool_draws_its_samples_like_torch():
    for nd, shape in ((2, (2, 3, 9, 8)), (3, (2, 2, 6, 6, 6))):
        outs = []
        for m in (ember, torch):
            m.manual_seed(5)
            x = m.randn(*shape)
            f = getattr(m.nn.functional, f"fractional_max_pool{nd}d")
            out, idx = f(x, 2, output_ratio=(0.5,) * nd, return_indices=True)
            outs.append((out.numpy(), idx.numpy(), m.rand(2).numpy()))
        for e, t in zip(*outs):
            np.testing.assert_array_equal(e, t)


# ---- sparse embedding gradients -----------------------------------------------------------------
def test_sparse_embedding_gradient_is_a_coo_tensor_equal_to_the_dense_one():
    idx = ember.tensor([[1, 2], [0, 2]])
    for sparse_module, dense_module in (
            (ember.nn.Embedding(4, 3, sparse=True), ember.nn.Embedding(4, 3)),
            (ember.nn.EmbeddingBag(4, 3, mode="sum", sparse=True),
             ember.nn.EmbeddingBag(4, 3, mode="sum"))):
        dense_module.load_state_dict(sparse_module.state_dict())
        sparse_module(idx).sum().backward()
        dense_module(idx).sum().backward()
        assert sparse_module.weight.grad.layout == ember.sparse_coo
        assert ember.equal(sparse_module.weight.grad.to_dense(), dense_module.weight.grad)


# ---- scatter(reduce=) -------------------------------------------------------------------------
def test_scatter_reduce_argument_warns_for_tensor_src_only():
    """(PyTorch warns once per process, so only ember's warning can be checked here.)"""
    with pytest.warns(UserWarning, match="scatter_reduce"):
        ember.zeros(3).scatter(0, ember.tensor([0, 0]), ember.ones(2), reduce="add")
    for m in (ember, torch):
        x, i = m.zeros(3), m.tensor([0, 0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert x.scatter(0, i, 2.0, reduce="multiply").tolist() == [0.0, 0.0, 0.0]
        y = m.ones(3, requires_grad=True) * 1
        z = y.scatter(0, i, 2.0, reduce="add")
        assert _raises(lambda: z.sum().backward()) is not None


def test_scatter_reduce_prod_gradient_with_zeros():
    """A lone zero among a position's factors gets the product of the others; two zeros
    give zero gradient (PyTorch's formula, not result / src)."""
    grads = []
    for m in (ember, torch):
        x = m.tensor([2.0, 3.0, 0.5], requires_grad=True)
        src = m.tensor([0.0, 4.0, 0.0, 0.0, 5.0], requires_grad=True)
        idx = m.tensor([0, 0, 1, 1, 2])
        x.scatter_reduce(0, idx, src, "prod").sum().backward()
        grads.append((x.grad.numpy(), src.grad.numpy()))
    for e, t in zip(*grads):
        np.testing.assert_array_equal(e, t)


# ---- meta device ---------------------------------------------------------------------------------
def _index(L, *values):
    return L.tensor(list(values), device="meta")


META_OPS = [
    lambda L, x: x.scatter_reduce(1, L.zeros(2, 3, 2, dtype=L.int64, device="meta"), x, "mean"),
    lambda L, x: x.transpose(0, 2).scatter_reduce(0, L.zeros(1, 3, 2, dtype=L.int64,
                                                             device="meta"), x, "amax"),
    lambda L, x: x.masked_scatter(L.ones(4, dtype=L.bool, device="meta"), x),
    lambda L, x: x.index_copy(2, _index(L, 1, 0), x[..., :2]),
    lambda L, x: x.transpose(0, 1).index_reduce(0, _index(L, 1, 1), x[0, :2].t(), "amin"),
    lambda L, x: x.put(_index(L, 1, 5), x[0, 0, :2]),
    lambda L, x: x.take(L.zeros(5, 2, dtype=L.int64, device="meta")),
    lambda L, x: x.clone().transpose_(0, 2),
    lambda L, x: x[:, :1].clone().squeeze_(),
    lambda L, x: x.clone().unsqueeze_(-1),
    lambda L, x: x.clone().as_strided_((2, 2), (3, 1), 2),
    lambda L, x: x.clone().resize_(5, 7),
    lambda L, x: L.poisson(x),
    lambda L, x: x.max(),
    lambda L, x: x.split(2, -1),
    lambda L, x: L.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(2, 2), return_indices=True,
        _random_samples=L.full((1, 2, 2), 0.5, device="meta")),
]


@pytest.mark.parametrize("k", range(len(META_OPS)))
def test_meta_matches_torch(k):
    check_meta(META_OPS[k], (2, 3, 4))


def test_result_layouts_of_a_transposed_input():
    """scatter_reduce, scatter(reduce=), masked_scatter and index_copy return contiguous
    results; put keeps the input's layout."""
    strides = []
    for m in (ember, torch):
        x = m.zeros(3, 4).t()
        i = m.zeros(1, 3, dtype=m.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strides.append([x.scatter_reduce(0, i, m.ones(1, 3), "sum").stride(),
                            x.scatter(0, i, m.ones(1, 3), reduce="add").stride(),
                            x.scatter(0, i, 1.0, reduce="multiply").stride(),
                            x.masked_scatter(m.ones(3, dtype=m.bool), m.ones(12)).stride(),
                            x.index_copy(0, m.tensor([1]), m.ones(1, 3)).stride(),
                            x.put(m.tensor([1]), m.ones(1)).stride()])
    assert strides[0] == strides[1]
