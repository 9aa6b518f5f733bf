"""ember's Dynamo (torch._dynamo): ember.compile's capture, guards, graph breaks and the
backend registry. See eval_frame.py."""
from . import exc, utils, testing
from .registry import register_backend, lookup_backend, list_backends
from .eval_frame import OptimizedModule, reset, is_compiling


def optimize(backend="ember", nopython=False, **kwargs):
    from .eval_frame import compile
    return lambda fn: compile(fn, backend=backend, fullgraph=nopython)
