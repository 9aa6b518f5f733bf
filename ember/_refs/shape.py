"""Composite shape functions (PyTorch's _refs role): reshape, flatten, movedim, split, chunk,
the stacks, meshgrid, broadcasting helpers, written from view and copy ops."""
from ember._core._warnings import user_stacklevel as _user_stacklevel
import collections.abc
import math
import operator
import builtins

import numpy as np

from .._core import dtype as D
from .._core.math_bits import resolved_values
from .._core.tensor import Tensor, Size, _wrap_dim, _FAST, _overridden, _handle
from .._dispatch.dispatcher import impl as _impl, lookup as _op
from .._dispatch import dispatcher as _dispatcher
from .._core.memory_format import contiguous_format
from .._bindings.overloads import nonzero
from .._bindings.generated import cat, flip, gather, index_select, narrow
from .._bindings.codegen import _missing_size
from .._bindings.out import _finish
from .._bindings.factories import tensor, arange
from .._bindings.codegen import numpy_names
from .._bindings import arg_parser as _ap

_clone = _op("clone")
_expand = _op("expand")
_permute = _op("permute")
_slice = _op("slice.Tensor")
_split_with_sizes = _op("split_with_sizes")
_unsafe_view = _op("_unsafe_view")
_view = _op("view")


def _shape_args(shape, name="reshape", arg="shape"):
    """A method's `*shape`, checked as PyTorch's parser checks a varargs int list."""
    return tuple(_ap.int_list_arg(name, arg, 1, shape, 0, True))


def _reshape_method(self, *shape, **keyword):
    """Tensor.reshape: checks for __torch_function__ inline, since the ops' own code calls it
    (Note [The one check on the hot path] in ember/_core/torch_function.py)."""
    if keyword:   # x.reshape(shape=(2, 3))
        shape = _ap.varargs_keyword("reshape", "shape", shape, keyword)
    if type(self) not in _FAST and _overridden(self):
        return _handle(Tensor.reshape, (self, *shape))
    return reshape(self, _shape_args(shape) if shape else _missing_size("reshape", "shape"))


_reshape_method.__ember_torch_function__ = True


# reshape, unflatten and chunk are CompositeImplicitAutograd ops in PyTorch, and torch.export
# keeps them whole: with a dispatch mode active (a capture) they are called as the ops
# aten.reshape / aten.unflatten.int / aten.chunk, so the recorder sees them; otherwise their
# composites run directly, without the dispatcher's cost.
def reshape(input, shape):
    if _dispatcher._modes:
        return _reshape_op(input, list(shape))
    return _reshape_composite(input, shape)


def _reshape_composite(input, shape):
    shape = tuple(shape)
    if input.is_contiguous() or input._np is None:
        try:
            return _view(input, shape)
        except RuntimeError:
            if input._np is None:
                return _unsafe_view(_clone(input, None), shape)
            raise
    try:
        return _view(input, shape)
    except RuntimeError as e:
        if "view size is not compatible" not in str(e):
            raise
        return _unsafe_view(_clone(input, None), shape)


def flatten(input, start_dim=0, end_dim=-1):
    if start_dim.__class__ is not int or end_dim.__class__ is not int:
        start_dim = _ap.int_arg("flatten", "start_dim", 2, start_dim)
        end_dim = _ap.int_arg("flatten", "end_dim", 3, end_dim)
    return _flatten(input, start_dim, end_dim)


_flatten = _op("flatten.using_ints")


def _flatten_composite(input, start_dim, end_dim):
    """aten.flatten.using_ints: dims start_dim..end_dim merged into one, by reshape."""
    n = input.dim()
    if n == 0:
        return reshape(input, (1,))
    s = _wrap_dim(start_dim, n)
    e = _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    merged = math.prod(input._size[s:e + 1])  # not -1: another dim may be 0
    return reshape(input, input._size[:s] + (merged,) + input._size[e + 1:])


_impl("flatten.using_ints", "CompositeImplicitAutograd")(_flatten_composite)


def unflatten(input, dim, sizes):
    if _dispatcher._modes:
        return _unflatten_op(input, dim, list(sizes))
    return _unflatten_composite(input, dim, sizes)


