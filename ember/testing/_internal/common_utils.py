"""torch.testing._internal.common_utils: PyTorch's TestCase and what its test files import with
it. `assertEqual` compares tensors, NumPy arrays, numbers, booleans and containers of them with
the dtype-based tolerances of `assert_close` (loosened by `precision`/`rel_tol`, which
@precisionOverride / @toleranceOverride set); @parametrize / `instantiate_parametrized_tests`
name the generated tests as PyTorch's do (`test_foo_x_1`). ember has no CUDA, ROCm or Dynamo
test mode, so the decorators that skip under those modes leave the test as it is."""
import collections.abc
import contextlib
import copy
import dataclasses
import enum
import gc
import hashlib
import inspect
import io
import itertools
import math
import os
import pathlib
import random
import re
import shutil
import sys
import tempfile
import unittest
import unittest.mock
import warnings
from functools import wraps

import numpy as np

import ember
from ember.testing import make_tensor  # noqa: F401  (imported from here by test files)
from ember.testing._utils import freeze_rng_state  # noqa: F401  (likewise)
from ember.utils._import_utils import _check_module_exists
from ember.testing._comparison import (BooleanPair, ErrorMeta, NonePair, NumberPair, Pair,
                                       TensorLikePair, UnsupportedInputs, not_close_error_metas)

from ember.testing._internal._matrices import (  # noqa: F401  (imported from here by tests)
    make_fullrank_matrices_with_distinct_singular_values, make_symmetric_matrices,
    make_symmetric_pd_matrices, random_hermitian_matrix, random_hermitian_pd_matrix,
    random_hermitian_psd_matrix, random_lowrank_matrix, random_matrix,
    random_matrix_with_scaled_reduction_dim, random_sparse_matrix, random_sparse_pd_matrix,
    random_square_matrix_of_rank, random_symmetric_matrix, random_symmetric_pd_matrix,
    random_symmetric_psd_matrix, random_well_conditioned_matrix)

try:  # assertExpectedInline, as PyTorch's TestCase has it through expecttest
    import expecttest
    _BaseTestCase = expecttest.TestCase
except ImportError:  # pragma: no cover - the `test` extra installs it
    expecttest = None
    _BaseTestCase = unittest.TestCase

SEED = 1234
IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform.startswith("linux")
IS_PPC = IS_S390X = IS_ARM64 = IS_JETSON = IS_FBCODE = IS_SANDCASTLE = IS_REMOTE_GPU = False
IS_CI = bool(os.environ.get("CI"))
TEST_WITH_ROCM = TEST_WITH_ASAN = TEST_WITH_TSAN = TEST_WITH_UBSAN = False
TEST_WITH_DEV_DBG_ASAN = TEST_WITH_TORCHDYNAMO = TEST_WITH_TORCHINDUCTOR = False
TEST_WITH_AOT_EAGER = TEST_WITH_CROSSREF = TEST_WITH_SLOW_GRADCHECK = False
TEST_WITH_SLOW = os.environ.get("PYTORCH_TEST_WITH_SLOW", "0") == "1"
TEST_SKIP_FAST = os.environ.get("PYTORCH_TEST_SKIP_FAST", "0") == "1"
TEST_CUDA = TEST_MULTIGPU = TEST_CUDNN = TEST_MPS = TEST_XPU = TEST_HPU = TEST_ACCELERATOR = False
TEST_PRIVATEUSE1 = TEST_CUDA_GRAPH = TEST_MKL = TEST_MKLDNN = TEST_CUDA_MEM_LEAK_CHECK = False
TEST_PRIVATEUSE1_DEVICE_TYPE = "privateuseone"   # no PrivateUse1 backend is registered
TEST_NUMPY = True
TEST_LAPACK = True
TEST_SCIPY = True
try:
    import scipy  # noqa: F401
except ImportError:  # pragma: no cover
    TEST_SCIPY = False
TEST_OPT_EINSUM = ember.backends.opt_einsum.is_available()
TEST_DILL = _check_module_exists("dill")
TEST_LIBROSA = _check_module_exists("librosa")
TEST_FAIRSEQ = _check_module_exists("fairseq")
# PyTorch skips its CPU tests when PYTORCH_TESTING_DEVICE_EXCEPT_FOR names cpu
NOTEST_CPU = "cpu" in os.environ.get("PYTORCH_TESTING_DEVICE_EXCEPT_FOR", "").split(",")
NATIVE_DEVICES = ("cpu", "cuda", "meta")
MACOS_VERSION = -1.0   # PyTorch's float of platform.mac_ver(); -1 off macOS
GRADCHECK_NONDET_TOL = 1e-12
IS_FILESYSTEM_UTF8_ENCODING = sys.getfilesystemencoding() == "utf-8"
NO_MULTIPROCESSING_SPAWN = False   # spawn exists on every platform ember runs on
USE_PYTEST = False                 # run_tests runs unittest; PyTorch sets this for --use-pytest
TEST_CUTEDSL = TEST_TRITON_DSL = False   # GPU kernel DSLs; ember has none
# PYTORCH_OPINFO_SAMPLE_INPUT_INDEX=i limits each OpInfo test to its i-th sample input
OPINFO_SAMPLE_INPUT_INDEX = (None if os.environ.get("PYTORCH_OPINFO_SAMPLE_INPUT_INDEX") is None
                             else int(os.environ["PYTORCH_OPINFO_SAMPLE_INPUT_INDEX"]))

numpy_to_torch_dtype_dict = {np.bool_: ember.bool, np.uint8: ember.uint8, np.int8: ember.int8,
                             np.int16: ember.int16, np.int32: ember.int32,
                             np.int64: ember.int64, np.float16: ember.float16,
                             np.float32: ember.float32, np.float64: ember.float64,
                             np.complex64: ember.complex64, np.complex128: ember.complex128,
                             np.uint16: ember.uint16, np.uint32: ember.uint32,
                             np.uint64: ember.uint64}
torch_to_numpy_dtype_dict = {v: k for k, v in numpy_to_torch_dtype_dict.items()}
torch_to_numpy_dtype_dict[ember.bfloat16] = np.float32
# the tolerance older nn tests pass as `prec` per dtype
dtype2prec_DONTUSE = {ember.float: 1e-5, ember.double: 1e-5, ember.half: 1e-2,
                      ember.bfloat16: 1e-1}


def numpy_to_torch_dtype(np_dtype):
    try:
        return numpy_to_torch_dtype_dict[np_dtype]
    except KeyError:
        return numpy_to_torch_dtype_dict[np_dtype.type]


def has_corresponding_torch_dtype(np_dtype):
    try:
        numpy_to_torch_dtype(np_dtype)
        return True
    except KeyError:
        return False


def dtype_name(dtype):
    """`torch.float32` -> "float32", as test names spell dtypes."""
    return str(dtype).split(".")[1]


