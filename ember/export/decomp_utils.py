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
from .._core.memory_format import contiguous_format
from .._dispatch.dispatcher import lookup


def _linear(input, weight, bias=None):
    permute, view = lookup("permute"), lookup("view")
    weight_t = permute(weight, [1, 0])
    batch = list(input.shape[:-1])
    x = input
    if input.dim() != 2:
        if not input.is_contiguous():   # a view needs the rows laid out one after another
            x = lookup("clone")(input, memory_format=contiguous_format)
        x = view(x, [_prod(batch), input.shape[-1]])
    out = lookup("mm")(x, weight_t) if bias is None else lookup("addmm")(bias, x, weight_t)
    return out if input.dim() == 2 else view(out, batch + [weight.shape[0]])


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


CORE_DECOMPOSITIONS = {lookup("linear"): _linear, lookup("batch_norm"): _batch_norm,
                       lookup("dropout"): _dropout}
