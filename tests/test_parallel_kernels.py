"""Kernels whose loops are split over threads (ember/_aten/_parallel.py): on arrays big enough
to be split, the results match PyTorch's and, for elementwise loops, are bit-for-bit those of
one thread."""
import numpy as np
import pytest

import ember
import ember._aten._parallel as P

torch = pytest.importorskip("torch")


def _run(lib, workers, monkeypatch):
    monkeypatch.setattr(P, "_WORKERS", workers)
    monkeypatch.setattr(P, "MIN_ELEMENTS", 1 << 12)   # these arrays split, though small
    monkeypatch.setattr(P, "_pool", None)
    F = lib.nn.functional
    g = np.random.default_rng(0)
    arrays = [g.standard_normal(s).astype(np.float32) for s in
              ((16, 8, 30, 30), (12, 8, 3, 3), (12,), (16, 12, 28, 28))]
    x, w, b, up = [lib.tensor(a, requires_grad=True) for a in arrays]
    y = F.relu(F.conv2d(x, w, b))
    p = F.max_pool2d(y, 2)
    z = F.conv2d(x, w, stride=2, padding=1)
    (p.square().sum() + (z * z).sum() + (F.relu(up) * y).sum()).backward()
    return [t.detach().numpy() for t in (y, p, z, x.grad, w.grad, b.grad, up.grad)]


def test_split_matches_one_thread(monkeypatch):
    """Elementwise, pooling and col2im splits give the same bits; the convolution products,
    split by rows over the threads (each block one single-threaded BLAS call), agree to
    rounding (OpenBLAS rounds a row block differently from the whole), and the same thread
    count always gives the same bits."""
    one = _run(ember, 1, monkeypatch)
    split = _run(ember, 3, monkeypatch)
    assert P._pool is not None   # the loops were split: the pool started
    again = _run(ember, 3, monkeypatch)
    for a, b, c in zip(one, split, again):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-3)
        assert np.array_equal(b, c)


def test_split_matches_torch(monkeypatch):
    ours = _run(ember, 2, monkeypatch)
    theirs = _run(torch, 1, monkeypatch)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)


def test_contiguous_casts_and_keeps_values(monkeypatch):
    monkeypatch.setattr(P, "_WORKERS", 2)
    monkeypatch.setattr(P, "MIN_ELEMENTS", 1 << 12)
    a = np.arange(2 * 300 * 400, dtype=np.float64).reshape(2, 300, 400).transpose(2, 0, 1)
    r = P.contiguous(a, np.float32)
    assert r.flags.c_contiguous and r.dtype == np.float32
    assert np.array_equal(r, a.astype(np.float32))
    assert P.contiguous(r) is r


def test_num_threads_setting():
    """get/set_num_threads drive the intra-op split; bad counts raise as in torch."""
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        x = ember.randn(64, 32, 26, 26)
        one = ember.relu(x)
        ember.set_num_threads(2)
        assert ember.get_num_threads() == 2
        assert ember.equal(ember.relu(x), one)
        for bad in (0, -1):
            with pytest.raises(RuntimeError, match="positive integer"):
                ember.set_num_threads(bad)
    finally:
        ember.set_num_threads(saved)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int64"])
@pytest.mark.parametrize("shapes", [((300, 200), (200, 120)), ((3, 130, 90), (90, 70)),
                                    ((130, 90), (2, 90, 70)), ((97, 300), (300, 101)),
                                    ((40, 64), (64, 500)), ((2, 20, 30), (30, 400))])
