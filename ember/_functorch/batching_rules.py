"""Batching rules: the kernels of the FuncTorchBatched dispatch key (functorch's BatchRules*.cpp).

A rule gets the op's arguments with BatchedTensors among them, finds the innermost vmap level,
brings each batched argument's batch dim to the front of its physical tensor, calls the *same*
op once on the physical tensors (shifting `dim` arguments by one, aligning ranks for
broadcasting) and wraps the result at that level. Ops are grouped by family, one rule maker per
family; an op without a rule runs through the per-example fallback in vmap.py.

Rules call ops through the dispatcher, so a physical tensor that is itself batched at an outer
vmap level, or that records an outer `grad`'s graph, is handled by the layers below.
"""
from .._core.tensor import Tensor
from .._dispatch.dispatcher import lookup, register_kernel
from .._core.tensor import _wrap_dim
from .._core.memory_format import contiguous_format as _contiguous_format
from .._core.memory_format import preserve_format as _preserve_format
from .._refs.shape import reshape as _reshape
from . import vmap as V

_op = V._op


def _register(names, maker):
    for name in names:
        op = lookup(name)
        register_kernel(op, V.KEY, maker(op))


def _level_and_size(args):
    level = V.max_level(args)
    return level, V.batch_size(level)


def _is_tensor_at(a, level):
    return type(a) is V.BatchedTensor and a._level == level


# ---- pointwise ops (elementwise and broadcasting) ---------------------------------------------
def _aligned(a, level, ndim):
    """The physical tensor of `a`, batch first, with ones inserted after the batch dim so that
    its example dims broadcast against unbatched tensors of `ndim` dims."""
    v = V.to_front(a, level)
    for _ in range(ndim - a.ndim):
        v = _op("unsqueeze")(v, 1)
    return v


# In-place binary ops whose PyTorch batching rule refuses a batched `other` on an unbatched
# `self` with its own message (the others reach the fallback's, naming the op).
_INPLACE_ARITHMETIC = ("copy_", "mul_.Tensor", "sub_.Tensor", "div_.Tensor_mode",
                       "masked_fill_.Scalar")


def _pointwise(op):
    tensor_pos = op._tensor_pos
    mutates = op._mutates
    inplace_arithmetic = op.short_name in _INPLACE_ARITHMETIC

    def rule(*args):
        level = V.max_level(args)
        ndim = max(args[i].ndim for i in tensor_pos if isinstance(args[i], Tensor))
        new = list(args)
        zero_dim_batched = False
        dtypes = set()
        for i in tensor_pos:
            a = args[i]
            if isinstance(a, Tensor):
                dtypes.add(a.dtype)
                if _is_tensor_at(a, level):
                    zero_dim_batched |= a.ndim == 0
                    new[i] = _aligned(a, level, ndim)
        if mutates:
            self = args[0]
            if not _is_tensor_at(self, level):
                if inplace_arithmetic:
                    raise V.inplace_error("inplace arithmetic")
                return V._fallback(op, V.KEY, args)  # raises vmap's in-place error
            if self.ndim < ndim:
                raise RuntimeError(f"output with shape {list(self._size)} doesn't match the "
                                   f"broadcast shape (in {op.name} under vmap)")
            op(*new)
            return self
        out = op(*new)
        if zero_dim_batched and len(dtypes) > 1:
            out = _cast_to_logical_dtype(op, args, out)
        return V.wrap(out, level)
    return rule


def _cast_to_logical_dtype(op, args, out):
    """A 0-d example is a dimensioned physical tensor, which type promotion treats differently:
    the dtype PyTorch gives the logical call (asked of the Meta kernel) wins."""
    from .._core.tensor import _meta
    meta_args = [(_meta(a._size, a.dtype) if isinstance(a, Tensor) else a) for a in args]
    want = op.redispatch("Meta", meta_args)
    if isinstance(out, Tensor):
        return out if out.dtype is want.dtype else _op("_to_copy")(out, dtype=want.dtype)
    return type(out)([o if o.dtype is w.dtype else _op("_to_copy")(o, dtype=w.dtype)
                      for o, w in zip(out, want)])


# ---- ops with dim arguments (reductions, scans, softmax, sorting, views) -----------------------
def _shift_dim(d, n):
    return _wrap_dim(d, n) + 1


_NEED_A_DIM = {"aten::unbind.int", "aten::select.int", "aten::narrow", "aten::slice.Tensor",
               "aten::split.Tensor", "aten::split_with_sizes"}


