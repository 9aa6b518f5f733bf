"""torch.testing._internal.common_cuda: the CUDA facts PyTorch's test files import (is CUDA,
cuDNN, several GPUs there; TF32 on/off decorators). ember has no CUDA device, so every flag is
False, the CUDA-only tests they guard are skipped, and the TF32 decorators run the test once, as
PyTorch's do off CUDA."""
import contextlib
from functools import wraps

TEST_CUDA = TEST_MULTIGPU = TEST_CUDNN = TEST_CUDA_GRAPH = TEST_MAGMA = False
TEST_CUSPARSE_GENERIC = TEST_HIPSPARSE_GENERIC = TEST_WITH_ROCM = False
PLATFORM_SUPPORTS_FLASH_ATTENTION = PLATFORM_SUPPORTS_MEM_EFF_ATTENTION = False
PLATFORM_SUPPORTS_FUSED_ATTENTION = PLATFORM_SUPPORTS_CUDNN_ATTENTION = False
PLATFORM_SUPPORTS_FP8 = PLATFORM_SUPPORTS_BF16 = SM53OrLater = SM60OrLater = False
SM70OrLater = SM75OrLater = SM80OrLater = SM89OrLater = SM90OrLater = False
CUDA11OrLater = IS_JETSON = False
CUDA_DEVICE = None
TEST_CUDNN_VERSION = 0


def tf32_is_not_fp32():
    return False


def _get_torch_rocm_version():
    return (0, 0)


def _get_torch_cuda_version():
    return (0, 0)


def _get_magma_version():
    return (0, 0)   # no MAGMA: PyTorch's value when its build lacks the library


@contextlib.contextmanager
def tf32_off():
    yield


@contextlib.contextmanager
def tf32_on(self, tf32_precision=1e-5):
    yield


def tf32_on_and_off(tf32_precision=1e-5, *, only_if=True):
    """Runs the test with TF32 off and on where TF32 exists (CUDA float32); here, once."""
    def wrapper(f):
        @wraps(f)
        def wrapped(*args, **kwargs):
            return f(*args, **kwargs)
        return wrapped
    return wrapper


def with_tf32_off(f):
    return f
