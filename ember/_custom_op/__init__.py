"""torch._custom_op: the older custom-operator API (superseded by torch.library.custom_op)."""
from . import impl  # noqa: F401
