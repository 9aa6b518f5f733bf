"""Derivatives of indexing, gathers, scatters and puts."""
import math
from ..delayed_error import DelayedError
from ..variable_type import derivative, not_differentiable, not_implemented
from ... import _refs as E
from ._common import _aten


# ---- indexing
derivative("index.Tensor", {"self": lambda grad, self_shape, indices: _aten.index_put(
    E.zeros(self_shape, dtype=grad.dtype, device=grad.device), indices, grad, True)},
    node_name="IndexBackward0")


def _index_put_self(grad, indices, accumulate):
    if accumulate:
        return grad
    return _aten.index_put(grad, indices, E.zeros((), dtype=grad.dtype), False)


derivative("index_put", {"self": _index_put_self,
                         "values": lambda grad, indices, values_shape:
                             _aten.index(grad, indices).sum_to_size(values_shape)})
derivative("masked_fill.Scalar", {"self": lambda grad, mask: grad.masked_fill(mask, 0)},
           node_name="MaskedFillBackward0")
derivative("masked_fill.Tensor", {"self": lambda grad, mask: grad.masked_fill(mask, 0),
                                  "value": lambda grad, mask: grad.masked_fill(~mask, 0).sum()},
           node_name="MaskedFillBackward1")
derivative("index_select", {"self": lambda grad, self_shape, dim, index: _aten.index_put(
    E.zeros(self_shape, dtype=grad.dtype, device=grad.device),
    [None] * (dim % len(self_shape)) + [index.reshape(-1)], grad, True) if self_shape else grad})
derivative("gather", {"self": lambda grad, self_shape, dim, index: _aten.scatter_add(
    E.zeros(self_shape, dtype=grad.dtype, device=grad.device), dim, index, grad)})
derivative("scatter_add", {"self": lambda grad: grad,
                           "src": lambda grad, dim, index: grad.gather(dim, index)})
_scatter_src = {"self": lambda grad, dim, index: grad.scatter(dim, index, 0),
                "src": lambda grad, dim, index: grad.gather(dim, index)}
derivative("scatter.src", _scatter_src, node_name="ScatterBackward0")
derivative("scatter.value", {"self": _scatter_src["self"]}, node_name="ScatterBackward1")


def _index_add_source(grad, dim, index, source_shape, alpha):
    g = grad.index_select(dim, index) if grad.dim() else grad
    g = g.reshape(source_shape)
    return g if alpha == 1 else g * alpha


derivative("index_add", {"self": lambda grad: grad, "source": _index_add_source})
derivative("index_fill.int_Scalar", {"self": lambda grad, dim, index: grad.index_fill(dim, index,
                                                                                      0)},
           node_name="IndexFillBackward0")
# value: the filled positions' gradients, each position once however often index names it
derivative("index_fill.int_Tensor", {
    "self": lambda grad, dim, index: grad.index_fill(dim, index, 0),
    "value": lambda grad, dim, index: (grad.index_select(dim, index.unique()) if grad.dim()
                                       else grad).sum()},
    node_name="IndexFillBackward1")


def _masked_select_grad(grad, self_shape, mask):
    shape = E.broadcast_shapes(self_shape, mask.shape)
    out = E.zeros(shape, dtype=grad.dtype, device=grad.device)
    if not shape:   # a 0-d mask, which index_put refuses: grad holds the one element or none
        return E.where(mask, grad.sum(), out)
    return _aten.index_put(out, [mask.expand(shape)], grad, True)


derivative("masked_select", {"self": _masked_select_grad})

# ---- scatter reductions, copies and puts