def _unflatten_composite(input, dim, sizes):
    d = _wrap_dim(dim, max(input.dim(), 1))   # (a 0-d tensor wraps dims as a 1-d one)
    if input.dim() == 0:
        raise RuntimeError(f"unflatten: Dimension specified as {dim} but tensor has no "
                           "dimensions")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    given = sizes
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes and known:   # inferred from the unflattened dim alone, as PyTorch's (so an
        i = sizes.index(-1)     # empty tensor's other dims do not make it ambiguous)
        sizes = sizes[:i] + (input._size[d] // known,) + sizes[i + 1:]
    if math.prod(sizes) != input._size[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(given)} don't multiply up to the "
                           f"size of dim {d} ({input._size[d]}) in the input tensor")
    return _view(input, input._size[:d] + tuple(sizes) + input._size[d + 1:]) \
        if input.is_contiguous() else reshape(input, input._size[:d] + tuple(sizes) +
                                              input._size[d + 1:])


_reshape_op, _unflatten_op, _chunk_op = _op("reshape"), _op("unflatten.int"), _op("chunk")
_impl(_reshape_op, "CompositeImplicitAutograd")(_reshape_composite)
_impl(_unflatten_op, "CompositeImplicitAutograd")(_unflatten_composite)


def movedim(input, source, destination):
    source = _ap.int_or_int_list_arg("movedim", "source", 2, source)
    destination = _ap.int_or_int_list_arg("movedim", "destination", 3, destination)
    n = input.dim()
    if n == 0:  # source and destination may only name dim 0 (or -1): an alias
        for s in [source] if isinstance(source, int) else list(source):
            _wrap_dim(s, 0)
        return _permute(input, ())
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    for name, dims in (("source", src), ("destination", dst)):
        if len({_wrap_dim(d, n) for d in dims}) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(d, n) for d in dst]
    order = [i for i in range(n) if i not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return _permute(input, tuple(perm))


moveaxis = movedim


def split(tensor, split_size_or_sections, dim=0):
    """As Tensor.split in PyTorch's _tensor.py: an int (a tensor of one) is the piece length,
    anything else the list of lengths; a bool is refused as its parser refuses it."""
    sizes = split_size_or_sections
    if isinstance(sizes, Tensor) and sizes.numel() == 1:
        sizes = int(sizes)
    if isinstance(sizes, int):
        if sizes.__class__ is bool:
            raise _ap.wrong_type("split", "split_size", 1, "SymInt", sizes)
        return tuple(_op("split.Tensor")(tensor, sizes, dim))
    return tuple(_split_with_sizes(tensor, _ap.int_list_arg("split_with_sizes", "split_sizes", 1,
                                                            sizes), dim))


@numpy_names
def chunk(input, chunks, dim=0):
    if chunks.__class__ is not int or dim.__class__ is not int:
        chunks = _ap.int_arg("chunk", "chunks", 2, chunks)
        dim = _ap.int_arg("chunk", "dim", 3, dim)
    if _dispatcher._modes:
        return _chunk_op(input, chunks, dim)
    return _chunk_composite(input, chunks, dim)


def _chunk_composite(input, chunks, dim):
    if not input.dim():
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input.dim())
    size = input._size[d]
    if size == 0:  # as PyTorch: `chunks` empty pieces
        return tuple(_split_with_sizes(input, [0] * chunks, d))
    return split(input, -(-size // chunks), d)


_impl(_chunk_op, "CompositeImplicitAutograd")(_chunk_composite)


@numpy_names
def tensor_split(input, *args, **kwargs):
    """Views split at indices (or into n nearly equal sections; the first size % n get one
    more), each a slice of `input` like PyTorch's. The arguments are those of PyTorch's three
    overloads: (int sections, int dim=0), (tuple of ints indices, int dim=0) and (Tensor
    tensor_indices_or_sections, int dim=0), the first by position or by its own keyword."""
    sections, dim = _split_args("tensor_split", _TENSOR_SPLIT, args, kwargs)
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, input.dim())
    size = input._size[d]
    if isinstance(sections, Tensor):   # the overload taking tensor_indices_or_sections
        if sections.dtype is not D.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {D.scalar_type_name(sections.dtype)}")
        if sections.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {sections.dim()} dims")
        sections = sections.item() if sections.dim() == 0 else sections.tolist()
    if _ap.is_int(sections, True):
        n = operator.index(sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = [i * q + builtins.min(i, r) for i in range(n + 1)]
    else:
        bounds = [0] + [operator.index(i) for i in sections] + [size]
    return tuple(_slice(input, d, bounds[i], bounds[i + 1], 1) for i in range(len(bounds) - 1))


def _is_int_tuple(value):
    return type(value) in _ap.INT_SEQUENCES and all(_ap.is_int(i, True) for i in value)


# the overloads of tensor_split and hsplit/vsplit/dsplit: the keyword of each one's split
# argument, the values it takes, and its type as PyTorch's messages print it
_TENSOR_SPLIT = (("indices", _is_int_tuple, "tuple of ints"),
                 ("tensor_indices_or_sections", lambda v: isinstance(v, Tensor), "Tensor"),
                 ("sections", lambda v: not isinstance(v, Tensor) and _ap.is_int(v, True), "int"))
_SPLIT_ALONG = (("sections", lambda v: _ap.is_int(v, True), "int"),
                ("indices", _is_int_tuple, "tuple of ints"))


def _split_args(fn, overloads, args, kwargs, dim=True):
    """(the split argument, dim) of a call of `fn` with PyTorch's `overloads` (each takes the
    split argument by position or by its own keyword, then `dim` if `dim`), or the parser's
    error."""
    given = dict(kwargs)
    if dim and "axis" in given and "dim" not in given:   # (NumPy's name, as PyTorch's parser)
        given["dim"] = given.pop("axis")
    checks = {name: check for name, check, _ in overloads}
    named = [k for k in checks if k in given]
    most = 2 if dim else 1
    by_position = 1 <= len(args) <= most and not named and len(args) + ("dim" in given) <= most
    if (by_position or len(named) == 1 and not args) and set(given) <= {*named, "dim"}:
        split = args[0] if args else given[named[0]]
        d = args[1] if len(args) == 2 else given.get("dim", 0)
        fits = checks[named[0]](split) if named else any(f(split) for f in checks.values())
        if fits and _ap.is_int(d, False):
            return split, operator.index(d)
    got = ", ".join(["Tensor", *map(_ap.type_name, args),
                     *(f"{k}={_ap.type_name(v)}" for k, v in kwargs.items())])
    expected = "".join(f" * (Tensor input, {typ} {name}{', int dim = 0' if dim else ''})\n"
                       for name, _, typ in overloads)
    raise TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but "
                    f"expected one of:\n{expected}")


def _int_list(x):
    return [int(x)] if isinstance(x, (int, np.integer)) else [int(v) for v in x]


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def ravel(input):
    """contiguous().view(-1): a view, of the input or of its contiguous copy."""
    return _view(input.contiguous(), (-1,))


def tile(input, dims):
    dims = tuple(_int_list(dims))
    return input.repeat((1,) * (input.dim() - len(dims)) + dims)


@numpy_names
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each slice along `dim` repeated `repeats` times, written as PyTorch does it: an
    index_select with the source positions repeated."""
    if repeats is None:  # repeat_interleave(counts): each position, counts[i] times
        if input.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_repeat_counts(input)
        return repeat_interleave(arange(input.numel(), dtype=input.dtype, device=input.device),
                                 input)
    if dim is None:
        input, dim = reshape(input, (-1,)), 0
    d = _wrap_dim(dim, input.dim())
    size = input._size[d] if input.dim() else 1
    if isinstance(repeats, Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        _check_repeat_counts(repeats)
        counts = resolved_values(repeats)._np.reshape(-1)
    else:
        counts = np.array([repeats])
    if counts.size == 1:
        counts = np.repeat(counts, size)
    elif counts.size != size:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({d}) = {size}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = tensor(np.repeat(np.arange(size), counts), device=input.device)
    return index_select(input if input.dim() else reshape(input, (1,)), d, index)


def _check_repeat_counts(counts):
    if counts.dtype not in (D.int32, D.int64):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{D.scalar_type_name(counts.dtype)}'")


def take_along_dim(input, indices, dim=None, *, out=None):
    if dim is None:
        return _finish(gather(reshape(input, (-1,)), 0, reshape(indices, (-1,))), False, out,
                       "take_along_dim")
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    if indices.dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{D.scalar_type_name(indices.dtype)}")
    d = _wrap_dim(dim, input.dim())
    if input.dim():  # a negative index counts from the end, as often as needed (-4 of 3 is 2)
        size = input._size[d]
        if size:
            indices = indices.remainder(size).where(indices < 0, indices)
    shape = list(broadcast_shapes(input._size[:d] + (1,) + input._size[d + 1:],
                                  indices._size[:d] + (1,) + indices._size[d + 1:]))
    input_shape, index_shape = list(shape), list(shape)
    input_shape[d], index_shape[d] = input._size[d], indices._size[d]
    return _finish(gather(input.expand(input_shape), d, indices.expand(index_shape)), False,
                   out, "take_along_dim")


def argwhere(input):
    return nonzero(input)


def _atleast(tensors, n):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in ts:
        if t.dim() == 0:
            t = reshape(t, (1,) * n)
        elif t.dim() == 1 and n >= 2:
            t = t.unsqueeze(0) if n == 2 else t.unsqueeze(0).unsqueeze(-1)
        elif t.dim() == 2 and n == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)


def atleast_1d(*tensors):
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    return _atleast(tensors, 3)


def _nonempty(tensors, name, kernel=None):
    """The list of `tensors` given to `name` (whose ATen kernel is `kernel`, if another)."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not Tensor")
    if len(tensors) == 0:
        raise RuntimeError(f"{kernel or name} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors, *, out=None):
    ts = atleast_1d(_nonempty(tensors, "hstack"))
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat(atleast_2d(_nonempty(tensors, "vstack")), 0, out=out)


def row_stack(tensors, *, out=None):
    return cat(atleast_2d(_nonempty(tensors, "row_stack", "vstack")), 0, out=out)


def dstack(tensors, *, out=None):
    return cat(atleast_3d(_nonempty(tensors, "dstack")), 2, out=out)


def column_stack(tensors, *, out=None):
    tensors = _nonempty(tensors, "column_stack")
    return cat([reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors], 1,
               out=out)


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=_user_stacklevel())
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = [reshape(t, tuple(-1 if i == k else 1 for i in range(len(ts)))).expand(shape)
             for k, t in enumerate(ts)]
    if swap:  # "xy": the first two inputs are swapped going in and their grids coming out
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def diag(input, diagonal=0, *, out=None):
    if input.dim() == 1:
        # as PyTorch's: a 1-D input goes through diag_embed (so vmap batches it)
        return _finish(input.diag_embed(diagonal), False, out, "diag", (input,))
    if input.dim() != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.dim()}D")
    return _finish(input.diagonal(diagonal).clone(memory_format=contiguous_format), False, out,
                   "diag", (input,))


