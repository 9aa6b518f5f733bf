"""torch._functorch.utils: helpers the transforms share."""
import contextlib

from .._core.tensor import Tensor

__all__ = ["enable_single_level_autograd_function", "unwrap_dead_wrappers", "argnums_t"]

argnums_t = int | tuple[int, ...]


@contextlib.contextmanager
def enable_single_level_autograd_function():
    """PyTorch allows `autograd.function._SingleLevelFunction` inside the block. ember's
    transforms have no per-level autograd, so there is nothing to switch."""
    yield


def unwrap_dead_wrappers(args):
    """`args` with each tensor wrapper whose transform has exited replaced by what it wraps.
    ember's grad wraps no tensors, and a BatchedTensor never outlives its vmap, so the
    arguments are returned as they are."""
    return tuple(args) if not isinstance(args, tuple) else args
