"""autograd.Function under the functorch transforms (torch/_functorch/autograd_function.py).

While a transform runs, `Function.apply` comes here (through `vmap_state.RULES["function"]`,
so the autograd layer need not import functorch):

- a Function used under any transform must define `setup_context` (its forward then takes
  no ctx), as PyTorch requires;
- under vmap, the Function's own batching rule is used. Its `vmap` staticmethod gets
  `info` (batch size, randomness), the in_dims of its arguments (None for an argument not
  batched at this level; a nested argument's in_dims nested alike) and the arguments with
  this level's batch dims unwrapped, and returns `(output, out_dims)`; the outputs are
  batched again at this level. With `generate_vmap_rule=True` ember runs the Function on the
  batched tensors themselves (its forward and backward are batched op by op, which is what
  PyTorch's generated rule computes). When no argument is batched at this level, the level
  is skipped.
"""
from collections import namedtuple

from .._core.tensor import Tensor
from .._dispatch import vmap_state
from ..utils._pytree import tree_flatten, tree_unflatten, _broadcast_to_and_flatten
from .vmap import _levels, _wrap, batched_at, lower

__all__ = ["VmapInfo", "CtxWithSavedTensors", "reductify_leaf"]

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"

VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])


def _has_setup_context(cls):
    from ..autograd.function import Function
    return cls.setup_context is not Function.setup_context


def _has_vmap_rule(cls):
    from ..autograd.function import Function
    return cls.vmap is not Function.vmap


