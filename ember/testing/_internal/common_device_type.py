"""torch.testing._internal.common_device_type: `instantiate_device_type_tests` turns a generic
test class into one class per device type (ember: `TestFooCPU`), each test into one per dtype
of its @dtypes (`test_bar_cpu_float32`), called with `device` (and `dtype`), with the
per-device decorators (@onlyCPU, @onlyCUDA, @skipMeta, @precisionOverride, ...) as PyTorch's.
ember's only device type is the CPU: tests limited to other devices are skipped, and the
decorators that act on other devices alone leave a CPU test as it is."""
import inspect
import os
import unittest
from collections import namedtuple
from enum import Enum
from functools import wraps

import ember
from .common_utils import (NATIVE_DEVICES, TEST_WITH_ROCM, TestCase,  # noqa: F401
                           _TestParametrizer, _unused_mode, compose_parametrize_fns, dtype_name)

PYTORCH_CUDA_MEMCHECK = os.getenv("PYTORCH_CUDA_MEMCHECK", "0") == "1"
# environment variables that narrow the device types instantiated, as comma-separated lists
# (`PYTORCH_TESTING_DEVICE_ONLY_FOR=cpu`), on top of the call's only_for / except_for
PYTORCH_TESTING_DEVICE_ONLY_FOR_KEY = "PYTORCH_TESTING_DEVICE_ONLY_FOR"
PYTORCH_TESTING_DEVICE_EXCEPT_FOR_KEY = "PYTORCH_TESTING_DEVICE_EXCEPT_FOR"
# the float8 formats scaled-matmul tests use (ROCm's fnuz variants do not arise: no ROCm)
e4m3_type, e5m2_type = ember.float8_e4m3fn, ember.float8_e5m2
E4M3_MAX_POS = ember.finfo(e4m3_type).max
E5M2_MAX_POS = ember.finfo(e5m2_type).max


def _dtype_test_suffix(dtypes):
    if isinstance(dtypes, (list, tuple)):
        return "_" + "_".join(dtype_name(d) for d in dtypes) if dtypes else ""
    return f"_{dtype_name(dtypes)}" if dtypes else ""


def _update_param_kwargs(param_kwargs, name, value):
    """Set the `name` kwarg, or `names` when the value is a list or tuple."""
    param_kwargs.pop(name, None)
    param_kwargs.pop(name + "s", None)
    if isinstance(value, (list, tuple)):
        param_kwargs[name + "s"] = value
    elif value is not None:
        param_kwargs[name] = value


