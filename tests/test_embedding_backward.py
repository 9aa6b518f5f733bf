"""The embedding weight's gradient against torch: the dense one (summed by key, see Note
[Summing rows by key without np.add.at]) with padding_idx, scale_grad_by_freq and max_norm, and
the sparse COO one of sparse=True, accumulated and stepped by SGD."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse invariant checks")


def _indices(vocab, shape, heavy=None, seed=0):
    idx = np.random.default_rng(seed).integers(0, vocab, shape)
    if heavy is not None:  # one key repeated more than the pass limit (a padding token, "the")
        idx.reshape(-1)[::3] = heavy
    return idx


@pytest.mark.parametrize("kwargs, heavy, dtype", [
    ({}, None, "float32"),
    ({}, 3, "float32"),
    ({"padding_idx": 3}, 3, "float32"),
    ({"padding_idx": -2}, None, "float32"),
    ({"scale_grad_by_freq": True}, 5, "float32"),
    ({"scale_grad_by_freq": True, "padding_idx": 0}, 0, "float64"),
    ({"max_norm": 1.0}, 2, "float32"),
    ({"max_norm": 0.5, "norm_type": 1.0, "scale_grad_by_freq": True}, None, "float64"),
    ({}, 4, "float16"),
])
def test_dense_weight_grad_equals_torch(kwargs, heavy, dtype):
    idx = _indices(40, (6, 50), heavy)
    w = np.random.default_rng(1).standard_normal((40, 8))
    g = np.random.default_rng(2).standard_normal((6, 50, 8))
    grads = []
    for lib in (ember, torch):
        weight = lib.tensor(w, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(idx), weight, **kwargs)
        out.backward(lib.tensor(g, dtype=out.dtype))
        grads.append((weight.grad.float().numpy(), weight.detach().float().numpy()))
    tol = 2e-3 if dtype == "float16" else 1e-5
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


def test_dense_backward_of_empty_indices_and_int32():
    for idx, dtype in ((np.zeros((0, 4), np.int64), "int64"), (np.array([[3, 1, 3]]), "int32")):
        grads = []
        for lib in (ember, torch):
            weight = lib.ones(5, 2, requires_grad=True)
            lib.nn.functional.embedding(lib.tensor(idx, dtype=getattr(lib, dtype)),
                                        weight).sum().backward()
            grads.append(weight.grad.numpy())
        np.testing.assert_array_equal(*grads)


def _sparse_run(lib):
    """What a sparse=True embedding's gradient looks like through a short training run."""
    seen = []

    def grad_of(t):
        g = t.grad
        return (str(g.layout), g.is_coalesced(), g._nnz(), g._indices().tolist(),
                g._values().numpy(), tuple(g.shape), str(g.dtype))

    lib.manual_seed(0)
    emb = lib.nn.Embedding(10, 3, sparse=True, padding_idx=1)
    idx = lib.tensor([[1, 2, 4], [4, 3, 1]])
    (emb(idx) * 2).sum().backward()
    seen.append(grad_of(emb.weight))
    emb(idx).sum().backward()  # accumulated: PyTorch's merge walk of the two entry lists
    seen.append(grad_of(emb.weight))
    lib.optim.SGD(emb.parameters(), lr=0.1).step()
    seen.append(emb.weight.detach().numpy())

    w = lib.ones(5, 2, requires_grad=True)  # every token is padding: no entries at all
    lib.nn.functional.embedding(lib.tensor([[0, 0]]), w, padding_idx=0, sparse=True).sum().backward()
    seen.append(grad_of(w))
    w = lib.ones(5, 2, requires_grad=True)  # one entry: marked coalesced
    lib.nn.functional.embedding(lib.tensor([3]), w, sparse=True).sum().backward()
    seen.append(grad_of(w))

    w = lib.tensor(np.arange(10.0).reshape(5, 2), requires_grad=True)
    out = lib.nn.functional.embedding(lib.tensor([3, 1], dtype=lib.int32), w, sparse=True)
    g, = lib.autograd.grad((out * out).sum(), w, create_graph=True)
    seen.append((g.is_sparse, g.requires_grad, type(g.grad_fn).__name__,
                 g._values().tolist()))
    try:
        lib.nn.functional.embedding(idx, emb.weight, sparse=True,
                                    scale_grad_by_freq=True).sum().backward()
    except RuntimeError as e:
        seen.append(str(e))
    for kw in ({"momentum": 0.9}, {"momentum": 0.9, "nesterov": True, "maximize": True},
               {"momentum": 0.5, "dampening": 0.1}):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(10, 3, sparse=True)
        opt = lib.optim.SGD(emb.parameters(), lr=0.1, **kw)
        for _ in range(3):
            opt.zero_grad()
            (emb(idx) ** 2).sum().backward()
            opt.step()
        seen.append(emb.weight.detach().numpy())
    return seen


def test_sparse_weight_grad_equals_torch():
    for e, t in zip(_sparse_run(ember), _sparse_run(torch)):
        _assert_close(e, t)


def _assert_close(e, t):
    if isinstance(t, np.ndarray):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
    elif isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _assert_close(a, b)
    else:
        assert e == t


def test_sparse_grad_with_weight_decay_raises_like_torch():
    kinds = []
    for lib in (ember, torch):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError):
            lib.optim.SGD(emb.parameters(), lr=0.1, weight_decay=0.1).step()
        kinds.append(emb.weight.grad.is_sparse)
    assert kinds[0] == kinds[1]


@pytest.mark.parametrize("kwargs", [dict(mode="sum"), dict(mode="mean"),
                                    dict(mode="sum", padding_idx=4),
                                    dict(mode="mean", padding_idx=2), dict(mode="max")])
def test_embedding_bag_sparse_grad_equals_torch(kwargs):
    seen = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        bag = lib.nn.EmbeddingBag(10, 3, sparse=True, **kwargs)
        weights = lib.rand(6) if kwargs["mode"] == "sum" else None
        try:
            bag(lib.tensor([1, 2, 4, 4, 3, 2]), lib.tensor([0, 2, 2]),
                per_sample_weights=weights).sum().backward()
        except ValueError as e:  # max mode refuses sparse weights
            seen.append(str(e))
            continue
        g = bag.weight.grad
        seen.append((g.is_coalesced(), g._nnz(), g._indices().tolist(), g._values().numpy()))
    _assert_close(*seen)
