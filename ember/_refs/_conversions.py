"""torch._refs._conversions: the dtype conversions (`float(a)` is `a.float()`, ...) and the
complex constructors (`complex`, `polar`), as ember's own (see _namespaces)."""
from ._namespaces import namespace_getattr

__getattr__ = namespace_getattr(__name__, "ember", tensor_methods=True)
