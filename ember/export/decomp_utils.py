"""The decompositions `ExportedProgram.run_decompositions()` applies besides the composite ops.

torch's core ATen set leaves out ops that are sugar over smaller ones; ember's composites
(CompositeImplicitAutograd kernels) decompose by themselves when re-captured, and the ops ember
implements with a kernel of their own but torch decomposes are written here from the ops torch
lowers them to (`linear` -> `permute` + `addmm`/`mm`, with `view`s around it for batched input),
and the composites whose own kernels call other ops than torch's decomposition does:
`batch_norm` -> `_native_batch_norm_legit_no_training` (evaluation) or
`_native_batch_norm_legit_functional` (training: the new running statistics are results, copied
into the buffers with `copy_`, which functionalization turns into mutation outputs), `dropout` ->
`native_dropout` (training) or `clone`.
"""
import math

from .._core.dtype import bool as bool_
from .._core.memory_format import contiguous_format, preserve_format
from .._dispatch.dispatcher import lookup


def _linear(input, weight, bias=None):
    """ATen's linear: addmm for a matrix; for a contiguous 3-d input with a bias, addmm of the
    rows viewed as one matrix; otherwise matmul with weight.t() (lowered as `_matmul` below),
    plus the bias."""
    permute, view = lookup("permute"), lookup("view")
    if input.dim() == 2 and bias is not None:
        return lookup("addmm")(bias, input, permute(weight, [1, 0]))
    if input.dim() == 3 and bias is not None and input.is_contiguous():
        rows = view(input, [_prod(input.shape[:-1]), input.shape[-1]])
        out = lookup("addmm")(bias, rows, permute(weight, [1, 0]))
        return view(out, list(input.shape[:-1]) + [out.shape[1]])
    out = _matmul(input, permute(weight, [1, 0]))
    return out if bias is None else lookup("add.Tensor")(out, bias)


def _should_fold(t1, t2):
    """torch's matmul folds a batched left operand into one matrix when its rows are laid out
    one after another (the graph's tensors do not require grad while decomposing)."""
    if t1.dim() < t2.dim():
        t1, t2 = t2, t1
    if not (t1.dim() >= 3 and t2.dim() <= 2):
        return False
    if t1.numel() == 0:
        return True
    expected = [1]
    for size in reversed(t1.shape[1:]):
        expected.append(size * expected[-1])
    return all(size == 1 or left == right
               for left, right, size in zip(t1.stride(), reversed(expected), t1.shape))


def _matmul(t1, t2):
    """torch's decomposition of aten.matmul: dot/mv/mm for vectors and matrices, one mm over
    the folded rows, else both operands expanded to the broadcast batch and viewed as 3-d
    for bmm."""
    d1, d2 = t1.dim(), t2.dim()
    view, expand = lookup("view"), lookup("expand")
    if d1 == 1 and d2 == 1:
        return lookup("dot")(t1, t2)
    if d1 == 2 and d2 == 1:
        return lookup("mv")(t1, t2)
    if d1 == 1 and d2 == 2:
        return lookup("squeeze.dim")(lookup("mm")(lookup("unsqueeze")(t1, 0), t2), 0)
    if d1 == 2 and d2 == 2:
        return lookup("mm")(t1, t2)
    if d1 >= 3 and d2 <= 2 and _should_fold(t1, t2):
        out_shape = list(t1.shape[:-1])
        folded = _reshape(t1, [_prod(out_shape), t1.shape[-1]])
        if d2 == 2:
            return _unsafe_view(lookup("mm")(folded, t2), out_shape + [t2.shape[1]])
        return _unsafe_view(lookup("mv")(folded, t2), out_shape)
    if d1 < 3 and d2 >= 3 or not (d1 >= 1 and d2 >= 1):
        return lookup("matmul")._composite(t1, t2)   # (the transposed fold: not lowered here)
    n = t1.shape[-2] if d1 > 1 else 1
    m1 = t1.shape[-1]
    m2 = t2.shape[-2] if d2 > 1 else t2.shape[-1]
    p = t2.shape[-1] if d2 > 1 else 1
    batch = _broadcast(list(t1.shape[:-2]), list(t2.shape[:-2]))
    nb = _prod(batch)
    a = _reshape(expand(t1, batch + [n, m1]), [nb, n, m1])
    if d2 == 1:
        b = lookup("unsqueeze")(_reshape(expand(t2, batch + [m2]), [nb, m2]), 2)
    else:
        b = _reshape(expand(t2, batch + [m2, p]), [nb, m2, p])
    shape = batch + ([n] if d1 > 1 else []) + ([p] if d2 > 1 else [])
    out = lookup("bmm")(a, b)
    if d2 == 1:
        out = lookup("squeeze.dim")(out, -1)
    return view(out, shape)


