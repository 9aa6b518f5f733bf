"""The op table's rows on complex inputs: every float input that requires grad becomes a complex
one (real part the sample's data, imaginary part derived from it), and ember must do what torch
2.13 does: the same values and the same gradients (PyTorch's convention: the conjugate Wirtinger
derivative of a real loss) where torch differentiates the op for complex numbers (its refusals
list are covered by test_complex_autograd_allowlist.py). complex128 on the first sample of every
row torch differentiates for complex inputs (TORCH_DIFFERENTIATES, listed by running torch on every
row: the other rows' complex behaviour is torch refusing), complex64 on a few families' rows."""
import numpy as np
import pytest

import ember
from op_db import OPS, T
from test_ops import convert

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore")

TOL = {"complex128": (1e-7, 1e-7), "complex64": (2e-5, 2e-5)}

# rows where ember's result differs from torch's on complex inputs (the reason in each case)
KNOWN = {
    "F.pairwise_distance": "complex pairwise_distance gradient differs",
    "linalg.cholesky": "the sample is not Hermitian; cholesky gradients differ off it",
    "linalg.cholesky_ex": "the sample is not Hermitian; cholesky gradients differ off it",
    "torch.cholesky_solve": "cholesky-based sample not Hermitian for complex inputs",
    "cholesky_solve": "cholesky-based sample not Hermitian for complex inputs",
    "torch.cholesky_inverse": "cholesky-based sample not Hermitian for complex inputs",
    "cholesky_inverse": "cholesky-based sample not Hermitian for complex inputs",
    "linalg.pinv": "complex pinv gradient differs",
    "torch.pinverse": "complex pinv gradient differs",
    "linalg.lstsq": "complex lstsq gradient differs",
    "linalg.lstsq.solution": "complex lstsq gradient differs",
    "linalg.lstsq.drivers": "complex lstsq gradient differs",
    "linalg.lstsq.differentiable": "complex lstsq gradient differs",
    "torch.svd_lowrank": "randomized: complex gradient differs",
    "torch.pca_lowrank": "randomized: complex gradient differs",
    "ldexp_float_exponent": "complex ldexp gradient differs",
    "F.normalize": "ember's vector_norm refuses complex input",
    "norm_inf": "ember's sign refuses complex input",
    "norm_matrix_1": "ember's sign refuses complex input",
    "masked.norm.ord": "ember's sign refuses complex", "masked.normalize.ord": "same",
    "F.conv1d": "no complex convolution in ember", "F.conv2d": "no complex convolution",
    "F.conv3d": "no complex convolution", "F.conv_transpose1d": "no complex convolution",
    "F.conv_transpose2d": "no complex convolution", "F.conv_transpose3d": "no complex convolution",
    "F.unfold": "no complex im2col in ember", "F.fold": "no complex col2im in ember",
    "lstm": "no complex recurrent layers in ember",
    "lstm.bidirectional_2layers": "no complex recurrent layers in ember",
    "lstm.packed": "no complex recurrent layers in ember",
    "gru": "no complex recurrent layers in ember",
    "gru.packed_no_bias": "no complex recurrent layers in ember",
    "rnn_tanh": "no complex recurrent layers in ember",
    "lstm_cell": "no complex recurrent layers in ember",
    "gru_cell": "no complex recurrent layers in ember",
    "rnn_tanh_cell": "no complex recurrent layers in ember",
    "aten._rnn_layer": "no complex recurrent layers in ember",
    "logdet": "ember's logdet compares complex values (lt on complex)",
    "F.rms_norm": "no complex rms_norm in ember", "F.triplet_margin_loss": "clamp on complex",
    "sparse.mm": "ember has no sparse conj_physical", "dsmm": "ember has no sparse conj_physical",
}


def _first_sample(op):
    dt = "float64" if "float64" in op.dtypes else "float32"
    sample = op.samples(dt, np.random.default_rng(0))[0]
    args = list(sample.args) + list(sample.kwargs.values())
    if not any(isinstance(a, T) and a.grad and a.dtype == dt for a in args):
        return None
    return sample