def broadcast_shapes(*shapes):
    """The shape all `shapes` broadcast to, found right to left; a mismatch names the argument
    and the common shape so far, as PyTorch's reference does."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for shape in shapes:
        if not isinstance(shape, collections.abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == common[i] or shape[i] == 1:
                continue
            if common[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[i]} at "
                                   f"{i}! Mismatching argument at index {arg} had {shape}; but "
                                   f"expected shape should be broadcastable to {common}")
            if shape[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            common[i] = shape[i]
    return Size(common)


def broadcast_to(input, size):
    return _expand(input, tuple(size), False)


def broadcast_tensors(*tensors):
    from .._aten.elementwise import broadcast_shape
    shape = broadcast_shape(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def numel(input):
    return input.numel()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


def is_signed(input):
    return input.dtype.is_signed


def is_nonzero(input):
    return input.is_nonzero()


def is_same_size(input, other):
    return input.is_same_size(other)


def is_conj(input):
    return input.is_conj()


def is_neg(input):
    return input.is_neg()


def is_inference(input):
    return input.is_inference()


def get_device(input):
    return input.get_device()


def result_type(tensor1, tensor2):
    return D.result_type_of((tensor1, tensor2))


def can_cast(from_, to):
    from .._aten.elementwise import can_cast as _cc
    return _cc(from_, to)


def _split_method(self, split_size, dim=0):
    return split(self, split_size, dim)


# ---- shape and indexing composites (issue 3, shape/indexing) -------------------------------------
def _split_along(name, dim, min_dim):
    def fn(input, *args, **kwargs):
        indices_or_sections = _split_args(name, _SPLIT_ALONG, args, kwargs, dim=False)[0]
        if _ap.is_int(indices_or_sections, True):
            indices_or_sections = operator.index(indices_or_sections)
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} "
                               f"dimension, but got a tensor with "
                               f"{input.dim()} dimensions!")
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        # a split size of 0 divides nothing: PyTorch reports it as indivisible
        if isinstance(indices_or_sections, int) and (
                indices_or_sections == 0 or input.shape[d] % indices_or_sections):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input.shape[d]} is not divisible by the "
                               f"split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    return fn


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def narrow_copy(input, dim, start, length, *, out=None):
    if input.is_sparse:
        from .._aten.sparse_ops import narrow_copy as sparse_narrow_copy
        return _finish(sparse_narrow_copy(input, dim, start, length), False, out,
                       "narrow_copy", (input,))
    if input.dim() > 0 and dim >= input.dim():  # PyTorch's narrow_copy wraps negative dims only
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    if length < 0 and input.dim() > 0:   # one bound check for both ends, unlike narrow's
        size = input.shape[dim]
        raise RuntimeError(f"start ({start + size if start < 0 else start}) + length "
                           f"({length}) exceeds dimension size ({size}).")
    return _finish(narrow(input, dim, start, length).clone(memory_format=contiguous_format),
                   False, out, "narrow_copy", (input,))


def _tile_method(self, *dims, **keyword):
    if keyword:   # x.tile(dims=(2,))
        dims = _ap.varargs_keyword("tile", "dims", dims, keyword)
    return tile(self, _shape_args(dims, "tile", "dims") if dims else _missing_size("tile", "dims"))


METHODS = dict(
    reshape=_reshape_method, flatten=flatten,
    unflatten=unflatten, movedim=movedim, moveaxis=movedim, split=_split_method, chunk=chunk,
    tensor_split=tensor_split, hsplit=hsplit, vsplit=vsplit, dsplit=dsplit,
    broadcast_to=broadcast_to, argwhere=argwhere, take_along_dim=take_along_dim,
    fliplr=fliplr, flipud=flipud, ravel=ravel,
    tile=_tile_method,
    repeat_interleave=repeat_interleave, diag=diag, narrow_copy=narrow_copy,
)

__all__ = ["argwhere", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes",
           "broadcast_tensors", "broadcast_to", "can_cast", "chunk", "column_stack", "diag",
           "dsplit", "dstack", "flatten", "fliplr", "flipud", "get_device", "hsplit", "hstack",
           "is_complex", "is_conj", "is_floating_point", "is_inference", "is_neg", "is_nonzero",
           "is_same_size", "is_signed", "is_tensor", "meshgrid", "moveaxis", "movedim", "narrow_copy",
           "numel", "ravel", "repeat_interleave", "reshape", "result_type", "row_stack", "split",
           "take_along_dim", "tensor_split", "tile", "unflatten", "vsplit", "vstack"]


@_impl("_chunk_cat", "CompositeImplicitAutograd")
def _chunk_cat(tensors, dim, num_chunks):
    """Each tensor cut into `num_chunks` chunks along `dim` (zero-padded at the end to a
    multiple of it), and the tensors' chunks concatenated chunk by chunk: the result has
    shape leading dims + (num_chunks, sum of the chunk sizes) -- FSDP's gradient packing."""
    def check(cond, message):
        if not cond:
            raise RuntimeError(message)
    check(num_chunks >= 1, "_chunk_cat expects positive num_chunks")
    check(len(tensors) > 0, "_chunk_cat expects a non-empty input tensor list")
    for t in tensors:
        check(t.numel() > 0, "_chunk_cat expects non-empty tensor")
        check(t.dtype == tensors[0].dtype,
              "_chunk_cat expects all input tensors with the same dtype")
    if len({t.dim() for t in tensors}) == 1:
        dim = _wrap_dim(dim, tensors[0].dim())
    else:
        check(dim >= 0, "_chunk_cat expects non-negative dim when input tensors have different "
                        "ndims")
        check(all(dim < t.dim() for t in tensors),
              "_chunk_cat expects dim < ndim for all input tensors")
    check(all(t.shape[:dim] == tensors[0].shape[:dim] for t in tensors),
          "_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
    chunks = []
    for t in tensors:
        size = t.shape[dim]
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            t = _op("constant_pad_nd")(t, [0, 0] * (t.dim() - dim - 1) + [0, padded - size], 0)
        chunks.append(t.reshape(tuple(t.shape[:dim]) + (num_chunks, -1)))
    return cat(chunks, dim + 1)