def function_under_transforms(cls, args, kwargs):
    """`cls.apply(*args, **kwargs)` while a functorch transform runs."""
    if not _has_setup_context(cls):
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           f"staticmethod. {_DOCS}")
    if not _levels:
        return _generated(cls)._apply_plain(*args, **kwargs)
    if any(isinstance(v, Tensor) for v in tree_flatten(kwargs)[0]):
        raise NotImplementedError("Run vmap on autograd.Function with kwarg-only Tensor args. "
                                  "Please do not pass kwarg-only Tensors to autograd.Function. "
                                  f"Got: {kwargs}")
    name = cls.__name__
    if cls.generate_vmap_rule:
        if _has_vmap_rule(cls):
            raise RuntimeError(f"You tried to vmap over {name}, but it has both "
                               "generate_vmap_rule=True and an overridden vmap staticmethod. "
                               "Please set generate_vmap_rule=False or delete the overridden "
                               f"vmap staticmethod to avoid ambiguity. {_DOCS}")
        return cls._apply_plain(*args, **kwargs)
    if not _has_vmap_rule(cls):
        raise RuntimeError(f"You tried to vmap over {name}, but it does not have vmap support. "
                           "Please override and implement the vmap staticmethod or set "
                           f"generate_vmap_rule=True. {_DOCS}")
    entry = _levels[-1]
    level = entry[0]
    leaves, spec = tree_flatten(args)
    unwrapped, dims = [], []
    for a in leaves:
        if isinstance(a, Tensor) and batched_at(a, level):
            unwrapped.append(a._value)
            dims.append(a._bdim)
        else:
            unwrapped.append(a)
            dims.append(None)
    if all(d is None for d in dims):
        with lower(entry):
            return cls.apply(*args, **kwargs)
    in_dims = tree_unflatten(dims, spec)
    with lower(entry):
        result = cls.vmap(VmapInfo(entry[1], entry[2]), in_dims,
                          *tree_unflatten(unwrapped, spec), **kwargs)
    message = ("Expected the vmap staticmethod to have two returns, an output and out_dims with "
               "pytree structure compatible with the output. ")
    if not isinstance(result, tuple):
        raise RuntimeError(message + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(message + f"Got {len(result)} returns instead")
    output, out_dims = result
    return _wrap_outputs(output, out_dims, unwrapped, leaves, level)


def _generated(cls):
    """The Function the grad and jvp transforms run in place of `cls`: the same methods, named
    `<Name>Generated` (so its node is `<Name>GeneratedBackward`, as PyTorch names it)."""
    gen = cls.__dict__.get("_generated_function")
    if gen is None:
        gen = type(cls.__name__ + "Generated", (cls,), {"__module__": cls.__module__})
        cls._generated_function = gen
    return gen


def _wrap_outputs(output, out_dims, unwrapped, originals, level):
    """`output` batched at `level` along `out_dims`; an output that is one of the unwrapped
    arguments is that argument as given (so `mark_dirty`'s identity holds)."""
    flat, spec = tree_flatten(output)
    flat_dims = _broadcast_to_and_flatten(out_dims, spec)
    if flat_dims is None:
        raise RuntimeError("The autograd.Function's vmap staticmethod returned an incompatible "
                           f"(output, out_dims) tuple. Expected out_dims={out_dims} to be "
                           "compatible with the structure of `output`. out_dims has structure "
                           f"{tree_flatten(out_dims)[1]} but output has structure {spec}. "
                           f"{_DOCS}")
    given = {id(u): o for u, o in zip(unwrapped, originals) if isinstance(u, Tensor)}
    result = []
    for o, d in zip(flat, flat_dims):
        if not isinstance(o, Tensor):
            result.append(o)
        elif id(o) in given:
            result.append(given[id(o)])
        else:
            result.append(o if d is None else _wrap(o, d + o.dim() if d < 0 else d, level))
    return tree_unflatten(result, spec)


vmap_state.RULES["function"] = function_under_transforms


# ---- helpers PyTorch's generated rules use ----------------------------------------------------
class WrappedCtx:
    """A view of a Function's ctx that reads and writes through to it, except for the names in
    `_pt_reserved_attrs`, which it keeps itself (a ctx already using one of them is refused)."""
    _pt_reserved_attrs = ("_pt_reserved_attrs", "_pt_inner_ctx")

    def __init__(self, ctx):
        if not isinstance(ctx, WrappedCtx):
            reserved = type(self)._pt_reserved_attrs
            if any(hasattr(ctx, name) for name in reserved):
                raise RuntimeError(f"PyTorch reserves the {reserved} field on ctx. Please name "
                                   "your fields on ctx something else to avoid name collision.")
        self._pt_inner_ctx = ctx

    def __getattr__(self, name):
        return getattr(self._pt_inner_ctx, name)

    def __setattr__(self, name, value):
        if name in type(self)._pt_reserved_attrs:
            self.__dict__[name] = value
        else:
            setattr(self._pt_inner_ctx, name, value)


class CtxWithSavedTensors(WrappedCtx):
    """`ctx` whose `saved_tensors` are `new_saved_tensors`."""
    _pt_reserved_attrs = ("_pt_new_saved_tensors", *WrappedCtx._pt_reserved_attrs)

    def __init__(self, ctx, new_saved_tensors):
        super().__init__(ctx)
        self._pt_new_saved_tensors = new_saved_tensors

    @property
    def saved_tensors(self):
        return self._pt_new_saved_tensors


def reductify_leaf(grad_input, grad_input_bdim, input_bdim, batch_size,
                   target_shape_without_bdim_to_reduce_to=None):
    """A per-example gradient (batch dim `grad_input_bdim`, None if it has none) made to match
    an input batched at `input_bdim` (None: unbatched, so the batch is summed away): a missing
    batch dim is expanded to `batch_size`, the dim moved to `input_bdim`, and with a target
    shape each example summed down to it."""
    if grad_input is None:
        return None
    if grad_input_bdim is None and input_bdim is None:
        return grad_input
    if grad_input_bdim is not None and input_bdim is None:
        return grad_input.sum(grad_input_bdim)
    if grad_input_bdim is None:
        grad_input = grad_input.unsqueeze(input_bdim)
        shape = list(grad_input.shape)
        shape[input_bdim] = batch_size
        grad_input = grad_input.expand(shape)
        grad_input_bdim = input_bdim
    if target_shape_without_bdim_to_reduce_to is not None:
        from .apis import vmap
        return vmap(Tensor.sum_to_size, in_dims=(grad_input_bdim, None), out_dims=input_bdim)(
            grad_input, target_shape_without_bdim_to_reduce_to)
    if input_bdim != grad_input_bdim:
        grad_input = grad_input.movedim(grad_input_bdim, input_bdim)
    return grad_input
