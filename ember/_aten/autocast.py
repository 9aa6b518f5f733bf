"""The AutocastCPU dispatch key: PyTorch's CPU autocast op lists and the one kernel that casts.

Inside `ember.autocast("cpu", dtype=...)` the dispatcher sends every op that has a cast policy
(`OpOverload.autocast`) to `autocast_cpu` before anything else. The kernel casts the op's
floating-point CPU tensor arguments as the policy says, then calls the op again with the
AutocastCPU key excluded, so the op runs normally on the cast inputs: the Autograd key records
the casts (ToCopyBackward0) and the op, and a composite op's inner ops see no autocast at all.
Ops on no list run in the dtypes they are given. The policies (PyTorch's autocast_mode.cpp):

    lower_precision_fp   cast to the autocast dtype (bfloat16 or float16): matmuls, convolutions
    fp32                 cast to float32: reductions, losses, FFTs, decompositions
    promote              cast all to the widest floating type among the inputs: cat, stack

float64 tensors are never cast, nor are integer, complex or meta tensors.
"""
from .._core import dtype as D
from .._core.autocast_state import _autocast_state, _cast_cache, _dtypes
from .._core.mode_stack import torch_dispatch_modes
from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher

LOWER_PRECISION_FP, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"

# PyTorch's AutocastCPU registrations by op name (all overloads of each name are listed there).
# Names ember does not define as ops are kept so the lists read as PyTorch's; they apply as soon
# as an op of that name is registered.
CPU_POLICIES = {
    LOWER_PRECISION_FP: """
        conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm _addmm_activation addbmm linear
        _convolution matmul conv_tbc mkldnn_rnn_layer conv_transpose1d conv_transpose2d
        conv_transpose3d prelu scaled_dot_product_attention _native_multi_head_attention""",
    FP32: """
        avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist
        grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace view_as_complex
        cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d
        max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d
        replication_pad1d replication_pad2d replication_pad3d mse_loss cosine_embedding_loss
        nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss
        cross_entropy_loss l1_loss huber_loss margin_ranking_loss soft_margin_loss
        triplet_margin_loss multi_margin_loss ctc_loss kl_div multilabel_margin_loss
        binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn
        fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft
        linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals
        linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv linalg_tensorsolve
        fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve
        fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d
        multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd linalg_eig
        linalg_eigh linalg_lstsq linalg_inv_ex""",
    PROMOTE: "stack cat index_copy",
}
CPU_POLICY = {name: policy for policy, names in CPU_POLICIES.items() for name in names.split()}
# PyTorch's conv1d..conv_transpose3d are ops; ember writes them as Python functions
# (nn.functional) over one of these two ops, which therefore carry their policy.
CPU_POLICY.update(convolution=LOWER_PRECISION_FP, _convolution_with_columns=LOWER_PRECISION_FP)

_to_copy = _dispatcher.lookup("_to_copy")


def _eligible(t):
    """A CPU floating-point tensor other than float64 (PyTorch's is_eligible for CPU)."""
    return (isinstance(t, Tensor) and t._device.type == "cpu" and t.dtype.is_floating_point
            and t.dtype is not D.float64)


def cached_cast(to, t):
    """`t` cast to `to` if autocast may cast it. Casts of float32 leaf tensors that require grad
    (a model's weights) to the lower-precision dtype are cached until the outermost autocast
    region exits, so a weight used by several ops is cast once per forward, as in PyTorch."""
    if not _eligible(t) or t.dtype is to:
        return t
    if (to is _dtypes["cpu"] and t.dtype is D.float32 and t.requires_grad and t.grad_fn is None
            and t._base is None and _autocast_state.cache_enabled):
        hit = _cast_cache.get(id(t))
        if hit is not None:
            return hit[1]
        cast = _to_copy(t, dtype=to)
        _cast_cache[id(t)] = (t, cast)
        return cast
    return _to_copy(t, dtype=to)


def _promote_type(tensors):
    """The widest floating type among the eligible inputs, starting from the autocast dtype:
    float32 wins over the lower-precision dtype; float64 inputs are left out (and not cast)."""
    lower = current = _dtypes["cpu"]
    for t in tensors:
        if not _eligible(t):
            continue
        if current is D.float32 or t.dtype is D.float32:
            current = D.float32
        elif not (current is lower and t.dtype is lower):
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def autocast_cpu(op, args):
    """The AutocastCPU kernel: cast the tensor arguments per `op.autocast`, then redispatch with
    the key excluded (PyTorch's ExcludeDispatchKeyGuard), which also makes
    `is_autocast_enabled("cpu")` false while the op runs, as in PyTorch."""
    policy = op.autocast
    if policy is PROMOTE:
        tensors = [args[i] for i in op._tensor_pos]
        for i in op._list_pos:
            tensors.extend(args[i])
        to = _promote_type(tensors)
    else:
        to = D.float32 if policy is FP32 else _dtypes["cpu"]
    args = list(args)
    for i in op._tensor_pos:
        args[i] = cached_cast(to, args[i])
    for i in op._list_pos:
        args[i] = [cached_cast(to, t) for t in args[i]]
    _autocast_state.cpu = False
    try:   # (below autocast: to the Python key while a TorchDispatchMode is on the stack)
        return op._dispatch_to_python(args) if torch_dispatch_modes else op._dispatch(args)
    finally:
        _autocast_state.cpu = True


def apply_policies():
    """Give every registered aten op on PyTorch's lists its policy (in-place twins such as
    addmm_ are other names, so they keep none: PyTorch does not autocast in-place ops)."""
    for op in _dispatcher._registry.values():
        if op.schema.namespace == "aten":
            op.autocast = CPU_POLICY.get(op.schema.name)


_dispatcher.register_fallback("AutocastCPU", autocast_cpu)
