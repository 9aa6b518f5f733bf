"""Regressions from running PyTorch's test/test_testing.py on ember: isclose's closeness rule,
assert_close on sparse compressed tensors, 8-bit floats and unexpected errors, the device-type
filtering environment variables, and `python -m ember -c` running its code as __main__.
Each case runs in ember and in torch and compares what comes out."""
import math
import subprocess
import sys
import unittest.mock

import pytest

import ember

torch = pytest.importorskip("torch")


# ---- isclose ---------------------------------------------------------------------------------
SQRT2, SQRT_HALF = math.sqrt(2), math.sqrt(0.5)
ISCLOSE_CASES = [
    # integers past 2**53 (float64's exact range): zero tolerances compare them exactly
    ("int64", [2 ** 53], [2 ** 53 + 1], dict(rtol=0, atol=0)),
    # with tolerances integers are compared in the default float dtype (float32)
    ("int64", [16777217, 2 ** 40 + 3], [16777216, 2 ** 40], dict(rtol=0, atol=0.5)),
    ("uint8", [1, 255], [255, 1], dict(rtol=0.5, atol=1.5)),
    ("int8", [100, -1], [-100, 1], dict(rtol=2.5, atol=0)),
    ("bool", [True, False], [False, False], dict(rtol=0, atol=1)),
    ("float16", [1.0, 1.0], [1.0 + 2 ** -10, 1.0 + 2 ** -10], dict(rtol=0, atol=2 ** -10)),
    # on the boundary: the complex moduli must be correctly rounded (hypot)
    ("complex128", [complex(-SQRT2, SQRT2)], [complex(-SQRT_HALF, SQRT_HALF)], dict(rtol=.5, atol=.5)),
    ("complex64", [complex(2, 4)], [complex(1., 8.8523607)], dict(rtol=.5, atol=.5)),
    ("complex64", [complex(2, 4)], [complex(1., 8.8523607 + 1e-6)], dict(rtol=.5, atol=.5)),
    ("complex128", [complex(math.nan, 1), complex(1, 1)], [complex(1, math.nan), complex(1, math.nan)],
     dict(equal_nan=True)),
    ("float32", [math.inf, -math.inf, math.nan, 1.0], [math.inf, math.inf, math.nan, math.nan],
     dict(equal_nan=True)),
]


@pytest.mark.parametrize("dtype, a, b, kwargs", ISCLOSE_CASES)
def test_isclose_matches_torch(dtype, a, b, kwargs):
    got = ember.isclose(ember.tensor(a, dtype=getattr(ember, dtype)),
                        ember.tensor(b, dtype=getattr(ember, dtype)), **kwargs)
    want = torch.isclose(torch.tensor(a, dtype=getattr(torch, dtype)),
                         torch.tensor(b, dtype=getattr(torch, dtype)), **kwargs)
    assert got.dtype == ember.bool
    assert got.tolist() == want.tolist()


# ---- assert_close ----------------------------------------------------------------------------
def _outcome(lib, make):
    try:
        make(lib)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return type(e).__name__, str(e)
    return None


def _close(*args, **kwargs):
    return lambda lib: lib.testing.assert_close(*(a(lib) for a in args), **kwargs)


def _csr(crow, col, values):
    return lambda lib: lib.sparse_csr_tensor(crow, col, values, size=(2, 2))


def _csc(ccol, row, values):
    return lambda lib: lib.sparse_csc_tensor(ccol, row, values, size=(2, 2))


def _bsr(crow, col, values):
    return lambda lib: lib.sparse_bsr_tensor(crow, col, values, size=(2, 2))


def _bsc(ccol, row, values):
    return lambda lib: lib.sparse_bsc_tensor(ccol, row, values, size=(2, 2))


def _f8(values, dtype="float8_e4m3fn"):
    return lambda lib: lib.tensor(values).to(getattr(lib, dtype))


