"""The *_copy functions (torch.view_copy, permute_copy, ...): each view op's result copied into
fresh contiguous memory, which PyTorch exposes for functionalization. Each calls its aten op
(`aten.slice_copy.Tensor`, kernels and derivatives derived from the view's in _aten/shape.py and
autograd/derivatives); as_strided_scatter is the inverse of as_strided.
"""
from .._bindings.out import _check_out_dtype, _copy_out, _finish
from .._core.memory_format import contiguous_format
from .._core.dtype import dtype as _dtype
from .._core.tensor import Tensor
from .._dispatch.dispatcher import impl, lookup as _op

__all__ = []


def _copied(name, choose):
    """torch.<name>: the overload `choose(*args, **kwargs)` picks, its results copied into `out`."""
    def fn(input, *args, out=None, **kwargs):
        result = choose(*args, **kwargs)(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            if out is not None:
                for o, r in zip(out, result):
                    _check_out_dtype(name, o.dtype, r.dtype, ())
                    _copy_out(o, r)
                return None
            return tuple(result)
        return _finish(result, False, out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _view_copy(size=None, dtype=None):
    return _op("view_copy.dtype") if isinstance(size if dtype is None else dtype, _dtype) \
        else _op("view_copy")


def _squeeze_copy(dim=None):
    if dim is None:
        return _op("squeeze_copy")
    return _op("squeeze_copy.dim" if isinstance(dim, int) else "squeeze_copy.dims")


_OVERLOADS = {"view_copy": _view_copy, "squeeze_copy": _squeeze_copy,
              "transpose_copy": "transpose_copy.int", "select_copy": "select_copy.int",
              "slice_copy": "slice_copy.Tensor", "unbind_copy": "unbind_copy.int",
              "split_copy": "split_copy.Tensor"}
for _name in ("view_copy", "permute_copy", "t_copy", "transpose_copy", "squeeze_copy",
              "unsqueeze_copy", "select_copy", "slice_copy", "diagonal_copy", "expand_copy",
              "unbind_copy", "split_copy", "split_with_sizes_copy", "detach_copy", "alias_copy",
              "unfold_copy", "as_strided_copy", "view_as_real_copy", "view_as_complex_copy"):
    _choose = _OVERLOADS.get(_name, _name)
    if isinstance(_choose, str):
        _choose = (lambda op: lambda *args, **kwargs: op)(_op(_choose))
    globals()[_name] = _copied(_name, _choose)
    __all__.append(_name)


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
    return _op("clone")(self).copy_(src, non_blocking)
