"""Fixes found by running PyTorch's test/test_indexing.py on ember: the uint8-mask deprecation
warning, the message for an index into a size-0 dim, float slice bounds (TypeError), a zero
slice step, `del x[i]` (TypeError), and x[uint8_mask] = scalar (RuntimeError, as PyTorch's
masked_fill_ route), shape mismatch named before a dtype mismatch in index_put, index_fill
with a complex value, take_along_dim's Long-indices check. Each compares ember with torch."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")

from _ported import error_line as _err  # noqa: E402


@pytest.mark.parametrize("case", [
    lambda L: L.empty(10, 0)[:, [0, 1]],
    lambda L: L.ones(3, 3)[0.0:2.0],
    lambda L: L.ones(3, 3)[0:2.0],
    lambda L: L.ones(3, 3)[::1.0],
    lambda L: L.ones(3, 3)[L.tensor(0.5):2],
    lambda L: L.ones(3, 3)[0.0, 0.0:2.0],
    lambda L: L.ones(3)[4:1:0],
    lambda L: L.ones(3)[4:1:-1],
    lambda L: L.ones(5, 2).__setitem__(L.tensor([1, 0, 1, 0, 0], dtype=L.uint8), 0.0),
    lambda L: L.ones(5, 2).__setitem__(L.tensor([1, 0, 1, 0, 0], dtype=L.uint8), L.ones(1)),
    lambda L: L.arange(4).__setitem__(L.arange(4) > -1, L.tensor([])),
    lambda L: L.arange(4).__setitem__(L.arange(4) > -1, L.tensor([1.0, 2.0, 3.0])),
    lambda L: L.arange(4).__setitem__(L.arange(4) > -1, L.tensor([1.0, 2.0, 3.0, 4.0])),
    lambda L: L.tensor([[1, 2], [4, 5]]).index_fill_(1, L.tensor([0]), 1 + 1j),
    lambda L: L.tensor([[1.0, 2], [4, 5]]).index_fill(1, L.tensor([0]), L.tensor(1j)),
    lambda L: L.take_along_dim(L.ones(2, 3), L.zeros(2, 3, dtype=L.int32), dim=0),
    lambda L: L.take_along_dim(L.ones(2, 3), L.zeros(2, 3, dtype=L.bool)),
    lambda L: L.take_along_dim(L.ones(2, 3), L.zeros(3, dtype=L.float32), dim=0),
    lambda L: L.take_along_dim(L.ones(2, 3), L.zeros(2, 3, dtype=L.float32), dim=1),
])
def test_index_errors_as_torch(case):
    assert _err(case, torch) is not None
    assert _err(case, ember) == _err(case, torch)


def test_slice_bounds_with_index():
    for lib in (torch, ember):
        x = lib.arange(10)
        i, j = lib.tensor([1, 7], dtype=lib.int32)
        assert x[i:j:lib.tensor(2)].tolist() == [1, 3, 5]


def test_delitem_is_type_error():
    for lib in (torch, ember):
        x = lib.ones(3)
        with pytest.raises(TypeError, match="Tensor does not support deleting items"):
            del x[0]


def test_uint8_mask_warns_once_per_mask():
    counts = []
    for lib in (torch, ember):
        v = lib.randn(5, 7, 3)
        m1 = lib.tensor([1, 0, 1, 1, 0], dtype=lib.uint8)
        m2 = lib.tensor([1, 1, 1], dtype=lib.uint8)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            shape = tuple(v[m1, :, m2].shape)
            v[m1] = lib.zeros(7, 3)
            v[v > 0] = 1.0   # a bool mask does not warn
        counts.append((shape, [(x.category, str(x.message)[:60]) for x in w]))
    assert counts[0] == counts[1]
    assert len(counts[0][1]) == 3