# ---- seeds, defaults, files ---------------------------------------------------------------
def set_rng_seed(seed=None):
    seed = SEED if seed is None else seed
    ember.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def setLinalgBackendsToDefaultFinally(fn):
    """Run the test, then put the preferred linear-algebra library back as it was."""
    @wraps(fn)
    def wrapper(*args, **kwargs):
        preferred = ember.backends.cuda.preferred_linalg_library()
        try:
            fn(*args, **kwargs)
        finally:
            ember.backends.cuda.preferred_linalg_library(preferred)
    return wrapper


@contextlib.contextmanager
def _setting(get, set_, value):
    """A process-wide setting set to `value` for the block, then put back."""
    saved = get()
    set_(value)
    try:
        yield
    finally:
        set_(saved)


def set_default_dtype(dtype):
    return _setting(ember.get_default_dtype, ember.set_default_dtype, dtype)


def set_warn_always_context(value):
    return _setting(ember.is_warn_always_enabled, ember.set_warn_always, value)


class DeterministicGuard:
    """`with DeterministicGuard(True):` -- deterministic algorithms on, restored after."""

    def __init__(self, deterministic, *, warn_only=False, fill_uninitialized_memory=True):
        self.deterministic, self.warn_only = deterministic, warn_only

    def __enter__(self):
        self.saved = (ember.are_deterministic_algorithms_enabled(),
                      ember.is_deterministic_algorithms_warn_only_enabled())
        ember.use_deterministic_algorithms(self.deterministic, warn_only=self.warn_only)

    def __exit__(self, *exc):
        ember.use_deterministic_algorithms(self.saved[0], warn_only=self.saved[1])


class AlwaysWarnTypedStorageRemoval:
    """`with AlwaysWarnTypedStorageRemoval(True):` -- the TypedStorage deprecation warning is
    given on every use instead of once, restored after."""

    def __init__(self, always_warn):
        if not isinstance(always_warn, bool):
            raise AssertionError(f"expected always_warn to be bool, got {type(always_warn)}")
        self.always_warn = always_warn

    def __enter__(self):
        self.saved = ember.storage._get_always_warn_typed_storage_removal()
        ember.storage._set_always_warn_typed_storage_removal(self.always_warn)

    def __exit__(self, *exc):
        ember.storage._set_always_warn_typed_storage_removal(self.saved)


class CudaSyncGuard:
    """`with CudaSyncGuard(mode):` -- the CUDA sync debug mode, restored after."""

    def __init__(self, sync_debug_mode):
        self.mode = sync_debug_mode

    def __enter__(self):
        self.saved = ember.cuda.get_sync_debug_mode()
        ember.cuda.set_sync_debug_mode(self.mode)

    def __exit__(self, *exc):
        ember.cuda.set_sync_debug_mode(self.saved)


class BytesIOContext(io.BytesIO):
    """A BytesIO usable in `with` that stays open after the block (torch.save/load tests)."""

    def __enter__(self):
        return self

    def __exit__(self, *args):
        pass


def skipCUDAMemoryLeakCheckIf(condition):
    """Marks the test for the CUDA memory-leak check; ember runs no such check."""
    def dec(fn):
        if getattr(fn, "_do_cuda_memory_leak_check", True):
            fn._do_cuda_memory_leak_check = not condition
        return fn
    return dec


def bytes_to_scalar(byte_list, dtype, device):
    """The 0-d tensor of `dtype` on `device` whose bytes (native order) are `byte_list`; a
    complex value's real part is its first half."""
    byte_list = [int(b) for b in byte_list]
    if any(not 0 <= b <= 255 for b in byte_list):
        raise AssertionError(f"byte value out of range: expected 0 <= byte <= 255, got {byte_list}")
    width = dtype.itemsize
    if len(byte_list) != width:
        raise AssertionError(f"expected len(byte_list) == {width}, got {len(byte_list)}")
    if dtype == ember.bool:
        return ember.tensor(bool(byte_list[0]), device=device)
    value = np.frombuffer(bytes(byte_list), dtype=torch_to_numpy_dtype_dict[dtype])[0]
    return ember.tensor(value.item(), dtype=dtype, device=device)


@contextlib.contextmanager
def TemporaryFileName(*args, **kwargs):
    with tempfile.NamedTemporaryFile(*args, **kwargs) as f:
        yield f.name


def download_file(url, binary=True):
    """The test data file at `url`, downloaded once into a cache directory; the test is skipped
    when it cannot be downloaded (no network), as PyTorch's is."""
    from urllib import error, request
    from urllib.parse import urlsplit
    data_dir = os.path.join(tempfile.gettempdir(), "ember_test_data")
    os.makedirs(data_dir, exist_ok=True)
    path = os.path.join(data_dir, os.path.basename(urlsplit(url)[2]))
    if os.path.exists(path):
        return path
    try:
        with request.urlopen(url, timeout=15) as src, open(path, "wb" if binary else "w") as dst:
            dst.write(src.read())
        return path
    except error.URLError as e:
        msg = f"could not download test file '{url}'"
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        raise unittest.SkipTest(msg) from e


