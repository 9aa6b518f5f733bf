from . import autograd, utils  # noqa: F401  (torch._library.autograd, .utils)
