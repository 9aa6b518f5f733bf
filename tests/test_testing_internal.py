"""torch.testing._internal: a test file written in PyTorch's own harness style (TestCase,
@parametrize, instantiate_device_type_tests with @dtypes, the per-device decorators, assertEqual's
tolerances and relaxed comparisons) is run under torch and under ember; the generated test names
and every test's outcome (pass / fail / skip / error) are the same."""
import io
import types
import unittest

import pytest

torch = pytest.importorskip("torch")

SOURCE = '''
import numpy as np
import LIB as torch
from LIB.testing import make_tensor
from LIB.testing._internal.common_utils import (
    TestCase, parametrize, subtest, instantiate_parametrized_tests, run_tests, slowTest,
    skipIfTorchDynamo, suppress_warnings, set_default_dtype, freeze_rng_state, gradcheck,
    numpy_to_torch_dtype_dict, TemporaryFileName, noncontiguous_like,
    TEST_PRIVATEUSE1_DEVICE_TYPE, BytesIOContext, AlwaysWarnTypedStorageRemoval, TEST_DILL,
    skipIfNoDill, IS_FILESYSTEM_UTF8_ENCODING, NO_MULTIPROCESSING_SPAWN)
from LIB.testing._internal.common_device_type import (
    instantiate_device_type_tests, dtypes, dtypesIfCPU, onlyCPU, onlyCUDA, skipMeta,
    onlyNativeDeviceTypes, precisionOverride, toleranceOverride, tol, skipCPUIf,
    deviceCountAtLeast, expectedFailureMeta, largeTensorTest)
from LIB.testing._internal.common_dtype import (
    all_types_and_complex_and, floating_types, integral_types, floating_and_complex_types_and,
    get_all_dtypes, all_types_and)


class TestHarness(TestCase):
    def test_numbers_and_tensors(self):
        self.assertEqual(1, torch.tensor([1.0]))
        self.assertEqual(torch.tensor(2.0), 2)
        self.assertEqual(True, torch.tensor(1))
        self.assertEqual([1, 2], torch.tensor([1, 2]))
        self.assertEqual(torch.zeros(2, 3).shape, (2, 3))
        self.assertEqual({"a": torch.ones(2)}, {"a": torch.ones(2)})

    def test_float_tolerance(self):
        self.assertEqual(torch.tensor([1.0]), torch.tensor([1.0 + 1e-6]))

    def test_float_tolerance_fails(self):
        self.assertEqual(torch.tensor([1.0]), torch.tensor([1.001]))

    def test_exact_dtype_fails(self):
        self.assertEqual(torch.ones(2), torch.ones(2, dtype=torch.float64))

    def test_exact_dtype_off(self):
        self.assertEqual(torch.ones(2), torch.ones(2, dtype=torch.float64), exact_dtype=False)

    def test_numpy_array(self):
        self.assertEqual(torch.arange(3), np.arange(3))

    def test_numpy_dtype_mismatch_fails(self):
        self.assertEqual(torch.arange(3.0), np.arange(3.0))

    def test_nan_equal(self):
        self.assertEqual(torch.tensor([float("nan")]), torch.tensor([float("nan")]))
        self.assertEqual(float("nan"), float("nan"))

    def test_nan_unequal_fails(self):
        self.assertEqual(torch.tensor([float("nan")]), torch.tensor([float("nan")]),
                         equal_nan=False)

    def test_atol_rtol(self):
        self.assertEqual(torch.tensor([1.0]), torch.tensor([1.5]), atol=0.6, rtol=0)

    def test_shape_mismatch_fails(self):
        self.assertEqual(torch.ones(2), torch.ones(3))

    def test_many_elements_against_number_errors(self):
        self.assertEqual(torch.ones(2), 1)

    def test_not_equal(self):
        self.assertNotEqual(torch.ones(2), torch.zeros(2))
        self.assertNotEqual(1, 2)

    def test_compare_with_numpy_bfloat16(self):
        x = torch.tensor([[1.5, -4.0625], [2.0, 3.0]], dtype=torch.bfloat16)
        self.compare_with_numpy(torch.amin, np.amin, x)          # NumPy gives a scalar
        self.compare_with_numpy(lambda t: t.amax(0), lambda a: a.max(0), x)  # an array
        self.compare_with_numpy(lambda t: t.flip(1), lambda a: np.flip(a, 1), x)
        self.assertEqual(TEST_PRIVATEUSE1_DEVICE_TYPE, "privateuseone")

    def test_strings_and_types(self):
        self.assertEqual("abc", "abc")
        self.assertEqual(torch.float32, torch.float32)
        self.assertEqual({1, 2}, {2, 1})

    def test_string_mismatch_fails(self):
        self.assertEqual("abc", "abd")

    def test_raises_regex(self):
        with self.assertRaisesRegex(RuntimeError, "must match the size"):
            torch.ones(2) + torch.ones(3)

    def test_seeded(self):
        self.assertEqual(torch.rand(1), torch.tensor([0.0290]), atol=1e-4, rtol=0)

    def test_set_default_dtype(self):
        with set_default_dtype(torch.float64):
            self.assertEqual(torch.ones(1).dtype, torch.float64)
        self.assertEqual(torch.ones(1).dtype, torch.float32)

    def test_freeze_rng_state(self):
        with freeze_rng_state():
            a = torch.rand(3)
        self.assertEqual(torch.rand(3), a)

    def test_gradcheck(self):
        x = torch.randn(3, dtype=torch.float64, requires_grad=True)
        self.assertTrue(gradcheck(torch.sin, (x,)))

    def test_noncontiguous_like(self):
        t = torch.arange(6.0).reshape(2, 3)
        n = noncontiguous_like(t)
        self.assertFalse(n.is_contiguous())
        self.assertEqual(n, t)

    def test_numpy_dtype_dict(self):
        self.assertEqual(numpy_to_torch_dtype_dict[np.float32], torch.float32)

    def test_warns_once(self):
        with self.assertWarnsOnceRegex(UserWarning, "hello"):
            import warnings
            warnings.warn("hello there")

    @slowTest
    def test_slow(self):
        pass

    @skipIfTorchDynamo("not relevant")
    def test_dynamo_skip_is_inert(self):
        pass

    @parametrize("x", [1, 2.5, "a"])
    def test_param(self, x):
        self.assertNotEqual(x, 2)

    @parametrize("x,y", [(1, 2), subtest((3, 3), name="same"), (5, 6)])
    def test_param_pairs(self, x, y):
        self.assertLess(x, y)

    @parametrize("n", [0, 1], name_fn=lambda n: f"n{n}")
    @parametrize("dtype", [torch.float32, torch.int64])
    def test_param_stacked(self, n, dtype):
        self.assertEqual(torch.zeros(n, dtype=dtype).numel(), n)

    def test_not_warn(self):
        self.assertNotWarn(lambda: torch.ones(2) + 1)

    def test_not_warn_fails_on_a_warning(self):
        import warnings
        self.assertNotWarn(lambda: warnings.warn("boo"))

    def test_typed_storages_compare(self):
        self.assertEqual(torch.arange(3.).storage(), torch.arange(3.).storage())
        with AlwaysWarnTypedStorageRemoval(True):
            self.assertNotEqual(torch.arange(3.).storage(), torch.ones(3).storage())

    def test_bytes_io_context(self):
        with BytesIOContext() as f:
            torch.save(torch.ones(2), f)
        f.seek(0)
        self.assertEqual(torch.load(f), torch.ones(2))

    @skipIfNoDill
    def test_needs_dill(self):
        self.assertTrue(TEST_DILL)


instantiate_parametrized_tests(TestHarness)


class TestDevices(TestCase):
    exact_dtype = True

    def test_device_only(self, device):
        self.assertEqual(torch.ones(1, device=device).device.type, "cpu")

    @dtypes(torch.float32, torch.float64, torch.int64)
    def test_dtypes(self, device, dtype):
        t = make_tensor((3, 4), dtype=dtype, device=device, low=-5, high=5)
        self.assertEqual(t.dtype, dtype)
        self.assertEqual(t + 0, t)

    @dtypes(*all_types_and_complex_and(torch.half, torch.bool))
    def test_all_types(self, device, dtype):
        self.assertEqual(torch.zeros(2, dtype=dtype, device=device).dtype, dtype)

    @dtypes(*floating_types())
    @dtypesIfCPU(torch.float64)
    def test_dtypes_if_cpu(self, device, dtype):
        self.assertEqual(dtype, torch.float64)

    @dtypes((torch.float32, torch.int64), (torch.int32, torch.float64))
    def test_dtype_pairs(self, device, dtypes):
        a, b = torch.ones(2, dtype=dtypes[0]), torch.ones(2, dtype=dtypes[1])
        self.assertEqual((a + b).dtype, torch.promote_types(*dtypes))

    @onlyCPU
    def test_only_cpu(self, device):
        pass

    @onlyCUDA
    def test_only_cuda(self, device):
        pass

    @skipMeta
    @onlyNativeDeviceTypes
    def test_native(self, device):
        pass

    @skipCPUIf(True, "skipped on CPU")
    def test_skip_cpu_if(self, device):
        pass

    @precisionOverride({torch.float32: 0.1})
    @dtypes(torch.float32, torch.float64)
    def test_precision_override(self, device, dtype):
        self.assertEqual(torch.tensor([1.0], dtype=dtype), torch.tensor([1.05], dtype=dtype))

    @toleranceOverride({torch.float64: tol(atol=0.2, rtol=0)})
    @dtypes(torch.float32, torch.float64)
    def test_tolerance_override(self, device, dtype):
        self.assertEqual(torch.tensor([1.0], dtype=dtype), torch.tensor([1.1], dtype=dtype))

    @parametrize("k", [1, 2])
    @dtypes(torch.float32)
    def test_param_and_dtypes(self, device, dtype, k):
        self.assertEqual(torch.ones(k, dtype=dtype, device=device).sum(), k)

    @deviceCountAtLeast(1)
    def test_devices(self, devices):
        self.assertEqual(devices, ["cpu"])

    @expectedFailureMeta
    def test_expected_failure_meta(self, device):
        pass

    @largeTensorTest("100000GB")
    def test_large(self, device):
        pass

    def helper_not_a_test(self):
        return 1

    def test_uses_helper(self, device):
        self.assertEqual(self.helper_not_a_test(), 1)


instantiate_device_type_tests(TestDevices, globals())
'''