class DeviceTypeTestBase(TestCase):
    device_type = "generic_device_type"
    _stop_test_suite = False

    @classmethod
    def get_primary_device(cls):
        return cls.device_type

    @classmethod
    def _init_and_get_primary_device(cls):
        return cls.get_primary_device()

    @classmethod
    def get_all_devices(cls):
        return [cls.get_primary_device()]

    @classmethod
    def _get_dtypes(cls, test):
        if not hasattr(test, "dtypes"):
            return None
        default = test.dtypes.get("all")
        if default is None:
            raise AssertionError(f"@dtypes is mandatory when using @dtypesIf however "
                                 f"'{test.__name__}' didn't specify it")
        return test.dtypes.get(cls.device_type, default)

    def _apply_precision_override_for_test(self, test, param_kwargs):
        dtype = param_kwargs.get("dtypes", param_kwargs.get("dtype"))
        if dtype:
            self.precision = getattr(test, "precision_overrides", {}).get(dtype, self.precision)
            self.precision, self.rel_tol = getattr(test, "tolerance_overrides", {}).get(
                dtype, tol(self.precision, self.rel_tol))

    @classmethod
    def instantiate_test(cls, name, test, *, generic_cls=None):
        """Add to the class the tests `test` stands for: one per parametrization and dtype."""
        parametrize_fn = getattr(test, "parametrize_fn",
                                 lambda test, generic_cls, device_cls: [(test, "", {},
                                                                         lambda _: [])])
        dtypes = cls._get_dtypes(test)
        if dtypes is not None:
            def dtype_parametrize_fn(test, generic_cls, device_cls, dtypes=dtypes):
                for dtype in dtypes:
                    kwargs = {}
                    _update_param_kwargs(kwargs, "dtype", dtype)
                    yield (test, "", kwargs, lambda _: [])
            parametrize_fn = compose_parametrize_fns(dtype_parametrize_fn, parametrize_fn)
        for test_fn, suffix, param_kwargs, decorator_fn in parametrize_fn(test, generic_cls, cls):
            suffix = "_" + suffix if suffix else ""
            dtype_kwarg = param_kwargs.get("dtypes", param_kwargs.get("dtype"))
            full_name = f"{name}{suffix}_{cls.device_type}{_dtype_test_suffix(dtype_kwarg)}"
            cls._add_test(full_name, test_fn, dict(param_kwargs), decorator_fn)

    @classmethod
    def _add_test(cls, name, test, param_kwargs, decorator_fn):
        params = inspect.signature(test).parameters
        if "device" in params or "devices" in params:
            device = cls.get_all_devices() if hasattr(test, "num_required_devices") else \
                cls._init_and_get_primary_device()
            _update_param_kwargs(param_kwargs, "device", device)
        for decorator in decorator_fn(param_kwargs):
            test = decorator(test)

        @wraps(test)
        def instantiated_test(self, param_kwargs=param_kwargs):
            saved = self.precision, self.rel_tol
            try:
                self._apply_precision_override_for_test(test, param_kwargs)
                return test(self, **param_kwargs)
            finally:
                self.precision, self.rel_tol = saved
        if hasattr(cls, name):
            raise AssertionError(f"Redefinition of test {name}")
        setattr(cls, name, instantiated_test)


class CPUTestBase(DeviceTypeTestBase):
    device_type = "cpu"


class MetaTestBase(DeviceTypeTestBase):
    device_type = "meta"


def get_all_device_types():
    return ["cpu"]


def get_device_type_test_bases():
    return [CPUTestBase]


def _as_list(x):
    return [x] if isinstance(x, str) else list(x or ())


def filter_desired_device_types(device_type_test_bases, except_for=None, only_for=None):
    """The test bases whose device type is not in `except_for` and, if given, is in `only_for`."""
    except_for, only_for = _as_list(except_for), _as_list(only_for)
    both = set(except_for) & set(only_for)
    if both:
        raise AssertionError(f"device ({both}) appeared in both except_for and only_for")
    return [base for base in device_type_test_bases if base.device_type not in except_for
            and (not only_for or base.device_type in only_for)]


def get_desired_device_type_test_bases(except_for=None, only_for=None, include_lazy=False,
                                       allow_mps=False, allow_xpu=False):
    """The test bases the arguments ask for, narrowed again by the environment's
    PYTORCH_TESTING_DEVICE_ONLY_FOR / _EXCEPT_FOR lists."""
    bases = filter_desired_device_types(get_device_type_test_bases(), except_for, only_for)
    return filter_desired_device_types(
        bases, [d for d in os.getenv(PYTORCH_TESTING_DEVICE_EXCEPT_FOR_KEY, "").split(",") if d],
        [d for d in os.getenv(PYTORCH_TESTING_DEVICE_ONLY_FOR_KEY, "").split(",") if d])


def instantiate_device_type_tests(generic_test_class, scope, except_for=None, only_for=None,
                                  include_lazy=False, allow_mps=False, allow_xpu=False):
    """`TestFoo` in `scope` becomes `TestFooCPU`, whose tests take `device` (and `dtype`)."""
    del scope[generic_test_class.__name__]
    members = dict(generic_test_class.__dict__)
    tests = [name for name in members if name.startswith("test")]
    for base in get_desired_device_type_test_bases(except_for, only_for):
        device = base.device_type
        class_name = generic_test_class.__name__ + device.upper()
        cls = type(class_name, (base, generic_test_class), {})
        for name, member in members.items():
            if name in tests:
                cls.instantiate_test(name, getattr(generic_test_class, name),
                                     generic_cls=generic_test_class)
            elif name not in cls.__dict__:
                setattr(cls, name, getattr(generic_test_class, name))
        cls.__module__ = generic_test_class.__module__
        scope[class_name] = cls
    for name in tests:
        delattr(generic_test_class, name)