def test_split_product_is_one_products_bitwise(monkeypatch, dtype, shapes):
    """A big matmul's rows -- or, wider than tall, its columns -- over threads (each block
    one BLAS call) give the single call's values: exactly for integers; for floats up to
    rounding, as OpenBLAS's blocking depends on the block it is given (its own threads split
    a product the same way)."""
    monkeypatch.setattr(P, "_WORKERS", 3)
    monkeypatch.setattr(P, "_MIN_PRODUCT", 1)
    g = np.random.default_rng(0)
    a, b = (g.standard_normal(s).astype(dtype) for s in shapes)
    b = b.swapaxes(-1, -2).copy().swapaxes(-1, -2)  # a transposed operand splits as well
    out = np.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]),
                   dtype)
    assert P.matmul(a, b, out) is out
    if dtype == "int64":
        np.testing.assert_array_equal(out, np.matmul(a, b))
    else:
        np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-5 if "64" in dtype else 1e-4,
                                   atol=1e-4 if dtype != "float64" else 1e-12)
    again = np.empty_like(out)
    np.testing.assert_array_equal(P.matmul(a, b, again), out)  # the same split, the same bits


def test_linear_layers_split_match_torch(monkeypatch):
    monkeypatch.setattr(P, "_WORKERS", 2)
    monkeypatch.setattr(P, "_MIN_PRODUCT", 1)
    g = np.random.default_rng(1)
    x, w, b = (g.standard_normal(s).astype(np.float32) for s in ((64, 300), (40, 300), (40,)))
    grads = []
    for lib in (ember, torch):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.linear(xs, ws, lib.tensor(b))
        z = lib.addmm(lib.tensor(b), xs, ws.t()) + lib.bmm(xs[None], ws.t()[None])[0]
        (y.square().sum() + z.sum()).backward()
        grads.append([t.detach().numpy() for t in (y, z, xs.grad, ws.grad)])
    for a, t in zip(*grads):
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-3)


def test_numpys_blas_is_held_at_one_thread():
    """ember's own threads split products; NumPy's BLAS pool stays at one thread whatever
    set_num_threads says (Note at the top of _parallel.py: no pool multiplies another)."""
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is in the test extra")
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("NumPy reports no BLAS thread pool")
    saved = ember.get_num_threads()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            assert ember.get_num_threads() == n
            assert {i["num_threads"] for i in threadpoolctl.threadpool_info()
                    if i["user_api"] == "blas"} == {1}
    finally:
        ember.set_num_threads(saved)


