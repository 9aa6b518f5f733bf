"""The *_copy functions (torch.view_copy, permute_copy, ...): each view op's result copied into
fresh contiguous memory, which PyTorch exposes for functionalization. Built from the view op
and clone, so the gradient is the view op's; as_strided_scatter is the inverse of as_strided.
"""
from .._core.memory_format import contiguous_format
from .. import _refs as B
from .._bindings.out import _copy_out, _finish
from .._core.tensor import Tensor
from .._core.tensor import _wrap_dim
from .._dispatch.dispatcher import impl

__all__ = []


def _copied(view_name, view):
    def fn(input, *args, out=None, **kwargs):
        result = view(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            result = [r.clone(memory_format=contiguous_format) for r in result]
            if out is not None:
                for o, r in zip(out, result):
                    _copy_out(o, r)
                return None
            return tuple(result)
        return _finish(result.clone(memory_format=contiguous_format), False, out)
    fn.__name__ = fn.__qualname__ = view_name + "_copy"
    return fn


def _slice(input, dim=0, start=None, end=None, step=1):
    dim = _wrap_dim(dim, input.dim())
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _ember():
    import ember     # the complex views are defined by the package (elementwise coverage)
    return ember


_VIEWS = dict(
    view=lambda x, *shape: x.view(shape[0] if len(shape) == 1 and
                                  not isinstance(shape[0], int) else shape),
    permute=lambda x, dims: x.permute(dims),
    t=lambda x: x.t(),
    transpose=lambda x, dim0, dim1: x.transpose(dim0, dim1),
    squeeze=lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim),
    unsqueeze=lambda x, dim: x.unsqueeze(dim),
    select=lambda x, dim, index: x.select(dim, index),
    slice=_slice,
    diagonal=lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2),
    expand=lambda x, size, *, implicit=False: x.expand(size),
    unbind=lambda x, dim=0: x.unbind(dim),
    split=lambda x, split_size, dim=0: x.split(split_size, dim),
    split_with_sizes=lambda x, split_sizes, dim=0: x.split(list(split_sizes), dim),
    detach=lambda x: x.detach(),
    alias=lambda x: x.view_as(x),
    unfold=lambda x, dimension, size, step: x.unfold(dimension, size, step),
    as_strided=lambda x, size, stride, storage_offset=None: x.as_strided(size, stride,
                                                                         storage_offset),
    view_as_real=lambda x: _ember().view_as_real(x),
    view_as_complex=lambda x: _ember().view_as_complex(x),
)
for _name, _view in _VIEWS.items():
    globals()[_name + "_copy"] = _copied(_name, _view)
    __all__.append(_name + "_copy")


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of `input` whose as_strided(size, stride, storage_offset) view holds `src`."""
    view_shape = input.as_strided(size, stride, storage_offset).shape
    if tuple(src.shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view_shape)}")
    result = input.clone(memory_format=contiguous_format)
    if input.stride() != result.stride() or input.storage_offset() != 0:
        raise NotImplementedError("as_strided_scatter: only contiguous inputs with storage "
                                  "offset 0 are supported")
    result.as_strided(size, stride, storage_offset).copy_(src)
    return result


__all__.append("as_strided_scatter")
Tensor.as_strided_scatter = as_strided_scatter


@impl("copy", "CompositeImplicitAutograd")
def _copy_functional(self, src, non_blocking=False):
    """aten.copy, copy_'s functional form: a new tensor like `self` (its dtype, layout and
    device) holding `src` broadcast to its shape."""
    return B.clone(self).copy_(src, non_blocking)
