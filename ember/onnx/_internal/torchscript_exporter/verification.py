"""verify(): export a model, run the file in ONNX Runtime and compare its outputs with the eager
model's on the same inputs -- torch.onnx's verification for the TorchScript exporter, which
PyTorch's ONNX tests call through `run_test`.

The inputs travel as torch's do. Export gets `args + (kwargs,)` (the dict becomes named
inputs); the ONNX session gets the flattened tensors (numbers as 0-dim arrays, None dropped)
in order, and a ValueError names them when there are more than the model has inputs (tracing
drops an input the outputs do not depend on). The eager outputs are flattened the same way and
compared with `assert_close` (dtype included unless `check_dtype=False`).
"""
import contextlib
import copy
import dataclasses
import enum
import io
import os
import tempfile
import warnings

import numpy as np


class OnnxBackend(enum.Enum):
    REFERENCE = "ONNXReferenceEvaluator"
    ONNX_RUNTIME_CPU = "CPUExecutionProvider"
    ONNX_RUNTIME_CUDA = "CUDAExecutionProvider"


@dataclasses.dataclass
class VerificationOptions:
    """How verify compares (torch's fields): `flatten` the inputs into tensors, drop None
    outputs (`ignore_none`), require equal shapes and dtypes, the backend, tolerances, which
    inputs the ONNX model kept, and the share of elements allowed to differ."""
    flatten: bool = True
    ignore_none: bool = True
    check_shape: bool = True
    check_dtype: bool = True
    backend: OnnxBackend = OnnxBackend.ONNX_RUNTIME_CPU
    rtol: float = 1e-3
    atol: float = 1e-7
    remained_onnx_input_idx: list = None
    acceptable_error_percentage: float = None