class OpDTypes(Enum):
    supported = 0
    unsupported = 1
    supported_backward = 2
    unsupported_backward = 3
    any_one = 4
    none = 5
    any_common_cpu_cuda_one = 6


# the dtype OpDTypes.any_one picks: the first of these the op supports
ANY_DTYPE_ORDER = (ember.float32, ember.float64, ember.complex64, ember.complex128, ember.float16,
                   ember.bfloat16, ember.long, ember.int32, ember.int16, ember.int8, ember.uint8,
                   ember.bool, ember.float8_e4m3fn, ember.float8_e5m2)


class ops(_TestParametrizer):
    """@ops(op_list): the test once per OpInfo of `op_list` and per dtype, named
    `test_foo_<op>_<device>_<dtype>` and called with `op` (and `dtype`). `dtypes` picks the dtypes
    from each op's entry (OpDTypes.supported: those the op supports on the device; .none: one
    test without a dtype; or a list), `allowed_dtypes` narrows them. Each generated test gets the
    decorators of the op's DecorateInfos that match the test class, test, device and dtype (the
    op database's skips and expected failures); a failure names the sample input it was on."""

    def __init__(self, op_list, *, dtypes=OpDTypes.supported, allowed_dtypes=None,
                 skip_if_dynamo=True):
        self.op_list = list(op_list)
        self.opinfo_dtypes = dtypes
        self.allowed_dtypes = set(allowed_dtypes) if allowed_dtypes is not None else None

    def _dtypes(self, op, device_type):
        from .common_dtype import get_all_dtypes
        kind = self.opinfo_dtypes
        if not isinstance(kind, OpDTypes):
            return set(kind)
        if kind is OpDTypes.none:
            return {None}
        supported = set(op.supported_dtypes(device_type))
        backward = set(op.supported_backward_dtypes(device_type))
        if kind is OpDTypes.supported:
            return supported
        if kind is OpDTypes.unsupported:
            return set(get_all_dtypes()) - supported
        if kind is OpDTypes.supported_backward:
            return backward
        if kind is OpDTypes.unsupported_backward:
            return set(get_all_dtypes()) - backward
        if kind is OpDTypes.any_common_cpu_cuda_one:
            supported = set(op.dtypes) & set(op.dtypesIfCUDA)
        elif kind is OpDTypes.any_one and supported & backward:
            supported &= backward
        return {next((d for d in ANY_DTYPE_ORDER if d in supported), None)} - {None}

    def _parametrize_test(self, test, generic_cls, device_cls):
        if device_cls is None:
            raise RuntimeError("The @ops decorator is only intended to be used in a "
                               "device-specific context; use it with "
                               "instantiate_device_type_tests() instead of "
                               "instantiate_parametrized_tests()")
        for op in self.op_list:
            dtypes = self._dtypes(op, device_cls.device_type)
            if self.allowed_dtypes is not None:
                dtypes &= self.allowed_dtypes
            for dtype in sorted(dtypes, key=str):
                param_kwargs = {"op": op}
                _update_param_kwargs(param_kwargs, "dtype", dtype)
                yield (_naming_the_sample(test), op.formatted_name, param_kwargs,
                       lambda kwargs, op=op, dtype=dtype: op.get_decorators(
                           generic_cls.__name__, test.__name__, device_cls.device_type, dtype,
                           kwargs))