def _dims(op, dim_names, *, extra_ndim=0, all_if_empty=False, keep_unbatched=()):
    """A rule for an op whose batch-aware version is the same op with each `dim` argument
    shifted by one. Every tensor argument is brought to the batch (unbatched ones expanded),
    except those in `keep_unbatched`, which must not be batched (index_select's index)."""
    names = [a.name for a in op.schema.arguments]
    dim_pos = [names.index(n) for n in dim_names]
    tensor_pos = [i for i in op._tensor_pos if names[i] not in keep_unbatched]
    keep_pos = [names.index(n) for n in keep_unbatched]
    list_pos = op._list_pos
    mutates = op._mutates
    # ops a 0-d tensor has no dim for (PyTorch raises): run per example, to raise as unbatched
    needs_dim = op.name in _NEED_A_DIM

    def rule(*args):
        level, size = _level_and_size(args)
        if any(_is_tensor_at(args[i], level) for i in keep_pos):
            return V._fallback(op, V.KEY, args)
        first = args[list_pos[0]][0] if list_pos else args[tensor_pos[0]]
        n = first.ndim + extra_ndim
        scalar = n == 0  # a 0-d example: give it a dim of size 1, and take it away after
        if scalar and (needs_dim or list_pos or any(args[i].ndim for i in tensor_pos
                                                    if isinstance(args[i], Tensor))):
            return V._fallback(op, V.KEY, args)
        new = list(args)
        for i in tensor_pos:
            if isinstance(args[i], Tensor):
                new[i] = V.physical(args[i], level, size)
                if scalar:
                    new[i] = _op("unsqueeze")(new[i], 1)
        for i in list_pos:
            new[i] = [V.physical(t, level, size) for t in args[i]]
        if scalar:
            n = 1
        for p in dim_pos:
            d = args[p]
            if d is None or (all_if_empty and isinstance(d, (list, tuple)) and not d):
                if not all_if_empty:
                    return V._fallback(op, V.KEY, args)
                new[p] = list(range(1, n + 1))
            elif isinstance(d, int):
                new[p] = _shift_dim(d, n)
            else:
                new[p] = [_shift_dim(x, n) for x in d]
        if mutates:
            if not _is_tensor_at(args[0], level) or scalar:
                return V._fallback(op, V.KEY, args)
            op(*new)
            return args[0]
        out = op(*new)
        if scalar:
            out = _squeeze_dim1(out)
        return V.wrap(out, level)
    return rule


def _squeeze_dim1(out):
    # the example's added dim is dim 1 of each result (unfold of a 0-d example appends its
    # window after it)
    one = (lambda o: _op("squeeze.dim")(o, 1) if isinstance(o, Tensor) and o.ndim >= 2 else o)
    if isinstance(out, Tensor):
        return one(out)
    items = [one(o) for o in out]
    return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)


def _permute(op):
    def rule(self, dims):
        level = self._level
        n = self.ndim
        if len(dims) != n:
            return V._fallback(op, V.KEY, (self, dims))
        return V.wrap(op(V.to_front(self, level), [0] + [_shift_dim(d, n) for d in dims]), level)
    return rule


def _sizes(op):
    """view/_unsafe_view/expand: the batch size in front of the requested size."""
    is_expand = op.name == "aten::expand"

    def rule(self, size, *rest):
        level = self._level
        v = V.to_front(self, level)
        size = tuple(size)
        if is_expand:
            if len(size) < self.ndim:
                return V._fallback(op, V.KEY, (self, size) + rest)
            for _ in range(len(size) - self.ndim):
                v = _op("unsqueeze")(v, 1)
            size = tuple(s if s != -1 else v._size[k + 1] for k, s in enumerate(size))
        elif not v.is_contiguous():
            if op.name == "aten::view":
                return V._fallback(op, V.KEY, (self, size) + rest)
            v = _op("clone")(v, memory_format=_contiguous())
        return V.wrap(op(v, (v._size[0],) + size, *rest), level)
    return rule


def _passthrough(op):
    """Ops that treat every element alike and keep the layout (clone, _to_copy, alias): the
    batch dim stays where it is."""
    mutates = op._mutates

    def rule(self, *rest):
        level = self._level
        if V.max_level(rest) == level:  # another argument is batched: bring all to the front
            return _pointwise(op)(self, *rest)
        out = op(self._value, *rest)
        return self if mutates else V.wrap(out, level, self._bdim)
    return rule


