"""torch._refs.nn: holds `functional` (see _namespaces). ember's torch.* activations
(softmax, selu, ...) are in _refs.activations."""
from . import functional  # noqa: F401
