"""torch.testing._internal.common_cuda: the CUDA facts PyTorch's test files import (is CUDA,
cuDNN, several GPUs there; TF32 on/off decorators). ember runs on the CPU alone, so every
TEST_* flag is False and the TF32 decorators run the test once, as PyTorch's do off CUDA."""
import contextlib
from functools import wraps

from .common_utils import TEST_CUDA, TEST_CUDNN, TEST_MULTIGPU  # noqa: F401

CUDA_DEVICE = None
TEST_CUDNN_VERSION = 0
TEST_MAGMA = TEST_CUSPARSE_GENERIC = TEST_HIPSPARSE_GENERIC = False
SM53OrLater = SM60OrLater = SM70OrLater = SM75OrLater = SM80OrLater = SM89OrLater = False
SM90OrLater = PLATFORM_SUPPORTS_FLASH_ATTENTION = PLATFORM_SUPPORTS_MEM_EFF_ATTENTION = False
PLATFORM_SUPPORTS_FP8 = PLATFORM_SUPPORTS_BF16 = False


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
