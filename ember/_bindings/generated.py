"""The generated `ember.*` functions and `Tensor` methods (see codegen.py): this module's
namespace holds the functions; `METHODS` the methods, installed on Tensor by the package."""
from .._dispatch import dispatcher as _dispatcher
from .codegen import generate

FUNCTIONS, METHODS = generate([op for op in _dispatcher._registry.values()
                               if op.schema.namespace == "aten"])
globals().update(FUNCTIONS)
__all__ = sorted(FUNCTIONS)
