"""torch.version: the build's version and what it was built with (no CUDA, ROCm or XPU here)."""
from .torch_version import TorchVersion

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

# The API level ember implements, as PyTorch programs read it (`torch.__version__ >= "2.0"`,
# `version.parse(torch.__version__)`), with ember's own release in the local label where torch puts
# its build variant ("2.13.0+cpu"): a program checking the version takes PyTorch 2.13's paths.
__version__ = TorchVersion("2.13.0+ember0.1.0")
debug = False
cuda = None
git_version = "unknown"
hip = None
rocm = None
xpu = None
