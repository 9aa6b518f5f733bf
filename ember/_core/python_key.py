"""Which tensors carry PyTorch's Python dispatch key: instances of a Tensor subclass that
defines `__torch_dispatch__`. The dispatcher sends every op with such an argument to the Python
key's fallback (ember/_dispatch/python_dispatch.py), which calls the class's handler.

The mark is the class attribute `_sparse = PYTHON_KEY`. The dispatcher's key loop already reads
`_sparse` for every tensor argument (None for a dense tensor) and looks further only when it is
set, so marking a class costs plain calls nothing. `Tensor.__init_subclass__` marks a class
when it (or a base) defines `__torch_dispatch__`; such a class also gets the disabled
`__torch_function__` unless it defines its own, as in PyTorch, so that public functions reach
the dispatcher and the handler sees aten ops.
"""
from types import MemberDescriptorType

from .layout import strided


class _PythonKey:
    """The `_sparse` mark of a Python-key tensor (not sparse: its layout is strided)."""
    layout = strided

    def __repr__(self):
        return "PYTHON_KEY"


PYTHON_KEY = _PythonKey()


class _DisabledTorchDispatchImpl:
    """Tensor's own `__torch_dispatch__` (PyTorch's `_disabled_torch_dispatch_impl`): a class
    holding it has no Python key. Calling it runs the op below the Python key."""

    def __call__(self, func, types, args=(), kwargs=None):
        from .._dispatch.python_dispatch import call_below_python_key
        return call_below_python_key(func, args, kwargs or {})

    def __repr__(self):
        return "<built-in function _disabled_torch_dispatch_impl>"


_disabled_torch_dispatch_impl = _DisabledTorchDispatchImpl()


def defines_torch_dispatch(cls):
    """Whether `cls` (or a base below Tensor) defines its own `__torch_dispatch__`."""
    for base in cls.__mro__:
        handler = base.__dict__.get("__torch_dispatch__")
        if handler is not None:
            return handler is not _disabled_torch_dispatch_impl
    return False


def mark_subclass(cls, tensor_cls):
    """Give a new Tensor subclass the Python key if it defines `__torch_dispatch__`."""
    from .torch_function import _disabled_torch_function_impl
    if defines_torch_dispatch(cls):
        cls._sparse = PYTHON_KEY
        if _torch_function_owner(cls) is tensor_cls:
            cls.__torch_function__ = _disabled_torch_function_impl
    elif cls._sparse is PYTHON_KEY:  # a base's handler switched off again: the tensor's
        cls._sparse = tensor_cls.__dict__["_sparse"]  # own slot, unshadowed


def sparse_in_slot(cls):
    """Whether `cls`'s tensors keep `_sparse` in the Tensor's own slot: no class's Python-key
    mark shadows it (a marked class's tensors keep a math-bits mark in the instance dict)."""
    return type(cls._sparse) is MemberDescriptorType


def _torch_function_owner(cls):
    return next(base for base in cls.__mro__ if "__torch_function__" in base.__dict__)
