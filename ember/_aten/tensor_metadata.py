"""The tensor metadata queries as operators, named as PyTorch names them for
`__torch_dispatch__`: is_contiguous, is_strides_like_format, is_non_overlapping_and_dense, stride,
sym_stride. Called as ops (`torch.ops.aten.stride.default(t)`) they read the tensor's geometry.

A Python-key tensor made with `dispatch_sizes_strides_policy="strides"` (or "sizes") asks its
handler first -- `Tensor.is_contiguous()` and `Tensor.stride()` of such a tensor call these ops
-- and a handler that returns None leaves the answer to the geometry, as PyTorch's slow path
for such tensors does. The mark is `_dispatch_strides` in the tensor's __dict__, set by
`_make_subclass` / `_make_wrapper_subclass`; plain tensors never look for it."""
from .._core.memory_format import (channels_last, channels_last_3d, is_contiguous_as,
                                   is_non_overlapping_and_dense as _dense,
                                   _strides_like_channels_last)
from .._core.tensor import Tensor
from .._dispatch.dispatcher import impl, lookup

POLICY_MARK = "_dispatch_strides"


def _asking(op, default):
    """A composite kernel for `op`: the handler's answer for a marked tensor, else (or when the
    handler returns None) `default(t, *args)` computed from the geometry with the mark lifted,
    so that the Tensor methods `default` calls do not ask again."""
    def kernel(t, *args):
        marks = t.__dict__
        if POLICY_MARK not in marks:
            return default(t, *args)
        from .._dispatch.python_dispatch import python_fallback, dispatch_disabled
        if not dispatch_disabled():
            answer = python_fallback(op, "Python", (t, *args))
            if answer is not None:
                return answer
        mark = marks.pop(POLICY_MARK)
        try:
            return default(t, *args)
        finally:
            marks[POLICY_MARK] = mark
    impl(op, "CompositeImplicitAutograd")(kernel)
    return op


def _strides_like(t, memory_format):
    """PyTorch's TensorImpl::is_strides_like: channels-last(-3d) strides on a 4-d (5-d) tensor;
    False for any other format."""
    nd = {channels_last: 4, channels_last_3d: 5}.get(memory_format)
    return nd == t.dim() and _strides_like_channels_last(t._size, t.stride())


is_contiguous = _asking(lookup("is_contiguous"), lambda t: Tensor.is_contiguous(t))
is_contiguous_memory_format = _asking(lookup("is_contiguous.memory_format"),
                                      lambda t, fmt: is_contiguous_as(t, fmt))
is_strides_like_format = _asking(lookup("is_strides_like_format"), _strides_like)
is_non_overlapping_and_dense = _asking(lookup("is_non_overlapping_and_dense"),
                                       lambda t: _dense(t._size, t.stride()))
stride = _asking(lookup("stride"), lambda t: list(Tensor.stride(t)))
sym_stride = _asking(lookup("sym_stride"), lambda t: list(Tensor.stride(t)))
