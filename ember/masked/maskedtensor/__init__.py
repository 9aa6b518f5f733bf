"""torch.masked's prototype MaskedTensor: a tensor paired with a boolean mask saying which of its
elements are specified (core.py: the type; _ops_refs.py: the functions it implements;
creation.py: masked_tensor / as_masked_tensor)."""
from .core import MaskedTensor, is_masked_tensor  # noqa: F401
from .creation import as_masked_tensor, masked_tensor  # noqa: F401
