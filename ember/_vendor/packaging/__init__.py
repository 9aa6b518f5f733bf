"""torch._vendor.packaging: the `version` module of the packaging project."""
from . import version  # noqa: F401