@contextlib.contextmanager
def TemporaryDirectoryName(suffix=None):
    path = tempfile.mkdtemp(suffix=suffix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def noncontiguous_like(t):
    """A tensor equal to `t` whose elements are every other one of a larger buffer."""
    if not t.is_contiguous():
        return t
    value = math.nan if t.dtype.is_floating_point or t.dtype.is_complex else 12
    result = t.new_empty(t.shape + (2,))
    result[..., 0] = value
    result[..., 1] = t.detach()
    result = result[..., 1]
    result.requires_grad_(t.requires_grad)
    return result


def iter_indices(tensor):
    """Every index of `tensor`, in row-major order: ints for a 1-d tensor, tuples for more dims,
    none for a 0-d one (as torch's helper of the same name)."""
    if tensor.dim() == 0:
        return range(0)
    if tensor.dim() == 1:
        return range(tensor.size(0))
    return itertools.product(*(range(s) for s in tensor.size()))


def _suite_defaults(kwargs):
    """The test suite's gradcheck defaults: batched gradients and fast mode, unless given."""
    return {"check_batched_grad": True, "fast_mode": True,
            **{k: v for k, v in kwargs.items() if v is not None}}


def gradcheck(fn, inputs, **kwargs):
    """autograd.gradcheck with the test suite's defaults."""
    return ember.autograd.gradcheck(fn, inputs, **_suite_defaults(kwargs))


def gradgradcheck(fn, inputs, grad_outputs=None, **kwargs):
    return ember.autograd.gradgradcheck(fn, inputs, grad_outputs, **_suite_defaults(kwargs))


def _assertGradAndGradgradChecks(test_case, apply_fn, inputs, **kwargs):
    test_case.assertTrue(gradcheck(apply_fn, inputs, **kwargs))
    test_case.assertTrue(gradgradcheck(apply_fn, inputs, **kwargs))


def first_sample(self, samples):
    """The first of an iterable of samples, or a skip when there is none."""
    sample = next(iter(samples), None)
    if sample is None:
        raise unittest.SkipTest("Skipped! Need at least 1 sample input")
    return sample


def coalescedonoff(f):
    """Run a sparse test twice: with coalesced=True, then with coalesced=False."""
    @wraps(f)
    def wrapped(self, *args, **kwargs):
        f(self, *args, **kwargs, coalesced=True)
        f(self, *args, **kwargs, coalesced=False)
    return wrapped


def is_coalesced_indices(s):
    """Whether the sparse COO tensor's indices are sorted and unique (whatever its flag says):
    each column read as one row-major position must strictly increase."""
    indices = s._indices().cpu().numpy()
    sizes = s.shape[:s.sparse_dim()]
    keys = np.ravel_multi_index(tuple(indices), sizes) if indices.shape[1] and sizes else \
        np.zeros(indices.shape[1], np.int64)
    return bool(np.all(np.diff(keys) > 0))


def do_test_dtypes(self, dtypes, layout, device):
    """torch.zeros honours dtype, layout and device for each of `dtypes` (float16 left out)."""
    for dtype in dtypes:
        if dtype != ember.float16:
            out = ember.zeros((2, 3), dtype=dtype, layout=layout, device=device)
            self.assertIs(dtype, out.dtype)
            self.assertIs(layout, out.layout)
            self.assertEqual(device, out.device)


def do_test_empty_full(self, dtypes, layout, device):
    """empty / full and their out=, new_*, *_like forms give the asked shape, dtype, layout,
    requires_grad and fill value, for each of `dtypes` and with an int64 dtype override."""
    shape = ember.Size([2, 3])

    def check(t, dtype, value=None, requires_grad=False):
        self.assertEqual(shape, t.shape)
        self.assertIs(dtype, t.dtype)
        self.assertIs(layout, t.layout)
        self.assertEqual(t.requires_grad, requires_grad)
        if value is not None:
            self.assertEqual(t, t.new(shape).fill_(value))

    default_dtype = ember.get_default_dtype()
    check(ember.empty(shape), default_dtype)
    check(ember.full(shape, -5.), default_dtype)
    int64 = ember.int64
    for dtype in dtypes:
        for rg in {dtype.is_floating_point, False}:
            v = ember.empty(shape, dtype=dtype, device=device, layout=layout, requires_grad=rg)
            check(v, dtype, requires_grad=rg)
            check(ember.empty(shape, out=v.new(), device=device, layout=layout, requires_grad=rg),
                  dtype, requires_grad=rg)
            check(v.new_empty(shape), dtype)
            check(v.new_empty(shape, dtype=int64, device=device, requires_grad=False), int64)
            check(ember.empty_like(v), dtype)
            check(ember.empty_like(v, dtype=int64, layout=layout, device=device, requires_grad=False),
                  int64)
            if dtype is ember.float16 or layout == ember.sparse_coo:
                continue
            v = ember.full(shape, 3, dtype=dtype, layout=layout, device=device, requires_grad=rg)
            check(v, dtype, 3, rg)
            check(v.new_full(shape, 4), dtype, 4)
            check(ember.full(shape, 5, out=v.new(), device=device, layout=layout, requires_grad=rg),
                  dtype, 5, rg)
            check(v.new_full(shape, 6, dtype=int64, device=device, requires_grad=False), int64, 6)
            check(ember.full_like(v, 7), dtype, 7)
            check(ember.full_like(v, 8, dtype=int64, layout=layout, device=device, requires_grad=False),
                  int64, 8)


# ---- decorators ----------------------------------------------------------------------------
def to_gpu(obj, type_map=None):
    """A copy of a (nest of) tensors on CUDA (dtypes mapped through `type_map`), keeping each
    leaf's requires_grad; other objects are deep-copied. ember has no CUDA device, so a tensor
    raises the error its .to("cuda") raises."""
    if isinstance(obj, ember.Tensor):
        with ember.no_grad():
            res = obj.to(dtype=(type_map or {}).get(obj.dtype, obj.dtype), device="cuda",
                         copy=True)
        res.requires_grad = obj.requires_grad
        return res
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_gpu(o, type_map) for o in obj)
    return copy.deepcopy(obj)


def get_function_arglist(func):
    return inspect.getfullargspec(func).args


def is_iterable(obj):
    try:
        iter(obj)
        return True
    except TypeError:
        return False


def is_iterable_of_tensors(iterable, include_empty=False):
    """Whether `iterable` (not a tensor itself) holds only tensors; `include_empty` if empty."""
    if isinstance(iterable, ember.Tensor):
        return False
    try:
        if len(iterable) == 0:
            return include_empty
        return all(isinstance(t, ember.Tensor) for t in iterable)
    except TypeError:
        return False


def clone_input_helper(input):
    """A clone of a tensor, or of each tensor of a sequence (as a tuple)."""
    if isinstance(input, ember.Tensor):
        return ember.clone(input)
    if isinstance(input, collections.abc.Sequence) and not isinstance(input, str):
        return tuple(map(clone_input_helper, input))
    return input


def get_tensors_from(args, kwargs):
    """The set of tensors passed positionally or by keyword (not inside containers)."""
    return ({a for a in args if isinstance(a, ember.Tensor)}
            | {v for v in kwargs.values() if isinstance(v, ember.Tensor)})


def mock_wrapper(method):
    """`method` wrapped so every call is also recorded on `wrapper.mock` (a MagicMock, called
    without `self`): tests patch e.g. Parameter.__new__ with it to see what a constructor made."""
    mock = unittest.mock.MagicMock()

    @wraps(method)
    def wrapper(self, *args, **kwargs):
        mock(*args, **kwargs)
        return method(self, *args, **kwargs)
    wrapper.mock = mock
    return wrapper


def suppress_warnings(fn):
    @wraps(fn)
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    return wrapper


@contextlib.contextmanager
def disable_gc():
    """The garbage collector off inside the block (reference-cycle tests count on it)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def skipCUDANonDefaultStreamIf(condition):
    """Marks whether the test may run on a non-default CUDA stream (ember's CPU tests ignore it)."""
    def dec(fn):
        if getattr(fn, "_do_cuda_non_default_stream", True):
            fn._do_cuda_non_default_stream = not condition
        return fn
    return dec


def scoped_load_inline(func):
    """Passes the test a `load_inline` that builds into a temporary directory of its own."""
    @wraps(func)
    def wrapper(*args, **kwargs):
        def load_inline(*largs, **lkwargs):
            from ember.utils import cpp_extension
            if "build_directory" in lkwargs:
                raise AssertionError(
                    "build_directory should not be specified when using scoped_load_inline")
            with TemporaryDirectoryName() as build_directory:
                return cpp_extension.load_inline(*largs, build_directory=build_directory,
                                                 **lkwargs)
        return func(*args, load_inline=load_inline, **kwargs)
    return wrapper


def _unused_mode(*args, **kwargs):
    """The decorators that act only under a test mode ember does not have (Dynamo, Inductor,
    ROCm, cross-ref, sandcastle...): applied bare (`@skipIfRocm`) or with arguments
    (`@skipIfTorchDynamo("why")`), they leave the test as it is."""
    if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], str):
        return args[0]
    return lambda fn: fn