def _reduce_backward(grad, self, src, result, reduce, include_self, pick, spread, again,
                     clear, names):
    """PyTorch's scatter_reduce_backward / index_reduce_backward, for reductions that place
    src's entries into self: `pick(t)` reads t where each src entry went, `spread(t, v)` adds v
    there, `again(s, v)` reruns the reduction and `clear(g)` zeroes the reached positions.
    prod divides the result by each factor, except where a factor is zero: a lone zero among
    src's contributions gets the product of the others (recomputed with that zero replaced by
    one); where two or more zeros meet, that gradient cannot be differentiated again (a
    DelayedError node, as PyTorch's). amax/amin share the gradient evenly between all entries
    equal to the result."""
    if reduce == "sum":
        grad_self, grad_src = grad, pick(grad)
    elif reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        grad_self = grad * again(masked_self, src) / masked_self
        src_zero = src == 0
        src_num_zeros = pick(spread(E.zeros_like(self), src_zero.to(self.dtype)))
        src_single_zero = src_zero & (src_num_zeros == 1)
        masked_src_result = again(self, src.masked_fill(src_single_zero, 1))
        grad_src = E.where(src_single_zero, pick(grad * masked_src_result),
                           pick(grad * result) / src.masked_fill(src_zero, 1))
        if bool((src_num_zeros.abs() > 1).any()):  # (abs: complex counts compare too)
            op_name, arg = names
            grad_src = DelayedError(
                f"{op_name}(): Double backward is unsupported for {arg} when >1 zeros in {arg} "
                "are scattered to the same position in self", 1)(grad_src)
    elif reduce == "mean":
        n = E.ones_like(grad) if include_self else E.zeros_like(grad)
        n = spread(n, E.ones_like(src, dtype=grad.dtype))
        n = n.masked_fill(n == 0, 1)
        grad_self, grad_src = grad / n, pick(grad) / pick(n)
    elif reduce in ("amax", "amin"):
        self_is_result = self == result
        src_is_value = src == pick(result)
        shared = grad / spread(self_is_result.to(grad.dtype), src_is_value.to(grad.dtype))
        grad_self = shared * self_is_result
        grad_src = pick(shared) * src_is_value
    else:  # the forward's undocumented "max" / "min" spellings
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    return (grad_self if include_self else clear(grad_self)), grad_src


def _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result):
    return _reduce_backward(
        grad, self, src, result, reduce, include_self,
        pick=lambda t: t.gather(dim, index), spread=lambda t, v: t.scatter_add(dim, index, v),
        again=lambda s, v: s.scatter_reduce(dim, index, v, reduce, include_self=include_self),
        clear=lambda g: g.scatter(dim, index, 0), names=("scatter_reduce", "src"))


def _index_reduce_grads(grad, self, dim, index, source, reduce, include_self, result):
    return _reduce_backward(
        grad, self, source, result, reduce, include_self,
        pick=lambda t: t.index_select(dim, index),
        spread=lambda t, v: t.index_add(dim, index, v),
        again=lambda s, v: s.index_reduce(dim, index, v, reduce, include_self=include_self),
        clear=lambda g: g.index_fill(dim, index, 0), names=("index_reduce", "source"))


derivative("index_reduce", {"self, source": _index_reduce_grads})
derivative("scatter_reduce.two", {"self, src": _scatter_reduce_grads})


def _masked_scatter_source(grad, mask, source_shape):
    """The masked positions' gradients in order, padded with zeros to source's size."""
    selected = grad.masked_select(mask)
    n = math.prod(source_shape)
    if selected.numel() < n:
        selected = E.cat([selected, selected.new_zeros(n - selected.numel())])
    return selected.reshape(source_shape)


_masked_scatter = {"self": lambda grad, mask: grad.masked_fill(mask, 0),
                   "source": _masked_scatter_source}
derivative("masked_scatter", _masked_scatter)


def _index_copy_source(grad, dim, index, source_shape):
    if not source_shape:
        return grad.index_select(dim, index.reshape(-1)).reshape(())
    return grad.index_select(dim, index).expand(source_shape)


_index_copy = {"self": lambda grad, dim, index: grad.index_fill(dim, index, 0),
               "source": _index_copy_source}
derivative("index_copy", _index_copy)
_put = {"self": lambda grad, index, source_shape, accumulate: grad if accumulate else
        grad.put(index, E.zeros(source_shape, dtype=grad.dtype, device=grad.device)),
        "source": lambda grad, index, source_shape: grad.take(index).reshape(source_shape)}
derivative("put", _put)
derivative("take", {"self": lambda grad, self_shape, index: E.zeros(
    self_shape, dtype=grad.dtype, device=grad.device).put(index, grad, True)})
not_implemented("bincount", "scatter.reduce", "scatter_.reduce", "scatter.value_reduce",
                "scatter_.value_reduce")
not_differentiable("nonzero", "nonzero.as_tuple")
