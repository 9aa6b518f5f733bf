"""spconv.pytorch.ops: a sparse convolution computed from its rulebook -- for every kernel
offset, gather the input rows, multiply by that offset's weight, scatter-add into the output
rows -- and its backward, all with ember ops (index_select, mm, index_add_), so every step goes
through the dispatcher and shows up in `ember.explain()`. The rulebook itself is rulebook.py's.

Weights are in spconv 2.x's KRSC layout, `[out_channels, *kernel_size, in_channels]`.
"""
import ember

from .rulebook import get_conv_output_size, get_deconv_output_size, get_indice_pairs

# spconv.pytorch.ops offers the rulebook functions too
__all__ = ["get_conv_output_size", "get_deconv_output_size", "get_indice_pairs", "indice_conv",
           "indice_conv_backward", "indice_maxpool", "indice_maxpool_backward"]


def _offset_pairs(indice_pairs, indice_pair_num, inverse):
    """(k, source rows, destination rows) of every offset with pairs. An inverse convolution
    reads the forward one's rulebook the other way round."""
    src, dst = (1, 0) if inverse else (0, 1)
    pairs = indice_pairs.long()
    return [(k, pairs[src, k, :n], pairs[dst, k, :n])
            for k, n in enumerate(indice_pair_num.tolist()) if n > 0]


def _per_offset(filters):
    """KRSC filters as (kernel_volume, out_channels, in_channels): one matrix per offset."""
    return filters.reshape(filters.shape[0], -1, filters.shape[-1]).transpose(0, 1)


def indice_conv(features, filters, indice_pairs, indice_pair_num, num_activate_out,
                inverse=False, subm=False):
    """out[o] += features[i] @ W_k.T for every pair (i, o) of every offset k.

    A submanifold rulebook pairs every site with itself at the centre offset, in row order
    (rulebook.py), so that offset is one plain matmul without gather or scatter."""
    weights_t = _per_offset(filters).transpose(1, 2)   # (kernel_volume, in, out)
    out = features.new_zeros((num_activate_out, filters.shape[0]))
    centre = weights_t.shape[0] // 2 if subm else -1
    for k, rows_in, rows_out in _offset_pairs(indice_pairs, indice_pair_num, inverse):
        if k == centre:
            out.add_(features.mm(weights_t[k]))
        else:
            out.index_add_(0, rows_out, features.index_select(0, rows_in).mm(weights_t[k]))
    return out


def indice_conv_backward(features, filters, out_bp, indice_pairs, indice_pair_num,
                         inverse=False, subm=False):
    """The gradients of indice_conv for features and filters: per offset, the output gradient
    of the destination rows goes back through W_k to the source rows, and gives W_k the sum
    of (output gradient)^T (input) over the pairs."""
    weights = _per_offset(filters)
    kernel_volume = weights.shape[0]
    input_bp = ember.zeros_like(features)
    filters_bp = [None] * kernel_volume
    centre = kernel_volume // 2 if subm else -1
    for k, rows_in, rows_out in _offset_pairs(indice_pairs, indice_pair_num, inverse):
        if k == centre:
            grad_out, x = out_bp, features
            input_bp.add_(grad_out.mm(weights[k]))
        else:
            grad_out, x = out_bp.index_select(0, rows_out), features.index_select(0, rows_in)
            input_bp.index_add_(0, rows_in, grad_out.mm(weights[k]))
        filters_bp[k] = grad_out.t().mm(x)
    zero = filters.new_zeros(weights.shape[1:])
    filters_bp = ember.stack([w if w is not None else zero for w in filters_bp], dim=1)
    return input_bp, filters_bp.reshape(filters.shape)


def indice_maxpool(features, indice_pairs, indice_pair_num, num_activate_out):
    """out[o] = max(0, max over pairs (i, o) of features[i]), channel by channel. The maximum
    starts from zero as spconv's does, so it equals a dense max-pool of the densified input
    wherever the features are not negative (after a ReLU, the usual case)."""
    out = features.new_zeros((num_activate_out, features.shape[1]))
    for _, rows_in, rows_out in _offset_pairs(indice_pairs, indice_pair_num, False):
        out.index_copy_(0, rows_out, ember.maximum(out.index_select(0, rows_out),
                                                   features.index_select(0, rows_in)))
    return out


def indice_maxpool_backward(features, out_features, out_bp, indice_pairs, indice_pair_num):
    """The gradient of indice_maxpool: each output's gradient goes to every input that equals
    the maximum (to all of them on a tie, as spconv's kernel does)."""
    input_bp = ember.zeros_like(features)
    for _, rows_in, rows_out in _offset_pairs(indice_pairs, indice_pair_num, False):
        x = features.index_select(0, rows_in)
        hit = x == out_features.index_select(0, rows_out)
        input_bp.index_add_(0, rows_in, out_bp.index_select(0, rows_out) * hit)
    return input_bp
