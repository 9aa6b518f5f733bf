"""spconv.pytorch.functional: the sparse convolutions and max-pool as autograd.Functions over
ops.py's gather-matmul-scatter, each with a `symbolic` that exports it to ONNX as one node of
the custom domain `spconv` (the rulebook is an input, so a runtime needs nothing else).

The backward formulas are written with ember ops, like the forward, so the backward node's
work shows up op by op in `ember.explain()`.
"""
from ..autograd import Function
from . import ops


def _conv_symbolic(name, subm, inverse):
    def symbolic(g, features, filters, indice_pairs, indice_pair_num, num_activate_out,
                 algo=None, timer=None, bias=None):
        inputs = [features, filters, indice_pairs, indice_pair_num]
        if bias is not None:
            inputs.append(bias)
        return g.op(f"spconv::{name}", *inputs, num_activate_out_i=int(num_activate_out),
                    subm_i=int(subm), inverse_i=int(inverse))
    return staticmethod(symbolic)


class _IndiceConvFunction(Function):
    """forward(features, filters (KRSC), indice_pairs, indice_pair_num, num_activate_out,
    algo=None, timer=None, bias=None) -> out features (num_activate_out, out_channels)."""
    _subm = False
    _inverse = False

    @classmethod
    def forward(cls, ctx, features, filters, indice_pairs, indice_pair_num, num_activate_out,
                algo=None, timer=None, bias=None):
        ctx.save_for_backward(indice_pairs, indice_pair_num, features, filters)
        out = ops.indice_conv(features, filters, indice_pairs, indice_pair_num,
                              num_activate_out, cls._inverse, cls._subm)
        return out if bias is None else out.add_(bias)

    @classmethod
    def backward(cls, ctx, grad_output):
        indice_pairs, indice_pair_num, features, filters = ctx.saved_tensors
        input_bp, filters_bp = ops.indice_conv_backward(
            features, filters, grad_output, indice_pairs, indice_pair_num, cls._inverse,
            cls._subm)
        bias_bp = grad_output.sum(0) if ctx.needs_input_grad[7:8] == (True,) else None
        return input_bp, filters_bp, None, None, None, None, None, bias_bp


class SparseConvFunction(_IndiceConvFunction):
    symbolic = _conv_symbolic("SparseConv", subm=False, inverse=False)


class SparseInverseConvFunction(_IndiceConvFunction):
    _inverse = True
    symbolic = _conv_symbolic("SparseInverseConv", subm=False, inverse=True)


class SubMConvFunction(_IndiceConvFunction):
    _subm = True
    symbolic = _conv_symbolic("SubMConv", subm=True, inverse=False)


class SparseMaxPoolFunction(Function):
    @staticmethod
    def forward(ctx, features, indice_pairs, indice_pair_num, num_activate_out):
        out = ops.indice_maxpool(features, indice_pairs, indice_pair_num, num_activate_out)
        ctx.save_for_backward(indice_pairs, indice_pair_num, features, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        indice_pairs, indice_pair_num, features, out = ctx.saved_tensors
        return (ops.indice_maxpool_backward(features, out, grad_output, indice_pairs,
                                            indice_pair_num), None, None, None)

    @staticmethod
    def symbolic(g, features, indice_pairs, indice_pair_num, num_activate_out):
        return g.op("spconv::SparseMaxPool", features, indice_pairs, indice_pair_num,
                    num_activate_out_i=int(num_activate_out))


indice_conv = SparseConvFunction.apply
indice_inverse_conv = SparseInverseConvFunction.apply
indice_subm_conv = SubMConvFunction.apply
indice_maxpool = SparseMaxPoolFunction.apply
