"""torch.ao: PyTorch's quantization and sparsity tooling ("architecture optimization"). ember
has no quantized tensors, so it has none of the quantized or quantizable module classes (their
namespaces exist, with empty `__all__`, for code that lists them, as PyTorch's module test
database does; `ao.nn.quantized.MaxPool2d` is, as in PyTorch, nn.MaxPool2d). What works on
float tensors is here: observers and QConfigs (`ao.quantization`) and the
quantization-aware-training modules that use them (`ao.nn.qat`)."""
from . import nn  # noqa: F401


def __getattr__(name):
    # `quantization` is imported on first use, as in PyTorch
    if name == "quantization":
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
