"""ember.compiler (torch.compiler): the public face of ember.compile.

`register_backend` is torch._dynamo's name for adding a backend; ember also offers it here,
where the issue asks for it (torch.compiler has no such name)."""
from .._dynamo.eval_frame import compile, reset, is_compiling
from .._dynamo.registry import list_backends, register_backend
from .._dynamo import registry as _registry
from .. import _dynamo


def is_dynamo_compiling():
    return is_compiling()


def disable(fn=None, recursive=True, *, reason=None):
    """Leave `fn` uncompiled (ember's capture records its ops like any others)."""
    return _dynamo.disable(fn, recursive, reason=reason)


def get_default_backend():
    return _registry.default_backend


def set_default_backend(backend):
    _registry.lookup_backend(backend)
    _registry.default_backend = backend
