"""torch.version: the build's version and what it was built with (no CUDA, ROCm or XPU here)."""
from .torch_version import TorchVersion

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = TorchVersion("0.1.0")
debug = False
cuda = None
git_version = "unknown"
hip = None
rocm = None
xpu = None
