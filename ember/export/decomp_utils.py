"""The decompositions `ExportedProgram.run_decompositions()` applies besides the composite ops.

torch's core ATen set leaves out ops that are sugar over smaller ones; ember's composites
(CompositeImplicitAutograd kernels) decompose by themselves when re-captured, and the ops ember
implements with a kernel of their own but torch decomposes are written here from the ops torch
lowers them to (`linear` -> `permute` + `addmm`/`mm`, with `view`s around it for batched input).
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


CORE_DECOMPOSITIONS = {lookup("linear"): _linear}
