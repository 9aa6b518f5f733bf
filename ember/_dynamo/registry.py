"""The compile backends by name (torch._dynamo.backends.registry): a backend is a function
`backend(graph, example_inputs) -> callable`, given the captured graph (ember/_dynamo/
eval_frame.py's CapturedGraph: the forward Graph, the backward Graph when gradients are needed)
and returning what runs in its place, called with the list of input tensors."""

_BACKENDS = {}
default_backend = "ember"


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register `compiler_fn` under `name` (its __name__ by default); usable as a decorator."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    if not callable(compiler_fn):
        raise TypeError(f"register_backend expects a callable, got {type(compiler_fn).__name__}")
    name = name or compiler_fn.__name__
    if name in _BACKENDS and _BACKENDS[name] is not compiler_fn:
        raise ValueError(f"duplicate name: {name}")
    _BACKENDS[name] = compiler_fn
    compiler_fn._tags = tuple(tags)
    return compiler_fn


def lookup_backend(compiler_fn):
    if isinstance(compiler_fn, str):
        if compiler_fn not in _BACKENDS:
            from .exc import TorchDynamoException
            raise TorchDynamoException(f"Invalid backend: {compiler_fn!r}, see "
                                       "`ember.compiler.list_backends()` for available backends.")
        return _BACKENDS[compiler_fn]
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")):
    exclude = set(exclude_tags or ())
    return sorted(n for n, fn in _BACKENDS.items() if not exclude & set(fn._tags))


@register_backend(tags=("debug",))
def eager(graph, example_inputs):
    """Replay the captured forward op by op through the dispatcher (autograd as in eager)."""
    return graph.forward.run_list


@register_backend(name="aot_eager", tags=("debug",))
def aot_eager(graph, example_inputs):
    """The joint forward and backward graphs after the passes, replayed op by op: the "ember"
    pipeline without its generated code, to tell a capture bug from a codegen bug."""
    from .._inductor.compile_fx import compile_fx
    return compile_fx(graph, example_inputs, generate_code=False)


@register_backend(name="ember")
def ember_backend(graph, example_inputs):
    """Optimise and generate NumPy Python for the forward and backward (the default)."""
    from .._inductor.compile_fx import compile_fx
    return compile_fx(graph, example_inputs)


@register_backend(name="onnxrt")
def onnxrt(graph, example_inputs):
    """Inference graphs exported by ember.onnx and run by ONNX Runtime (the `onnx` extra)."""
    from .onnxrt import compile_onnxrt
    return compile_onnxrt(graph, example_inputs)
