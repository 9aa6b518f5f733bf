"""Kernels whose loops are split over threads (ember/_aten/_parallel.py): on arrays big enough
to be split, the results match PyTorch's and are bit-for-bit those of one thread."""
import numpy as np
import pytest

import ember
import ember._aten._parallel as P

torch = pytest.importorskip("torch")


def _run(lib, workers, monkeypatch):
    monkeypatch.setattr(P, "_WORKERS", workers)
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


def test_split_matches_one_thread_bitwise(monkeypatch):
    one = _run(ember, 1, monkeypatch)
    split = _run(ember, 3, monkeypatch)
    for a, b in zip(one, split):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b)


def test_split_matches_torch(monkeypatch):
    ours = _run(ember, 2, monkeypatch)
    theirs = _run(torch, 1, monkeypatch)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)


def test_contiguous_casts_and_keeps_values(monkeypatch):
    monkeypatch.setattr(P, "_WORKERS", 2)
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


def test_num_threads_governs_numpys_blas():
    """One setting for both pools: set_num_threads also limits NumPy's BLAS, as torch's limits
    MKL/OpenMP (no oversubscription of the cores by GEMMs next to ember's own threads)."""
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is in the test extra")
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("NumPy reports no BLAS thread pool")
    saved = ember.get_num_threads()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            assert {i["num_threads"] for i in threadpoolctl.threadpool_info()
                    if i["user_api"] == "blas"} == {n}
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
