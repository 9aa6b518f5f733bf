"""ember.onnx: export a model to ONNX (torch.onnx's TorchScript-style exporter) and check the
export against ONNX Runtime. The onnx and onnxruntime packages are imported only when used
(`pip install 'ember[onnx]'`).

    ember.onnx.export(model, (x,), "model.onnx", dynamic_axes={"x": {0: "batch"}})
    ember.onnx.verify(model, (x,))   # largest difference per output vs ONNX Runtime
"""
from . import errors, symbolic_helper
from .errors import OnnxExporterError, UnsupportedOperatorError
from .registry import register_custom_op_symbolic, unregister_custom_op_symbolic
from .utils import (export, is_in_onnx_export, select_model_mode_for_export, TrainingMode,
                    OperatorExportTypes)
from .verification import verify, VerificationInfo

producer_name = "ember"

__all__ = ["export", "is_in_onnx_export", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic", "select_model_mode_for_export", "TrainingMode",
           "OperatorExportTypes", "OnnxExporterError", "UnsupportedOperatorError", "errors",
           "symbolic_helper", "verify", "VerificationInfo"]
