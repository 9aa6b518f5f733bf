"""The functions a strided NestedTensor supports (PyTorch's NestedTensorCPU kernels), each the
dense function applied component by component after PyTorch's checks, with PyTorch's messages.

`dispatch` is NestedTensor.__torch_function__: it finds the handler by the function's name.
Elementwise functions and arithmetic with a scalar (or a 0-dim tensor) share one handler each;
shape functions (transpose, view, chunk, ...) turn the nested dimension arguments into the
components' (nested dim d is component dim d - 1), and refuse dimension 0, which indexes the
components. A function without a handler raises NotImplementedError as PyTorch's dispatcher does.
"""
from .._core.tensor import Tensor
from ._nested_tensor import NestedTensor, _wrap_dim

_HANDLERS = {}
# the ATen operator PyTorch names when a Python operator has no nested kernel
_ATEN_OVERLOADS = {"__rsub__": "rsub.Scalar", "__rtruediv__": "reciprocal"}

# the elementwise functions with NestedTensorCPU kernels (others, e.g. exp, raise there too):
# PyTorch runs them on the buffer, so a nested tensor that is not contiguous is refused
_UNARY = ["abs", "cos", "neg", "relu", "sgn", "sin", "sqrt", "tanh", "gelu", "silu",
          "logical_not", "isnan", "isinf", "isposinf", "isneginf"]
_CONVERSIONS = ["float", "double", "half", "bfloat16", "long", "int", "bool", "short", "char",
                "byte"]
_BINARY = ["add", "sub", "mul", "div", "__add__", "__radd__", "__sub__", "__mul__", "__rmul__",
           "__truediv__", "eq", "ne", "ge", "gt", "le", "lt", "__eq__", "__ne__", "__ge__",
           "__gt__", "__le__", "__lt__"]
# the binary kernels that walk both buffers in step: the layouts must be the same
_SAME_LAYOUT = {"mul", "div", "mul_", "div_"}
_IN_PLACE_BINARY = ["add_", "sub_", "mul_", "div_", "__iadd__", "__isub__", "__imul__",
                    "__itruediv__"]
# methods of NestedTensor reached through a torch.* function (torch.numel(nt), torch.unbind(nt))
_METHODS = {"dim", "ndimension", "numel", "nelement", "size", "stride", "unbind",
            "is_contiguous", "data_ptr", "requires_grad_", "backward", "detach", "__repr__",
            "__len__", "__iter__", "_nested_tensor_size", "_nested_tensor_strides",
            "_nested_tensor_storage_offsets"}


def dispatch(func, args, kwargs):
    name = getattr(func, "__name__", "")
    if name in _HANDLERS:
        return _HANDLERS[name](func, *args, **kwargs)
    if name in _METHODS:
        return getattr(NestedTensor, name)(*args, **kwargs)
    if name in ("get", "__get__"):  # properties (dtype, layout, device): the buffer's
        return Tensor.__torch_function__.__func__(NestedTensor, func, (NestedTensor,), args,
                                                  kwargs)
    raise NotImplementedError(f"Could not run 'aten::{_ATEN_OVERLOADS.get(name, name.strip('_'))}' "
                              "with arguments from the 'NestedTensorCPU' backend. This could be "
                              "because the operator doesn't exist for this backend.")


def implements(*names):
    def register(handler):
        for n in names:
            _HANDLERS[n] = handler
        return handler
    return register


def _nested(components, like=None):
    if like is not None and not components:
        return NestedTensor._from_components([], like.dtype, like.device)
    return NestedTensor._from_components(components)


def _each(nt, fn):
    return _nested([fn(c) for c in nt._components], like=nt)


def _view(nt, components):
    """A nested tensor of views of nt's components: a view of nt (its `_base`)."""
    out = _nested(components, like=nt)
    out._base = nt._base if nt._base is not None else nt
    return out


def _sizes(nt):
    return [tuple(c.shape) for c in nt._components]


def _strides(nt):
    return [c.stride() for c in nt._components]


def storages(nt):
    """The components' storages in order of first use, each with the element at which it
    starts in PyTorch's one buffer, which they stand for laid end to end."""
    starts, end = {}, 0
    for c in nt._components:
        key = c.untyped_storage().data_ptr()
        if key not in starts:
            starts[key] = (end, c)
            end += c.untyped_storage().nbytes() // c.element_size()
    return starts


