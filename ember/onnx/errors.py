"""The exporter's errors, as torch.onnx.errors."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op has no symbolic function for the requested opset."""

    def __init__(self, name, version, supported_version=None):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   f"supported. Support for this operator was added in version "
                   f"{supported_version}, try exporting with this version")
        elif name.startswith(("aten::", "prim::", "quantized::")):
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        else:
            msg = (f"ONNX export failed on an operator with unrecognized namespace {name}. If "
                   "you are trying to export a custom operator, make sure you registered it with "
                   "the right domain and version.")
        super().__init__(msg)


class SymbolicValueError(OnnxExporterError):
    """A symbolic function met an argument it cannot express."""
