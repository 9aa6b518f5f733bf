"""torch._prims: in PyTorch, the small set of primitive operations its Python references are
written in. ember's kernels are its own ops, so there is no separate primitive layer; what code
outside PyTorch's core reaches here for is the shared dtype bookkeeping, `utils` (PyTorch's
name for torch._prims_common inside this module)."""
from .. import _prims_common as utils  # noqa: F401