def storage_offsets(nt):
    """Where each component starts in the buffer: a chunk of the last dimension starts inside
    its component's storage."""
    starts = storages(nt)
    return [starts[c.untyped_storage().data_ptr()][0] + c.storage_offset()
            for c in nt._components]


def _component_dim(dim, nt, what):
    """A nested dimension (not 0) as the components' dimension."""
    d = _wrap_dim(dim, nt.dim())
    if d == 0:
        raise RuntimeError(what)
    return d - 1


def memory_order(c):
    """The permutation that lists c's dimensions outermost-in-memory first (c.permute(p) is
    contiguous for a transposed component): walking it visits c's elements in storage order,
    as PyTorch's kernels walk a nested tensor's buffer."""
    return sorted(range(c.dim()), key=lambda i: (-c.stride(i), i))


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


# ---- elementwise -------------------------------------------------------------------------------
def _buffer_of(nt):
    if not nt.is_contiguous():
        raise RuntimeError("NestedTensor must be contiguous to get buffer.")


@implements(*_UNARY)
def _unary(func, nt, *args, **kwargs):
    _buffer_of(nt)
    return _each(nt, lambda c: func(c, *args, **kwargs))


@implements(*_CONVERSIONS)
def _conversion(func, nt, *args, **kwargs):
    return _each(nt, lambda c: func(c, *args, **kwargs))


@implements(*[n + "_" for n in _UNARY])
def _unary_(func, nt, *args, **kwargs):
    _buffer_of(nt)
    for c in nt._components:
        func(c, *args, **kwargs)
    return nt


def _aten_name(name):
    """The ATen op a Python arithmetic method runs: __iadd__ is add_, __rtruediv__ is div."""
    if not name.startswith("__"):
        return name
    base = name.strip("_").replace("truediv", "div")
    if base[0] == "i" and base[1:] in ("add", "sub", "mul", "div"):
        return base[1:] + "_"
    return base[1:] if base[0] == "r" and base[1:] in ("add", "sub", "mul", "div") else base


def _check_operands(name, a, b):
    """PyTorch's nested binary kernels take a nested tensor with one of the same sizes, or a
    scalar (a Python number or a 0-dim tensor)."""
    for x, y, side in ((a, b, "a nested self and non-nested other"),
                       (b, a, "a non-nested self and nested other")):
        if isinstance(x, NestedTensor) and isinstance(y, Tensor) and \
                not isinstance(y, NestedTensor) and y.dim() != 0:
            raise RuntimeError(f"Expected both self and other to be nested, but got {side}")
    if isinstance(a, NestedTensor) and isinstance(b, NestedTensor):
        op = _aten_name(name)
        if _sizes(a) != _sizes(b):
            raise RuntimeError(f"{op} does not support broadcasting when given a NestedTensor")
        if op in _SAME_LAYOUT:
            if _strides(a) != _strides(b):
                raise RuntimeError(f"{op} requires strides to match when given NestedTensors")
            if storage_offsets(a) != storage_offsets(b):
                raise RuntimeError(f"{op} requires offsets to match when given NestedTensors")


def _parts(x, n):
    return x._components if isinstance(x, NestedTensor) else [x] * n


@implements(*_BINARY)
def _binary(func, a, b, *args, **kwargs):
    _check_operands(func.__name__, a, b)
    nt = a if isinstance(a, NestedTensor) else b
    n = len(nt._components)
    return _nested([func(x, y, *args, **kwargs) for x, y in zip(_parts(a, n), _parts(b, n))],
                   like=nt)


@implements(*_IN_PLACE_BINARY)
def _binary_(func, a, b, *args, **kwargs):
    if not isinstance(a, NestedTensor) and a.dim() == 0:
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                           f"[{b.numel()}]")
    _check_operands(func.__name__, a, b)
    for x, y in zip(a._components, _parts(b, len(a._components))):
        func(x, y, *args, **kwargs)
    return a


@implements("is_same_size")
def _is_same_size(func, a, other):
    """Nested tensors are the same size when their components are, one by one; a nested
    tensor and a dense one are not comparable."""
    nested = [isinstance(t, NestedTensor) for t in (a, other)]
    if not all(nested):
        words = ["nested" if n else "not nested" for n in nested]
        raise RuntimeError(f"Expected both self and other to be nested tensors. Self is "
                           f"{words[0]}. While Other is {words[1]}.")
    return _sizes(a) == _sizes(other)


