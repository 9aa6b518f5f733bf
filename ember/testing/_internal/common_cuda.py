"""torch.testing._internal.common_cuda: the CUDA facts PyTorch's tests branch on. ember has no
CUDA device, so every flag is False and the CUDA-only tests they guard are skipped."""
TEST_CUDA = TEST_MULTIGPU = TEST_CUDNN = TEST_CUDA_GRAPH = TEST_MAGMA = False
TEST_CUSPARSE_GENERIC = TEST_HIPSPARSE_GENERIC = TEST_WITH_ROCM = False
PLATFORM_SUPPORTS_FLASH_ATTENTION = PLATFORM_SUPPORTS_MEM_EFF_ATTENTION = False
PLATFORM_SUPPORTS_FUSED_ATTENTION = PLATFORM_SUPPORTS_CUDNN_ATTENTION = False
PLATFORM_SUPPORTS_FP8 = PLATFORM_SUPPORTS_BF16 = SM53OrLater = SM60OrLater = False
SM70OrLater = SM75OrLater = SM80OrLater = SM89OrLater = SM90OrLater = False
CUDA11OrLater = False
CUDA_DEVICE = None
TEST_CUDNN_VERSION = 0


def tf32_is_not_fp32():
    return False


def _get_torch_cuda_version():
    return (0, 0)