skipIfTorchDynamo = skipIfTorchInductor = skipIfCrossRef = skipIfRocm = _unused_mode
requires_mkl = unittest.skipIf(not TEST_MKL, "PyTorch is built without MKL support")
xfailIfTorchDynamo = skipIfNoLapack = skipIfSlowGradcheckEnv = skipIfRocmArch = _unused_mode
skipIfMps = skipIfMPS = skipIfXpu = skipIfHpu = skipIfTBB = skipIfLegacyJitExecutor = _unused_mode
serialTest = skipIfNotRegistered = skipRocmIfTorchInductor = skipIfWindows = _unused_mode
skipIfRocmVersionLessThan = skipIfMpsOnMacOS13 = markDynamoStrictTest = _unused_mode
unMarkDynamoStrictTest = _unused_mode
wrapDeterministicFlagAPITest = skipIfPortableMode = _unused_mode
xfailIfS390X = _unused_mode   # an expected failure on IBM Z only
skipIfNoDill = unittest.skipIf(not TEST_DILL, "no dill")
skipIfNoTritonDSL = unittest.skipIf(not TEST_TRITON_DSL, "Triton DSL not available")
skipIfNoCuteDSL = unittest.skipIf(not TEST_CUTEDSL, "CuTeDSL not available")
gcIfJetson = _unused_mode   # frees CUDA memory on Jetson boards only


def skipIfNoSciPy(fn):
    return unittest.skipIf(not TEST_SCIPY, "test require SciPy, but SciPy not found")(fn)


def find_library_location(lib_name):
    """Where a test's native helper library (libtorchbind_test.so, ...) would be: ember's own
    `lib` folder. ember builds no native libraries, so the path names a file that is absent."""
    return pathlib.Path(ember.__file__).resolve().parent / "lib" / lib_name


def slowTest(fn):
    @wraps(fn)
    def wrapper(*args, **kwargs):
        if not TEST_WITH_SLOW:
            raise unittest.SkipTest("test is slow; run with PYTORCH_TEST_WITH_SLOW to enable test")
        return fn(*args, **kwargs)
    wrapper.__dict__["slow_test"] = True
    return wrapper


def slowTestIf(condition):
    return slowTest if condition else (lambda fn: fn)


# ---- tracked inputs: which sample a failing OpInfo test was on ------------------------------
def extract_test_fn():
    """The function of the test running now, found as the `self` of a TestCase frame on the
    stack whose id names one of its test methods; None outside a test. (A plain walk over the
    frames: inspect.stack() also reads every frame's source line, a good part of a second per
    sample generator.)"""
    frame = sys._getframe(1)
    while frame is not None:
        test_case = frame.f_locals.get("self")
        frame = frame.f_back
        if isinstance(test_case, unittest.TestCase):
            *_, cls_name, test_name = test_case.id().rsplit(".", 2)
            if cls_name == type(test_case).__name__ and test_name.startswith("test"):
                method = getattr(test_case, test_name, None)
                return getattr(method, "__func__", None)
    return None


@dataclasses.dataclass
class TrackedInput:
    index: int
    val: object
    type_desc: str


def get_tracked_input():
    return getattr(extract_test_fn(), "tracked_input", None)


def clear_tracked_input():
    test_fn = extract_test_fn()
    if test_fn is not None and hasattr(test_fn, "tracked_input"):
        test_fn.tracked_input = None


class TrackedInputIter:
    """Iterate `child_iter` (sample inputs, error inputs, ...), recording the latest item on the
    running test function (`tracked_input`, where that attribute exists) so that a failure can
    name the input it failed on. `item_callback(item, index)` is what is yielded and
    `track_callback(item)` what is recorded. With `set_seed` the generators are seeded before
    each item from a hash of the test's name, so one sample can be reproduced alone;
    `restrict_to_index` yields only the item of that index."""

    def __init__(self, child_iter, input_type_desc, item_callback=None, track_callback=None,
                 set_seed=True, restrict_to_index=None):
        self.child_iter = enumerate(child_iter)
        self.input_type_desc = input_type_desc
        self.item_callback = item_callback or (lambda item, index: item)
        self.track_callback = track_callback or (lambda item: item)
        self.test_fn = extract_test_fn()
        self.set_seed = set_seed
        self.restrict_to_index = restrict_to_index

    def __iter__(self):
        return self

    def _seed(self):
        if self.test_fn is None:
            return SEED
        digest = hashlib.sha256(self.test_fn.__qualname__.encode("utf-8")).digest()
        return int.from_bytes(digest[:4], "little")

    def __next__(self):
        while True:
            if self.set_seed:
                set_rng_seed(self._seed())
            index, item = next(self.child_iter)
            if self.restrict_to_index is None or index == self.restrict_to_index:
                break
        if self.test_fn is not None and hasattr(self.test_fn, "tracked_input"):
            self.test_fn.tracked_input = TrackedInput(index, self.track_callback(item),
                                                      self.input_type_desc)
        return self.item_callback(item, index)


# ---- parametrization -----------------------------------------------------------------------
class _TestParametrizer:
    """A decorator that gives the test a `parametrize_fn`: test -> (test, name suffix, kwargs,
    decorators) per generated test; stacked ones compose (the product, names top to bottom)."""

    def _parametrize_test(self, test, generic_cls, device_cls):
        raise NotImplementedError

    def __call__(self, fn):
        if hasattr(fn, "parametrize_fn"):
            fn.parametrize_fn = compose_parametrize_fns(fn.parametrize_fn, self._parametrize_test)
        else:
            fn.parametrize_fn = self._parametrize_test
        return fn


def compose_parametrize_fns(old_parametrize_fn, new_parametrize_fn):
    def composite_fn(test, generic_cls, device_cls):
        for old_test, old_name, old_kwargs, old_dec in list(
                old_parametrize_fn(test, generic_cls, device_cls)):
            for new_test, new_name, new_kwargs, new_dec in new_parametrize_fn(
                    old_test, generic_cls, device_cls):
                both = set(old_kwargs) & set(new_kwargs)
                if both:
                    raise RuntimeError(
                        "Parametrization over the same parameter by multiple parametrization "
                        f'decorators is not supported. For test "{test.__name__}", the following '
                        f"parameters are handled multiple times: {both}")
                name = new_name + ("_" if old_name and new_name else "") + old_name
                yield (new_test, name, {**old_kwargs, **new_kwargs},
                       lambda kw, a=old_dec, b=new_dec: list(a(kw)) + list(b(kw)))
    return composite_fn


