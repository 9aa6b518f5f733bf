"""Which ops autograd differentiates for complex outputs (PyTorch's
GRADIENT_IMPLEMENTED_FOR_COMPLEX allowlist of the autograd code generator).

An out-of-place op with a derivative that is not on the list refuses, in the forward, to record a
complex output that requires grad: `F.silu(z)` with `z` complex and requiring grad raises
"silu does not support automatic differentiation for outputs with complex dtype.". The name in the
message is the op's base name (overload and in-place underscore dropped). In-place ops are not
checked (PyTorch's generated check only covers outputs returned by value), so `z.sigmoid_()` on a
non-leaf records as usual; nor are ops returning a list of tensors (`split_copy`), whose outputs
the generated check does not see either.
"""
from ..._dispatch import dispatcher as _dispatcher
from ..variable_type import Derivative, NOT_IMPLEMENTED_COMPLEX_REFUSED, _NOT_IMPLEMENTED, \
    _NO_FORMULA

# base names of the ops whose derivative formulas handle complex numbers
GRADIENT_IMPLEMENTED_FOR_COMPLEX = frozenset({
    "__radd__", "__rmul__", "_coalesce", "_conj", "_conj_physical", "_fft_c2c", "_fft_r2c",
    "_linalg_det", "_linalg_eigh", "_linalg_slogdet", "_linalg_solve_ex", "_linalg_svd",
    "_neg_view", "_reshape_alias", "_reshape_copy", "_sparse_addmm",
    "_sparse_coo_tensor_with_dims_and_tensors", "_sparse_sparse_matmul", "_to_copy", "_to_dense",
    "_unsafe_index", "_unsafe_index_put", "_unsafe_masked_index",
    "_unsafe_masked_index_put_accumulate", "_unsafe_view", "acos", "acosh", "add", "addbmm",
    "addcdiv", "addcmul", "addmm", "addmv", "addr", "alias", "alias_copy", "as_strided",
    "as_strided_copy", "as_strided_scatter", "asin", "asinh", "atan", "atanh", "baddbmm",
    "block_diag", "bmm", "cat", "channel_shuffle", "cholesky", "cholesky_inverse",
    "cholesky_solve", "chunk", "clone", "coalesce", "col2im", "complex", "conj_physical_",
    "constant_pad_nd", "cos", "cosh", "cumprod", "cumsum", "cumulative_trapezoid", "diag",
    "diag_embed", "diagonal", "diagonal_backward", "diagonal_copy", "diagonal_scatter", "div",
    "dot", "eig", "eq_", "exp", "exp2", "expand", "expand_copy", "expm1", "fill", "fill_", "flip",
    "fliplr", "flipud", "gather", "im2col", "index", "index_add", "index_add_", "index_copy",
    "index_fill", "index_put", "index_select", "inverse", "ldexp", "lerp", "linalg_cholesky",
    "linalg_cholesky_ex", "linalg_cross", "linalg_eig", "linalg_householder_product", "linalg_inv",
    "linalg_inv_ex", "linalg_lstsq", "linalg_lu", "linalg_lu_factor_ex", "linalg_lu_solve",
    "linalg_matrix_exp", "linalg_pinv", "linalg_qr", "linalg_solve", "linalg_solve_triangular",
    "linalg_vector_norm", "linear", "log", "log10", "log1p", "log2", "logaddexp", "logcumsumexp",
    "logsumexp", "lu", "lu_solve", "lu_unpack", "masked_fill", "masked_scatter",
    "masked_scatter_backward", "masked_select", "matrix_exp", "mean", "mm", "mul", "mv", "nanmean",
    "nansum", "narrow_copy", "ne_", "neg", "nonzero", "ormqr", "outer", "permute", "permute_copy",
    "pixel_shuffle", "pixel_unshuffle", "polar", "pow", "prod", "put", "put_", "reciprocal",
    "reflection_pad1d", "reflection_pad1d_backward", "reflection_pad2d",
    "reflection_pad2d_backward", "reflection_pad3d", "reflection_pad3d_backward", "renorm",
    "repeat", "replication_pad1d", "replication_pad1d_backward", "replication_pad2d",
    "replication_pad2d_backward", "replication_pad3d", "replication_pad3d_backward", "reshape",
    "reshape_as", "resize", "resize_as", "roll", "rot90", "rsqrt", "rsub", "scatter",
    "scatter_add", "select", "select_backward", "sgn", "sigmoid", "sigmoid_backward", "sin",
    "sinc", "sinh", "slice", "slice_backward", "solve", "sparse_mask", "sparse_sampled_addmm",
    "split", "split_with_sizes", "split_with_sizes_backward", "sqrt", "squeeze", "squeeze_copy",
    "stack", "std_mean", "sub", "sum", "t", "t_copy", "take", "tan", "tanh", "tanh_backward",
    "to_sparse", "trace", "transpose", "transpose_copy", "trapezoid", "triangular_solve", "tril",
    "triu", "unbind", "unbind_copy", "unfold", "unfold_backward", "unfold_copy", "unsafe_split",
    "unsqueeze", "unsqueeze_copy", "values", "var_mean", "vdot", "view", "view_as",
    "view_as_complex", "view_copy", "where", "zero_",
})

# ember ops that PyTorch computes by decomposition (CompositeImplicitAutograd there, or ember's
# own helper ops): PyTorch checks the ops they decompose into, all of them on the list
_DECOMPOSED_INTO_ALLOWED = frozenset({
    "conj_physical", "einsum", "linalg_det", "linalg_eigh", "linalg_slogdet", "linalg_solve_ex",
    "linalg_svd", "matmul", "narrow", "_convolution_with_columns",
    "_convolution_backward_input", "_convolution_backward_weight", "_rnn_layer",
    "_binary_cross_entropy_with_logits_backward", "_native_batch_norm_legit_functional",
    "_nll_loss_backward", "_softmax_cross_entropy", "_softmax_cross_entropy_backward",
    "_values",  # what ember's Tensor.values() calls; PyTorch's `values` is on the list
})

# ember ops PyTorch decomposes into one op it refuses: the name its message gives
_TORCH_NAME = {"_sparse_compressed_tensor_unsafe": "sparse_compressed_tensor",
               "log_sigmoid": "log_sigmoid_forward", "nll_loss": "nll_loss_forward"}


def base_name(op):
    """`aten::add.Tensor` -> add, `aten::silu_` -> silu."""
    name = op.schema.name
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    return _TORCH_NAME.get(name, name)


def mark_complex_refusals():
    """Set `complex_refused` (the name for the message) on every out-of-place aten op's
    Derivative whose op is not on the allowlist, and list the `not_implemented` ones."""
    for op in _dispatcher._registry.values():
        d = op.derivative
        if op._mutates or not op.name.startswith("aten::") or not op.schema.returns or \
                op.schema.returns[0].endswith("[]"):
            continue
        name = base_name(op)
        allowed = name in GRADIENT_IMPLEMENTED_FOR_COMPLEX or name in _DECOMPOSED_INTO_ALLOWED
        if type(d) is Derivative:
            d.complex_refused = None if allowed else name
        elif d is _NOT_IMPLEMENTED and op.name not in _NO_FORMULA and not allowed:
            NOT_IMPLEMENTED_COMPLEX_REFUSED[op.name] = name
