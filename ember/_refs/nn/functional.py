"""torch._refs.nn.functional: ember's torch.nn.functional functions (see _namespaces)."""
from .._namespaces import namespace_getattr

__getattr__ = namespace_getattr(__name__, "ember.nn.functional")