def test_inf_and_nan_results_are_silent_as_in_torch():
    """PyTorch's kernels never warn on overflow or invalid values; neither do ember's, also on
    the intra-op threads of a split loop."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = ember.full((1 << 18,), 3e38)
        for lib_x, t_x in ((ember.tensor([3e38, -1.0, 0.0]), torch.tensor([3e38, -1.0, 0.0])),
                           (big, torch.full((1 << 18,), 3e38))):
            ours = [lib_x * 10, lib_x.log(), lib_x / 0, lib_x.half()]
            theirs = [t_x * 10, t_x.log(), t_x / 0, t_x.half()]
            for a, b in zip(ours, theirs):
                np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("other", ["tensor", "scalar", "int_overflow"])
def test_big_binary_ops_split_match_torch_bitwise(monkeypatch, other):
    """add / mul / sub of big same-shape operands (or a scalar) are written into their block
    by the threads, a slice each: the same bits as one thread and as PyTorch; a Python int
    out of the dtype's range still takes the general path (and PyTorch's error)."""
    g = np.random.default_rng(1)
    a = g.standard_normal((4, 300, 200)).astype(np.float32)   # 240k elements: split
    b = g.standard_normal(a.shape).astype(np.float32)
    ints = (g.integers(-100, 100, a.shape)).astype(np.int8)
    monkeypatch.setattr(P, "MIN_ELEMENTS", 1 << 12)
    for workers in (1, 3):
        monkeypatch.setattr(P, "_WORKERS", workers)
        monkeypatch.setattr(P, "_pool", None)
        for lib_op in ("add", "mul", "sub"):
            if other == "int_overflow":
                results = []
                for L in (ember, torch):
                    try:
                        results.append(getattr(L, lib_op)(L.from_numpy(ints), 1000).numpy())
                    except RuntimeError as e:
                        results.append(type(e))
                assert type(results[0]) is type(results[1])
                if isinstance(results[0], np.ndarray):
                    assert results[0].dtype == results[1].dtype
                    assert np.array_equal(results[0], results[1])
                continue
            o = b if other == "tensor" else 2.5
            e = getattr(ember, lib_op)(ember.from_numpy(a),
                                       ember.from_numpy(o) if other == "tensor" else o)
            t = getattr(torch, lib_op)(torch.from_numpy(a),
                                       torch.from_numpy(o) if other == "tensor" else o)
            assert e.dtype == ember.float32 and e.shape == tuple(t.shape)
            assert np.array_equal(e.numpy().view(np.uint32), t.numpy().view(np.uint32))
        assert (P._pool is not None) == (workers > 1)   # split when there are threads


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_relu_against_zero_blocks_matches_torch_bit_for_bit(monkeypatch, workers, dtype):
    # Note [relu against a block of zeros]: several chunks (a partial last one), split over
    # threads or not; -0.0 kept, NaN and infinities as torch's, in place too
    from ember._aten import elementwise
    monkeypatch.setattr(P, "_WORKERS", workers)
    monkeypatch.setattr(P, "MIN_ELEMENTS", 1 << 12)
    monkeypatch.setattr(P, "_pool", None)
    monkeypatch.setattr(elementwise, "_ZERO_CHUNK", 1000)
    monkeypatch.setattr(elementwise, "_zero_blocks", {})
    special = [-0.0, 0.0, np.nan, -np.inf, np.inf, -1e-30, 1e-30]
    a = np.random.default_rng(0).standard_normal(4567)
    a[:len(special)] = special
    a[-len(special):] = special
    a = a.astype(dtype)
    want = torch.from_numpy(a.copy()).relu().numpy()
    for x in (ember.from_numpy(a.copy()), ember.from_numpy(a.reshape(1, -1).copy())):
        got = x.relu().numpy().reshape(-1)
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))
        x.relu_()
        assert np.array_equal(x.numpy().reshape(-1).view(np.uint8), want.view(np.uint8))


def test_thread_team_raises_a_parts_error_nests_and_shares(monkeypatch):
    # the intra-op team (_parallel._Team): a part's exception reaches the caller and leaves the
    # team usable; a loop inside a part, or started from another thread while one runs, runs
    # alone on its thread; a larger thread count gets a larger team
    import threading
    monkeypatch.setattr(P, "_WORKERS", 2)
    monkeypatch.setattr(P, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(P, "_pool", None)

    def failing(index):
        if index[0].start:
            raise ValueError("part failed")
    with pytest.raises(ValueError, match="part failed"):
        P.parallel_for(failing, (8,), 8)
    seen = []
    P.parallel_for(lambda i: seen.append(i), (8,), 8)
    assert sorted(i[0].start for i in seen) == [0, 4]

    inner = []

    def outer(index):
        P.parallel_for(lambda i: inner.append((index[0].start, i)), (6,), 6)
    P.parallel_for(outer, (8,), 8)
    assert sorted(inner, key=lambda t: t[0]) == [(0, (Ellipsis,)), (4, (Ellipsis,))]

    started, release = threading.Event(), threading.Event()
    other = []

    def slow(index):
        if index[0].start == 0:
            started.set()
            release.wait(10)
    t = threading.Thread(target=P.parallel_for, args=(slow, (8,), 8))
    t.start()
    assert started.wait(10)
    P.parallel_for(lambda i: other.append(i), (8,), 8)   # the team is busy: alone
    release.set()
    t.join(10)
    assert other == [(Ellipsis,)] and not t.is_alive()

    monkeypatch.setattr(P, "_WORKERS", 3)
    parts = []
    P.parallel_for(lambda i: parts.append(i[0].start), (9,), 9)
    assert sorted(parts) == [0, 3, 6] and len(P._pool.workers) == 2