# ---- copies, conversions, factories ------------------------------------------------------------
@implements("clone")
def _clone(func, nt, *, memory_format=None):
    import ember
    if memory_format not in (None, ember.preserve_format, ember.contiguous_format):
        words = "".join(w.capitalize() for w in str(memory_format).split(".")[-1].split("_"))
        raise RuntimeError(f"Nested tensor clone supports Preserve and Contiguous memory "
                           f"formats, called clone with memory format: {words}")
    return _each(nt, lambda c: c.clone(memory_format=memory_format or ember.preserve_format))


@implements("contiguous")
def _contiguous(func, nt, memory_format=None):
    return nt if nt.is_contiguous() else _each(nt, lambda c: c.contiguous())


@implements("to")
def _to(func, nt, *args, **kwargs):
    if args and isinstance(args[0], Tensor):  # to(other): other's device and dtype
        args = (args[0].device, args[0].dtype) + args[1:]
    moved = [c.to(*args, **kwargs) for c in nt._components]
    if all(m is c for m, c in zip(moved, nt._components)):
        return nt
    dtype = kwargs.get("dtype", next((a for a in args if not isinstance(a, (str, bool)) and
                                      type(a).__name__ == "dtype"), nt.dtype))
    return NestedTensor._from_components(moved, dtype, nt.device)


@implements("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like")
def _like(func, nt, *args, requires_grad=False, **kwargs):
    out = _each(nt, lambda c: func(c, *args, **kwargs))
    return out.requires_grad_() if requires_grad else out


@implements("copy_")
def _copy_(func, nt, src, non_blocking=False):
    if not isinstance(src, NestedTensor) or _sizes(nt) != _sizes(src):
        raise RuntimeError("copy_ only supports tensors that are the same size for Nested "
                           "implementations")
    for c, s in zip(nt._components, src._components):
        c.copy_(s, non_blocking)
    return nt


