"""The public vmap (torch/_functorch/apis.py): argument checks, then vmap.py's machinery."""
import functools

from .._core.tensor import Tensor
from ..utils._pytree import tree_flatten, _broadcast_to_and_flatten
from .vmap import vmap_impl
from .eager_transforms import grad, grad_and_value  # noqa: F401  (torch._functorch.apis's)
from . import batching_rules  # noqa: F401  (the FuncTorchBatched kernels vmap dispatches to)
from . import autograd_function  # noqa: F401  (autograd.Function under vmap)


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


def chunk_vmap(func, in_dims=0, out_dims=0, randomness="error", chunks=2):
    """vmap that runs the batch in `chunks` pieces (fewer at once in memory) and joins the
    results; `chunks=1` is plain vmap."""
    if chunks == 1:
        return vmap(func, in_dims, out_dims, randomness)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, spec = tree_flatten(args)
        flat_dims = _broadcast_to_and_flatten(in_dims, spec) or []
        sizes = [a.shape[d] for a, d in zip(flat_args, flat_dims)
                 if d is not None and isinstance(a, Tensor)]
        chunk_size = -(-sizes[0] // chunks) if sizes else None
        return vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return wrapped
