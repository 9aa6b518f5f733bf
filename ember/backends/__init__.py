"""torch.backends: the switches scripts flip for GPU libraries (`torch.backends.cudnn.benchmark =
True`, `torch.backends.mps.is_available()`). ember computes on the CPU with NumPy, so the
libraries are reported absent and the flags are plain settings that change nothing."""
from . import cpu, cuda, cudnn, mha, mkldnn, mps, opt_einsum, python_native, quantized  # noqa: F401