ASSERT_CLOSE_CASES = {
    "csr_equal": _close(_csr((0, 1, 2), (1, 0), (1, 2)), _csr((0, 1, 2), (1, 0), (1, 2))),
    "csr_crow_indices": _close(_csr((0, 1, 2), (0, 1), (1, 2)), _csr((0, 2, 2), (0, 1), (1, 2))),
    "csr_col_indices": _close(_csr((0, 1, 2), (1, 0), (1, 2)), _csr((0, 1, 2), (1, 1), (1, 2))),
    "csr_nnz": _close(_csr((0, 1, 2), (0, 1), (1, 2)), _csr((0, 1, 1), (0,), (1,))),
    "csc_values": _close(_csc((0, 1, 2), (1, 0), (1., 2.)), _csc((0, 1, 2), (1, 0), (1., 3.))),
    "csc_ccol_indices": _close(_csc((0, 1, 2), (0, 1), (1, 2)), _csc((0, 2, 2), (0, 1), (1, 2))),
    "bsr_col_indices": _close(_bsr((0, 1, 2), (1, 0), ([[1]], [[2]])),
                              _bsr((0, 1, 2), (1, 1), ([[1]], [[2]]))),
    "bsc_values": _close(_bsc((0, 1, 2), (1, 0), ([[1]], [[2]])),
                         _bsc((0, 1, 2), (1, 0), ([[1]], [[3]]))),
    "layout": _close(lambda lib: lib.zeros(2, 2), lambda lib: lib.zeros(2, 2).to_sparse_csr()),
    "layout_unchecked": _close(lambda lib: lib.eye(2), lambda lib: lib.eye(2).to_sparse_csr(),
                               check_layout=False),
    "float8_bitwise": _close(_f8([1., 2., 3.]), _f8([1., 2.5, 4.]), rtol=0, atol=0),
    "float8_tolerances": _close(_f8([1., 2.], "float8_e5m2"), _f8([1., 3.], "float8_e5m2"),
                                rtol=0.1, atol=0.1),
    "stride": _close(lambda lib: lib.zeros(2, 3), lambda lib: lib.zeros(3, 2).t(), check_stride=True),
    "big_integers": _close(lambda lib: lib.tensor([2 ** 53]), lambda lib: lib.tensor([2 ** 53 + 1])),
}


@pytest.mark.parametrize("name", ASSERT_CLOSE_CASES)
def test_assert_close_matches_torch(name):
    make = ASSERT_CLOSE_CASES[name]
    assert _outcome(ember, make) == _outcome(torch, make)


def test_assert_close_float8_mismatch_names_first_index():
    assert _outcome(ember, ASSERT_CLOSE_CASES["float8_bitwise"]) == (
        "AssertionError", "Tensor-likes are not 'equal'!\n\nMismatched elements: 2 / 3 (66.7%)\n"
                          "The first mismatched element is at index (1,).")


class _Unexpected(Exception):
    pass


@pytest.mark.parametrize("method", ["__init__", "compare"])
def test_assert_close_unexpected_error_is_runtime_error(method):
    """A comparison pair failing with anything but ErrorMeta is a bug of the comparison: it
    surfaces as a RuntimeError chained to the original exception."""
    outcomes = []
    for lib, module in ((ember, "ember.testing._comparison"), (torch, "torch.testing._comparison")):
        with unittest.mock.patch(f"{module}.TensorLikePair.{method}", side_effect=_Unexpected):
            with pytest.raises(RuntimeError, match="unexpected exception") as info:
                lib.testing.assert_close(lib.tensor(1.0), lib.tensor(1.0))
        outcomes.append((type(info.value.__cause__), str(info.value).splitlines()[0]))
    assert outcomes[0] == outcomes[1]


def test_not_close_error_metas_collects_every_failure():
    from ember.testing._comparison import NumberPair, not_close_error_metas
    from torch.testing._comparison import NumberPair as TorchNumberPair
    from torch.testing._comparison import not_close_error_metas as torch_metas
    got = not_close_error_metas([1, 2, 3], [1, 5, 6], pair_types=(NumberPair,))
    want = torch_metas([1, 2, 3], [1, 5, 6], pair_types=(TorchNumberPair,))
    assert [(m.type, m.msg, m.id) for m in got] == [(m.type, m.msg, m.id) for m in want]


