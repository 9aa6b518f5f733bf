"""torch.ao.nn: the quantized module namespaces (see ember.ao)."""
from . import qat, quantizable, quantized  # noqa: F401