def _naming_the_sample(test):
    """`test`, whose failures say which sample input (TrackedInputIter) they happened on."""
    from .common_utils import get_tracked_input

    @wraps(test)
    def test_wrapper(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except unittest.SkipTest:
            raise
        except Exception as e:
            tracked = get_tracked_input()
            if tracked is not None:
                e.add_note(f"Caused by {tracked.type_desc} at index {tracked.index}: "
                           f"{tracked.val!r}")
            raise
    test_wrapper.tracked_input = None
    return test_wrapper


# ---- per-device decorators -------------------------------------------------------------------
class skipIf:
    """Skip the test on `device_type` (every device when None) when `dep` holds: a bool, or
    the name of a test-class attribute that is truthy."""

    def __init__(self, dep, reason, device_type=None):
        self.dep, self.reason, self.device_type = dep, reason, device_type

    def __call__(self, fn):
        @wraps(fn)
        def dep_fn(slf, *args, **kwargs):
            dt = self.device_type
            if dt is None or dt == slf.device_type or \
                    not isinstance(dt, str) and slf.device_type in dt:
                if isinstance(self.dep, str) and getattr(slf, self.dep, True) or \
                        isinstance(self.dep, bool) and self.dep:
                    raise unittest.SkipTest(self.reason)
            return fn(slf, *args, **kwargs)
        return dep_fn


class skipCPUIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="cpu")


def skipCPUIfNoMkldnn(fn):
    return skipCPUIf(not ember.backends.mkldnn.is_available(),
                     "PyTorch is built without mkldnn support")(fn)


class skipMetaIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="meta")


class skipCUDAIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="cuda")


class skipLazyIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="lazy")


class skipXLAIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="xla")


class skipMPSIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="mps")


class skipXPUIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="xpu")


class skipHPUIf(skipIf):
    def __init__(self, dep, reason):
        super().__init__(dep, reason, device_type="hpu")


def skipMeta(fn):
    return skipMetaIf(True, "test doesn't work with meta tensors")(fn)


def skipLazy(fn):
    return skipLazyIf(True, "test doesn't work with lazy tensors")(fn)


def skipXLA(fn):
    return skipXLAIf(True, "Marked as skipped for XLA")(fn)


def skipMPS(fn):
    return skipMPSIf(True, "test doesn't work on MPS backend")(fn)


def skipXPU(fn):
    return skipXPUIf(True, "test doesn't work on XPU backend")(fn)


def skipHPU(fn):
    return skipHPUIf(True, "test doesn't work on HPU backend")(fn)


def skipCPUIfNoMkl(fn):
    """PyTorch gates its CPU FFT tests on MKL; ember's FFTs (NumPy's pocketfft) are always
    there, so the test runs."""
    return fn


def skipCPUIfNoMklSparse(fn):
    return skipCPUIf(True, "PyTorch is built without MKL support")(fn)


class onlyOn:
    def __init__(self, device_type):
        self.device_type = device_type

    def __call__(self, fn):
        @wraps(fn)
        def only_fn(slf, *args, **kwargs):
            if slf.device_type not in self.device_type:
                raise unittest.SkipTest(f"Only runs on {self.device_type}")
            return fn(slf, *args, **kwargs)
        return only_fn


def onlyCPU(fn):
    return onlyOn("cpu")(fn)


def onlyCUDA(fn):
    return onlyOn("cuda")(fn)


def onlyMPS(fn):
    return onlyOn("mps")(fn)


def onlyXPU(fn):
    return onlyOn("xpu")(fn)


def onlyHPU(fn):
    return onlyOn("hpu")(fn)


def onlyAccelerator(fn):
    @wraps(fn)
    def only_fn(self, *args, **kwargs):
        if self.device_type in ("cpu", "meta"):
            raise unittest.SkipTest("onlyAccelerator: doesn't run on CPU or meta devices")
        return fn(self, *args, **kwargs)
    return only_fn


def onlyCUDAAndPRIVATEUSE1(fn):
    return onlyOn(["cuda", "privateuse1"])(fn)