# ---- the harness -----------------------------------------------------------------------------
# (torch's answers on a CPU-only machine, written out: importing torch's harness costs seconds)
@pytest.mark.parametrize("env, expected", [
    ({}, ["cpu"]),
    ({"PYTORCH_TESTING_DEVICE_ONLY_FOR": "cpu"}, ["cpu"]),
    ({"PYTORCH_TESTING_DEVICE_EXCEPT_FOR": "cpu"}, []),
    ({"PYTORCH_TESTING_DEVICE_ONLY_FOR": "cuda", "PYTORCH_TESTING_DEVICE_EXCEPT_FOR": "cuda"},
     "device ({'cuda'}) appeared in both except_for and only_for"),
])
def test_device_type_environment_filters(monkeypatch, env, expected):
    from ember.testing._internal import common_device_type
    for key in ("PYTORCH_TESTING_DEVICE_ONLY_FOR", "PYTORCH_TESTING_DEVICE_EXCEPT_FOR"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        got = [b.device_type for b in common_device_type.get_desired_device_type_test_bases()]
    except AssertionError as e:
        got = str(e)
    assert got == expected


def test_dash_c_code_is_main_module(tmp_path):
    """`python -m ember -c CODE` runs CODE as module __main__, as `python -c` does: unittest's
    main() finds the tests it defines."""
    code = ("import unittest\n"
            "class T(unittest.TestCase):\n"
            "    def test_a(self):\n"
            "        import torch; self.assertIn('ember', torch.__file__)\n"
            "unittest.main()\n")
    out = subprocess.run([sys.executable, "-m", "ember", "-c", code], capture_output=True,
                         text=True, cwd=tmp_path, timeout=120)
    assert "Ran 1 test" in out.stderr and "OK" in out.stderr, out.stderr


# ---- torch._assert_tensor_metadata (PyTorch's test_comparison_utils.py) ------------------------
@pytest.mark.parametrize("args, kwargs", [
    (([3, 2], [1, 3], "float32"), {}),
    ((None, None, None), {}),
    (([2, 3],), {}),
    ((None, [1, 2]), {}),
    ((None, None, "int64"), {}),
    ((None, None, None), {"device": "meta"}),
    ((), {"layout": "sparse_csr"}),
])
def test_assert_tensor_metadata_matches_torch(args, kwargs):
    def run(lib):
        a = [getattr(lib, x) if isinstance(x, str) else x for x in args]
        kw = {k: getattr(lib, v) if k == "layout" else v for k, v in kwargs.items()}
        try:
            return lib._assert_tensor_metadata(lib.zeros(2, 3).t(), *a, **kw)
        except RuntimeError as e:
            return str(e)
    assert run(ember) == run(torch)


@pytest.mark.parametrize("dtype", ["int64", "uint16", "uint64", "float16", "complex64"])
def test_assert_tensor_metadata_names_the_c_type(dtype):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            lib._assert_tensor_metadata(lib.zeros(1, dtype=getattr(lib, dtype)), dtype=lib.float32)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# ---- from a newer test_testing.py: devices, memory formats, decorateIf -------------------------
def test_device_never_equals_a_string():
    """torch.device("cpu") == "cpu" is False; a string naming no device compares without error
    (OpInfo.supported_dtypes asks `device_type == "privateuse1"` of a device)."""
    for other in ("cpu", "privateuse1", "not a device", 1):
        assert (ember.device("cpu") == other) is (torch.device("cpu") == other)
        assert (ember.device("cpu") != other) is (torch.device("cpu") != other)
    assert ember.device("cpu") == ember.device("cpu")
    assert {ember.device("cpu"): 1}[ember.device("cpu")] == 1


def test_preserve_format_contiguity():
    """is_contiguous(preserve_format) asks for the default layout; contiguous(preserve_format)
    refuses only a tensor it would have to copy."""
    def run(lib):
        x = lib.zeros(2, 3, 4)
        p = x.permute(2, 0, 1)
        out = [x.is_contiguous(memory_format=lib.preserve_format),
               p.is_contiguous(memory_format=lib.preserve_format),
               x.contiguous(memory_format=lib.preserve_format) is x]
        try:
            p.contiguous(memory_format=lib.preserve_format)
        except RuntimeError as e:
            out.append(str(e))
        t = lib.testing.make_tensor((2, 3), dtype=lib.float32, device="cpu",
                                    memory_format=lib.preserve_format)
        return out + [t.is_contiguous()]
    assert run(ember) == run(torch)


def test_decorate_if_marks_only_its_cases():
    """decorateIf over @parametrize: a decorator that marks the function it is given marks the
    selected case only (each case gets its own function), as in PyTorch's harness."""
    from ember.testing._internal import common_device_type as device_type
    from ember.testing._internal import common_utils as harness

    def names_marked():
        def mark(fn):
            fn._marked = True
            return fn

        class TestP(harness.TestCase):
            @harness.decorateIf(mark, lambda p: p["x"] == 1 and p["y"])
            @harness.parametrize("x", range(3))
            @harness.parametrize("y", [False, True])
            def test_param(self, x, y):
                pass

        scope = {"TestP": TestP}
        device_type.instantiate_device_type_tests(TestP, scope, only_for="cpu")
        return sorted(k for k, v in vars(scope["TestPCPU"]).items()
                      if k.startswith("test_") and getattr(v, "_marked", False))
    assert names_marked() == ["test_param_x_1_y_True_cpu"]


def test_lazy_modules_are_imported_on_first_use():
    for name in ember._lazy_modules:
        assert getattr(ember, name).__name__ == f"ember.{name}"


def test_any_one_dtype_reaches_the_float8_types():
    """@ops(..., dtypes=OpDTypes.any_one) picks a float8 dtype for an op that supports only
    those (torch._scaled_mm's OpInfo), as PyTorch's ANY_DTYPE_ORDER ends with them."""
    from ember.testing._internal.common_device_type import (OpDTypes, instantiate_device_type_tests,
                                                            ops)
    from ember.testing._internal.common_utils import TestCase

    class FakeOp:
        formatted_name = "float8_only"

        def supported_dtypes(self, device_type):
            return {ember.float8_e5m2, ember.float8_e4m3fn}

        def supported_backward_dtypes(self, device_type):
            return set()

        def get_decorators(self, *args):
            return []

    class TestAnyOne(TestCase):
        @ops([FakeOp()], dtypes=OpDTypes.any_one)
        def test_x(self, device, dtype, op):
            pass

    scope = {"TestAnyOne": TestAnyOne}
    instantiate_device_type_tests(TestAnyOne, scope, only_for="cpu")
    assert [k for k in vars(scope["TestAnyOneCPU"]) if k.startswith("test_")] == \
        ["test_x_float8_only_cpu_float8_e4m3fn"]
