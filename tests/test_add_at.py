"""The scatter-add in passes (ember/_aten/add_at.py, Note [Scatter-add in passes]) against
np.add.at, and index_add_ with repeated indices along any dim against torch."""
import numpy as np
import pytest

import ember
from ember._aten.add_at import add_at, index_sum, HEAVY

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n, m, heavy, dtype", [(200, 50, False, np.float64),
                                                (300, 20, True, np.float64),
                                                (100, 1000, False, np.float32),
                                                (0, 5, False, np.float64),
                                                (64, 8, True, np.float16)])
def test_add_at_equals_np_add_at(n, m, heavy, dtype):
    rng = np.random.default_rng(n + m)
    keys = rng.integers(0, m, n)
    if heavy:
        keys[: 2 * HEAVY + 5] = 3  # one key repeated beyond the pass limit
        rng.shuffle(keys)
    rows = rng.standard_normal((n, 4, 2)).astype(dtype)
    start = rng.standard_normal((m, 4, 2)).astype(dtype)
    expected = start.copy()
    np.add.at(expected, keys, rows)
    tol = 1e-2 if dtype == np.float16 else 1e-12
    np.testing.assert_allclose(add_at(start.copy(), (keys,), rows), expected, rtol=tol, atol=tol)
    zeros = np.zeros_like(start)
    np.add.at(zeros, keys, rows)
    np.testing.assert_allclose(index_sum(keys, rows, m), zeros, rtol=tol, atol=tol)


def test_add_at_multi_dim_index_into_strided_out():
    rng = np.random.default_rng(0)
    out = rng.standard_normal((6, 5, 3)).transpose(1, 0, 2)  # (5, 6, 3), not contiguous
    index = (rng.integers(0, 5, 40), rng.integers(0, 6, 40))
    rows = rng.standard_normal((40, 3))
    expected = out.copy()
    np.add.at(expected, index, rows)
    assert add_at(out, index, rows) is out
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_add_with_repeated_indices_equals_torch(dim):
    rng = np.random.default_rng(dim + 5)
    x = rng.standard_normal((5, 6, 7)).astype(np.float32)
    size = x.shape[dim]
    idx = np.r_[rng.integers(0, size, 40), np.zeros(HEAVY + 3, np.int64)]
    shape = list(x.shape)
    shape[dim] = idx.size
    src = rng.standard_normal(shape).astype(np.float32)
    results = [lib.tensor(x).index_add(dim, lib.tensor(idx), lib.tensor(src), alpha=2).numpy()
               for lib in (ember, torch)]
    np.testing.assert_allclose(*results, rtol=1e-5, atol=1e-5)