def onlyNativeDeviceTypes(fn):
    @wraps(fn)
    def only_fn(self, *args, **kwargs):
        if self.device_type not in NATIVE_DEVICES:
            raise unittest.SkipTest(f"onlyNativeDeviceTypes: doesn't run on {self.device_type}")
        return fn(self, *args, **kwargs)
    return only_fn


def onlyNativeDeviceTypesAnd(devices=None):
    def decorator(fn):
        @wraps(fn)
        def only_fn(self, *args, **kwargs):
            if self.device_type not in NATIVE_DEVICES and self.device_type not in devices:
                raise unittest.SkipTest(f"onlyNativeDeviceTypesAnd {devices} : doesn't run on "
                                        f"{self.device_type}")
            return fn(self, *args, **kwargs)
        return only_fn
    return decorator


class deviceCountAtLeast:
    """The test takes `devices`, a list; skipped when fewer than `num_required_devices`."""

    def __init__(self, num_required_devices):
        self.num_required_devices = num_required_devices

    def __call__(self, fn):
        if hasattr(fn, "num_required_devices"):
            raise AssertionError(f"deviceCountAtLeast redefinition for {fn.__name__}")
        fn.num_required_devices = self.num_required_devices

        @wraps(fn)
        def multi_fn(slf, devices, *args, **kwargs):
            if len(devices) < self.num_required_devices:
                raise unittest.SkipTest(f"fewer than {self.num_required_devices} devices detected")
            return fn(slf, devices, *args, **kwargs)
        return multi_fn


class dtypes:
    """@dtypes(torch.float, torch.double): one test per dtype (or per tuple of dtypes, passed
    as `dtypes`); `device_type` limits them to one device type (@dtypesIfCPU, ...)."""

    def __init__(self, *args, device_type="all"):
        if args and isinstance(args[0], (list, tuple)):
            for arg in args:
                if not isinstance(arg, (list, tuple)):
                    raise AssertionError("When one dtype variant is a tuple or list, all dtype "
                                         f"variants must be. Received non-list non-tuple dtype "
                                         f"{arg}")
                if not all(isinstance(d, ember.dtype) for d in arg):
                    raise AssertionError(f"Unknown dtype in {arg}")
        elif not all(isinstance(d, ember.dtype) for d in args):
            raise AssertionError(f"Unknown dtype in {args}")
        self.args, self.device_type = args, device_type

    def __call__(self, fn):
        d = getattr(fn, "dtypes", {})
        if self.device_type in d:
            raise AssertionError(f"dtypes redefinition for {self.device_type}")
        d[self.device_type] = self.args
        fn.dtypes = d
        return fn


class dtypesIfCPU(dtypes):
    def __init__(self, *args):
        super().__init__(*args, device_type="cpu")


class dtypesIfCUDA(dtypes):
    def __init__(self, *args):
        super().__init__(*args, device_type="cuda")


class dtypesIfMPS(dtypes):
    def __init__(self, *args):
        super().__init__(*args, device_type="mps")


class dtypesIfXPU(dtypes):
    def __init__(self, *args):
        super().__init__(*args, device_type="xpu")


class dtypesIfHPU(dtypes):
    def __init__(self, *args):
        super().__init__(*args, device_type="hpu")


tol = namedtuple("tol", ["atol", "rtol"])


class precisionOverride:
    """{dtype: atol}: the test's `precision` when run for that dtype."""

    def __init__(self, d):
        if not isinstance(d, dict):
            raise AssertionError("precisionOverride not given a dtype : precision dict!")
        for dtype in d:
            if not isinstance(dtype, ember.dtype):
                raise AssertionError(f"precisionOverride given unknown dtype {dtype}")
        self.d = d

    def __call__(self, fn):
        fn.precision_overrides = self.d
        return fn


