"""The public vmap (torch/_functorch/apis.py): argument checks, then vmap.py's machinery."""
import functools

from .vmap import vmap_impl
from . import batching_rules  # noqa: F401  (the FuncTorchBatched kernels vmap dispatches to)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize `func` over a dim of its inputs: `vmap(f)(xs)` equals stacking `f(x)` for each
    `x` in `xs`, computed by one call per op on the whole batch."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return wrapped