def _broadcast(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [y if x == 1 else x for x, y in zip(a, b)]


def _reshape(x, shape):
    """aten.reshape lowered as torch lowers it: a view, or a contiguous clone then a view."""
    try:
        return lookup("view")(x, list(shape))
    except RuntimeError:
        return lookup("view")(lookup("clone")(x, memory_format=contiguous_format), list(shape))


def _unsafe_view(x, shape):
    return lookup("view")(x, list(shape))


def _transpose(x, dim0, dim1):
    n = max(x.dim(), 1)
    perm = list(range(x.dim()))
    a, b = dim0 % n, dim1 % n
    perm[a], perm[b] = perm[b], perm[a]
    return lookup("permute")(x, perm)


def _squeeze_dim(x, dim):
    return lookup("squeeze.dims")(x, [dim])


def _chunk(x, chunks, dim=0):
    size = x.shape[dim]
    each = -(-size // chunks) if size else 0
    if each == 0:
        return lookup("chunk")._composite(x, chunks, dim)
    sizes = [each] * (size // each) + ([size % each] if size % each else [])
    return lookup("split_with_sizes")(x, sizes, dim)


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                cudnn_enabled):
    if running_mean is None or running_var is None or input.numel() == 0:
        # torch lowers these to _native_batch_norm_legit.no_stats; ember keeps native_batch_norm
        return lookup("batch_norm")._composite(input, weight, bias, running_mean, running_var,
                                               training, momentum, eps, cudnn_enabled)
    if not training:
        return lookup("_native_batch_norm_legit_no_training")(
            input, weight, bias, running_mean, running_var, momentum, eps)[0]
    out, _, _, mean, var = lookup("_native_batch_norm_legit_functional")(
        input, weight, bias, running_mean, running_var, True, momentum, eps)
    copy_ = lookup("copy_")
    copy_(running_mean, mean)
    copy_(running_var, var)
    return out


def _dropout(input, p, train):
    if train and p != 0:
        return lookup("native_dropout")(input, p, train)[0]
    return lookup("clone")(input)


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    """scaled_dot_product_attention as torch lowers it on the CPU: q and k^T each scaled by
    sqrt(scale) (`mul.Scalar`), matmul, the additive mask, `_safe_softmax` (a row whose scores
    are all -inf gets zeros), matmul with v; where PyTorch would pick its fused CPU kernel, the
    result goes through that kernel's layout (permute, contiguous clone, permute back). Causal
    masks, boolean masks, dropout and grouped heads keep ember's own composition."""
    from ..nn.attention import _cpu_runs_flash
    if is_causal or enable_gqa or dropout_p > 0.0 or attn_mask is not None and \
            attn_mask.dtype is bool_ or min(query.dim(), key.dim(), value.dim()) < 2:
        return lookup("scaled_dot_product_attention")._composite(
            query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    flash = query.dim() == 4 and _cpu_runs_flash(query, key, value, attn_mask, dropout_p,
                                                 enable_gqa)
    mul, permute = lookup("mul.Scalar"), lookup("permute")
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    root = math.sqrt(scale)
    q = mul(query, root)
    k = mul(_transpose(key, -2, -1), root)
    scores = _matmul(q, k)
    if attn_mask is not None:
        scores = lookup("add.Tensor")(scores, attn_mask)
    weights = _safe_softmax(scores, -1)
    out = _matmul(weights, value)
    if flash:
        out = permute(lookup("clone")(permute(out, [2, 0, 1, 3]),
                                      memory_format=contiguous_format), [1, 2, 0, 3])
    return out


def _safe_softmax(x, dim):
    """aten._safe_softmax lowered: softmax, with zeros for rows that are all -inf."""
    logical_not = lookup("logical_not")
    out = lookup("_softmax")(x, dim, False)
    dead = logical_not(lookup("any.dim")(logical_not(lookup("eq.Scalar")(x, -math.inf)),
                                         dim, True))
    zeros = lookup("full_like")(out, 0, pin_memory=False, memory_format=preserve_format)
    return lookup("where.self")(dead, zeros, out)


CORE_DECOMPOSITIONS = {lookup("linear"): _linear, lookup("batch_norm"): _batch_norm,
                       lookup("dropout"): _dropout, lookup("matmul"): _matmul,
                       lookup("reshape"): _reshape, lookup("_unsafe_view"): _unsafe_view,
                       lookup("transpose.int"): _transpose, lookup("squeeze.dim"): _squeeze_dim,
                       lookup("chunk"): _chunk,
                       lookup("scaled_dot_product_attention"): _sdpa}