def _run(lib):
    """{test id: outcome} of SOURCE's tests under `lib` ("torch" or "ember")."""
    module = types.ModuleType(f"harness_{lib}")
    exec(compile(SOURCE.replace("LIB", lib), f"<harness {lib}>", "exec"), module.__dict__)
    suite = unittest.TestSuite()
    for obj in list(module.__dict__.values()):
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase) and \
                obj.__module__ == module.__name__:
            suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(obj))
    outcomes = {t.id().split(".", 1)[1]: "pass" for t in _tests(suite)}
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    for kind, entries in (("fail", result.failures), ("error", result.errors),
                          ("skip", result.skipped)):
        for test, _ in entries:
            outcomes[test.id().split(".", 1)[1]] = kind
    return outcomes, module


def _tests(suite):
    todo, out = [suite], []
    while todo:
        s = todo.pop()
        if isinstance(s, unittest.TestSuite):
            todo.extend(s)
        else:
            out.append(s)
    return out


@pytest.fixture(scope="module")
def outcomes():
    return _run("torch"), _run("ember")


def test_same_tests_generated(outcomes):
    (theirs, tm), (ours, om) = outcomes
    assert sorted(ours) == sorted(theirs)
    assert "TestDevices" not in om.__dict__ and "TestDevicesCPU" in om.__dict__


@pytest.mark.parametrize("kind", ["pass", "fail", "error", "skip"])
def test_same_outcomes(outcomes, kind):
    (theirs, _), (ours, _) = outcomes
    assert {k for k, v in ours.items() if v == kind} == {k for k, v in theirs.items() if v == kind}
    assert any(v == kind for v in theirs.values())  # the harness exercises every outcome