# PyTorch's c10 names of memory formats, as its vmap clone error prints them
_FORMAT_NAMES = {"channels_last": "ChannelsLast", "channels_last_3d": "ChannelsLast3d"}


def _clone(op):
    """clone: preserve_format keeps the batch dim where it is; contiguous_format makes every
    example contiguous (the batch first, then the example); other formats are refused, as
    PyTorch's rule refuses them (an example's channels_last says nothing of the batch dim)."""
    def rule(self, memory_format=None):
        level = self._level
        if memory_format is None or memory_format is _preserve_format:
            return V.wrap(op(self._value, memory_format=memory_format), level, self._bdim)
        if memory_format is _contiguous_format:
            return V.wrap(op(V.to_front(self, level), memory_format=memory_format), level)
        raise RuntimeError("NYI: Tensor.clone(memory_format) inside vmap is only supported with "
                           "memory_format torch.preserve_format or torch.contiguous_format (got "
                           f"{_FORMAT_NAMES.get(memory_format.name, memory_format.name)})")
    return rule


def _leading(op):
    """Ops that act on trailing dims and treat leading ones as a batch (tril, linalg
    decompositions, layer norm over its last dims): batch first, call once. Only the first
    argument may be batched."""
    def rule(*args):
        level = V.max_level(args)
        self = args[0]
        if not _is_tensor_at(self, level) or any(
                _is_tensor_at(args[i], level) for i in op._tensor_pos[1:]) or \
                self.ndim < _MIN_NDIM.get(op.name, 2):
            return V._fallback(op, V.KEY, args)
        return V.wrap(op(V.to_front(self, level), *args[1:]), level)
    return rule


_MIN_NDIM = {"aten::native_layer_norm": 1, "aten::pixel_shuffle": 3, "aten::pixel_unshuffle": 3}


# ---- cat and stack --------------------------------------------------------------------------
def _join(op):
    is_stack = op.name == "aten::stack"

    def rule(tensors, dim=0):
        level, size = _level_and_size((tensors,))
        if not tensors:
            return V._fallback(op, V.KEY, (tensors, dim))
        n = tensors[0].ndim + (1 if is_stack else 0)
        if n == 0 or any(t.ndim == 1 and t._size[0] == 0 for t in tensors):
            return V._fallback(op, V.KEY, (tensors, dim))
        phys = [V.physical(t, level, size) for t in tensors]
        return V.wrap(op(phys, _shift_dim(dim, n)), level)
    return rule


# ---- matrix products --------------------------------------------------------------------------
def _matmul_physical(a, b, level):
    """matmul's semantics for logical `a`, `b` (either batched at `level`) on physical tensors:
    the batch first, vectors made matrices, ranks aligned for broadcasting."""
    ab, bb = _is_tensor_at(a, level), _is_tensor_at(b, level)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    ap = V.to_front(a, level) if ab else a
    bp = V.to_front(b, level) if bb else b
    if ab and a_vec:
        ap = _op("unsqueeze")(ap, -2)
    if bb and b_vec:
        bp = _op("unsqueeze")(bp, -1)
    ra = ap.ndim - (1 if ab else 0)
    rb = bp.ndim - (1 if bb else 0)
    if ab and bb:
        r = max(ra, rb)
        ap, bp = _pad(ap, ra, r), _pad(bp, rb, r)
    elif ab and not b_vec and rb > ra:
        ap = _pad(ap, ra, rb)
    elif bb and not a_vec and ra > rb:
        bp = _pad(bp, rb, ra)
    out = _op("matmul")(ap, bp)
    if bb and b_vec:
        out = _op("squeeze.dim")(out, -1)
    if ab and a_vec:
        out = _op("squeeze.dim")(out, -1 if b_vec else -2)
    return out


def _pad(v, rank, target):
    if target <= rank:
        return v
    for _ in range(target - rank):
        v = _op("unsqueeze")(v, 1)
    return v


def _check_logical(op, args):
    """Run the logical call on Meta tensors: PyTorch's shape and dtype errors, logical names."""
    from .._core.tensor import _meta
    return op.redispatch("Meta", [(_meta(a._size, a.dtype) if isinstance(a, Tensor) else a)
                                  for a in args])


def _matmul(op):
    def rule(a, b):
        _check_logical(op, (a, b))
        level = V.max_level((a, b))
        return V.wrap(_matmul_physical(a, b, level), level)
    return rule


