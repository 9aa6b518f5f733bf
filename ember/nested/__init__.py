"""torch.nested with the strided layout: construction (`nested_tensor` copies, `as_nested_tensor`
keeps the components' autograd history), `to_padded_tensor`, and the private constructors
PyTorch's layers use (`torch._nested_tensor_from_mask` for nn.TransformerEncoder's fast path,
`torch._nested_from_padded`). The tensor itself is in _nested_tensor.py, the functions it
supports in _ops.py. The jagged layout is not provided.
"""
import warnings

from .._core._warnings import user_stacklevel as _user_stacklevel
from .._core.tensor import Tensor
from ._nested_tensor import NestedTensor

__all__ = ["nested_tensor", "as_nested_tensor", "to_padded_tensor"]


def _components(tensor_list, dtype, device):
    """Contiguous copies of tensor_list's tensors (with their autograd history), all of the
    first one's dtype unless dtype is given."""
    import ember
    comps = []
    for t in tensor_list:
        if not isinstance(t, Tensor):
            t = ember.tensor(t, dtype=dtype, device=device)
        t = t.to(device=device, dtype=dtype)
        comps.append(t.clone(memory_format=ember.contiguous_format))
    for i, c in enumerate(comps[1:], 1):
        if c.dim() != comps[i - 1].dim():
            raise RuntimeError(f"All Tensors given to nested_tensor must have the same "
                               f"dimension. Found dimension {c.dim()} for Tensor at index {i} "
                               f"and dimension {comps[i - 1].dim()} for Tensor at index {i - 1}.")
    if comps and dtype is None:
        comps = [c.to(comps[0].dtype) for c in comps]
    return comps


def _check_layout(layout):
    from .._core.layout import strided
    if layout is not None and layout is not strided:
        raise NotImplementedError(f"ember.nested supports the strided layout only, got "
                                  f"{layout}")
    warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change in "
                  "the near future. We recommend specifying layout=torch.jagged when "
                  "constructing a nested tensor, as this layout receives active development, "
                  "has better operator coverage, and works with torch.compile.",
                  stacklevel=_user_stacklevel())


def _empty(dtype, device):
    import ember
    return NestedTensor._from_components([], dtype or ember.get_default_dtype(), device)


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A NestedTensor of copies of `tensor_list` (a leaf: no autograd history)."""
    _check_layout(layout)
    if not isinstance(tensor_list, list):
        raise TypeError("Only lists (List[Tensor] and List[List...[Scalar]]) are accepted in "
                        "nested_tensor")
    import ember
    with ember.no_grad():
        comps = _components(tensor_list, dtype, device)
    if not comps:
        return _empty(dtype, device).requires_grad_(requires_grad)
    return NestedTensor._from_components(comps).requires_grad_(requires_grad)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A NestedTensor of copies of `ts` that keeps their autograd history (gradients flow
    back to them)."""
    _check_layout(layout)
    if isinstance(ts, NestedTensor):
        return ts
    if isinstance(ts, Tensor):
        ts = list(ts.unbind(0))
    elif not isinstance(ts, (list, tuple)):
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list "
                        f"/ tuple of tensors, got {type(ts).__name__}")
    comps = _components(ts, dtype, device)
    return NestedTensor._from_components(comps) if comps else _empty(dtype, device)


def to_padded_tensor(input, padding, output_size=None, out=None):
    """`input.to_padded_tensor(padding, output_size)`."""
    return input.to_padded_tensor(padding, output_size)


# ---- the private constructors (torch._nested_*) ------------------------------------------------
def _nested_tensor_from_mask(t, mask, mask_check=True):
    """The rows of t (N, L, D) that `mask` (N, L) keeps: row i's first mask[i].sum() entries,
    as component i. With mask_check, the mask must be left-aligned (no True after a False)."""
    import ember
    if mask.dtype is not ember.bool:
        raise RuntimeError(f"Expected mask to be of ScalarType Bool, but got "
                           f"{_scalar_type_name(mask.dtype)} instead.")
    if t.dim() != 3:
        raise RuntimeError("Input should be a 3D tensor, N * L * D")
    if mask.dim() != 2 or tuple(mask.shape) != tuple(t.shape[:2]):
        raise RuntimeError("Mask size should match input size")
    if mask_check and not _nested_tensor_from_mask_left_aligned(t, mask):
        raise RuntimeError("Mask must be left-aligned without gaps")
    lengths = mask.sum(1).tolist()
    return NestedTensor._from_components([t[i, :n].clone(memory_format=ember.contiguous_format)
                                          for i, n in enumerate(lengths)])


def _nested_tensor_from_mask_left_aligned(t, mask):
    """Whether every row of `mask` is some Trues followed only by Falses."""
    import ember
    if mask.dtype is not ember.bool:
        raise RuntimeError(f"Expected mask to be of ScalarType Bool, but got "
                           f"{_scalar_type_name(mask.dtype)} instead.")
    m = mask.long()
    return bool((m[:, 1:] <= m[:, :-1]).all()) if m.shape[-1] > 1 else True


def _nested_from_padded(padded, cpu_nested_shape_example, fuse_transform_0213=False):
    """Component i: padded[i] cut to the sizes in row i of `cpu_nested_shape_example`. With
    fuse_transform_0213, padded is (N, heads, L, D) and is first made (N, L, heads * D), as
    the attention layers' output projection wants it."""
    if fuse_transform_0213:
        n, heads, length, d = padded.shape
        padded = padded.permute(0, 2, 1, 3).reshape(n, length, heads * d)
    return _cut(padded, [tuple(s) for s in cpu_nested_shape_example.tolist()])


def _nested_from_padded_and_nested_example(padded, nt_example):
    return _cut(padded, [tuple(c.shape) for c in nt_example._components])


def _cut(padded, sizes):
    import ember
    return NestedTensor._from_components(
        [padded[i][tuple(slice(0, s) for s in size)].clone(memory_format=ember.contiguous_format)
         for i, size in enumerate(sizes)])


def _scalar_type_name(dtype):
    from .._core import dtype as D
    return D.scalar_type_name(dtype)
