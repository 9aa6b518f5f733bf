"""torch._C.Tag's home: the enum lives beside the dispatcher that reads it (ember/_dispatch/tags.py)."""
from .._dispatch.tags import Tag, as_tags  # noqa: F401