# the rows whose first sample torch 2.13 differentiates with complex128 inputs
TORCH_DIFFERENTIATES = frozenset({
    "add", "add_alpha", "add_alpha_float", "sub", "sub_alpha", "mul", "div", "pow",
    "pow_positive_base", "pow_scalar", "pow_scalar_float", "pow_scalar_negative",
    "pow_scalar_base", "where", "where_method", "__add__", "__sub__", "__mul__", "__truediv__",
    "__pow__", "__radd__", "__rsub__", "__rsub__float", "__rmul__", "__rtruediv__", "__rpow__",
    "__rpow__float", "__neg__", "__abs__", "add_", "add_alpha_", "add_float_into_float32", "sub_",
    "mul_", "div_", "__iadd__", "__isub__", "__imul__", "__itruediv__", "add_through_view", "neg",
    "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
    "silu_inplace", "sum", "sum_dim_None", "sum_dtype", "mean", "mean_dtype", "prod",
    "prod_with_zeros", "var", "var_unbiased_positional", "std", "logsumexp", "matmul",
    "__matmul__", "mm", "bmm", "addmm", "linear", "tan", "asin", "acos", "arccos", "atan", "sinh",
    "cosh", "asinh", "acosh", "atanh", "log2", "log10", "exp2", "reciprocal", "tan_", "exp_",
    "sigmoid_", "nan_to_num_", "lerp", "lerp_", "addcmul", "addcmul_", "addcdiv", "addcdiv_",
    "softsign", "tanhshrink", "norm", "norm_inf", "norm_matrix_1", "linalg.vector_norm",
    "linalg.matrix_norm", "linalg.matrix_norm_svd", "var_mean", "std_mean", "cumsum",
    "cumsum_dtype", "cumsum_", "cumprod", "logcumsumexp", "F.conv1d", "F.conv2d", "F.conv3d",
    "F.conv_transpose1d", "F.conv_transpose2d", "F.conv_transpose3d", "F.unfold", "F.fold",
    "F.pad_constant", "F.pad_reflect", "F.pad_replicate", "F.pad_circular", "F.pixel_shuffle",
    "F.pixel_unshuffle", "F.rms_norm", "F.pairwise_distance", "F.normalize", "lstm",
    "lstm.bidirectional_2layers", "lstm.packed", "gru", "gru.packed_no_bias", "rnn_tanh",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "aten._rnn_layer", "F.l1_loss", "F.poisson_nll_loss",
    "F.triplet_margin_loss", "dot", "vdot", "mv", "outer", "ger", "addmv", "addr", "baddbmm",
    "addbmm", "baddbmm_", "einsum", "einsum_list", "tensordot", "kron", "linalg.cross", "cross",
    "trace", "linalg.inv", "inverse", "linalg.det", "linalg.slogdet", "logdet", "linalg.solve",
    "linalg.cholesky", "linalg.qr", "linalg.svdvals", "linalg.pinv", "torch.pinverse",
    "linalg.lstsq", "linalg.lstsq.solution", "linalg.matrix_power", "linalg.multi_dot",
    "linalg.vecdot", "linalg.norm", "diag_embed", "rot90", "diagonal_scatter",
    "torch.scatter_reduce_", "masked_scatter", "masked_scatter_", "torch.masked_scatter",
    "index_copy", "index_copy_", "put", "put_", "torch.put", "take", "torch.take", "t_",
    "transpose_", "swapdims_", "swapaxes_", "squeeze_", "squeeze_.dim", "squeeze_.dims",
    "unsqueeze_", "index_add", "index_add_", "index_fill", "index_fill_", "masked_fill",
    "masked_fill_", "scatter.src", "scatter_.src", "scatter_add", "scatter_add_", "roll",
    "roll.dims", "squeeze.dims", "getitem.ellipsis", "tril_", "triu_", "torch.diff", "diff",
    "torch.cov", "cov", "torch.corrcoef", "torch.cartesian_prod", "torch.combinations",
    "torch.block_diag", "torch.diagflat", "diagflat", "torch.gradient", "torch.trapezoid",
    "torch.trapz", "torch.cumulative_trapezoid", "torch.renorm", "renorm", "renorm_", "torch.dist",
    "dist", "torch.inner", "inner", "torch.chain_matmul", "torch.index_put", "torch.index_put_",
    "torch.split_with_sizes", "split_with_sizes", "torch.unsafe_split", "torch.unsafe_chunk",
    "torch.unsafe_split_with_sizes", "unsafe_split", "unsafe_chunk", "torch.view_copy",
    "torch.permute_copy", "torch.t_copy", "torch.transpose_copy", "torch.squeeze_copy",
    "torch.unsqueeze_copy", "torch.diagonal_copy", "torch.expand_copy", "torch.unbind_copy",
    "torch.split_copy", "torch.split_with_sizes_copy", "torch.alias_copy", "torch.unfold_copy",
    "torch.as_strided_copy", "linalg.solve_triangular", "torch.triangular_solve",
    "triangular_solve", "torch.cholesky_solve", "cholesky_solve", "torch.cholesky_inverse",
    "cholesky_inverse", "torch.matrix_exp", "linalg.matrix_exp", "matrix_exp", "linalg.cond",
    "torch.frobenius_norm", "torch.nuclear_norm", "torch.norm_except_dim", "linalg.lu",
    "linalg.lu_factor", "torch.lu", "lu", "torch.lu_unpack", "linalg.lu_solve", "torch.lu_solve",
    "torch.svd_lowrank", "torch.pca_lowrank", "linalg.householder_product", "torch.orgqr", "orgqr",
    "torch.ormqr", "ormqr", "logaddexp", "float_power", "float_power_", "ldexp", "ldexp_",
    "ldexp_float_exponent", "sinc", "sinc_", "sgn", "sgn_", "positive", "square_", "multiply_",
    "subtract_", "divide_", "true_divide_", "addmm_", "torch_addmv_", "angle", "angle_method",
    "real_of_real", "resolve", "conj_physical_real", "cfloat", "cdouble", "torch_fill",
    "torch_fill_", "torch_zero_", "special.expit", "special.exp2", "special.expm1",
    "special.log1p", "special.sinc", "special.logsumexp", "fft.fft", "fft.ifft", "fft.irfft",
    "fft.hfft", "fft.fftn", "fft.fft2", "fft.ifftn", "fft.ifft2", "fft.irfftn", "fft.irfft2",
    "fft.hfftn", "fft.hfft2", "fft.fftshift", "fft.ifftshift", "unfold_backward", "stft",
    "Tensor.stft", "istft_of_stft", "masked.sum", "masked.sum.dtype", "masked.prod", "masked.mean",
    "masked.median", "masked.logsumexp", "masked.norm", "masked.norm.ord", "masked.var",
    "masked.var.correction", "masked.std", "masked.cumsum", "masked.cumprod", "masked.normalize",
    "masked.normalize.ord", "masked.logaddexp", "sparse_coo_tensor.to_dense", "coalesce.values",
    "sparse_mask", "sparse.mm", "dsmm", "linalg.inv_ex", "linalg.solve_ex", "linalg.cholesky_ex",
    "linalg.tensorinv", "linalg.tensorsolve", "linalg.vander", "linalg.eig.grad", "linalg.eig.abs",
    "linalg.eigvals.grad", "linalg.qr.reduced", "linalg.qr.complete", "linalg.lstsq.drivers",
    "linalg.lstsq.differentiable", "linalg.matrix_exp.torch_samples", "neg_", "log_", "log1p_",
    "expm1_", "sqrt_", "rsqrt_", "sin_", "cos_", "tanh_", "asin_", "acos_", "atan_", "sinh_",
    "cosh_", "log2_", "log10_", "exp2_", "reciprocal_", "cumprod_", "addmv_", "addr_", "addbmm_",
})