class subtest:
    """One explicit case of @parametrize: its values, a name, decorators for that case only."""
    __slots__ = ["arg_values", "name", "decorators"]

    def __init__(self, arg_values, name=None, decorators=None):
        self.arg_values = arg_values
        self.name = name
        self.decorators = decorators or []


class parametrize(_TestParametrizer):
    """@parametrize("x,y", [(1, "a"), (2, "b")]): one test per case, named
    `test_foo_x_1_y_a` (or by `name_fn` / a subtest's name)."""

    def __init__(self, arg_str, arg_values, name_fn=None):
        self.arg_names = [s.strip() for s in arg_str.split(",") if s != ""]
        self.arg_values = arg_values
        self.name_fn = name_fn

    @staticmethod
    def _formatted_str_repr(idx, name, value):
        if isinstance(value, ember.dtype):
            return dtype_name(value)
        if isinstance(value, ember.device):
            return str(value)
        if isinstance(value, (int, float, str)):
            return f"{name}_{str(value).replace('.', '_')}"
        return f"{name}{idx}"

    def _parametrize_test(self, test, generic_cls, device_cls):
        if not self.arg_names:
            yield (test, "", {}, lambda _: [])
            return
        empty = True
        for idx, values in enumerate(self.arg_values):
            empty = False
            name, decorators, gen_test = None, [], test
            if isinstance(values, subtest):
                name, decorators, values = values.name, values.decorators, values.arg_values

                @wraps(test)
                def gen_test(*args, __test=test, **kwargs):
                    return __test(*args, **kwargs)
            values = list(values) if len(self.arg_names) > 1 else [values]
            if len(values) != len(self.arg_names):
                raise RuntimeError(f"Expected # values == # arg names, but got: {len(values)} "
                                   f"values and {len(self.arg_names)} names for test "
                                   f'"{test.__name__}"')
            kwargs = dict(zip(self.arg_names, values))
            if not name:
                name = self.name_fn(*values) if self.name_fn else "_".join(
                    self._formatted_str_repr(idx, a, v) for a, v in zip(self.arg_names, values))
            yield (gen_test, name, kwargs, lambda _, d=decorators: d)
        if empty:
            raise ValueError(f"{test}: An empty arg_values was passed to @parametrize. Note that "
                             "this may result from reuse of a generator.")


class SwapTensorsGuard:
    """Within the block, `torch.__future__`'s swap-on-conversion flag is `use_swap_tensors`
    (None: left as it is); restored after."""

    def __init__(self, use_swap_tensors):
        self.use_swap_tensors = use_swap_tensors

    def __enter__(self):
        from ember import __future__ as future
        self.saved = future.get_swap_module_params_on_conversion()
        if self.use_swap_tensors is not None:
            future.set_swap_module_params_on_conversion(self.use_swap_tensors)

    def __exit__(self, *exc):
        from ember import __future__ as future
        future.set_swap_module_params_on_conversion(self.saved)


def wrapSwapTensorsTest(swap=None):
    def dec_fn(fn):
        @wraps(fn)
        def wrapper(*args, **kwargs):
            with SwapTensorsGuard(swap):
                fn(*args, **kwargs)
        return wrapper
    return dec_fn


class swap(_TestParametrizer):
    """@swap([True, False]): the test once per value of the swap-on-conversion flag, named
    `test_foo_swap_True` / `test_foo_swap_False`."""

    def __init__(self, swap_values):
        self.swap_values = swap_values

    def _parametrize_test(self, test, generic_cls, device_cls):
        for value in self.swap_values:
            yield wrapSwapTensorsTest(value)(test), f"swap_{value}", {}, lambda _: []


class decorateIf(_TestParametrizer):
    """Apply `decorator` to the parametrized cases whose kwargs satisfy `predicate`."""

    def __init__(self, decorator, predicate_fn):
        self.decorator, self.predicate_fn = decorator, predicate_fn

    def _parametrize_test(self, test, generic_cls, device_cls):
        # a fresh function per case: a decorator that marks the function it is given must mark
        # this case alone, not the test every other case shares
        @wraps(test)
        def test_wrapper(*args, **kwargs):
            return test(*args, **kwargs)
        yield (test_wrapper, "", {},
               lambda kw: [self.decorator] if self.predicate_fn(kw) else [])


def instantiate_parametrized_tests(generic_cls):
    """Replace each parametrized test of the class by its generated tests."""
    for attr_name in tuple(dir(generic_cls)):
        class_attr = getattr(generic_cls, attr_name)
        if not hasattr(class_attr, "parametrize_fn"):
            continue
        delattr(generic_cls, attr_name)
        for test, suffix, kwargs, decorator_fn in class_attr.parametrize_fn(
                class_attr, generic_cls=generic_cls, device_cls=None):
            name = f"{test.__name__}_{suffix}"

            @wraps(test)
            def instantiated_test(self, __test=test, __kwargs=kwargs):
                __test(self, **__kwargs)
            for decorator in decorator_fn(kwargs):
                instantiated_test = decorator(instantiated_test)
            if hasattr(generic_cls, name):
                raise AssertionError(f"Redefinition of test {name}")
            setattr(generic_cls, name, instantiated_test)
    return generic_cls


# ---- assertEqual's comparison pairs --------------------------------------------------------
class RelaxedBooleanPair(BooleanPair):
    """A boolean against a boolean, a number or a one-element tensor / array."""

    def __init__(self, actual, expected, *, id=(), **other):
        flags, others = (bool, np.bool_), (bool, np.bool_, int, float, complex, np.number,
                                           ember.Tensor, np.ndarray)
        if not (isinstance(actual, flags) and isinstance(expected, others)
                or isinstance(expected, flags) and isinstance(actual, others)):
            raise UnsupportedInputs
        Pair.__init__(self, *(_one_value(x, "boolean", id) for x in (actual, expected)), id=id)
        self.actual, self.expected = bool(self.actual), bool(self.expected)


class RelaxedNumberPair(NumberPair):
    """A number against a number or a one-element tensor / array, types not compared, with
    float32 / complex64 default tolerances for Python floats and complexes."""
    _TYPE_TO_DTYPE = {int: ember.int64, float: ember.float32, complex: ember.complex64}

    def __init__(self, actual, expected, *, id=(), rtol_override=0.0, atol_override=0.0,
                 check_dtype=None, **other):
        numbers = (int, float, complex, np.number, enum.Enum)
        others = numbers + (ember.Tensor, np.ndarray)
        if not (isinstance(actual, numbers) and isinstance(expected, others)
                or isinstance(expected, numbers) and isinstance(actual, others)):
            raise UnsupportedInputs
        actual, expected = (_one_value(x, "number", id) for x in (actual, expected))
        actual, expected = (x.value if isinstance(x, enum.Enum) else x
                            for x in (actual, expected))
        if isinstance(actual, bool) or isinstance(expected, bool):
            actual, expected = int(actual), int(expected)
        super().__init__(actual, expected, id=id, check_dtype=False, **other)
        self.rtol = max(self.rtol, rtol_override)
        self.atol = max(self.atol, atol_override)