@implements("fill_")
def _fill_(func, nt, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    for c in nt._components:
        c.fill_(value)
    return nt


@implements("zero_")
def _zero_(func, nt):
    for c in nt._components:
        c.zero_()
    return nt


@implements("values")
def _values(func, nt):
    """The components' elements in storage order, as one 1-D tensor (PyTorch's buffer)."""
    import ember
    if not nt._components:
        return ember.empty(0, dtype=nt.dtype, device=nt.device)
    return ember.cat([c.permute(memory_order(c)).reshape(-1) for c in nt._components])


@implements("to_padded_tensor")
def _to_padded_tensor(func, nt, padding, output_size=None, out=None):
    """One strided tensor: the components padded with `padding` to the largest size (or
    `output_size`) in every dimension, stacked; differentiable."""
    import ember
    if not nt.is_contiguous():
        raise RuntimeError("for now to_padded_tensor only supports contiguous nested tensor")
    if not nt._components:
        return ember.empty(output_size or (0,), dtype=nt.dtype)
    if all(c.numel() == 0 for c in nt._components):
        raise RuntimeError("to_padded_tensor: at least one constituent tensor should have "
                           "non-zero numel")
    ndim = nt._components[0].dim()
    target = [max(c.shape[i] for c in nt._components) for i in range(ndim)]
    if output_size is not None:
        if len(output_size) != ndim + 1:
            raise RuntimeError("Length of output_size does not match NestedTensor dims. "
                               "Broadcasting is not supported.")
        if any(o < t for o, t in zip(output_size[1:], target)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        target = list(output_size[1:])
    padded = []
    for c in nt._components:
        pads = []
        for i in reversed(range(ndim)):
            pads += [0, target[i] - c.shape[i]]
        padded.append(ember.nn.functional.pad(c, pads, value=padding) if ndim else c)
    return ember.stack(padded)


# ---- indexing and shapes -----------------------------------------------------------------------
@implements("__getitem__")
def _getitem(func, nt, index):
    first, rest = (index[0], index[1:]) if isinstance(index, tuple) else (index, ())
    if first is Ellipsis and not rest:
        return nt
    if not isinstance(first, int) or isinstance(first, bool):
        raise NotImplementedError("Could not run 'aten::slice.Tensor' with arguments from the "
                                  "'NestedTensorCPU' backend. This could be because the "
                                  "operator doesn't exist for this backend.")
    n = len(nt._components)
    if n == 0:
        raise IndexError("You can only select when the NT is not empty.")
    if not -n <= first < n:
        raise IndexError(f"index {first} is out of bounds for dimension 0 with size {n}")
    return nt._components[first][rest if rest else ...]


@implements("select")
def _select(func, nt, dim, index):
    d = _wrap_dim(dim, nt.dim())
    if d == 0:
        return _getitem(func, nt, index)
    out = []
    for i, c in enumerate(nt._components):
        size = c.shape[d - 1]
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension {d - 1} of the "
                             f"{i}th constituent tensor with size {size}")
        out.append(c.select(d - 1, index))
    return _view(nt, out)


@implements("masked_fill")
def _masked_fill(func, nt, mask, value):
    return _nested([c.masked_fill(m, value) for c, m in zip(nt._components, _parts(
        mask, len(nt._components)))], like=nt)


@implements("narrow")
def _narrow(func, nt, dim, start, length):
    if _wrap_dim(dim, nt.dim()) != 0:
        raise RuntimeError(f"narrow(): only dim=0 supported for nested tensors, but got: {dim}")
    if not nt.is_contiguous():
        raise RuntimeError("narrow(): only contiguous nested tensors supported")
    start = start.item() if isinstance(start, Tensor) else start
    return _view(nt, nt._components[start:start + length])


@implements("transpose")
def _transpose(func, nt, dim0, dim1):
    ndim = nt.dim()
    d0, d1 = _wrap_dim(dim0, ndim), _wrap_dim(dim1, ndim)
    if d0 == 0 or d1 == 0:
        raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
    return _view(nt, [c.transpose(d0 - 1, d1 - 1) for c in nt._components])


@implements("squeeze")
def _squeeze(func, nt, dim=None):
    if dim is None:
        raise RuntimeError("squeeze(): For nested tensors, squeeze without the dim argument is "
                           "not supported at the moment, however you can use squeeze(Tensor "
                           "self, int dim) instead if you need this feature, please open an "
                           "issue on github describing your use case.")
    d = _component_dim(dim, nt, "squeeze(): For nested tensors, squeezing dimension 0 is not "
                       "supported at the moment if you need this feature, please open an "
                       "issue on github describing your use case.")
    if nt.dim() == 2 and any(c.shape == (1,) for c in nt._components):
        raise RuntimeError("squeeze(): For nested tensors, squeezing a nested tensor of "
                           "singleton tensors is not supported at the moment, if you need "
                           "this feature, please open an issue on githubdescribing your use "
                           "case.")
    return _view(nt, [c.squeeze(d) for c in nt._components])


@implements("unsqueeze")
def _unsqueeze(func, nt, dim):
    ndim = nt.dim() + 1
    d = _wrap_dim(dim, ndim)
    if d == 0:
        raise RuntimeError("unsqueeze(): For nested tensors, unsqueezing dimension 0 is not "
                           "supported at the moment if you need this feature, please open an "
                           "issue on github describing your use case.")
    return _view(nt, [c.unsqueeze(d - 1) for c in nt._components])


def _component_shape(name, shape, c):
    """A component's new shape for nt.view/reshape(shape) (Note [Special size rule for nested
    tensor] in PyTorch): a -1 where the component has a dimension keeps its size there; growing
    the rank, one -1 among the old dimensions is allowed and none among the new ones."""
    new, old = list(shape[1:]), list(c.shape)
    if len(new) > len(old):
        if [s for s in new[:len(old)] if s == -1][1:]:
            raise RuntimeError("only one dimension can be inferred")
        if -1 in new[len(old):]:
            raise RuntimeError("nested tensor does not infer shape")
    new = [old[i] if s == -1 and i < len(old) else s for i, s in enumerate(new)]
    numel = c.numel()
    product = 1
    for s in new:
        product *= s
    if product != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return new


def _reshaping(name):
    def handler(func, nt, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
            else shape
        if not shape:
            raise RuntimeError("shape '[]' is invalid for a nested tensor")
        if not nt._components:
            raise RuntimeError("empty nested tensor cannot be reshaped")
        if shape[0] != len(nt._components):
            raise RuntimeError(f"{name}: For now nested {name} cannot change or infer the "
                               "implicit batch dimension")
        out = [getattr(c, name)(_component_shape(name, shape, c)) for c in nt._components]
        return _view(nt, out) if name == "view" else _nested(out, like=nt)
    return handler


implements("view")(_reshaping("view"))
implements("reshape")(_reshaping("reshape"))


@implements("chunk")
def _chunk(func, nt, chunks, dim=0):
    if _wrap_dim(dim, nt.dim()) != nt.dim() - 1:
        raise RuntimeError("Chunk for nested tensors is currently only supported for the last "
                           "dimension.")
    if not nt.is_contiguous():
        raise RuntimeError("chunk expects `self` to be contiguous.")
    last = nt.size(-1)
    if last % chunks:
        raise RuntimeError(f"Chunk for nested tensors is only supported for nested tensors "
                           f"with trailing dimension divisible by chunks, got: {last} % "
                           f"{chunks} != 0")
    parts = [c.chunk(chunks, -1) for c in nt._components]
    return tuple(_view(nt, [p[i] for p in parts]) for i in range(chunks))


@implements("cat", "concat", "concatenate")
def _cat(func, tensors, dim=0, *, out=None):
    """Dimension 0 joins the lists of components; another dimension joins each component with
    its partners, which must match everywhere else (PyTorch supports one ragged dimension,
    next to the batch dimension)."""
    import ember
    tensors = list(tensors)
    d = _wrap_dim(dim, tensors[0].dim())
    if d == 0:
        if not all(isinstance(t, NestedTensor) for t in tensors):
            raise RuntimeError("Expected each tensor in given list to be nested.")
        ndim = tensors[0].dim() - 1
        for i, t in enumerate(tensors[1:], 1):
            if t._components and t.dim() - 1 != ndim:
                raise RuntimeError(f"Sizes of tensors must match except in dimension 0. Expected "
                                   f"size {ndim} but got size {t.dim() - 1} for tensor number "
                                   f"{i} in the list.")
        return _nested([c for t in tensors for c in t._components], like=tensors[0])
    if not all(isinstance(t, NestedTensor) for t in tensors):
        raise RuntimeError("cat(): expected each tensor in given list to be nested")
    if not all(t.is_contiguous() for t in tensors):
        raise RuntimeError("cat(): only contiguous nested tensors are supported")
    for t in tensors:
        if any(len({c.shape[k] for c in t._components}) > 1 for k in range(1, t.dim() - 1)):
            raise RuntimeError("cat(): only nested tensors with a single ragged dim next to the "
                               "batch dim are supported")
    first = tensors[0]

    def others(shape):
        return shape[:d - 1] + shape[d:]
    for t in tensors[1:]:
        if t.dim() != first.dim() or len(t._components) != len(first._components) or any(
                others(c.shape) != others(f.shape)
                for c, f in zip(t._components, first._components)):
            raise RuntimeError("cat(): expected all nested tensors to have matching ragged "
                               "structures outside of the concatenated dim")
    return _nested([ember.cat(parts, d - 1) for parts in zip(*(t._components for t in tensors))],
                   like=first)


@implements("split_with_sizes")
def _split_with_sizes(func, nt, split_sizes, dim=0):
    d = _wrap_dim(dim, nt.dim())
    if d != nt.dim() - 1:
        raise RuntimeError("split_with_sizes for nested tensors is currently only supported for "
                           "the last dimension.")
    if not nt.is_contiguous():
        raise RuntimeError("split_with_sizes expects `self` to be contiguous.")
    last = nt.size(-1)
    if sum(split_sizes) != last:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {last} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={list(split_sizes)}")
    parts = [c.split_with_sizes(list(split_sizes), -1) for c in nt._components]
    return tuple(_view(nt, [p[i] for p in parts]) for i in range(len(split_sizes)))


# ---- reductions and nn functions ---------------------------------------------------------------
@implements("sum")
def _sum(func, nt, dim=None, keepdim=False, *, dtype=None):
    if dim is None:
        raise NotImplementedError("Could not run 'aten::sum' with arguments from the "
                                  "'NestedTensorCPU' backend. This could be because the "
                                  "operator doesn't exist for this backend.")
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if len(dims) != 1:
        raise RuntimeError("NestedTensor only allows reduction of a single dimension for now.")
    d = _wrap_dim(dims[0], nt.dim())
    if d != nt.dim() - 1:
        raise RuntimeError(f"NestedTensor can only be reduced across the last dimension for now "
                           f"got dimension {d} instead.")
    if not keepdim:
        raise RuntimeError("NestedTensor always requires keepdim=True for now.")
    if dtype is not None:
        raise RuntimeError("NestedTensor does not support dtype argument for now.")
    return _each(nt, lambda c: c.sum(-1, keepdim=True))


@implements("softmax")
def _softmax(func, nt, dim=None, _stacklevel=3, dtype=None):
    import ember
    if not nt._components:
        return nt.clone()
    d = _component_dim(dim, nt, "Cannot apply softmax across nested dimension 0")
    return _each(nt, lambda c: ember.softmax(c, d, dtype=dtype))


@implements("dropout")
def _dropout(func, nt, p=0.5, training=True, inplace=False):
    """Each component's mask drawn in storage order, so dropping a transposed nested tensor
    draws the same mask for the same elements as dropping the original."""
    import ember
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    F = ember.nn.functional

    def drop(c):
        perm = memory_order(c)
        return F.dropout(c.permute(perm), p, training, inplace).permute(_inverse(perm))
    out = _each(nt, drop)
    return nt if inplace else out


@implements("linear")
def _linear(func, nt, weight, bias=None):
    import ember
    if isinstance(weight, NestedTensor):
        raise RuntimeError("Linear does not support nested weight when input is a nested "
                           "tensor.")
    if nt.dim() != 3 or weight.dim() != 2:
        raise RuntimeError(f"Linear requires nested_tensor.dim == 3 and dense_matrix.dim == 2. "
                           f"Nested tensor dim: {nt.dim()}. Dense tensor dim: {weight.dim()}")
    if not nt.is_contiguous():
        raise RuntimeError("for now linear only supports contiguous nested tensor")
    last = {c.shape[-1] for c in nt._components}
    if len(last) > 1:
        raise RuntimeError(f"Expected all tensors in nested tensor to have the same trailing "
                           f"dimension, instead last dimension equals: {sorted(last)}")
    if last and last.pop() != weight.shape[1]:
        raise RuntimeError(f"Shape mismatch for NestedTensor Linear: Expected input's (a nested "
                           f"tensor) 'last_dim' to equal 'weight.size(1), but got: last_dim = "
                           f"{nt._components[0].shape[-1]}, and weight.size(1) = "
                           f"{weight.shape[1]}")
    return _each(nt, lambda c: ember.nn.functional.linear(c, weight, bias))


@implements("layer_norm")
def _layer_norm(func, nt, normalized_shape, weight=None, bias=None, eps=1e-5):
    import ember
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    n = len(shape)
    for i in range(n):
        sizes = {c.shape[i - n] if c.dim() >= n else None for c in nt._components}
        if len(sizes) > 1 or None in sizes:
            raise RuntimeError("normalized_shape extends into irregular dimensions for the "
                               "nested tensor")
        if sizes and sizes.pop() != shape[i]:
            raise RuntimeError(f"The shape at dimension {i}of normalized_shape doesn't match "
                               "the input")
    return _each(nt, lambda c: ember.nn.functional.layer_norm(c, shape, weight, bias, eps))


@implements("scaled_dot_product_attention")
def _scaled_dot_product_attention(func, query, key, value, attn_mask=None, dropout_p=0.0,
                                  is_causal=False, scale=None, enable_gqa=False):
    """Attention of each query component over its key and value components."""
    import ember
    if attn_mask is not None:
        raise RuntimeError("Scaled_dot_product_attention: Nested tensors for query / key are "
                           "not supported when an explicit attn_mask is set")
    if is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Nested tensors for query / key are "
                           "not supported when is_causal=True")
    parts = [t._components if isinstance(t, NestedTensor) else t.unbind(0)
             for t in (query, key, value)]
    attend = ember.nn.functional.scaled_dot_product_attention
    return _nested([attend(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), dropout_p=dropout_p,
                           scale=scale, enable_gqa=enable_gqa).squeeze(0)
                    for q, k, v in zip(*parts)], like=query)


