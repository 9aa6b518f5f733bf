"""ember.onnx.verify: export a model, run the ONNX file in ONNX Runtime on the same inputs and
compare with ember's eager outputs (the check torch.onnx.verification makes)."""
import dataclasses
import io

import numpy as np


@dataclasses.dataclass
class VerificationInfo:
    """How one output of the exported model compares with the eager model's."""
    name: str
    max_abs_diff: float
    max_rel_diff: float
    expected_dtype: str
    actual_dtype: str
    shape: tuple


def verify(model, args, *, kwargs=None, atol=1e-4, rtol=1e-4, check=True, **export_kwargs):
    """Export `model` on `args`, run it in ONNX Runtime and in ember, and return one
    VerificationInfo per output. With `check`, raise AssertionError naming each output whose
    values differ by more than atol + rtol * |expected|, or whose shape differs."""
    from .. import no_grad
    from .utils import export, select_model_mode_for_export, TrainingMode, _flatten_outputs
    try:
        import onnxruntime
    except ImportError as e:
        raise ImportError("ember.onnx.verify needs onnxruntime: pip install 'ember[onnx]'") from e
    args = args if isinstance(args, tuple) else (args,)
    f = io.BytesIO()
    export(model, args, f, kwargs=kwargs, **export_kwargs)
    with select_model_mode_for_export(model, export_kwargs.get("training", TrainingMode.EVAL)), \
            no_grad():
        expected = [t.numpy() for t in _flatten_outputs(model(*args, **(kwargs or {})))]
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(f.getvalue(), options,
                                           providers=["CPUExecutionProvider"])
    from .tracer import _tensors
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), _tensors(args))}
    actual = session.run(None, feeds)
    infos, failures = [], []
    for out, e, a in zip(session.get_outputs(), expected, actual):
        if e.shape != a.shape:
            failures.append(f"{out.name}: shape {list(a.shape)} from ONNX Runtime, "
                            f"{list(e.shape)} from ember")
            diff = float("inf")
            rel = float("inf")
        else:
            d = np.abs(e.astype(np.float64) - a.astype(np.float64))
            diff = float(d.max()) if d.size else 0.0
            rel = float((d / np.maximum(np.abs(e), 1e-12)).max()) if d.size else 0.0
            if d.size and np.any(d > atol + rtol * np.abs(e)):
                failures.append(f"{out.name}: max abs diff {diff:.3g}, max rel diff {rel:.3g}")
        infos.append(VerificationInfo(out.name, diff, rel, str(e.dtype), str(a.dtype),
                                      tuple(e.shape)))
    if check and failures:
        raise AssertionError("ONNX Runtime's outputs differ from ember's: " + "; ".join(failures))
    return infos