def _addmm(op):
    def rule(self, mat1, mat2, beta=1, alpha=1):
        want = _check_logical(op, (self, mat1, mat2, beta, alpha))
        level = V.max_level((self, mat1, mat2))
        prod = V.wrap(_matmul_physical(mat1, mat2, level), level)
        return _scale_add(self, prod, beta, alpha, want.ndim, level)
    return rule


def _scale_add(self, prod, beta, alpha, ndim, level):
    """beta * self + alpha * prod with `prod` batched at `level` (addmm's and linear's tail)."""
    p = V.to_front(prod, level)
    if alpha != 1:
        p = _op("mul.Tensor")(p, alpha)
    if self is None or beta == 0:
        return V.wrap(p, level)
    s = _aligned(self, level, ndim) if _is_tensor_at(self, level) else self
    if beta != 1:
        s = _op("mul.Tensor")(s, beta)
    return V.wrap(_op("add.Tensor")(p, s), level)


def _linear(op):
    def rule(input, weight, bias=None):
        want = _check_logical(op, (input, weight, bias))
        level = V.max_level((input, weight, bias))
        if _is_tensor_at(weight, level):
            wt = V.wrap(_op("transpose.int")(V.to_front(weight, level), -1, -2), level)
        else:
            wt = _op("t")(weight) if weight.ndim == 2 else weight
        if not _is_tensor_at(input, level) and not _is_tensor_at(wt, level):
            prod = V.wrap(V.physical(_op("matmul")(input, wt), level, V.batch_size(level)),
                          level)
        else:
            prod = V.wrap(_matmul_physical(input, wt, level), level)
        return _scale_add(bias, prod, 1, 1, want.ndim, level)
    return rule


