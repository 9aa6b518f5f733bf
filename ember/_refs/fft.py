"""torch._refs.fft: ember's torch.fft functions (see _namespaces)."""
from ._namespaces import namespace_getattr

__getattr__ = namespace_getattr(__name__, "ember.fft")
