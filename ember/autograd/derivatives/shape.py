"""Derivatives of the view, shape and copy ops (each view's gradient is the inverse view)."""
import warnings

from ..variable_type import derivative, not_differentiable
from ..._aten.shape import split_sizes
from ... import _refs as E
from ._common import _aten, _zero


# ---- views
derivative("view", {"self": lambda grad, self_shape: grad.reshape(self_shape)})
def _repeat_grad(grad, self, repeats):
    """Sum the tiles: view the gradient as (r0, s0, r1, s1, ...) and sum over the r's."""
    size = (1,) * (len(repeats) - self.dim()) + tuple(self.shape)
    tiles = grad.reshape(tuple(v for r, s in zip(repeats, size) for v in (r, s)))
    return tiles.sum(tuple(range(0, 2 * len(size), 2))).reshape(self.shape)


derivative("repeat", {"self": _repeat_grad})
derivative("_unsafe_view", {"self": lambda grad, self_shape: grad.reshape(self_shape)},
           node_name="UnsafeViewBackward0")
derivative("alias", {"self": lambda grad: grad})
derivative("_conj", {"self": lambda grad: grad.conj()})
derivative("_neg_view", {"self": lambda grad: grad.neg()})
derivative("permute", {"self": lambda grad, dims: grad.permute(_inverse_perm(dims))})


