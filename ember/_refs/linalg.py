"""torch._refs.linalg: ember's torch.linalg functions (see _namespaces). The torch.* forms of
linear algebra (torch.cross, torch.svd, ...) are in linear_algebra."""
from ._namespaces import namespace_getattr

__getattr__ = namespace_getattr(__name__, "ember.linalg")
