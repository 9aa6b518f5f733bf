"""nn.functional.grouped_mm, scaled_mm and scaled_grouped_mm: the matrix products of
mixture-of-experts layers and of float8 training.

grouped_mm multiplies groups of matrices that share shapes but not row counts. A 3-D operand
lists its groups; a 2-D one is cut into groups along its jagged dimension by `offs` (int32 end
offsets):

    mat_a 2-D (M, K), mat_b 3-D (G, K, N):  rows offs[g-1]:offs[g] of a times b[g]  -> (M, N)
    mat_a 3-D (G, M, K), mat_b 2-D (K, N):  a[g] times columns offs[g-1]:offs[g]    -> (M, N)
    mat_a 2-D (M, K), mat_b 2-D (K, N):     the K slices offs[g-1]:offs[g]           -> (G, M, N)
    mat_a 3-D, mat_b 3-D, no offs:          a batched matmul                          -> (G, M, N)

It is written from slices, matmul and cat, so it is differentiable. PyTorch's CPU kernel leaves
the rows past offs[-1] uninitialized; ember's are zero.

scaled_mm and scaled_grouped_mm take float8 operands with per-tensor, per-row or per-block
scales. ember has no float8 dtypes, so scaled_mm raises PyTorch's error for a scaling
configuration without float8 operands, and scaled_grouped_mm raises what PyTorch's CPU build
raises for every input (it has no CPU kernel).
"""
import enum

from .._core import dtype as D
from .. import _refs as E

__all__ = ["ScalingType", "SwizzleType", "grouped_mm", "scaled_mm", "scaled_grouped_mm"]


class ScalingType(enum.IntEnum):
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.IntEnum):
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


_NAMES = {D.float32: "Float", D.float16: "Half", D.bfloat16: "BFloat16", D.float64: "Double"}


def _check_grouped(mat_a, mat_b, offs, bias, out_dtype):
    if mat_a.dtype not in (D.float32, D.bfloat16, D.float16):
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got "
                           f"{_NAMES.get(mat_a.dtype, mat_a.dtype)}")
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    for mat in (mat_a, mat_b):
        item = mat.element_size()
        if any(s != 1 and (s * item) % 16 for s in mat.stride()):
            raise RuntimeError("strides should be multiple of 16 bytes")
    for mat in (mat_a, mat_b):
        if mat.numel() == 0:
            raise RuntimeError(f"Invalid strides/sizes, got {list(mat.stride())} for strides and "
                               f"{list(mat.shape)} for sizes")
    both_3d = mat_a.dim() == 3 and mat_b.dim() == 3
    if (offs is None) != both_3d:
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and offs.dtype is not D.int32:
        raise RuntimeError("Offsets have to be int32")
    if offs is not None and offs.dim() != 1:
        raise RuntimeError("offs has to be 1D")
    if both_3d and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    groups = mat_a.shape[0] if mat_a.dim() == 3 else mat_b.shape[0] if mat_b.dim() == 3 else None
    if offs is not None and groups is not None and offs.numel() != groups:
        raise RuntimeError("matrix batch sizes have to match")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if mat_b.dtype is not mat_a.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {mat_b.dtype}, but got "
                           f"{mat_a.dtype} instead")


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    _check_grouped(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:
        return mat_a.matmul(mat_b)
    ends = [int(v) for v in offs.tolist()]
    starts = [0] + ends[:-1]
    if mat_a.dim() == 2 and mat_b.dim() == 3:       # jagged rows of a
        parts = [mat_a[s:e].matmul(mat_b[g]) for g, (s, e) in enumerate(zip(starts, ends))]
        tail = mat_a.shape[0] - min(max(ends[-1], 0), mat_a.shape[0])
        parts.append(E.zeros(tail, mat_b.shape[-1], dtype=mat_a.dtype))
        return E.cat(parts, 0)
    if mat_a.dim() == 3:                             # jagged columns of b
        parts = [mat_a[g].matmul(mat_b[:, s:e]) for g, (s, e) in enumerate(zip(starts, ends))]
        tail = mat_b.shape[-1] - min(max(ends[-1], 0), mat_b.shape[-1])
        parts.append(E.zeros(mat_a.shape[1], tail, dtype=mat_a.dtype))
        return E.cat(parts, 1)
    return E.stack([mat_a[:, s:e].matmul(mat_b[s:e]) for s, e in zip(starts, ends)])  # jagged K


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=D.bfloat16, contraction_dim=(),
              use_fast_accum=False):
    """PyTorch checks the scaling configuration first; every valid one needs float8 operands,
    which ember cannot hold."""
    raise ValueError(
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and "
        "singletons.\n"
        f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a "
        f"should be ({mat_a.shape[0]}, 1) and scale_b should be (1, {mat_b.shape[-1]})\n"
        "(ember has no float8 dtypes: scaled_mm cannot run in ember)")


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=D.bfloat16, contraction_dim=(), use_fast_accum=False):
    raise NotImplementedError("Could not run 'aten::_scaled_grouped_mm_v2' with arguments from "
                              "the 'CPU' backend: PyTorch has no CPU kernel for it (CUDA only).")
