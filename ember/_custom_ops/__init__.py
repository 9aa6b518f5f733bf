"""torch._custom_ops: the functional face of the older custom-operator API
(ember/_custom_op/impl.py): define with `custom_op`, then register kernels, an abstract impl
and the two backward pieces by the op's qualified name."""
import inspect

from .._custom_op.impl import (
    _define, _find_custom_op, _parse_schema, _validate_schema, get_op, global_registry,
    infer_schema, parse_qualname, validate_namespace)
from ..library import get_ctx  # noqa: F401

__all__ = ["custom_op", "impl", "impl_abstract", "get_ctx", "impl_save_for_backward",
           "impl_backward"]


def custom_op(qualname, func_or_schema=None):
    """Define `qualname` from a schema string, or (as a decorator) from a stub function's
    annotations."""
    ns, name = parse_qualname(qualname)
    validate_namespace(ns)

    def inner(func):
        if not inspect.isfunction(func):
            raise ValueError(f"custom_op(...)(func): Expected `func` to be a Python function, "
                             f"got: {type(func)}")
        if func.__name__ != name:
            raise ValueError(f"custom_op(qualname='{qualname}', ...)(func): expected `func` to "
                             f"have name '{name}' but got '{func.__name__}'. Please either "
                             f"change the name of `func` or the qualname that is passed to "
                             f"`custom_op`")
        _with_schema(qualname, infer_schema(func, mutates_args=()))
        return func
    if func_or_schema is None:
        return inner
    if isinstance(func_or_schema, str):
        _with_schema(qualname, func_or_schema)
    else:
        return inner(func_or_schema)


def _with_schema(qualname, schema_text):
    ns, name = parse_qualname(qualname)
    schema = _parse_schema(f"{name}{schema_text}", name)
    _validate_schema(schema)
    _define(ns, name, schema)


def impl(qualname, *, device_types=("cpu", "cuda"), func=None):
    def inner(func):
        _find_custom_op(qualname, also_check_torch_library=True).impl(device_types,
                                                                     _stacklevel=3)(func)
        return func
    return inner if func is None else inner(func)


def impl_abstract(qualname, *, func=None):
    from ..library import register_fake
    return register_fake(qualname, func)


def impl_save_for_backward(qualname, *, func=None):
    def inner(func):
        _find_custom_op(qualname, also_check_torch_library=True).impl_save_for_backward(
            _stacklevel=3)(func)
        return func
    return inner if func is None else inner(func)


def impl_backward(qualname, output_differentiability=None, *, func=None):
    def inner(func):
        _find_custom_op(qualname, also_check_torch_library=True).impl_backward(
            output_differentiability, _stacklevel=3)(func)
        return func
    return inner if func is None else inner(func)


def _destroy(qualname):
    """Forget the op `qualname` (tests define and redefine ops)."""
    global_registry[qualname]._destroy()


__all__ += ["get_op"]