class toleranceOverride:
    """{dtype: tol(atol, rtol)}: the test's `precision` and `rel_tol` for that dtype."""

    def __init__(self, d):
        if not isinstance(d, dict):
            raise AssertionError("toleranceOverride not given a dtype : tol dict!")
        for dtype, prec in d.items():
            if not isinstance(dtype, ember.dtype):
                raise AssertionError(f"toleranceOverride given unknown dtype {dtype}")
            if not isinstance(prec, tol):
                raise AssertionError("toleranceOverride not given a dtype : tol dict!")
        self.d = d

    def __call__(self, fn):
        fn.tolerance_overrides = self.d
        return fn


class expectedFailure:
    """The test is expected to fail on `device_type`: passing there is the failure."""

    def __init__(self, device_type):
        self.device_type = device_type

    def __call__(self, fn):
        @wraps(fn)
        def efail_fn(slf, *args, **kwargs):
            if self.device_type is None or self.device_type == slf.device_type:
                try:
                    fn(slf, *args, **kwargs)
                except Exception:
                    return
                slf.fail("expected test to fail, but it passed")
            return fn(slf, *args, **kwargs)
        return efail_fn


def expectedFailureCPU(fn):
    return expectedFailure("cpu")(fn)


def expectedFailureMeta(fn):
    return expectedFailure("meta")(fn)


def expectedFailureCUDA(fn):
    return expectedFailure("cuda")(fn)


def expectedFailureXLA(fn):
    return expectedFailure("xla")(fn)


def expectedFailureMPS(fn):
    return expectedFailure("mps")(fn)


def _available_memory():
    """Bytes of memory the system can give now (MemAvailable, as psutil reports it)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def largeTensorTest(size, device=None, inductor=False):
    """Skip the test when the memory available now is less than `size` (bytes, "N GB", or a
    callable of the test's arguments)."""
    if isinstance(size, str):
        if not size.endswith(("GB", "gb")):
            raise AssertionError(f"only bytes or GB supported, got {size!r}")
        size = 1024 ** 3 * int(size[:-2])

    def inner(fn):
        @wraps(fn)
        def dep_fn(self, *args, **kwargs):
            nbytes = size(self, *args, **kwargs) if callable(size) else size
            where = device or getattr(self, "device_type", "cpu")
            # an accelerator ember does not have has no memory to offer (PyTorch says the same)
            no_device = str(where).split(":")[0] in ("cuda", "xpu")
            if no_device or _available_memory() < nbytes:
                raise unittest.SkipTest(f"Insufficient {where} memory")
            return fn(self, *args, **kwargs)
        return dep_fn
    return inner


# decorators that act only on CUDA / ROCm / MPS / other back ends (their checks concern those
# devices): a CPU test runs as it is
skipCUDAIfNoMagma = skipCUDAIfRocm = skipCUDAIfNotRocm = skipCUDAIfNoCudnn = _unused_mode
skipCUDAIfNoCusolver = skipCUDAIfNoMagmaAndNoCusolver = skipCUDAIfNoMagmaAndNoLinalgsolver = \
    _unused_mode
skipCUDAIfCudnnVersionLessThan = skipCUDAVersionIn = skipCUDAIfRocmVersionLessThan = _unused_mode
skipCUDAIfNoCusparseGeneric = skipCUDAIfNoSparseGeneric = skipCUDAIfMiopen = _unused_mode
skipCUDAIfNoMiopen = _unused_mode
skipCPUIfNoLapack = skipCPUIfNoFFT = skipCUDAIfNoLapack = skipCUDAIfNoFFT = _unused_mode
disablecuDNN = disableMkldnn = skipPRIVATEUSE1 = skipMPSVersionIfLessThan = _unused_mode
onlyNativeDeviceTypesAndCUDA = skipIfTorchDynamo = _unused_mode


def has_cusolver():
    """PyTorch's test: a CUDA (not ROCm) build has cuSOLVER. ember runs CPU tests only, where
    the answer only gates CUDA-side cases."""
    return True


def has_hipsolver():
    return False   # ROCm only