@implements("type")
def _type(func, nt, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return nt._components[0].type() if nt._components else Tensor.type(
            Tensor._make_subclass(Tensor, nt))
    return _each(nt, lambda c: c.type(dtype, non_blocking, **kwargs))


@implements("embedding")
def _embedding(func, input, weight, *args, **kwargs):
    import ember
    return _each(input, lambda c: ember.nn.functional.embedding(c, weight, *args, **kwargs))


def _both_nested(a, b):
    if not isinstance(b, NestedTensor):
        raise RuntimeError("Expected both to be nested, but got a nested self and non-nested "
                           "other")
    if not isinstance(a, NestedTensor):
        raise RuntimeError("Expected both to be nested, but got a non-nested self and nested "
                           "other")


@implements("bmm")
def _bmm(func, a, b):
    """Batched matrix products, component by component; a dense 3-D operand is taken as the
    list of its matrices."""
    if a.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    xs, ys = (t._components if isinstance(t, NestedTensor) else t.unbind(0) for t in (a, b))
    if len(xs) != len(ys):
        raise RuntimeError(f"Expected size for the 1st dimension of batch2 tensor to be: "
                           f"{len(xs)} but got: {len(ys)}.")
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x.shape[1] != y.shape[0]:
            raise RuntimeError(f"{i}-th nested matrices in batch cannot be multiplied "
                               f"({x.shape[0]}x{x.shape[1]} and {y.shape[0]}x{y.shape[1]})")
    return _nested([x.mm(y) for x, y in zip(xs, ys)], like=a if isinstance(a, Tensor) else b)


def _long_tensor_text(rows):
    """A list (or a list of lists) of ints as PyTorch's C++ printer writes a LongTensor, which
    its nested matmul messages embed: right-aligned columns, then the type and sizes."""
    matrix = bool(rows) and isinstance(rows[0], (list, tuple))
    values = [v for r in rows for v in r] if matrix else list(rows)
    width = max((len(str(v)) for v in values), default=0) + 1
    if matrix:
        body = "\n".join(" ".join(f"{v:>{width}}" for v in r) for r in rows)
        sizes = f"{len(rows)},{len(rows[0])}"
    else:
        body, sizes = "\n".join(f"{v:>{width}}" for v in values), f"{len(values)}"
    return f"{body}\n[ torch.LongTensor{{{sizes}}} ]"


@implements("matmul", "__matmul__")
def _matmul(func, a, b):
    import ember
    if isinstance(a, NestedTensor) and isinstance(b, Tensor) and not isinstance(
            b, NestedTensor) and a.dim() == 4 and b.dim() == 2 and a.is_contiguous() and \
            len({c.shape[1:] for c in a._components}) == 1:
        return _each(a, lambda c: ember.matmul(c, b))   # (B, *, C, D) @ (D, E)
    _both_nested(a, b)
    for which, t in (("1st", a), ("2nd", b)):
        if t.dim() < 3:
            raise RuntimeError(f"matmul: For nested tensors, only inputs with >= 3 dims are "
                               f"currently supported. {which} input has rank: {t.dim()}")
    if a.dim() != b.dim():
        raise RuntimeError("matmul: both inputs must have the same rank")
    n1, n2 = len(a._components), len(b._components)
    if n1 != n2:
        raise RuntimeError(f"matmul: Expected size for the 1st dimension of 2nd input tensor "
                           f"to be: {n1} but got: {n2}.")
    xs, ys = a._components, b._components
    if any(x.shape[:-2] != y.shape[:-2] for x, y in zip(xs, ys)):
        raise RuntimeError(
            f"matmul: For nested tensors, batch dimensions must have the same sizes, no "
            f"broadcasting is currently performed. Got batch shapes for self "
            f"{_long_tensor_text([list(x.shape[:-2]) for x in xs])} and batch shapes for mat2 "
            f"{_long_tensor_text([list(y.shape[:-2]) for y in ys])}")
    if any(x.shape[-1] != y.shape[-2] for x, y in zip(xs, ys)):
        raise RuntimeError(
            f"matmul: Nested tensors cannot be matrix multiplied, last dimension of self has "
            f"sizes{_long_tensor_text([x.shape[-1] for x in xs])}second last dimension of mat2 "
            f"has sizes{_long_tensor_text([y.shape[-2] for y in ys])}")
    return _nested([ember.matmul(x, y) for x, y in zip(a._components, b._components)], like=a)
