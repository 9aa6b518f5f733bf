"""torch._lazy.debug: the pending graph as text, or the code the backend generates for it."""
from .graph_executor import executor


def dump_ir(tensors, ir_format):
    """The pending graph: "text" prints its calls (ember/_dispatch/recorder.py's format),
    "backend" the NumPy code ember/_inductor generates for it (compiling it if needed)."""
    if ir_format == "text":
        return str(executor.graph)
    if ir_format == "backend":
        return executor.generated_code()
    raise RuntimeError(f"Unrecognized IR format: {ir_format}")
