"""The TorchScript-based exporter's modules, as torch.onnx._internal.torchscript_exporter names
them: ember's exporter is that exporter (ember.onnx.utils)."""