# ---- convolution ----------------------------------------------------------------------------
def _convolution(op):
    def rule(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
        args = (input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups)
        level, size = _level_and_size(args)
        spatial = weight.ndim - 2
        if transposed:
            return V._fallback(op, V.KEY, args)
        unbatched_input = input.ndim == spatial + 1  # (C, *spatial): no N dim
        rest = (stride, padding, dilation, transposed, output_padding)
        if not _is_tensor_at(weight, level) and not _is_tensor_at(bias, level):
            # the batch joins N
            x = V.to_front(input, level)
            if unbatched_input:
                return V.wrap(op(x, weight, bias, *rest, groups), level)
            B, N = x._size[0], x._size[1]
            out = op(_reshape(x, (B * N,) + tuple(x._size[2:])), weight, bias, *rest,
                     groups)
            return V.wrap(_reshape(out, (B, N) + tuple(out._size[1:])), level)
        # a batched weight: the batch joins the channels, one group per example
        x = V.physical(input, level, size)
        if unbatched_input:
            x = _op("unsqueeze")(x, 1)
        B, N = x._size[0], x._size[1]
        x = _reshape(_movedim(x, 0, 1), (N, B * x._size[2]) + tuple(x._size[3:]))
        w = V.physical(weight, level, size)
        w = _reshape(w, (B * w._size[1],) + tuple(w._size[2:]))
        b = None
        if bias is not None:
            b = _reshape(V.physical(bias, level, size), (-1,))
        out = op(x, w, b, *rest, groups * B)
        out = _reshape(out, (N, B, out._size[1] // B) + tuple(out._size[2:]))
        out = _movedim(out, 1, 0)
        if unbatched_input:
            out = _op("squeeze.dim")(out, 1)
        return V.wrap(out, level)
    return rule


def _to_groups(t, level, size, unbatched_n):
    """(B, N, C, *sp) physical (or (B, C, *sp) without N) as (N, B*C, *sp): each example's
    channels become one group."""
    x = V.physical(t, level, size)
    if unbatched_n:
        x = _op("unsqueeze")(x, 1)
    n = x._size[1]
    return _reshape(_movedim(x, 0, 1), (n, size * x._size[2]) + tuple(x._size[3:]))


def _from_groups(out, size, unbatched_n):
    """(N, B*O, *sp) back to (B, N, O, *sp) (or (B, O, *sp))."""
    n = out._size[0]
    out = _movedim(_reshape(out, (n, size, out._size[1] // size) + tuple(out._size[2:])), 1, 0)
    return _op("squeeze.dim")(out, 1) if unbatched_n else out


def _convolution_backward_input(op):
    def rule(grad_output, weight, input_size, stride, padding, dilation, transposed,
             output_padding, groups):
        args = (grad_output, weight, input_size, stride, padding, dilation, transposed,
                output_padding, groups)
        level, size = _level_and_size(args)
        if transposed:
            return V._fallback(op, V.KEY, args)
        rest = (stride, padding, dilation, transposed, output_padding)
        unbatched_n = grad_output.ndim == weight.ndim - 1
        input_size = tuple(input_size)
        if not _is_tensor_at(weight, level):
            g = V.to_front(grad_output, level)
            if unbatched_n:
                return V.wrap(op(g, weight, (size,) + input_size, *rest, groups), level)
            n = g._size[1]
            out = op(_reshape(g, (size * n,) + tuple(g._size[2:])), weight,
                     (size * n,) + input_size[1:], *rest, groups)
            return V.wrap(_reshape(out, (size, n) + tuple(out._size[1:])), level)
        g = _to_groups(grad_output, level, size, unbatched_n)
        w = V.physical(weight, level, size)
        w = _reshape(w, (size * w._size[1],) + tuple(w._size[2:]))
        full = (1,) + input_size if unbatched_n else input_size
        out = op(g, w, (full[0], size * full[1]) + full[2:], *rest, groups * size)
        return V.wrap(_from_groups(out, size, unbatched_n), level)
    return rule


def _convolution_backward_weight(op):
    def rule(grad_output, input, weight_size, stride, padding, dilation, transposed,
             output_padding, groups, columns=None):
        args = (grad_output, input, weight_size, stride, padding, dilation, transposed,
                output_padding, groups, columns)
        level, size = _level_and_size(args)
        if transposed or columns is not None:
            return V._fallback(op, V.KEY, args)
        unbatched_n = input.ndim == len(weight_size) - 1
        g = _to_groups(grad_output, level, size, unbatched_n)
        x = _to_groups(input, level, size, unbatched_n)
        weight_size = tuple(weight_size)
        out = op(g, x, (size * weight_size[0],) + weight_size[1:], stride, padding, dilation,
                 transposed, output_padding, groups * size)
        return V.wrap(_reshape(out, (size,) + weight_size), level)
    return rule


def _movedim(v, src, dst):
    return V._movedim(v, src, dst)


def _contiguous():
    from .._core.memory_format import contiguous_format
    return contiguous_format


# ---- indexing -------------------------------------------------------------------------------
def _embedding(op):
    def rule(weight, indices, *rest):
        level = V.max_level((weight, indices))
        if _is_tensor_at(weight, level):
            return V._fallback(op, V.KEY, (weight, indices) + rest)
        return V.wrap(op(weight, V.to_front(indices, level), *rest), level)
    return rule


def _index(op):
    def rule(self, indices):
        level = V.max_level((self, indices))
        if not _is_tensor_at(self, level) or any(_is_tensor_at(i, level) for i in indices) \
                or any(i is not None and i.dtype.is_floating_point for i in indices):
            return V._fallback(op, V.KEY, (self, indices))
        if any(i is not None and i.dtype.itemsize == 1 for i in indices):
            return V._fallback(op, V.KEY, (self, indices))  # masks: data-dependent shapes
        given = [k for k, i in enumerate(indices) if i is not None]
        adjacent = given == list(range(given[0], given[-1] + 1)) if given else True
        out = op(V.to_front(self, level), [None] + list(indices))
        if adjacent:
            return V.wrap(out, level)
        nd = max(indices[k].ndim for k in given)
        return V.wrap(out, level, nd)
    return rule


# ---- ops over (N, C, *spatial) whose examples along N are independent: the batch joins N ----
def _fold_into_n(base_ndim):
    """Pooling and padding (and their backward ops): every tensor argument is (N, C, *spatial)
    or, without N, (C, *spatial) with `base_ndim` dims; the vmap batch is folded into N."""
    def maker(op):
        def rule(*args):
            level, size = _level_and_size(args)
            tensors = [i for i in op._tensor_pos if isinstance(args[i], Tensor)]
            has_n = args[tensors[0]].ndim == base_ndim + 1
            if any(args[i].ndim != args[tensors[0]].ndim for i in tensors):
                return V._fallback(op, V.KEY, args)
            new = list(args)
            for i in tensors:
                v = V.physical(args[i], level, size)
                if has_n:
                    v = _reshape(v, (v._size[0] * v._size[1],) + tuple(v._size[2:]))
                new[i] = v
            out = op(*new)
            if has_n:
                n = args[tensors[0]]._size[0]
                unfold = (lambda o: _reshape(o, (size, n) + tuple(o._size[1:])))
                out = unfold(out) if isinstance(out, Tensor) else type(out)(
                    unfold(o) for o in out)
            return V.wrap(out, level)
        return rule
    return maker


FOLD_INTO_N = {
    3: ("max_pool2d_with_indices", "max_pool2d_with_indices_backward", "avg_pool2d",
        "avg_pool2d_backward", "adaptive_max_pool2d", "adaptive_max_pool2d_backward",
        "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward",
        "reflection_pad2d", "reflection_pad2d_backward", "replication_pad2d",
        "replication_pad2d_backward"),
    4: ("max_pool3d_with_indices", "max_pool3d_with_indices_backward", "avg_pool3d",
        "avg_pool3d_backward", "adaptive_max_pool3d", "adaptive_max_pool3d_backward",
        "_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward",
        "reflection_pad3d", "reflection_pad3d_backward", "replication_pad3d",
        "replication_pad3d_backward"),
}


# ---- fused softmax cross-entropy: the batch joins N, the reduction is done per example -------
def _ce_weight_sums(target, weight, ignore_index, size, n):
    """Per sample (size, n): its class weight, 0 where its target is ignored (the terms of
    "mean"'s divisor)."""
    valid = _op("ne.Tensor")(target, ignore_index)
    safe = _op("where.self")(valid, target, 0)
    if weight is None:
        w = valid
    else:
        w = _op("mul.Tensor")(_reshape(_op("index_select")(weight, 0, _reshape(safe, (-1,))),
                                       (size, n)), valid)
    return w


def _softmax_cross_entropy(op):
    def rule(self, target, weight, reduction, ignore_index, label_smoothing=0.0):
        args = (self, target, weight, reduction, ignore_index, label_smoothing)
        level, size = _level_and_size(args)
        if _is_tensor_at(weight, level) or self.ndim != 2:
            return V._fallback(op, V.KEY, args)
        x, t = V.physical(self, level, size), V.physical(target, level, size)
        n, c = self._size
        loss, softmax = op(_reshape(x, (size * n, c)), _reshape(t, (size * n,)), weight, 0,
                           ignore_index, label_smoothing)
        loss = _reshape(loss, (size, n))
        softmax = _reshape(softmax, (size, n, c))
        if reduction != 0:
            loss = _reduce_per_example(loss, _ce_weight_sums(t, weight, ignore_index, size, n),
                                       reduction)
        return V.wrap((loss, softmax), level)
    return rule


def _softmax_cross_entropy_backward(op):
    def rule(grad_output, self, target, weight, reduction, ignore_index, softmax,
             label_smoothing=0.0):
        args = (grad_output, self, target, weight, reduction, ignore_index, softmax,
                label_smoothing)
        level, size = _level_and_size(args)
        if _is_tensor_at(weight, level) or self.ndim != 2:
            return V._fallback(op, V.KEY, args)
        n, c = self._size
        g = V.physical(grad_output, level, size)
        t = V.physical(target, level, size)
        if reduction == 1:
            w = _ce_weight_sums(t, weight, ignore_index, size, n)
            total = _op("sum.dim_IntList")(w, [1], False, dtype=g.dtype)
            total = _op("where.self")(_op("eq.Tensor")(total, 0), 1, total)
            g = _op("div.Tensor_mode")(g, total, None)
        if reduction != 0:
            g = _op("expand")(_op("unsqueeze")(g, 1), (size, n))
        out = op(_reshape(g, (size * n,)), _reshape(V.physical(self, level, size), (size * n, c)),
                 _reshape(t, (size * n,)), weight, 0, ignore_index,
                 _reshape(V.physical(softmax, level, size), (size * n, c)), label_smoothing)
        return V.wrap(_reshape(out, (size, n, c)), level)
    return rule


def _reduce_per_example(loss, w, reduction):
    """(size, n) per-sample losses -> each example's "sum" or weighted "mean"."""
    if reduction == 2:
        return _op("sum.dim_IntList")(loss, [1])
    total = _op("sum.dim_IntList")(w, [1], False, dtype=loss.dtype)
    return _op("div.Tensor_mode")(_op("sum.dim_IntList")(loss, [1]), total, None)


def _nll_examples(self):
    """(n, c) of an nll_loss input of one example: a (C,) input is one sample."""
    return (1, self._size[0]) if self.ndim == 1 else tuple(self._size)


def _nll_loss(op):
    def rule(self, target, weight=None, reduction=1, ignore_index=-100):
        args = (self, target, weight, reduction, ignore_index)
        level, size = _level_and_size(args)
        if _is_tensor_at(weight, level) or self.ndim > 2:
            return V._fallback(op, V.KEY, args)
        x, t = V.physical(self, level, size), V.physical(target, level, size)
        n, c = _nll_examples(self)
        t = _reshape(t, (size, n))
        loss = _reshape(op(_reshape(x, (size * n, c)), _reshape(t, (size * n,)), weight, 0,
                           ignore_index), (size, n))
        if reduction == 0:
            loss = _reshape(loss, (size,) + tuple(target._size))
        else:
            loss = _reduce_per_example(loss, _ce_weight_sums(t, weight, ignore_index, size, n),
                                       reduction)
        return V.wrap(loss, level)
    return rule


def _nll_loss_backward(op):
    def rule(grad_output, self, target, weight, reduction, ignore_index):
        args = (grad_output, self, target, weight, reduction, ignore_index)
        level, size = _level_and_size(args)
        if _is_tensor_at(weight, level) or self.ndim > 2:
            return V._fallback(op, V.KEY, args)
        n, c = _nll_examples(self)
        g = V.physical(grad_output, level, size)
        t = _reshape(V.physical(target, level, size), (size, n))
        if reduction == 1:
            total = _op("sum.dim_IntList")(_ce_weight_sums(t, weight, ignore_index, size, n),
                                           [1], False, dtype=g.dtype)
            g = _op("div.Tensor_mode")(g, total, None)
        if reduction != 0:
            g = _op("expand")(_op("unsqueeze")(g, 1), (size, n))
        out = op(_reshape(g, (size * n,)), _reshape(V.physical(self, level, size), (size * n, c)),
                 _reshape(t, (size * n,)), weight, 0, ignore_index)
        return V.wrap(_reshape(out, (size,) + tuple(self._size)), level)
    return rule


# ---- in-place view ops: the wrapper takes the out-of-place view's batch ----------------------
def _inplace_view(functional_name):
    def maker(op):
        functional = lookup(functional_name)

        def rule(self, *rest):
            if not _is_tensor_at(self, V.max_level((self,) + rest)):
                return V._fallback(op, V.KEY, (self,) + rest)
            out = functional(self, *rest)
            self._value, self._bdim, self._size = out._value, out._bdim, out._size
            return self
        return rule
    return maker


INPLACE_VIEWS = {"t_": "t", "transpose_": "transpose.int", "swapdims_": "transpose.int",
                 "swapaxes_": "transpose.int", "unsqueeze_": "unsqueeze", "squeeze_": "squeeze",
                 "squeeze_.dim": "squeeze.dim", "squeeze_.dims": "squeeze.dims"}


# ---- the table ------------------------------------------------------------------------------
POINTWISE = """
add.Tensor sub.Tensor rsub.Tensor mul.Tensor div.Tensor_mode floor_divide remainder.Tensor
pow.Tensor_Tensor maximum minimum eq.Tensor ne.Tensor lt.Tensor le.Tensor gt.Tensor ge.Tensor
logical_and logical_or logical_xor bitwise_and.Tensor bitwise_or.Tensor bitwise_xor.Tensor
where.self clamp clamp.Tensor neg abs sign sgn exp log log1p expm1 sqrt rsqrt sin cos tanh
sigmoid relu gelu silu softplus logical_not bitwise_not threshold_backward sigmoid_backward
tanh_backward gelu_backward tan asin acos atan sinh cosh asinh acosh atanh log2 log10 exp2
reciprocal erf erfc erfinv lgamma digamma polygamma trunc floor ceil round frac round.decimals
isnan isinf isfinite nan_to_num logaddexp logaddexp2 fmax fmin heaviside xlogy.Tensor
sinc i0 logit signbit isposinf isneginf angle hypot atan2 copysign.Tensor lerp.Tensor addcmul
addcdiv elu leaky_relu hardtanh hardsigmoid hardswish mish log_sigmoid threshold hardshrink
softshrink masked_fill.Scalar fmod.Tensor
silu_backward softplus_backward mish_backward hardswish_backward hardsigmoid_backward
hardtanh_backward leaky_relu_backward hardshrink_backward softshrink_backward elu_backward
logit_backward
add_.Tensor sub_.Tensor mul_.Tensor div_.Tensor_mode clamp_ neg_ exp_ sqrt_ copy_
masked_fill_.Scalar relu_ sigmoid_ tanh_
"""

DIMS = {
    # reductions: None or [] means every dim
    ("sum.dim_IntList", "mean.dim", "nansum", "amax", "amin", "var.correction", "std.correction",
     "var_mean.correction",
     "all.dims", "any.dims", "linalg_vector_norm", "logsumexp",
     "count_nonzero.dim_IntList"): dict(names=("dim",),
                                                                     all_if_empty=True),
    ("prod.dim_int", "max.dim", "min.dim", "median.dim", "nanmedian.dim", "mode", "cumsum",
     "cumprod", "cummax", "cummin", "logcumsumexp", "_softmax", "_log_softmax",
     "_softmax_backward_data", "_log_softmax_backward_data", "sort.stable", "topk", "kthvalue",
     "select.int", "narrow", "slice.Tensor", "unbind.int", "split.Tensor", "split_with_sizes",
     "squeeze.dim", "unfold", "argmax", "argmin", "gather", "scatter.src", "scatter.value",
     "scatter_add", "select_scatter", "slice_scatter", "glu"): dict(names=("dim",)),
    ("transpose.int",): dict(names=("dim0", "dim1")),
    ("diagonal",): dict(names=("dim1", "dim2")),
    ("diag_embed",): dict(names=("dim1", "dim2"), extra_ndim=1),
    ("unsqueeze",): dict(names=("dim",), extra_ndim=1),
    ("squeeze.dims", "flip"): dict(names=("dims",)),
    ("index_select",): dict(names=("dim",), keep_unbatched=("index",)),
}
_RENAMED = {"unfold": ("dimension",), "squeeze.dims": ("dim",), "flip": ("dims",)}

LEADING = ("tril", "triu", "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_cholesky",
           "linalg_qr", "linalg_svd", "linalg_svdvals", "linalg_eigh", "native_layer_norm",
           "_unsafe_view", "pixel_shuffle", "pixel_unshuffle")
PASSTHROUGH = ("_to_copy", "alias", "fill_.Scalar", "zero_")


def _install():
    _register(POINTWISE.split(), _pointwise)
    for names, spec in DIMS.items():
        for n in names:
            op = lookup(n)
            dim_names = _RENAMED.get(n, spec["names"])
            register_kernel(op, V.KEY, _dims(op, dim_names,
                                             extra_ndim=spec.get("extra_ndim", 0),
                                             all_if_empty=spec.get("all_if_empty", False),
                                             keep_unbatched=spec.get("keep_unbatched", ())))
    _register(("permute",), _permute)
    _register(("view", "expand"), _sizes)
    _register(PASSTHROUGH, _passthrough)
    _register(("clone",), _clone)
    _register([n for n in LEADING if n != "_unsafe_view"], _leading)
    _register(("_unsafe_view",), _sizes)
    _register(("cat", "stack"), _join)
    _register(("mm", "bmm", "mv", "dot", "matmul"), _matmul)
    _register(("addmm",), _addmm)
    _register(("linear",), _linear)
    _register(("convolution",), _convolution)
    _register(("_convolution_backward_input",), _convolution_backward_input)
    _register(("_convolution_backward_weight",), _convolution_backward_weight)
    _register(("embedding",), _embedding)
    _register(("index.Tensor",), _index)
    _register(("_softmax_cross_entropy",), _softmax_cross_entropy)
    _register(("_softmax_cross_entropy_backward",), _softmax_cross_entropy_backward)
    _register(("nll_loss",), _nll_loss)
    _register(("_nll_loss_backward",), _nll_loss_backward)
    for base, names in FOLD_INTO_N.items():
        _register([n for n in names if "pad1d" not in n], _fold_into_n(base))
    _register(("reflection_pad1d", "replication_pad1d"), _fold_into_n(2))
    for name, functional in INPLACE_VIEWS.items():
        _register((name,), _inplace_view(functional))


_install()


# ---- ops whose result shape depends on the values ----------------------------------------------
def _dynamic_shape(op):
    def rule(*args):
        raise RuntimeError("vmap: We do not support batching operators that can output dynamic "
                           f"shape. Attempted to vmap over aten::{op.schema.name}. Please file an "
                           "issue at https://github.com/pytorch/pytorch/issues if you need this "
                           "feature.")
    return rule


_register(("nonzero", "_unique2", "unique_dim", "unique_consecutive"), _dynamic_shape)
