"""ember.onnx._internal: where PyTorch keeps its ONNX exporters' internals. ember has one
exporter (ember.onnx.export); torchscript_exporter holds the pieces of torch's TorchScript
exporter that code and tests import by that path (verification, _type_utils)."""
