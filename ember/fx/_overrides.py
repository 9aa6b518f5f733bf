"""ember's stand-in for torch.overrides as torch.fx uses it: which public ember functions a Proxy
may flow into, what they are called (`ember.flatten`, `ember.nn.functional.relu`), and which
arguments a call to them records.

Note [Functions without __torch_function__]
PyTorch's functions check their arguments for a `__torch_function__` attribute and hand the call
to it; torch.fx's Proxy implements that hook, so `torch.flatten(proxy, 1)` becomes a
call_function node. ember's bindings skip that check to keep the hot path short, so the Tracer
patches these functions for the duration of a trace instead (the mechanism torch.fx itself uses
for `fx.wrap`): every public function of the namespaces below is replaced by a wrapper that
records a node when a Proxy is among its arguments and otherwise calls the function.

What the node holds follows what PyTorch's `__torch_function__` would receive. Functions PyTorch
implements in C (`torch.flatten`, `F.linear`, everything in torch.linalg/fft/special) hand over
their arguments as the caller wrote them. Functions PyTorch writes in Python (most of
`torch.nn.functional`, `torch.split`, `torch.einsum`, ...) call `handle_torch_function(f, ...,
input, <required args>, key=value for every optional parameter)`: required parameters go
positionally and every optional one by keyword with its default filled in, so `F.relu(x)`
records `(x,), {'inplace': False}`. `_PYTHON_LEVEL` names those functions (PyTorch 2.13's set,
checked against torch in tests/test_fx.py).
"""
import functools
import inspect
import types

# PyTorch 2.13's Python-level functions (the rest of these namespaces are C functions)
_PYTHON_LEVEL = {
    "ember": frozenset({
        "_assert", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors",
        "cartesian_prod", "cdist", "chain_matmul", "einsum", "lu", "meshgrid", "norm", "split",
        "stft", "tensordot", "unique", "unique_consecutive", "unravel_index"}),
    "ember.nn.functional": None,    # all but _C_LEVEL_FUNCTIONAL
}
_C_LEVEL_FUNCTIONAL = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "elu_", "gelu", "hardshrink",
    "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle", "one_hot",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rrelu_",
    "scaled_dot_product_attention", "selu_", "softplus", "softshrink", "threshold_"})

# functions that never see a tensor, or answer a question about the Python object itself
_NOT_OVERRIDABLE = frozenset({
    "are_deterministic_algorithms_enabled", "compile", "from_dlpack", "get_default_device",
    "get_default_dtype", "get_deterministic_debug_mode", "get_float32_matmul_precision",
    "get_num_threads", "get_num_interop_threads", "get_rng_state", "initial_seed", "is_grad_enabled",
    "is_inference_mode_enabled", "is_storage", "is_tensor", "is_warn_always_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "load", "manual_seed", "seed", "save",
    "set_default_device", "set_default_dtype", "set_default_tensor_type",
    "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_num_threads",
    "set_num_interop_threads", "set_printoptions", "set_rng_state", "set_warn_always",
    "typename", "use_deterministic_algorithms", "broadcast_shapes", "set_grad_enabled",
    "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
    "handle_torch_function",
    # state queries and switches that take no tensor (PyTorch's get_ignored_functions)
    "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache",
    "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "get_device_module", "init_num_threads",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_autocast_enabled"})

# private functions PyTorch still lets a Proxy through (torch._assert exists to be traceable)
_PRIVATE_OVERRIDABLE = frozenset({"_assert"})

_NAMESPACES = ("ember.nn.functional", "ember", "ember.linalg", "ember.fft", "ember.special")


@functools.lru_cache(maxsize=None)
def overridable_functions():
    """{function: (namespace, name)} for every public function a traced call may record."""
    import importlib
    table = {}
    for namespace in _NAMESPACES:
        module = importlib.import_module(namespace)
        for name, value in vars(module).items():
            if (name.startswith("_") and name not in _PRIVATE_OVERRIDABLE) \
                    or name in _NOT_OVERRIDABLE:
                continue
            if not isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
                continue
            # an alias keeps the name it was defined under (ember.absolute is ember.abs); a
            # C-level functional that is also a torch function is named as torch names it
            # (F.conv2d is torch.conv2d)
            known = table.get(value)
            if known is None or (known[1] != getattr(value, "__name__", None)
                                 and name == getattr(value, "__name__", None)) \
                    or (known[0] == "ember.nn.functional" and namespace == "ember"
                        and known[1] in _C_LEVEL_FUNCTIONAL and known[1] == name):
                table[value] = (namespace, name)
    return table


def qualified_name(fn):
    """'ember.flatten' for ember's public functions, else None."""
    entry = overridable_functions().get(fn)
    return None if entry is None else f"{entry[0]}.{entry[1]}"


def is_python_level(fn):
    entry = overridable_functions().get(fn)
    if entry is None:
        return False
    namespace, name = entry
    if namespace == "ember.nn.functional":
        return name not in _C_LEVEL_FUNCTIONAL
    return name in _PYTHON_LEVEL.get(namespace, frozenset())


@functools.lru_cache(maxsize=None)
def _signature(fn):
    return inspect.signature(fn)


def torch_function_arguments(fn, args, kwargs):
    """The (args, kwargs) PyTorch's __torch_function__ would receive for fn(*args, **kwargs)."""
    if not is_python_level(fn):
        return args, kwargs
    bound = _signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    positional, keywords = [], {}
    for name, param in _signature(fn).parameters.items():
        value = bound.arguments[name]
        if param.kind is param.VAR_POSITIONAL:
            positional.extend(value)
        elif param.kind is param.VAR_KEYWORD:
            keywords.update(value)
        elif param.default is param.empty and param.kind is not param.KEYWORD_ONLY:
            positional.append(value)
        else:
            keywords[name] = value
    return tuple(positional), keywords
