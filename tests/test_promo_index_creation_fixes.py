"""Fixes found by running PyTorch's test/test_type_promotion.py, test/test_indexing.py and parts of
test/test_tensor_creation_ops.py whole on ember.

The uint8-mask deprecation warning names the user's line (as PyTorch's C++ warnings do), so under
the default "once per location" filter two indexing lines give two warnings, not one."""
import warnings

import numpy as np

import pytest

import ember

torch = pytest.importorskip("torch")


def _uint8_mask_warnings(lib):
    v = lib.tensor([True, False, True])
    mask = lib.tensor([1, 0, 0], dtype=lib.uint8)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("default")
        first = v[mask]
        second = v[mask]   # another line: warned again
        for _ in range(2):
            v[mask]        # the same line twice: warned once
    assert first.tolist() == second.tolist() == [True]
    # PyTorch appends "(Triggered internally at <C++ file>)" to the message
    return [(x.category, str(x.message).split(" (Triggered")[0].strip(), x.filename, x.lineno)
            for x in w]


def test_uint8_mask_warning_points_at_caller():
    got, want = _uint8_mask_warnings(ember), _uint8_mask_warnings(torch)
    assert len(want) == 3
    assert got == want
    assert all(filename == __file__ for _, _, filename, _ in got)


def _error(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 -- the type and message are what is compared
        return type(e), str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("case", [
    lambda L: L.empty_strided((2,), ()),
    lambda L: L.empty_strided((2, 3), (1,)),
    lambda L: L.empty_strided((2,), (), device="meta"),
    lambda L: L.tensor(-4.827, dtype=L.float64).new_empty_strided((2,), ()),
])
def test_empty_strided_rank_mismatch_as_torch(case):
    want = _error(case, torch)
    assert want is not None and want[0] is RuntimeError
    assert _error(case, ember) == want


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "bartlett_window",
                                  "blackman_window", "kaiser_window"])
@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
def test_window_sparse_layout_raises_as_torch(name, dtype):
    # the layout is checked before the dtype, as in PyTorch's window_function_checks
    def call(lib):
        dt = getattr(lib, dtype) if dtype else None
        getattr(lib, name)(3, dtype=dt, layout=lib.sparse_coo)
    want = _error(call, torch)
    assert want[0] is RuntimeError
    assert _error(call, ember)[0] is RuntimeError
    prefix = f"{name} is not implemented for sparse types, got: "
    assert want[1].startswith(prefix) and _error(call, ember)[1].startswith(prefix)
    assert getattr(ember, name)(3, layout=ember.strided).tolist() == pytest.approx(
        getattr(torch, name)(3, layout=torch.strided).tolist())


@pytest.mark.parametrize("make", [
    lambda: memoryview(b"ab"),
    lambda: memoryview(np.arange(3, dtype=np.float32)),
    lambda: memoryview(np.array([True, False])),
    lambda: memoryview(np.arange(6, dtype=np.int32).reshape(2, 3)),
])
@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_tensor_from_memoryview_as_torch(make, factory):
    # PyTorch reads a memoryview as a sequence of Python numbers (so int32 items become int64,
    # float32 ones the default dtype); one of more than one dimension has no shape to it
    want = _error(lambda L: getattr(L, factory)(make()), torch)
    if want is not None:
        assert _error(lambda L: getattr(L, factory)(make()), ember) == want
        return
    got, ref = getattr(ember, factory)(make()), getattr(torch, factory)(make())
    assert str(got.dtype) == str(ref.dtype) and got.tolist() == ref.tolist()