def flatten(obj):
    """The tensors of a nest of tuples, lists and dicts (a dict's tensor keys too), in order,
    with Python numbers as 0-dim tensors and None and strings left out (torch.jit._flatten)."""
    import ember
    from ember._core.tensor import Tensor
    out, stack = [], [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            out.append(x)
        elif isinstance(x, (bool, int)):
            out.append(ember.tensor(x))
        elif isinstance(x, float):
            out.append(ember.tensor(x, dtype=ember.float64))
        elif isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            for k, v in reversed(list(x.items())):
                stack.extend((v, k))
    return out


def _to_numpy(x):
    from ember._core.tensor import Tensor
    if isinstance(x, Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def _session(model_f, backend):
    if backend == OnnxBackend.REFERENCE:
        raise NotImplementedError
    if backend not in (OnnxBackend.ONNX_RUNTIME_CPU, OnnxBackend.ONNX_RUNTIME_CUDA):
        raise ValueError(f"Unsupported backend: {backend}")
    try:
        import onnxruntime
    except ImportError as e:
        raise ImportError("onnxruntime is required for export verification.") from e
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(
        model_f if isinstance(model_f, str) else model_f.getvalue(), options,
        providers=[backend.value])


def _run_onnx(session, inputs):
    named = {}
    if inputs and isinstance(inputs[-1], dict):
        named = {k: _to_numpy(v) for k, v in inputs[-1].items()}
        inputs = inputs[:-1]
    arrays = [_to_numpy(x) for x in flatten(list(inputs))]
    names = [i.name for i in session.get_inputs()]
    for i, a in enumerate(arrays):
        if i == len(names) or names[i] in named:
            raise ValueError(f"got too many positional inputs. inputs: {arrays}. kw_inputs: "
                             f"{named}. input names: {names}.")
        named[names[i]] = a
    return session.run(None, named)


def _prepare_input_for_pytorch(args, kwargs):
    from ember._core.tensor import Tensor
    if isinstance(args, (Tensor, dict)):
        args = (args,)
    return copy.deepcopy(args), copy.deepcopy(kwargs) if kwargs else {}


def _prepare_input_for_export(args, kwargs):
    args, kwargs = _prepare_input_for_pytorch(args, kwargs)
    if not kwargs and len(args) > 0 and isinstance(args[-1], dict):
        return args + ({},)
    if kwargs:
        return args + (kwargs,)
    return args


def _prepare_input_for_onnx(args, kwargs, remained_onnx_input_idx, flatten_inputs):
    inputs = _prepare_input_for_export(args, kwargs)
    if flatten_inputs:
        inputs = flatten(inputs)
    elif inputs and isinstance(inputs[-1], dict) and not inputs[-1]:
        inputs = inputs[:-1]
    if remained_onnx_input_idx is not None:
        return [inputs[i] for i in remained_onnx_input_idx]
    return list(inputs)


def _compare(onnx_outs, pt_outs, options):
    from ember.testing import assert_close
    if options.ignore_none:
        pt_outs = flatten(pt_outs)
    else:
        pt_outs = [pt_outs] if not isinstance(pt_outs, (tuple, list)) else _inline(pt_outs)
    pt_outs = [_to_numpy(x) for x in pt_outs]
    onnx_outs = _inline(onnx_outs)
    if len(onnx_outs) != len(pt_outs):
        raise AssertionError(f"Number of outputs differ ONNX runtime: ({len(onnx_outs)}) "
                             f"PyTorch: ({len(pt_outs)})")
    share = options.acceptable_error_percentage
    if share and not 0.0 <= share <= 1.0:
        raise ValueError("If set, acceptable_error_percentage should be between 0.0 and 1.0")
    for ort_out, pt_out in zip(onnx_outs, pt_outs):
        try:
            if not options.check_shape:
                ort_out, pt_out = np.broadcast_arrays(ort_out, pt_out)
            assert_close(ort_out, pt_out, rtol=options.rtol, atol=options.atol,
                         check_dtype=options.check_dtype, equal_nan=True)
        except AssertionError as e:
            if share:
                close = np.isclose(ort_out, pt_out, rtol=options.rtol, atol=options.atol)
                wrong = 1 - np.sum(close) / np.prod(ort_out.shape)
                if wrong <= share:
                    warnings.warn(f"Suppressed AssertionError:\n{e}.\nError percentage {wrong} "
                                  f"within acceptable range {share}.", stacklevel=2)
                    continue
            raise


def _inline(values):
    out, stack = [], [values]
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        else:
            out.append(x)
    return out


def _try_clone_model(model):
    try:
        return copy.deepcopy(model)
    except Exception:
        warnings.warn("Failed to clone model. Model state might be mutated during "
                      "verification.", stacklevel=2)
        return model


def verify(model, input_args, input_kwargs=None, do_constant_folding=True, dynamic_axes=None,
           input_names=None, output_names=None, training=None, opset_version=None,
           keep_initializers_as_inputs=True, verbose=False, fixed_batch_size=False,
           use_external_data=False, additional_test_inputs=None, options=None):
    """Export `model` on `input_args`/`input_kwargs` and check that ONNX Runtime's outputs
    match the model's, on those inputs and on each of `additional_test_inputs` (positional
    args). Raises AssertionError on a mismatch, ValueError on inputs the ONNX model lacks."""
    import ember
    from ember.onnx.utils import TrainingMode, export
    options = options or VerificationOptions()
    training = TrainingMode.EVAL if training is None else training
    if training == TrainingMode.TRAINING:
        model.train()
    elif training == TrainingMode.EVAL:
        model.eval()
    with ember.no_grad(), contextlib.ExitStack() as stack:
        model_f = io.BytesIO()
        if use_external_data:
            model_f = os.path.join(stack.enter_context(tempfile.TemporaryDirectory()),
                                   "model.onnx")
        export_inputs = _prepare_input_for_export(input_args, input_kwargs)
        model_copy = _try_clone_model(model)
        export(model, export_inputs, model_f, opset_version=opset_version, dynamo=False,
               do_constant_folding=do_constant_folding,
               keep_initializers_as_inputs=keep_initializers_as_inputs,
               dynamic_axes=dynamic_axes, input_names=input_names, output_names=output_names,
               training=training, verbose=verbose)
        session = _session(model_f, options.backend)

        def compare(args, kwargs):
            pt_args, pt_kwargs = _prepare_input_for_pytorch(args, kwargs)
            pt_outs = _try_clone_model(model_copy)(*pt_args, **pt_kwargs)
            onnx_inputs = _prepare_input_for_onnx(args, kwargs, options.remained_onnx_input_idx,
                                                  options.flatten)
            _compare(_run_onnx(session, onnx_inputs), pt_outs, options)

        compare(input_args, input_kwargs)
        for args in additional_test_inputs or ():
            compare(args, {})
