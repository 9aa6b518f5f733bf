"""torch.func: composable function transforms -- grad, vjp, jvp, jacrev, jacfwd, hessian,
vmap (ember/_functorch/) -- and functional_call (a module run with substitute parameters and
buffers)."""
from collections.abc import Sequence

from ..nn.utils.stateless import _functional_call
from .._functorch.eager_transforms import (grad, grad_and_value, vjp, jvp, linearize, jacrev,
                                           jacfwd, hessian, functionalize, debug_unwrap)
from .._functorch.batch_norm_replacement import replace_all_batch_norm_modules_
from .._functorch.functional_call import stack_module_state
from .._functorch.apis import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev",
           "jacfwd", "hessian", "functionalize", "stack_module_state", "vmap", "debug_unwrap",
           "replace_all_batch_norm_modules_"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call `module(*args, **kwargs)` with its parameters and buffers named in the dict(s)
    replaced by the given tensors; the module is unchanged afterwards. A sequence of dicts is
    merged (a name may appear in only one)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