ROWS = [op for op in OPS if op.name in TORCH_DIFFERENTIATES]
CASES = [(op, "complex128") for op in ROWS]
CASES += [(op, "complex64") for op in ROWS if op.name.split(".")[0] in (
    "exp", "sin", "tanh", "sigmoid", "mul", "div", "add", "sum", "mean", "prod", "cumsum",
    "mm", "bmm", "matmul", "mv", "addmm", "linear", "einsum", "sqrt", "log", "pow", "reciprocal")]


def _convert(m, a, dtype):
    if isinstance(a, T) and a.grad and a.dtype in ("float32", "float64"):
        x = m.from_numpy(a.data.astype(np.float64).copy())
        return m.complex(x, x * 0.5 + 0.25).to(getattr(m, dtype)).detach().requires_grad_()
    return convert(m, a)


def _run(m, op, sample, dtype):
    """The outputs that require grad and the gradients of a fixed real loss of them."""
    args = [_convert(m, a, dtype) for a in sample.args]
    kwargs = {k: _convert(m, v, dtype) for k, v in sample.kwargs.items()}
    leaves = [a for a in args + list(kwargs.values()) if getattr(a, "requires_grad", False)]
    out = op.op(m, *args, **kwargs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if isinstance(o, m.Tensor) and o.requires_grad]
    loss = 0
    rng = np.random.default_rng(1)
    for o in outs:
        w = m.from_numpy(rng.uniform(-1, 1, tuple(o.shape) + ((2,) if o.is_complex() else ())))
        loss = loss + ((m.view_as_real(o) if o.is_complex() else o).double() * w).sum()
    grads = m.autograd.grad(loss, leaves, allow_unused=True) if outs else ()
    return outs, grads