def _inverse_perm(dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return inv


derivative("transpose.int", {"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
           node_name="TransposeBackward0")
derivative("expand", {"self": lambda grad, self_shape: grad.sum_to_size(self_shape)})
derivative("squeeze", {"self": lambda grad, self_shape: grad.reshape(self_shape)})
derivative("squeeze.dim", {"self": lambda grad, self_shape: grad.reshape(self_shape)},
           node_name="SqueezeBackward1")
derivative("squeeze.dims", {"self": lambda grad, self_shape: grad.reshape(self_shape)},
           node_name="SqueezeBackward2")
derivative("t", {"self": lambda grad: grad.t()}, node_name="TBackward0")
derivative("unsqueeze", {"self": lambda grad, dim: grad.squeeze(dim)})


def _embed_backward(grad, self_shape, view_fn):
    """Gradient of a view: zeros of the input's shape with `grad` written into the viewed part
    (grad's new_zeros: under vmap, one per example of a batched grad)."""
    out = grad.new_zeros(self_shape)
    return _scatter_view(out, grad, view_fn)


def _scatter_view(out, grad, view_fn):
    if grad.requires_grad:
        # differentiable: out[view] = grad expressed as an index_put over the viewed positions
        idx = E.arange(out.numel(), device=out.device).reshape(out.shape)
        pos = view_fn(idx).reshape(-1)
        return _aten.index_put(out.reshape(-1), [pos], grad.reshape(-1), True) \
            .reshape(out.shape)
    view_fn(out).copy_(grad)
    return out


derivative("select.int", {"self": lambda grad, self_shape, dim, index: _embed_backward(
    grad, self_shape, lambda t: t.select(dim, index))}, node_name="SelectBackward0")
derivative("slice.Tensor", {"self": lambda grad, self_shape, dim, start, end, step:
                            _embed_backward(grad, self_shape,
                                            lambda t: _aten.slice(t, dim, start, end, step))},
           node_name="SliceBackward0")
derivative("slice_inverse", {"self": lambda grad, dim, start, end, step: _aten.slice(
    grad, dim, start, end, step)})
derivative("narrow", {"self": lambda grad, self_shape, dim, start, length: _embed_backward(
    grad, self_shape, lambda t: t.narrow(dim, start, length))}, node_name="SliceBackward0")
derivative("diagonal", {"self": lambda grad, self_shape, offset, dim1, dim2: _embed_backward(
    grad, self_shape, lambda t: t.diagonal(offset, dim1, dim2))})
# unfold's windows may overlap: its gradient adds them up where they were cut (overlap-add)
derivative("unfold", {"self": lambda grad, self_shape, dimension, size, step:
                      _aten.unfold_backward(grad, self_shape, dimension, size, step)})
derivative("unfold_backward", {"grad_in": lambda grad, dim, size, step:
                              grad.unfold(dim, size, step)})


def _as_strided_grad(grad, self, size, stride, storage_offset):
    base = self.storage_offset()
    n = self.untyped_storage().nbytes() // self.element_size()
    flat = E.zeros((n,), dtype=grad.dtype, device=grad.device)
    idx = E.arange(n, device=grad.device)
    if storage_offset is None:  # as_strided keeps the input's own storage offset
        storage_offset = base
    pos = idx.as_strided(size, stride, storage_offset).reshape(-1)
    acc = _aten.index_put(flat, [pos], grad.reshape(-1), True)
    if not self.numel():
        return E.zeros_like(self)
    inpos = idx.as_strided(self.shape, self.stride(), base).reshape(-1)
    got = acc.index_select(0, inpos)
    # an input whose elements overlap in memory (an expanded one) shares each storage
    # element's gradient among the positions that read it, as PyTorch's as_strided_backward
    count = E.zeros_like(idx).index_add_(0, inpos, E.ones_like(inpos))   # int64, as idx
    if bool((count > 1).any()):
        got = got / count.index_select(0, inpos).to(grad.dtype)
    return got.reshape(self.shape)


derivative("as_strided", {"self": _as_strided_grad})


def _split_grad(grads, self_shape, split_sizes, dim):
    return E.cat([g if g is not None else E.zeros(_with(self_shape, dim, s))
                  for g, s in zip(grads, split_sizes)], dim)


def _with(shape, dim, s):
    shape = list(shape)
    shape[dim] = s
    return shape


derivative("split_with_sizes", {"self": _split_grad})
derivative("split.Tensor", {"self": lambda grads, self_shape, split_size, dim: _split_grad(
    grads, self_shape, split_sizes(self_shape[dim], split_size), dim)})
derivative("unbind.int", {"self": lambda grads, dim: E.stack(list(grads), dim)})
derivative("view.dtype", None)

# ---- copies, joins, conversions
derivative("clone", {"self": lambda grad: grad})



# PyTorch's ops for its autograd tests: the default (CPU) gradient of fullcoverage is the bogus
# grad + 1 its test checks for; _test_warn_in_autograd warns from its backward
def _warn_backwards(grad):
    warnings.warn("Warn from backward", stacklevel=2)
    return grad


derivative("_test_autograd_multiple_dispatch.fullcoverage", {"self": lambda grad: grad + 1})
derivative("_test_warn_in_autograd", {"self": _warn_backwards})


def _to_copy_grad(grad, self_dtype, device):
    """The gradient in the input's dtype; of a real input made complex, the real part (no
    warning about the imaginary part it drops). A copy between devices (`Tensor.to` passes
    `device` only then) sends it back to the other of ember's two data devices, cpu and lazy."""
    if grad.is_complex() and not self_dtype.is_complex:
        grad = E.real(grad)
    if device is not None:
        grad = grad.to("lazy" if grad.is_cpu else "cpu")
    return grad.to(self_dtype)


derivative("_to_copy", {"self": _to_copy_grad}, node_name="ToCopyBackward0")


def _cat_grad(grad, tensors_shape, dim):
    # only the operands' shapes are read (PyTorch saves their sizes, not the tensors)
    d = dim % grad.dim() if grad.dim() else 0
    out, start = [], 0
    for shape in tensors_shape:
        if tuple(shape) == (0,) and grad.dim() != 1:  # a legacy empty operand: an empty gradient
            out.append(grad.new_zeros((0,)))
            continue
        s = shape[d] if shape else 0
        out.append(grad.narrow(d, start, s))
        start += s
    return out


derivative("cat", {"tensors": _cat_grad})
derivative("stack", {"tensors": lambda grad, dim: list(grad.unbind(dim))})
derivative("copy_", {"self": _zero, "src": lambda grad, src_shape: grad},
           node_name="CopyBackwards")  # (sic: PyTorch's name for it)
derivative("fill.Scalar", {"self": _zero}, node_name="FillBackward0")
derivative("fill.Tensor", {"self": _zero, "value": lambda grad: grad.sum()},
           node_name="FillBackward1")
derivative("fill_.Scalar", {"self": _zero}, node_name="FillBackward2")
derivative("fill_.Tensor", {"self": _zero, "value": lambda grad: grad.sum()},
           node_name="FillBackward3")
derivative("zero_", {"self": _zero}, node_name="ZeroBackward0")
derivative("flip", {"self": lambda grad, dims: grad.flip(dims)})
derivative("roll", {"self": lambda grad, shifts, dims: grad.roll([-s for s in shifts], dims)})
derivative("tril", {"self": lambda grad, diagonal: grad.tril(diagonal)})
derivative("triu", {"self": lambda grad, diagonal: grad.triu(diagonal)})

# ---- shape and scatter ops
derivative("diag_embed", {"self": lambda grad, offset, dim1, dim2:
                          grad.diagonal(offset, dim1, dim2)})
derivative("rot90", {"self": lambda grad, k, dims: _aten.rot90(grad, -k, dims)})
derivative("select_scatter", {
    "self": lambda grad, src_shape, dim, index: _aten.select_scatter(
        grad, E.zeros(src_shape, dtype=grad.dtype), dim, index),
    "src": lambda grad, dim, index: grad.select(dim, index)})
derivative("slice_scatter", {
    "self": lambda grad, src_shape, dim, start, end, step: _aten.slice_scatter(
        grad, E.zeros(src_shape, dtype=grad.dtype), dim, start, end, step),
    "src": lambda grad, dim, start, end, step: _aten.slice(grad, dim, start, end, step)})
derivative("diagonal_scatter", {
    "self": lambda grad, src_shape, offset, dim1, dim2: _aten.diagonal_scatter(
        grad, E.zeros(src_shape, dtype=grad.dtype), offset, dim1, dim2),
    "src": lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2)})

# ---- in-place view ops: the inverse view of the gradient
derivative("t_", {"self": lambda grad: grad.t()}, node_name="TBackward1")
for _name in ("transpose_", "swapdims_"):
    derivative(_name, {"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
               node_name="TransposeBackward1")
derivative("swapaxes_", {"self": lambda grad, axis0, axis1: grad.transpose(axis0, axis1)},
           node_name="TransposeBackward1")
for _name, _k in (("squeeze_", 3), ("squeeze_.dim", 4), ("squeeze_.dims", 5)):
    derivative(_name, {"self": lambda grad, self_shape: grad.reshape(self_shape)},
               node_name=f"SqueezeBackward{_k}")
derivative("unsqueeze_", {"self": lambda grad, dim: grad.squeeze(dim)},
           node_name="UnsqueezeBackward1")
# as_strided_ has no formula here (its gradient needs self's geometry before the op): backward
# through it raises. resize_ refuses tensors that require grad (see Tensor.resize_).
not_differentiable("resize_", "resize_as_")
# set_ swaps a tensor's memory: what it held before has no gradient path to what it holds now
not_differentiable("set_.source_Tensor")
derivative("poisson", {"self": _zero})  # a sample does not move with its rate
# fractional max pooling sends each gradient where its index points, as adaptive max pooling
derivative("fractional_max_pool2d", {"self": lambda grad, self, result1:
                                     _aten.adaptive_max_pool2d_backward(grad, self, result1)},
           output_differentiability=[True, False])
derivative("fractional_max_pool3d", {"self": lambda grad, self, result1:
                                     _aten.adaptive_max_pool3d_backward(grad, self, result1)},
           output_differentiability=[True, False])
not_differentiable("view.dtype")
not_differentiable("detach", "_local_scalar_dense")
