from . import utils  # noqa: F401  (torch._library.utils)