def _numpy(t):
    return None if t is None else t.detach().resolve_conj().numpy()


@pytest.mark.parametrize("op, dtype", CASES, ids=lambda c: str(c))
def test_complex_values_and_grads(op, dtype):
    sample = _first_sample(op)
    assert sample is not None, f"{op.name}'s first sample has no float input requiring grad"
    if op.name in KNOWN:
        pytest.xfail(KNOWN[op.name])
    t_outs, t_grads = _run(torch, op, sample, dtype)
    e_outs, e_grads = _run(ember, op, sample, dtype)
    rtol, atol = TOL[dtype]
    assert len(e_outs) == len(t_outs), "a different number of outputs require grad"
    for k, (e, t) in enumerate(zip(e_outs, t_outs)):
        assert str(e.dtype) == str(t.dtype), f"output {k}: dtype {e.dtype} != {t.dtype}"
        np.testing.assert_allclose(_numpy(e), _numpy(t), rtol=rtol, atol=atol,
                                   err_msg=f"output {k}")
    for k, (e, t) in enumerate(zip(e_grads, t_grads)):
        assert (e is None) == (t is None), f"gradient {k}: {e} vs torch's {t}"
        if t is not None:
            assert str(e.dtype) == str(t.dtype), f"gradient {k}: dtype {e.dtype} != {t.dtype}"
            np.testing.assert_allclose(_numpy(e), _numpy(t), rtol=rtol, atol=atol,
                                       err_msg=f"gradient {k}")


# products with complex scalar factors: the gradients carry their conjugates
SCALED = {
    "addmm": lambda m, a: m.addmm(a[0], a[1], a[2], beta=0.5 - 1j, alpha=1 + 2j),
    "addmv": lambda m, a: m.addmv(a[3], a[1], a[4], beta=0.5 - 1j, alpha=1 + 2j),
    "addr": lambda m, a: m.addr(a[0], a[3], a[5], beta=0.5 - 1j, alpha=1 + 2j),
    "baddbmm": lambda m, a: m.baddbmm(a[6], a[7], a[8], beta=0.5 - 1j, alpha=1 + 2j),
    "addbmm": lambda m, a: m.addbmm(a[0], a[7], a[8], beta=0.5 - 1j, alpha=1 + 2j),
}


@pytest.mark.parametrize("name", sorted(SCALED))
def test_complex_alpha_beta(name):
    rng = np.random.default_rng(0)
    shapes = [(2, 4), (2, 3), (3, 4), (2,), (3,), (4,), (2, 2, 4), (2, 2, 3), (2, 3, 4)]
    arrays = [rng.normal(size=s) + 1j * rng.normal(size=s) for s in shapes]
    grads = []
    for m in (torch, ember):
        ts = [m.tensor(a, requires_grad=True) for a in arrays]
        out = SCALED[name](m, ts)
        grads.append(m.autograd.grad(m.view_as_real(out).sum(), ts, allow_unused=True))
    for k, (e, t) in enumerate(zip(*grads)):
        assert (e is None) == (t is None), f"gradient {k}"
        if t is not None:
            np.testing.assert_allclose(_numpy(e), _numpy(t), rtol=1e-10, atol=1e-12,
                                       err_msg=f"gradient {k}")
