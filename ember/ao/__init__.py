"""torch.ao: PyTorch's quantization and sparsity tooling ("architecture optimization"). ember
has no quantized tensors, so it has none of the quantized, quantization-aware-training or
quantizable module classes: the namespaces exist, with empty `__all__`, for code that lists
them (PyTorch's module test database does), and `ao.nn.quantized.MaxPool2d` is, as in PyTorch,
nn.MaxPool2d."""
from . import nn  # noqa: F401
