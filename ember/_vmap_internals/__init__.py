"""torch._vmap_internals: the first vmap prototype, which gradcheck's check_batched_forward_grad
still calls (`_vmap`), and its deprecated public name (`vmap`).

ember runs it on functorch's vmap (ember._functorch.vmap): the same BatchedTensors and batching
rules. What differs is what it accepts, as in PyTorch: in_dims must be non-negative, the function
must return a Tensor or a tuple of Tensors (with `allow_none_pass_through`, None passes through),
out_dims is an int or a flat tuple of ints, one per output; and forward AD's `make_dual` takes a
batched tangent inside it (PyTorch's legacy batching has a rule for `_make_dual`; functorch's vmap
has none and refuses, so `jvp` is the way under `torch.func.vmap`).
"""
import functools
import warnings

from .._core.tensor import Tensor
from .._dispatch import vmap_state as _vmap_state
from ..utils._pytree import _broadcast_to_and_flatten, tree_flatten

__all__ = ["vmap"]


def _get_name(func):
    return getattr(func, "__name__", None) or repr(func)


def vmap(func, in_dims=0, out_dims=0):
    """Deprecated: use torch.vmap."""
    warnings.warn("Please use `torch.vmap` instead of `torch._vmap_internals.vmap`.",
                  FutureWarning, stacklevel=2)
    return _vmap(func, in_dims, out_dims)


def _vmap(func, in_dims=0, out_dims=0, allow_none_pass_through=False):
    """vmap without the deprecation warning (see the module docstring for what it accepts)."""
    from .._functorch.vmap import vmap_impl

    @functools.wraps(func)
    def wrapped(*args):
        _check_out_dims(out_dims, func)
        _check_inputs(in_dims, args, func)
        nones = []

        def run(*batched):
            level = _vmap_state.levels[-1][0]  # the level vmap_impl entered for this call
            _vmap_state.legacy_levels.add(level)
            try:
                out = func(*batched)
            finally:
                _vmap_state.legacy_levels.discard(level)
            if not allow_none_pass_through:
                _validate_outputs(out, func)
            n = len(out) if isinstance(out, tuple) else 1
            if isinstance(out_dims, tuple) and len(out_dims) != n:
                raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` "
                                 f"must have one dim per output (got {n} outputs) of "
                                 f"{_get_name(func)}.")
            if isinstance(out, tuple) and allow_none_pass_through:
                nones.extend(k for k, o in enumerate(out) if o is None)
                out = tuple(_placeholder(batched) if o is None else o for o in out)
            return out

        out = vmap_impl(run, in_dims, out_dims, "error", None, args, {})
        if nones:
            out = tuple(None if k in nones else o for k, o in enumerate(out))
        return out
    return wrapped


def _placeholder(batched):
    """An unbatched tensor standing in for a None output until the batch dims are removed."""
    import ember
    return ember.zeros(())


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    if not isinstance(out_dims, tuple) or not all(isinstance(d, int) for d in out_dims):
        raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be "
                         "an int or a tuple of int representing where in the outputs the vmapped "
                         "dimension should appear.")


def _check_inputs(in_dims, args, func):
    """The prototype's own refusals, before functorch's checks: a negative in_dim."""
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)) or not args:
        return  # functorch's vmap says the same
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast_to_and_flatten(in_dims, spec)
    for arg, d in zip(flat_args, flat_dims or ()):
        if isinstance(d, int) and isinstance(arg, Tensor) and not 0 <= d < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for some input, but that input is a Tensor of dimensionality "
                             f"{arg.dim()} so expected in_dim to satisfy 0 <= in_dim < "
                             f"{arg.dim()}.")


def _validate_outputs(outputs, func):
    name = _get_name(func)
    if isinstance(outputs, Tensor):
        return
    if not isinstance(outputs, tuple):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(outputs)} as the return.")
    for k, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(o)} for return {k}.")