def _one_value(x, kind, id):
    """A one-element tensor or array as its Python value (more elements: PyTorch's error)."""
    if isinstance(x, (ember.Tensor, np.ndarray)):
        numel = x.numel() if isinstance(x, ember.Tensor) else x.size
        if numel > 1:
            raise ErrorMeta(ValueError, f"Only single element tensor-likes can be compared against "
                                        f"a {kind}. Got {numel} elements instead.", id=id)
        return x.item()
    return x.item() if isinstance(x, np.number) else x


class TensorOrArrayPair(TensorLikePair):
    """Tensors and NumPy arrays in any mix, both made tensors, whatever their types' relation
    (two unrelated tensor subclasses too); `precision`/`rel_tol` loosen the dtype's default
    tolerances."""

    def __init__(self, actual, expected, *, id=(), rtol_override=0.0, atol_override=0.0,
                 **other):
        super().__init__(actual, expected, id=id, **other)
        self.rtol = max(self.rtol, rtol_override)
        self.atol = max(self.atol, atol_override)

    def _process_inputs(self, actual, expected, *, id, allow_subclasses):
        self._check_inputs_isinstance(actual, expected, cls=(ember.Tensor, np.ndarray))
        actual, expected = (self._to_tensor(x) for x in (actual, expected))
        for tensor in (actual, expected):
            self._check_supported(tensor, id=id)
        return actual, expected


class TypedStoragePair(TensorLikePair):
    """Two TypedStorages, compared as the 1-D tensors of their elements."""

    def __init__(self, actual, expected, *, id=(), rtol_override=0.0, atol_override=0.0,
                 **other):
        self._check_inputs_isinstance(actual, expected, cls=ember.storage.TypedStorage)
        super().__init__(actual, expected, id=id, **other)
        self.rtol = max(self.rtol, rtol_override)
        self.atol = max(self.atol, atol_override)

    def _to_tensor(self, typed_storage):
        if not isinstance(typed_storage, ember.storage.TypedStorage):
            return super()._to_tensor(typed_storage)
        dtype = _QUANTIZED_AS_INT.get(typed_storage.dtype, typed_storage.dtype)
        return ember.empty(0, dtype=dtype, device=typed_storage.device).set_(
            typed_storage._untyped_storage)


_QUANTIZED_AS_INT = {ember.quint8: ember.uint8, ember.quint4x2: ember.uint8,
                     ember.quint2x4: ember.uint8, ember.qint32: ember.int32, ember.qint8: ember.int8}


class UnittestPair(Pair):
    """Other leaves, compared by unittest's assertEqual."""
    CLS = object
    TYPE_NAME = None

    def __init__(self, actual, expected, *, id=(), **other):
        self._check_inputs_isinstance(actual, expected, cls=self.CLS)
        super().__init__(actual, expected, id=id)

    def compare(self):
        case = unittest.TestCase()
        try:
            return case.assertEqual(self.actual, self.expected)
        except case.failureException as error:
            msg = str(error)
        name = self.TYPE_NAME or (self.CLS if isinstance(self.CLS, type) else self.CLS[0]).__name__
        self._fail(AssertionError, f"{name.title()} comparison failed: {msg}")


class StringPair(UnittestPair):
    CLS = (str, bytes)
    TYPE_NAME = "string"


class SetPair(UnittestPair):
    CLS = set


class TypePair(UnittestPair):
    CLS = type


class ObjectPair(UnittestPair):
    CLS = object


_PAIRS = (NonePair, RelaxedBooleanPair, RelaxedNumberPair, TensorOrArrayPair, TypedStoragePair,
          StringPair, SetPair,
          TypePair, ObjectPair)


