"""torch._refs.special: ember's torch.special functions (see _namespaces)."""
from ._namespaces import namespace_getattr

__getattr__ = namespace_getattr(__name__, "ember.special")
