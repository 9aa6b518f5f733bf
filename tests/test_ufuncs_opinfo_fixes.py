"""Fixes found by running the OpInfo-parametrized (@ops) tests of PyTorch's test_reductions.py,
test_unary_ufuncs.py and test_binary_ufuncs.py on ember, each checked against PyTorch on the same
inputs: all/any with dim=[] reduce nothing; the testing comparison reads uint16/32/64 as int64
before promoting, as PyTorch's does; isclose refuses unbroadcastable shapes with a RuntimeError."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn):
    """(shape, dtype, values) of fn's result, or the exception type it raised."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 -- the type is what is compared
        return type(e).__name__
    return tuple(r.shape), str(r.dtype).split(".")[-1], r.tolist()


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("kwargs", [{"dim": []}, {"dim": [], "keepdim": True}, {"dim": ()},
                                    {"dim": None}, {"dim": [0, 1]}, {"dim": 1}])
@pytest.mark.parametrize("dtype", ["float32", "uint8", "bool"])
def test_all_any_dims(op, kwargs, dtype):
    def run(m):
        t = m.tensor([[0, 1, 2], [3, 0, 5]]).to(getattr(m, dtype))
        return _outcome(lambda: getattr(m, op)(t, **kwargs))
    assert run(ember) == run(torch)


@pytest.mark.parametrize("np_dtype", [np.uint16, np.uint32, np.uint64])
def test_assert_equal_wide_unsigned_reference(np_dtype):
    """A NumPy reference's uint64 sum compared with a tensor's int64 one (exact_dtype=False):
    PyTorch's comparison reads the wide unsigned dtype as int64 instead of refusing to promote."""
    from ember.testing._internal.common_utils import TestCase
    from torch.testing._internal.common_utils import TestCase as TorchTestCase
    for m, case in ((ember, TestCase()), (torch, TorchTestCase())):
        t = m.tensor([[1, 2], [3, 4]], dtype=m.uint8).sum(0)
        case.assertEqual(t, np.array([4, 6], dtype=np_dtype), exact_dtype=False)
        with pytest.raises(AssertionError):
            case.assertEqual(t, np.array([4, 7], dtype=np_dtype), exact_dtype=False)


@pytest.mark.parametrize("shapes", [((2,), (3,)), ((3, 1), (2, 1)), ((1, 3, 2), (3,)), ((2, 1), (3,))])
def test_isclose_broadcasting(shapes):
    """isclose broadcasts as the other binary ops, and refuses unbroadcastable shapes with
    PyTorch's RuntimeError (NumPy's ValueError escaped before)."""
    def run(m):
        a, b = (m.ones(s) for s in shapes)
        return _outcome(lambda: m.isclose(a, b))
    assert run(ember) == run(torch)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_make_tensor_wide_unsigned(dtype):
    """make_tensor makes uint16/32/64 tensors as PyTorch's does (default range [0, 10))."""
    for m in (ember, torch):
        t = m.testing.make_tensor((64,), dtype=getattr(m, dtype), device="cpu")
        assert str(t.dtype).split(".")[-1] == dtype and tuple(t.shape) == (64,)
        assert all(0 <= v < 10 for v in t.tolist())