# ---- TestCase ------------------------------------------------------------------------------
class TestCase(_BaseTestCase):
    """unittest.TestCase with PyTorch's assertEqual, seeded before each test (SEED)."""
    _precision = 0
    _rel_tol = 0
    maxDiff = None
    _ignore_not_implemented_error = False

    @property
    def precision(self):
        return self._precision

    @precision.setter
    def precision(self, value):
        self._precision = value

    @property
    def rel_tol(self):
        return self._rel_tol

    @rel_tol.setter
    def rel_tol(self, value):
        self._rel_tol = value

    @staticmethod
    def run_process_no_exception(code, env=None):
        """Run `code` in a fresh Python process with torch meaning ember: (stdout, stderr)."""
        import subprocess
        env = dict(os.environ if env is None else env)
        root = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        proc = subprocess.Popen([sys.executable, "-m", "ember", "-c", code],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        return proc.communicate()

    @staticmethod
    def runWithPytorchAPIUsageStderr(code):
        env = dict(os.environ, PYTORCH_API_USAGE_STDERR="1")
        env.pop("CI", None)
        env.pop("TEST_SHOWLOCALS", None)
        _stdout, stderr = TestCase.run_process_no_exception(code, env=env)
        return stderr.decode("ascii")

    def setUp(self):
        set_rng_seed()
        self._prev_grad_state = ember.is_grad_enabled()
        # every sparse tensor a test builds has its invariants checked, unless the test opts
        # out (check_invariants=False, or the check_sparse_tensor_invariants(False) decorator)
        self._check_invariants = ember.sparse.check_sparse_tensor_invariants.is_enabled()
        ember.sparse.check_sparse_tensor_invariants.enable()

    def tearDown(self):
        ember.set_grad_enabled(self._prev_grad_state)
        if hasattr(self, "_check_invariants"):   # (a subclass's setUp may not call ours)
            checks = ember.sparse.check_sparse_tensor_invariants
            checks.enable() if self._check_invariants else checks.disable()

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True,
                    exact_dtype=True, exact_device=False, exact_layout=False,
                    exact_stride=False, exact_is_coalesced=False):
        __tracebackhide__ = True
        if any(isinstance(v, np.ndarray) and not has_corresponding_torch_dtype(v.dtype)
               for v in (x, y)):
            x, y = (v.tolist() if isinstance(v, (ember.Tensor, np.ndarray)) else list(v)
                    for v in (x, y))
        elif isinstance(x, ember.Tensor) and isinstance(y, collections.abc.Sequence):
            y = ember.as_tensor(y, dtype=x.dtype, device=x.device)
        elif isinstance(x, collections.abc.Sequence) and isinstance(y, ember.Tensor):
            x = ember.as_tensor(x, dtype=y.dtype, device=y.device)
        # strided nested tensors are compared component by component
        x, y = (v.unbind() if isinstance(v, ember.Tensor) and v.is_nested and
                v.layout == ember.strided else v for v in (x, y))
        nn, data = ember.nn, ember.utils.data
        options = dict(pair_types=_PAIRS,
                       sequence_types=(collections.abc.Sequence, nn.Sequential, nn.ModuleList,
                                       nn.ParameterList, data.Subset),
                       mapping_types=(collections.abc.Mapping, nn.ModuleDict, nn.ParameterDict),
                       rtol=rtol, rtol_override=self.rel_tol, atol=atol,
                       atol_override=self.precision, equal_nan=equal_nan,
                       check_device=exact_device, check_dtype=exact_dtype,
                       check_layout=exact_layout, check_stride=exact_stride)
        message = (lambda generated: f"{generated}\n{msg}") \
            if isinstance(msg, str) and self.longMessage else msg
        error_metas = not_close_error_metas(x, y, **options)
        if error_metas:
            raise error_metas[0].to_error(message) from None

    def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **kwargs):
        with self.assertRaises(AssertionError, msg=msg):
            self.assertEqual(x, y, msg, atol=atol, rtol=rtol, **kwargs)

    def assertEqualIgnoreType(self, *args, **kwargs):
        return self.assertEqual(*args, exact_dtype=False, **kwargs)

    def assertEqualBroadcasting(self, x, y, *args, **kwargs):
        if not isinstance(y, collections.abc.Iterable):
            y = ember.ones_like(x) * y
        if not isinstance(y, ember.Tensor):
            y = ember.ones_like(x) * ember.tensor(y)
        return self.assertEqual(x, y, *args, **kwargs)

    def assertEqualTypeString(self, x, y):
        self.assertEqual(x.device, y.device)
        self.assertEqual(x.dtype, y.dtype)
        self.assertEqual(x.is_sparse, y.is_sparse)

    def assertObjectIn(self, obj, iterable):
        if not any(id(obj) == id(elem) for elem in iterable):
            raise AssertionError("object not found in iterable")

    @contextlib.contextmanager
    def assertWarnsOnceRegex(self, category, regex=""):
        """The block warns (PyTorch's once-only warnings included) with `category` and a
        message matching `regex`."""
        pattern = re.compile(regex)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            with set_warn_always_context(True):
                yield
            if not ws:
                self.fail("no warning caught")
            self.assertTrue(any(type(w.message) is category for w in ws))
            self.assertTrue(any(re.match(pattern, str(w.message)) for w in ws),
                            f"{pattern}, {[w.message for w in ws if type(w.message) is category]}")

    def assertNotWarn(self, callable, msg=""):
        """Calling `callable()` raises no warning (PyTorch's once-only warnings included)."""
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            with set_warn_always_context(True):
                callable()
        self.assertTrue(len(ws) == 0, msg or [(str(w.message), w.filename, w.lineno) for w in ws])

    def genSparseTensor(self, size, sparse_dim, nnz, is_uncoalesced, device, dtype):
        """A random sparse COO tensor of `size` with `nnz` entries drawn in [-1, 1), and
        copies of its indices and values; uncoalesced ones repeat the first half of the
        indices."""
        if not (all(size[d] > 0 for d in range(sparse_dim)) or nnz == 0):
            raise AssertionError(f"invalid arguments: size={size}, sparse_dim={sparse_dim}, "
                                 f"nnz={nnz}")
        values = make_tensor([nnz] + list(size[sparse_dim:]), device=device, dtype=dtype,
                             low=-1, high=1)
        indices = ember.rand(sparse_dim, nnz, device=device)
        indices.mul_(ember.tensor(size[:sparse_dim]).unsqueeze(1).to(indices))
        indices = indices.to(ember.long)
        if is_uncoalesced:
            indices = ember.cat([indices[:, :nnz // 2], indices[:, :(nnz + 1) // 2]], 1)
        x = ember.sparse_coo_tensor(indices, values, ember.Size(size), dtype=dtype,
                                    device=device)
        x = x.detach().clone()._coalesced_(False) if is_uncoalesced else x.coalesce()
        return x, x._indices().clone(), x._values().clone()

    def generate_simple_inputs(self, layout, **kwargs):
        """Small tensors (or their constructors' arguments, output_tensor=False) that stand
        for the same values in every layout: see ember/testing/_internal/_sparse_inputs.py."""
        from ember.testing._internal._sparse_inputs import simple_inputs
        return simple_inputs(self, layout, **kwargs)

    def safeToDense(self, t):
        """t as a strided tensor (a COO tensor coalesced first)."""
        if t.layout == ember.sparse_coo:
            t = t.coalesce()
        return t.to_dense()

    def assertExpected(self, s, subname=None):
        """`s` equals the text recorded for this test in the test file's expect/ directory
        (expect/<Class>.<test>[-subname].expect); with expecttest's --accept (or
        EXPECTTEST_ACCEPT=1) the file is written instead."""
        if not isinstance(s, str):
            raise TypeError("assertExpected is strings only")
        module_id = type(self).__module__
        munged_id = self.id()[len(module_id) + 1:] if self.id().startswith(module_id + ".") \
            else self.id()
        test_file = os.path.realpath(sys.modules[module_id].__file__)
        expected_file = os.path.join(os.path.dirname(test_file), "expect", munged_id)
        if subname:
            expected_file += "-" + subname
        expected_file += ".expect"
        accept = expecttest is not None and expecttest.ACCEPT
        try:
            with open(expected_file) as f:
                expected = f.read()
        except FileNotFoundError:
            if not accept:
                raise RuntimeError(f"I got this output for {munged_id}:\n\n{s}\n\nNo expect "
                                   f"file exists ({expected_file}); to accept the current "
                                   "output, run with --accept") from None
            expected = None
        if accept and expected != s:
            os.makedirs(os.path.dirname(expected_file), exist_ok=True)
            with open(expected_file, "w") as f:
                f.write(s)
            return
        self.assertMultiLineEqual(expected, s)

    @contextlib.contextmanager
    def assertLeaksNoCudaTensors(self, name=None):
        yield

    def assertNoUnraisable(self, callable, *args, **kwargs):
        raised = []
        saved = sys.unraisablehook
        sys.unraisablehook = raised.append
        try:
            callable(*args, **kwargs)
        finally:
            sys.unraisablehook = saved
        self.assertEqual(raised, [])

    if expecttest is None:
        def assertExpectedInline(self, actual, expect, skip=0):
            self.assertMultiLineEqual(expect, actual)

    def compare_with_reference(self, torch_fn, ref_fn, sample_input, **kwargs):
        """torch_fn on the sample against ref_fn (a NumPy reference) on its NumPy form."""
        numpy_sample = sample_input.numpy()
        actual = torch_fn(sample_input.input, *sample_input.args, **sample_input.kwargs)
        expected = ref_fn(numpy_sample.input, *numpy_sample.args, **numpy_sample.kwargs)
        self.assertEqual(actual, expected, exact_device=False, **kwargs)

    def compare_with_numpy(self, torch_fn, np_fn, tensor_like, device=None, dtype=None,
                           **kwargs):
        """torch_fn on a tensor against np_fn on the same values as an array."""
        if isinstance(tensor_like, ember.Tensor):
            t_cpu = tensor_like.detach().cpu()
            if t_cpu.dtype is ember.bfloat16:  # NumPy has no bfloat16: compare in float32
                t_cpu = t_cpu.float()
            a = t_cpu.numpy()
            t = tensor_like
        else:
            a = np.array(tensor_like, dtype=torch_to_numpy_dtype_dict[dtype])
            t = ember.tensor(tensor_like, device=device, dtype=dtype)
        np_result = np_fn(a)
        torch_result = torch_fn(t).cpu()
        if isinstance(np_result, np.ndarray):
            np_result = ember.from_numpy(np.ascontiguousarray(np_result)
                                         if np_result.strides and min(np_result.strides) < 0
                                         else np_result)
            if t.dtype is ember.bfloat16 and torch_result.dtype is ember.bfloat16 and \
                    np_result.dtype is ember.float32:
                torch_result = torch_result.to(ember.float32)
        self.assertEqual(np_result, torch_result, **kwargs)


class TestGradients(TestCase):
    """Base of PyTorch's OpInfo gradient tests (test_ops_gradients.py, test_ops_fwd_gradients.py):
    gradcheck / gradgradcheck over each of an op's sample inputs.

    gradcheck takes a function of tensors only, while a sample holds its differentiable tensors
    anywhere: the input, a list in the input, an arg, a kwarg. So each sample is split into the
    tensors that require grad (gradcheck's inputs) and a function that puts them back in place."""
    exact_dtype = True

    def _get_safe_inplace(self, inplace_variant):
        """The in-place variant applied to a clone, so the leaf that requires grad is not modified."""
        @wraps(inplace_variant)
        def _fn(t, *args, **kwargs):
            return inplace_variant(t.clone(), *args, **kwargs)
        return _fn

    def _check_helper(self, device, dtype, op, variant, check, *, check_forward_ad=False,
                      check_backward_ad=True, check_batched_grad=None,
                      check_batched_forward_grad=False):
        if check not in ("gradcheck", "bwgrad_bwgrad", "fwgrad_bwgrad"):
            raise AssertionError(f"check must be one of ('gradcheck', 'bwgrad_bwgrad', "
                                 f"'fwgrad_bwgrad'), got {check!r}")
        if variant is None:
            self.skipTest("Skipped! Variant not implemented.")
        if not op.supports_dtype(dtype, ember.device(device).type):
            self.skipTest(f"Skipped! {op.name} does not support dtype {dtype}")
        inplace = op.get_inplace()
        is_inplace = getattr(variant, "__wrapped__", variant) is inplace
        samples = op.sample_inputs(device, dtype, requires_grad=True,
                                   include_conjugated_inputs=op.test_conjugated_samples
                                   and dtype.is_complex)
        for sample in samples:
            if sample.broadcasts_input and is_inplace:
                continue
            fn, gradcheck_args = _gradcheck_function(op, variant, sample)
            for t in gradcheck_args:
                self.assertIsNone(t.grad, "A sampled input has a gradient before running "
                                  "autograd: a tensor is shared between SampleInputs.")
            if check == "gradcheck":
                self.assertTrue(gradcheck(
                    fn, gradcheck_args,
                    check_batched_grad=op.check_batched_grad if check_batched_grad is None
                    else check_batched_grad,
                    check_grad_dtypes=True, nondet_tol=op.gradcheck_nondet_tol,
                    fast_mode=op.gradcheck_fast_mode, check_forward_ad=check_forward_ad,
                    check_backward_ad=check_backward_ad, check_undefined_grad=True,
                    check_batched_forward_grad=check_batched_forward_grad))
                continue
            self.assertFalse(check_forward_ad, msg="Cannot run forward AD check for gradgradcheck")
            for non_contig in (False, True):
                kwargs = dict(gen_non_contig_grad_outputs=non_contig,
                              check_batched_grad=op.check_batched_gradgrad,
                              check_grad_dtypes=True, nondet_tol=op.gradcheck_nondet_tol,
                              fast_mode=op.gradcheck_fast_mode)
                if check == "fwgrad_bwgrad":
                    kwargs.update(check_fwd_over_rev=True, check_rev_over_rev=False,
                                  check_batched_grad=False, check_undefined_grad=False)
                self.assertTrue(gradgradcheck(fn, gradcheck_args, **kwargs))

    def _grad_test_helper(self, device, dtype, op, variant, **kwargs):
        return self._check_helper(device, dtype, op, variant, "gradcheck", **kwargs)

    def _skip_helper(self, op, device, dtype):
        if dtype not in op.supported_backward_dtypes(ember.device(device).type):
            self.skipTest("Skipped! Op doesn't support autograd for this dtype.")
        if not op.supports_autograd and not op.supports_forward_ad:
            self.skipTest("Skipped! autograd not supported.")


def _gradcheck_function(op, variant, sample):
    """(fn, tensors): `tensors` are the sample's tensors that require grad, in order (input,
    args, kwargs; a tensor list counts each member); fn(*tensors) calls the op with them put
    back where they came from and applies the sample's output_process_fn_grad."""
    def requiring_grad(x):
        return isinstance(x, ember.Tensor) and x.requires_grad

    slots = [sample.input, *sample.args, *sample.kwargs.values()]
    tensors = tuple(t for x in slots
                    for t in (x if is_iterable_of_tensors(x) else (x,)) if requiring_grad(t))

    def fn(*inputs):
        it = iter(inputs)

        def refill(x):
            if is_iterable_of_tensors(x):
                return [next(it) if requiring_grad(t) else t for t in x]
            return next(it) if requiring_grad(x) else x

        args = [refill(x) for x in (sample.input, *sample.args)]
        kwargs = {k: refill(v) for k, v in sample.kwargs.items()}
        output = op.gradcheck_wrapper(variant, *args, **kwargs)
        if sample.output_process_fn_grad is not None:
            return sample.output_process_fn_grad(output)
        return output

    return fn, tensors


def load_tests(loader, tests, pattern):
    """unittest's load_tests protocol, as test files re-export it: the module's tests, minus
    the empty groups (PyTorch's also shards here; ember runs every test)."""
    suite = unittest.TestSuite()
    for group in tests:
        if group.countTestCases():
            suite.addTest(group)
    return suite


def run_tests(argv=None):
    """Run the calling module's tests (unittest's runner; pytest collects them too)."""
    unittest.main(module="__main__", argv=argv or sys.argv)
