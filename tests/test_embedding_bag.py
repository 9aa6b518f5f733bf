"""F.embedding_bag / nn.EmbeddingBag against torch on bags of random sizes: the bags' sums, means
and maxima, all four outputs of torch.embedding_bag (offset2bag, bag_size, max_indices: the row
each maximum came from, ties and NaNs resolved as PyTorch's CPU kernel does), and the gradients
of the weight and of per_sample_weights. Also the scatter-add under the backward (add_at) against
np.add.at."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle these tests compare against")
import ember  # noqa: E402
from ember._aten.add_at import add_at, index_sum  # noqa: E402


def bags(rng, num_bags, max_len, num_weights, empty=True, padding_idx=None):
    sizes = rng.integers(0 if empty else 1, max_len + 1, num_bags)
    idx = rng.integers(0, num_weights, int(sizes.sum()))
    if padding_idx is not None:
        idx[rng.random(idx.size) < 0.3] = padding_idx
    offsets = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
    return idx, offsets, sizes


def run(lib, weight, idx, offsets, mode, psw=None, sparse=False, **kwargs):
    w = lib.tensor(weight, requires_grad=True)
    p = None if psw is None else lib.tensor(psw, requires_grad=True)
    out = lib.nn.functional.embedding_bag(lib.tensor(idx), w, lib.tensor(offsets), mode=mode,
                                          per_sample_weights=p, sparse=sparse, **kwargs)
    g = np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(weight.dtype)
    out.backward(lib.tensor(g))
    grad = w.grad.to_dense() if w.grad.is_sparse else w.grad
    return [out.detach().numpy(), grad.numpy()] + ([] if p is None else [p.grad.numpy()])


CASES = [
    dict(mode="sum"), dict(mode="mean"), dict(mode="max"),
    dict(mode="sum", psw=True), dict(mode="sum", padding_idx=3, psw=True),
    dict(mode="mean", padding_idx=0), dict(mode="max", padding_idx=5),
    dict(mode="sum", include_last_offset=True), dict(mode="max", include_last_offset=True),
    dict(mode="mean", scale_grad_by_freq=True),
    dict(mode="sum", scale_grad_by_freq=True, padding_idx=4, psw=True),
    dict(mode="sum", sparse=True, padding_idx=2),
    dict(mode="mean", sparse=True),
    dict(mode="sum", psw=True, long_bags=True), dict(mode="mean", long_bags=True, padding_idx=1),
    dict(mode="max", long_bags=True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_bag_matches_torch(case, dtype):
    case = dict(case)
    rng = np.random.default_rng(len(str(case)))
    psw = case.pop("psw", False)
    long_bags = case.pop("long_bags", False)  # bags and repeats past the kernel's HEAVY
    idx, offsets, _ = bags(rng, 6 if long_bags else 40, 300 if long_bags else 9, 12,
                           padding_idx=case.get("padding_idx"))
    if case.get("include_last_offset"):
        offsets = np.r_[offsets, idx.size]
    weight = rng.standard_normal((12, 5)).astype(dtype)
    weight[7, :3] = weight[8, :3]  # equal maxima: the first one met wins
    weights = rng.random(idx.size).astype(dtype) if psw else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run(ember, weight, idx, offsets, psw=weights, **case)
        want = run(torch, weight, idx, offsets, psw=weights, **case)
    for e, t in zip(got, want):
        assert e.dtype == t.dtype and e.shape == t.shape
        # long float32 sums: PyTorch's fused multiply-adds round differently
        tol = (1e-5 if long_bags else 1e-6) if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(e, t, rtol=tol, atol=10 * tol if long_bags else 1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_all_four_outputs_match_torch(mode):
    rng = np.random.default_rng(mode)
    idx, offsets, _ = bags(rng, 30, 6, 10, padding_idx=4)
    weight = rng.standard_normal((10, 4)).astype(np.float32)
    weight[2] = weight[6]  # ties between rows
    weight[9, 1] = np.nan  # a NaN stays the maximum only when it comes first
    for padding_idx in (None, 4):
        outs = [lib.embedding_bag(lib.tensor(weight), lib.tensor(idx), lib.tensor(offsets), False,
                                  mode, False, None, False, padding_idx)
                for lib in (ember, torch)]
        for k, (e, t) in enumerate(zip(*outs)):
            assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape), k
            np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=f"output {k}")


def test_embedding_bag_module_2d_input_trains_as_torch():
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 20, (16, 5))
    weight = rng.standard_normal((20, 6)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        bag = lib.nn.EmbeddingBag(20, 6, mode="max")
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(weight))
        opt = lib.optim.SGD(bag.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            bag(lib.tensor(idx)).pow(2).sum().backward()
            opt.step()
        results.append(bag.weight.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sorted_keys", [False, True])
def test_add_at_adds_in_order_as_np_add_at(sorted_keys):
    rng = np.random.default_rng(1)
    for trial in range(50):
        keys = rng.integers(0, 15, int(rng.integers(0, 200)))
        if sorted_keys:
            keys.sort()
        rows = (rng.standard_normal((keys.size, 3)) * 100).astype(np.float32)
        out = (rng.standard_normal((15, 3)) * 100).astype(np.float32)
        want = out.copy()
        np.add.at(want, keys, rows)
        if keys.size == 0 or np.bincount(keys).max() <= 32:  # longer runs are summed first
            np.testing.assert_array_equal(add_at(out.copy(), (keys,), rows), want)
        fresh = np.zeros_like(out)
        np.add.at(fresh, keys, rows)
        np.testing.assert_allclose(index_sum(keys, rows, 15), fresh, rtol=1e-5, atol=1e-3)


def _outputs(lib, weight, idx, offsets, *args, grad=True, no_grad=False, idx_dtype="int64",
             off_dtype="int64", transposed=False):
    w = lib.tensor(weight.T.copy()).t() if transposed else lib.tensor(weight)
    w.requires_grad_(grad)
    i = lib.tensor(idx, dtype=getattr(lib, idx_dtype))
    o = lib.tensor(offsets, dtype=getattr(lib, off_dtype))
    if no_grad:
        with lib.no_grad():
            return lib.embedding_bag(w, i, o, *args)
    return lib.embedding_bag(w, i, o, *args)


# (args after weight, indices, offsets; keyword options): which kernel runs (forward-only when
# nothing requires grad, in no_grad mode too), the fast sum path's empty offset2bag, index dtypes
LAYOUTS = [((False, 0, False, None, True), {}), ((False, 0, False, None, True), dict(grad=False)),
           ((False, 0, False, None, True), dict(no_grad=True)),
           ((False, 1, False, None, True), dict(grad=False)),
           ((False, 0), dict(idx_dtype="int32")), ((False, 1), dict(idx_dtype="int32")),
           ((False, 1), dict(idx_dtype="int32", off_dtype="int32")),
           ((False, 0), dict(transposed=True)), ((False, 2), dict(grad=False)),
           # a last offset short of the input's end: PyTorch's sums stop there, its bag sizes not
           *[((False, mode, False, None, True), dict(offsets=[0, 4, 4, 6])) for mode in (0, 1, 2)]]


@pytest.mark.parametrize("args, kwargs", LAYOUTS)
def test_outputs_layout_and_grad_fn_as_torch(args, kwargs):
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((10, 3)).astype(np.float32)
    kwargs = dict(kwargs)
    idx, offsets = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array(kwargs.pop("offsets", [0, 4, 4, 8]))
    got, want = (_outputs(lib, weight, idx, offsets, *args, **kwargs) for lib in (ember, torch))
    for e, t in zip(got, want):
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    assert type(got[0].grad_fn).__name__ == type(want[0].grad_fn).__name__
    with ember.device("meta"):  # the Meta kernel's shapes and dtypes are the CPU kernel's
        meta = _outputs(ember, weight, idx, offsets, *args, **kwargs)
    if not kwargs.get("transposed"):
        assert [(m.shape, m.dtype) for m in meta] == [(e.shape, e.dtype) for e in got]


def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 -- the exception is the result compared
        return exc
    raise AssertionError("no exception")


W, IDX, OFF = np.ones((10, 3), np.float32), np.array([1, 2, 4, 5]), np.array([0, 2])
ERRORS = [
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor([0, 5])),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor([1, 2])),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor([1, 10]), L.tensor([0])),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor([1, -1]), L.tensor([0])),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor(OFF), False, 3),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor(OFF), False, 1, False,
                              L.ones(4)),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor(OFF), False, 0, False,
                              L.ones(3)),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor(OFF), False, 0, False,
                              L.ones(4, dtype=L.float64)),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor(OFF), False, 0, False, None,
                              False, 10),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX), L.tensor([], dtype=L.int64), False, 0,
                              False, None, True),
    lambda L: L.embedding_bag(L.tensor(W), L.tensor(IDX, dtype=L.float32), L.tensor(OFF)),
    lambda L: L.embedding_bag(L.tensor(W).long(), L.tensor(IDX), L.tensor(OFF)),
    lambda L: L.embedding_bag(L.ones(10), L.tensor(IDX), L.tensor(OFF)),
    lambda L: L.nn.functional.embedding_bag(L.tensor(IDX.reshape(2, 2)), L.tensor(W),
                                            L.tensor(OFF)),
    lambda L: L.nn.functional.embedding_bag(L.tensor(IDX), L.tensor(W), L.tensor(OFF),
                                            mode="mean", per_sample_weights=L.ones(4)),
    lambda L: L.nn.functional.embedding_bag(L.tensor(IDX), L.tensor(W), L.tensor(OFF),
                                            mode="max", scale_grad_by_freq=True),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_torch(case):
    want = _raised(lambda: ERRORS[case](torch))
    got = _raised(lambda: ERRORS[case](ember))
    assert isinstance(got, next(c for c in type(want).__mro__ if c.__module__ == "builtins")), \
        (got, want)
    if "offsets[" in str(want) or "valid range" in str(want) or "padding_idx" in str(want):
        assert str(want).startswith(str(got))  # torch appends a printed tensor to some


@pytest.mark.parametrize("mode, psw", [(0, False), (0, True), (1, False), (2, False)])
def test_gradcheck_and_no_double_backward_as_torch(mode, psw):
    rng = np.random.default_rng(mode)
    weight = ember.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    idx, offsets = ember.tensor([0, 5, 5, 1, 3, 2]), ember.tensor([0, 2, 2])
    inputs = [weight] + ([ember.tensor(rng.random(6), requires_grad=True)] if psw else [])

    def fn(w, *p):
        return ember.embedding_bag(w, idx, offsets, False, mode, False, p[0] if p else None,
                                   False, 2)[0]
    assert ember.autograd.gradcheck(fn, inputs)
    errors = []
    for lib in (ember, torch):
        xs = [lib.tensor(x.detach().numpy(), requires_grad=True) for x in inputs]
        out = lib.embedding_bag(xs[0], lib.tensor(idx.numpy()), lib.tensor(offsets.numpy()), False,
                                mode, False, xs[1] if psw else None, False, 2)[0]
        g = lib.ones(out.shape, dtype=out.dtype, requires_grad=True)
        grads = lib.autograd.grad(out, xs, g, create_graph=True)
        errors.append(type(_raised(lambda: sum(x.sum() for x in grads).backward())))
    assert errors[0] is errors[1]


def test_2d_indices_with_offsets_raise():
    """torch.embedding_bag reads a 2-D input wrongly (its first dimension as the input's
    length; mean mode can crash); ember refuses it with F.embedding_bag's ValueError."""
    with pytest.raises(ValueError, match="offsets has to be None"):
        ember.embedding_bag(ember.tensor(W), ember.tensor(IDX.reshape(2, 2)), ember.tensor(OFF))
