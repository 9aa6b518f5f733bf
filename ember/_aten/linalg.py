"""Matrix products (CPU and Meta): mm, bmm, matmul, addmm, linear. NumPy's BLAS does the work.

float16 and bfloat16 products accumulate in float32 and round once, as PyTorch's CPU kernels
do; integer products are exact (NumPy's integer matmul wraps around like C). Bool has no
matrix product in PyTorch.
"""
import math

import numpy as np

from . import _parallel
from .._core import caching_allocator, dtype as D
from .._dispatch.dispatcher import impl
from .._core.tensor import _contiguous_strides, _wrap, _wrap_external, _meta, _wrap_dim
from .elementwise import as_result, broadcast_shape, not_implemented, _scalar_type_name, _OPMATH


def _expect_same_dtype(a, b, a_name, b_name, prefix="", end=""):
    """PyTorch's linear-algebra wording: "Expected A and B to have the same dtype, but found A
    of type Float and B of type Double instead"."""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{prefix}Expected {a_name} and {b_name} to have the same dtype, but "
                           f"found {a_name} of type {_scalar_type_name(a.dtype)} and {b_name} "
                           f"of type {_scalar_type_name(b.dtype)} instead{end}")


def _check_same_dtype(a, b, name):
    if a.dtype is not b.dtype:
        an, bn = _scalar_type_name(a.dtype), _scalar_type_name(b.dtype)
        raise RuntimeError(f"{name}: expected both operands to have the same dtype, but got "
                           f"{an} and {bn}")


# PyTorch's CPU kernels word their dtype checks each their own way; these say it as they do.
def _mm_dtypes(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{D.c_type_name(a.dtype)} != {D.c_type_name(b.dtype)}")


def _bmm_dtypes(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type_name(a.dtype)} but found "
                           f"{_scalar_type_name(b.dtype)}")


def _addmv_dtypes(self, mat, vec):
    if not (self.dtype is mat.dtype is vec.dtype):
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{_scalar_type_name(self.dtype)}, {_scalar_type_name(mat.dtype)}, "
                           f"and {_scalar_type_name(vec.dtype)}")


def _dot_dtypes(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{_scalar_type_name(a.dtype)} and {_scalar_type_name(b.dtype)}")


def _addmm_dtypes(self, mat1, mat2):
    """addmm and addbmm: self against mat2 first, then the two matrices."""
    for first, name in ((self, "self"), (mat1, "mat1")):
        if first.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{_scalar_type_name(first.dtype)} and "
                               f"{_scalar_type_name(mat2.dtype)}")


def _matmul_dtypes(a, b):
    """matmul's check is that of the kernel its operand ranks lead to."""
    if a.dtype is b.dtype:
        return
    da, db = a.dim(), b.dim()
    if da == 1 and db == 1:
        _dot_dtypes(a, b)
    elif db == 1:
        _addmv_dtypes(b, a, b)  # mv: its result (allocated like vec) is addmv's self
    elif db == 2:
        _mm_dtypes(a, b)  # a row vector, a matrix, or a folded batch times a matrix
    else:
        _bmm_dtypes(a, b)


def _matmul(a, b):
    """np.matmul of two arrays, written into a caching-allocator block when both are matrices
    or stacks of them (the result shape is known before the product)."""
    if a.ndim < 2 or b.ndim < 2:
        return np.asarray(np.matmul(a, b))
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    out = caching_allocator.empty(shape, np.result_type(a.dtype, b.dtype))
    return _parallel.matmul(a, b, out)  # big products split over the intra-op threads


def _product(a, b, kernel):
    """a @ b on NumPy arrays of a's dtype, with PyTorch's accumulation."""
    dt = a.dtype
    if dt is D.bool:
        raise not_implemented(kernel, dt)
    mdt = _OPMATH.get(dt)
    if mdt is None:
        return _matmul(a._np, b._np)
    return np.matmul(a._np.astype(mdt._np), b._np.astype(mdt._np)).astype(dt._np)


def _mm_shape(a, b, first="self"):
    if len(a._size) != 2:
        raise RuntimeError(f"{first} must be a matrix")
    if len(b._size) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._size[0]}x"
                           f"{a._size[1]} and {b._size[0]}x{b._size[1]})")
    return (a._size[0], b._size[1])


@impl("mm", "CPU")
def mm(self, mat2):
    _mm_shape(self, mat2)
    _mm_dtypes(self, mat2)
    return _wrap(_product(self, mat2, "addmm_impl_cpu_"))


def _scaled_mm_check(a, b, scale_a, scale_b, out_dtype):
    """_scaled_mm's operands: float8 matrices (mat2 column-major) with float32 scales, one per
    tensor or one per row of a and column of b (PyTorch's "TensorWise" / "RowWise")."""
    if len(a._size) != 2:
        raise RuntimeError("mat1 must be a matrix")
    m = a._size[0]
    tensorwise = scale_a.numel() == 1 and scale_b.numel() == 1
    n = None if tensorwise else b.size(1)  # (read before mat2's own check, as PyTorch does)
    rowwise = tuple(scale_a._size) == (m, 1) and tuple(scale_b._size) == (1, n) and \
        scale_a.is_contiguous() and scale_b.is_contiguous()
    if a.dtype._kind != "float8" or b.dtype._kind != "float8" or not (tensorwise or rowwise) \
            or scale_a.dtype is not D.float32 or scale_b.dtype is not D.float32:
        raise ValueError(
            "Invalid scaling configuration.\n"
            "- For TensorWise scaling, a and b should be float8, scales should be float and "
            "singletons.\n"
            f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a "
            f"should be ({m}, 1) and scale_b should be (1, {b._size[-1] if b._size else 1}), and "
            "both should be contiguous.\n"
            f"Got mat_a.dtype()={D.scalar_type_name(a.dtype)}, scale_a.dtype()="
            f"{D.scalar_type_name(scale_a.dtype)}, scale_a.size()={list(scale_a._size)}, "
            f"scale_a.stride()={list(scale_a.stride())}, mat_b.dtype()="
            f"{D.scalar_type_name(b.dtype)}, scale_b.dtype()={D.scalar_type_name(scale_b.dtype)}, "
            f"scale_b.size()={list(scale_b._size)} and scale_b.stride()={list(scale_b.stride())}")
    for name, scale in (("scale_a", scale_a), ("scale_b", scale_b)):
        if not tensorwise and scale.stride(1) != 1:
            raise ValueError(f"expected {name}.stride(1) to be 1, but got {scale.stride(1)}")
    return _mm_shape(a, b), out_dtype or a.dtype


@impl("_scaled_mm", "CPU")
def _scaled_mm(self, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
               use_fast_accum=False):
    """PyTorch's float8 matrix product: (a * scale_a) @ (b * scale_b) + bias, accumulated in
    float32 and rounded to out_dtype (the operands' dtype when not given)."""
    _, dt = _scaled_mm_check(self, mat2, scale_a, scale_b, out_dtype)
    f32 = np.float32
    r = (self._np.astype(f32) * scale_a._np) @ (mat2._np.astype(f32) * scale_b._np)
    if bias is not None:
        r = r + bias._np.astype(f32)
    return _wrap(as_result(r, dt))


@impl("_scaled_mm", "Meta")
def _scaled_mm_meta(self, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
                    use_fast_accum=False):
    shape, dt = _scaled_mm_check(self, mat2, scale_a, scale_b, out_dtype)
    return _meta(shape, dt, device=self._device)


@impl("mm", "Meta")
def mm_meta(self, mat2):
    shape = _mm_shape(self, mat2)
    _mm_dtypes(self, mat2)
    return _meta(shape, self.dtype, device=self._device)


def _bmm_shape(a, b):
    if len(a._size) != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got {len(a._size)}-D")
    if len(b._size) != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got {len(b._size)}-D")
    if a._size[0] != b._size[0] or a._size[2] != b._size[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._size[0]}, {a._size[2]}] but got: [{b._size[0]}, {b._size[1]}].")
    return (a._size[0], a._size[1], b._size[2])


@impl("bmm", "CPU")
def bmm(self, mat2):
    _bmm_shape(self, mat2)
    _bmm_dtypes(self, mat2)
    return _wrap(_product(self, mat2, "bmm"))


@impl("bmm", "Meta")
def bmm_meta(self, mat2):
    shape = _bmm_shape(self, mat2)
    _bmm_dtypes(self, mat2)
    return _meta(shape, self.dtype, device=self._device)


def matmul_shape(a, b):
    """The result shape of matmul: 1-D operands gain (and lose) a dim, batch dims broadcast."""
    sa, sb = a._size, b._size
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    ka = sa[-1]
    kb = sb[-2] if len(sb) > 1 else sb[0]
    if ka != kb:
        if len(sa) == 1 and len(sb) == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
                               f"[{sb[0]}] to have the same number of elements, but got {sa[0]} "
                               f"and {sb[0]} elements respectively")
        rows = int(np.prod(sa[:-1])) if len(sa) > 1 else 1
        cols = sb[-1] if len(sb) > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{ka} and "
                           f"{kb}x{cols})")
    batch = broadcast_shape(tuple(sa[:-2]), tuple(sb[:-2]))
    out = list(batch)
    if len(sa) > 1:
        out.append(sa[-2])
    if len(sb) > 1:
        out.append(sb[-1])
    return tuple(out)


def _matmul_kernel_name(a, b):
    if a.dim() == 1 and b.dim() == 1:
        return "dot"
    return "addmm_impl_cpu_" if a.dim() <= 2 and b.dim() <= 2 else "bmm"


@impl("matmul", "CPU")
def matmul(self, other):
    matmul_shape(self, other)
    _matmul_dtypes(self, other)
    return _wrap(_product(self, other, _matmul_kernel_name(self, other)))


@impl("matmul", "Meta")
def matmul_meta(self, other):
    shape = matmul_shape(self, other)
    _matmul_dtypes(self, other)
    return _meta(shape, self.dtype, device=self._device)


def _addmm_check(self, mat1, mat2):
    shape = _mm_shape(mat1, mat2, "mat1")
    _addmm_dtypes(self, mat1, mat2)
    expands = len(self._size) <= 2 and all(s in (1, t) for s, t in
                                           zip(reversed(self._size), reversed(shape)))
    if not expands:
        raise RuntimeError(f"The expanded size of the tensor ({list(shape)}) must match the "
                           f"existing size of self, {list(self._size)}: self must broadcast to "
                           f"the size of mat1 @ mat2")
    return shape


@impl("addmm", "CPU")
def addmm(self, mat1, mat2, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2); with beta == 0, self is not read (NaN is ignored)."""
    shape = _addmm_check(self, mat1, mat2)
    dt = mat1.dtype
    if dt is D.bool:
        raise not_implemented("addmm_impl_cpu_", dt)
    mdt = _OPMATH.get(dt, dt)._np
    r = _matmul(mat1._np.astype(mdt, copy=False), mat2._np.astype(mdt, copy=False))
    return _add_scaled(r, self, beta, alpha, shape, dt)


@impl("addmm", "Meta")
def addmm_meta(self, mat1, mat2, beta=1, alpha=1):
    return _meta(_addmm_check(self, mat1, mat2), mat1.dtype, device=mat1._device)


@impl("_addmm_activation", "CPU")
def _addmm_activation(self, mat1, mat2, beta=1, alpha=1, use_gelu=False):
    """addmm, then relu (or gelu, the exact one) of the result in place: PyTorch's fused CPU
    kernel, which has no derivative."""
    from .._dispatch.dispatcher import lookup
    return lookup("gelu" if use_gelu else "relu")(addmm(self, mat1, mat2, beta, alpha))


@impl("_addmm_activation", "Meta")
def _addmm_activation_meta(self, mat1, mat2, beta=1, alpha=1, use_gelu=False):
    return addmm_meta(self, mat1, mat2)


def _linear_check(input, weight, bias):
    if not input._size:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D "
                           f"and {len(weight._size)}D")
    k = input._size[-1]
    wk = weight._size[-1] if weight._size else 0
    if k != wk:
        m = int(np.prod(input._size[:-1])) if len(input._size) > 1 else 1
        n = weight._size[0] if len(weight._size) == 2 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {wk}x{n})")
    if bias is not None:
        _addmm_dtypes(bias, input, weight)  # PyTorch's linear with a bias is an addmm
    else:
        _mm_dtypes(input, weight)  # and without one a matmul that comes to mm


def _linear_shape(input, weight):
    return tuple(input._size[:-1]) + ((weight._size[0],) if len(weight._size) == 2 else ())


@impl("linear", "CPU")
def linear(input, weight, bias=None):
    _linear_check(input, weight, bias)
    dt = input.dtype
    if dt is D.bool:
        raise not_implemented("addmm_impl_cpu_", dt)
    mdt = _OPMATH.get(dt, dt)._np
    r = _matmul(input._np.astype(mdt, copy=False), weight._np.astype(mdt, copy=False).T)
    if bias is not None:
        r += bias._np
    return _wrap(r.astype(dt._np, copy=False))


@impl("linear", "Meta")
def linear_meta(input, weight, bias=None):
    _linear_check(input, weight, bias)
    return _meta(_linear_shape(input, weight), input.dtype, device=input._device)


# ---- products with a vector, batched and accumulated products (issue 3) ----------------------
def _accumulate(dt):
    """The NumPy dtype a product of `dt` accumulates in (float32 for the 16-bit floats)."""
    return _OPMATH.get(dt, dt)._np


def _add_scaled(product, self, beta, alpha, shape, dt):
    """beta * self + alpha * product, broadcast to `shape`; beta == 0 does not read self.

    On integer tensors PyTorch converts the scalars to the tensor's type first, so a float
    alpha or beta is truncated toward zero (alpha=1.7 scales by 1).
    """
    mdt = product.dtype
    if mdt.kind in "iu":
        beta, alpha = int(beta), int(alpha)
    if alpha != 1:
        product = np.multiply(product, alpha, dtype=mdt)
    if beta != 0:
        bias = self._np.astype(mdt, copy=False)
        product = np.add(product, bias if beta == 1 else np.multiply(bias, beta, dtype=mdt),
                         dtype=mdt)
    return _wrap(np.array(np.broadcast_to(product, shape), dtype=dt._np))


def _check_expands(self, shape, name):
    ok = len(self._size) <= len(shape) and all(
        s in (1, t) for s, t in zip(reversed(self._size), reversed(shape)))
    if not ok:
        raise RuntimeError(f"{name}: The expanded size of the tensor ({list(shape)}) must match "
                           f"the existing size of self, {list(self._size)}")


def _dot_check(a, b):
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    _dot_dtypes(a, b)
    if a._size != b._size:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._size[0]}] and src "
                           f"[{b._size[0]}] to have the same number of elements, but got "
                           f"{a._size[0]} and {b._size[0]} elements respectively")
    if a.dtype is D.bool:
        raise not_implemented("dot", a.dtype)
    return ()


def _mv_check(mat, vec, self=None):
    if self is None and mat.dim() == 0:  # PyTorch's mv reads mat.size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if mat.dim() != 2 or vec.dim() != 1:
        first = self.dim() if self is not None else vec.dim()
        raise RuntimeError(f"vector + matrix @ vector expected, got {first}, {mat.dim()}, "
                           f"{vec.dim()}")
    if mat._size[1] != vec._size[0]:
        n = self._size if self is not None else vec._size
        raise RuntimeError(f"size mismatch, got input ({'x'.join(map(str, n))}), mat "
                           f"({mat._size[0]}x{mat._size[1]}), vec ({vec._size[0]})")
    _addmv_dtypes(self if self is not None else vec, mat, vec)
    if mat.dtype is D.bool:
        raise not_implemented("addmv_impl_cpu", mat.dtype)
    return (mat._size[0],)


def _addr_check(self, vec1, vec2):
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D"
                           if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    shape = (vec1._size[0], vec2._size[0])
    _check_expands(self, shape, "addr")
    return shape


def _addr_dtype(self, vec1, vec2):
    """addr's result dtype: PyTorch runs it as one TensorIterator over self (expanded to the
    result's shape) and the two vectors, so all three promote as equals, a 0-dim self too."""
    return D.promote_types(D.promote_types(self.dtype, vec1.dtype), vec2.dtype)


def _addbmm_check(self, b1, b2, kernel, keep_batch):
    # PyTorch reads batch1.size(0) (baddbmm) or .size(1) (addbmm), then batch2.size(2), before
    # it checks their ranks: a 0-d batch fails there
    for t, d in ((b1, 0 if keep_batch else 1), (b2, 2)):
        if t.dim() == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    shape = _bmm_shape(b1, b2)
    if not keep_batch:
        _addmm_dtypes(self, b1, b2)
    elif self.dtype is b1.dtype and b2.dtype is not b1.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type_name(b1.dtype)} but found "
                           f"{_scalar_type_name(b2.dtype)}")
    elif not (self.dtype is b1.dtype is b2.dtype):
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{D.c_type_name(self.dtype)}, batch1: {D.c_type_name(b1.dtype)}, "
                           f"batch2: {D.c_type_name(b2.dtype)}")
    if b1.dtype is D.bool:
        raise not_implemented(kernel, b1.dtype)
    shape = shape if keep_batch else shape[1:]
    _check_expands(self, shape, kernel)
    return shape


def _vector_product(np_fn):
    def kernel(self, other):
        _dot_check(self, other)
        mdt = _accumulate(self.dtype)
        r = np_fn(self._np.astype(mdt, copy=False), other._np.astype(mdt, copy=False))
        return _wrap(np.asarray(r, dtype=self.dtype._np))
    return kernel


impl("dot", "CPU")(_vector_product(np.dot))
impl("vdot", "CPU")(_vector_product(np.vdot))


@impl("dot", "Meta")
def dot_meta(self, other):
    return _meta(_dot_check(self, other), self.dtype, device=self._device)


impl("vdot", "Meta")(dot_meta)


@impl("mv", "CPU")
def mv(self, vec):
    _mv_check(self, vec)
    mdt = _accumulate(self.dtype)
    r = np.matmul(self._np.astype(mdt, copy=False), vec._np.astype(mdt, copy=False))
    return _wrap(np.asarray(r, dtype=self.dtype._np))


@impl("mv", "Meta")
def mv_meta(self, vec):
    return _meta(_mv_check(self, vec), self.dtype, device=self._device)


@impl("addmv", "CPU")
def addmv(self, mat, vec, beta=1, alpha=1):
    shape = _mv_check(mat, vec, self)
    _check_expands(self, shape, "addmv")
    mdt = _accumulate(mat.dtype)
    r = np.matmul(mat._np.astype(mdt, copy=False), vec._np.astype(mdt, copy=False))
    return _add_scaled(r, self, beta, alpha, shape, mat.dtype)


@impl("addmv", "Meta")
def addmv_meta(self, mat, vec, beta=1, alpha=1):
    shape = _mv_check(mat, vec, self)
    _check_expands(self, shape, "addmv")
    return _meta(shape, mat.dtype, device=mat._device)


@impl("addr", "CPU")
def addr(self, vec1, vec2, beta=1, alpha=1):
    """beta * self + alpha * outer(vec1, vec2); on bool tensors `or` and `and`, as in PyTorch."""
    shape = _addr_check(self, vec1, vec2)
    dt = _addr_dtype(self, vec1, vec2)
    if dt is D.bool:
        r = np.logical_and.outer(vec1._np, vec2._np) & bool(alpha)
        if beta:
            r = r | self._np
        return _wrap(np.array(np.broadcast_to(r, shape)))
    if isinstance(beta, bool) or isinstance(alpha, bool):
        raise RuntimeError(f"Boolean {'beta' if isinstance(beta, bool) else 'alpha'}"
                           f" only supported for Boolean results.")
    if not dt.is_floating_point and not dt.is_complex:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, (float, complex)):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                                   f"floating point number.")
    mdt = _accumulate(dt)
    r = np.multiply.outer(vec1._np.astype(mdt, copy=False), vec2._np.astype(mdt, copy=False))
    return _add_scaled(r, self, beta, alpha, shape, dt)


@impl("addr", "Meta")
def addr_meta(self, vec1, vec2, beta=1, alpha=1):
    return _meta(_addr_check(self, vec1, vec2), _addr_dtype(self, vec1, vec2),
                 device=vec1._device)


def _batched_product(b1, b2):
    mdt = _accumulate(b1.dtype)
    return _matmul(b1._np.astype(mdt, copy=False), b2._np.astype(mdt, copy=False))


@impl("baddbmm", "CPU")
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    shape = _addbmm_check(self, batch1, batch2, "baddbmm", True)
    return _add_scaled(_batched_product(batch1, batch2), self, beta, alpha, shape, batch1.dtype)


@impl("addbmm", "CPU")
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    """beta * self + alpha * (the sum over the batch of batch1[i] @ batch2[i])."""
    shape = _addbmm_check(self, batch1, batch2, "addmm_impl_cpu_", False)
    product = _batched_product(batch1, batch2).sum(0)
    return _add_scaled(product, self, beta, alpha, shape, batch1.dtype)


@impl("baddbmm", "Meta")
def baddbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    shape = _addbmm_check(self, batch1, batch2, "baddbmm", True)
    return _meta(shape, batch1.dtype, device=batch1._device)


@impl("addbmm", "Meta")
def addbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    shape = _addbmm_check(self, batch1, batch2, "addmm_impl_cpu_", False)
    return _meta(shape, batch1.dtype, device=batch1._device)


# ---- einsum ----------------------------------------------------------------------------------
# Note [einsum]
# An equation is first made explicit: each operand's '...' becomes fresh letters (right-aligned,
# so operands with fewer dims broadcast like tensors do) and a missing '->' gets PyTorch's
# implicit output (the ellipsis letters, then the letters used once, in alphabetical order).
# The contraction runs through np.einsum(optimize=True), which picks a pairwise contraction
# order and does each pair as a BLAS matmul. The gradient of operand i is again an einsum: of
# the output gradient with the other operands, into operand i's letters (see derivatives.py).
def _check_ellipsis(s, stray, second):
    """PyTorch's parser: a '.' must start a '...' (three in a row), one per subscript list."""
    k, found = 0, False
    while k < len(s):
        if s[k] == ".":
            if found:
                raise RuntimeError(f"einsum(): found '.' for {second}")
            if s[k:k + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for {stray}")
            found, k = True, k + 3
        else:
            k += 1


def parse_einsum(equation, shapes):
    """(one explicit subscript string per operand, the output's subscripts)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(subs) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    raw_lhs, _, raw_rhs = equation.partition("->")
    for i, raw in enumerate(raw_lhs.split(",")):
        _check_ellipsis(raw, f"operand {i} that is not part of any ellipsis",
                        f"operand {i} for which an ellipsis was already found")
    _check_ellipsis(raw_rhs, "output that is not part of any ellipsis (...)",
                    "output but an ellipsis (...) was already found")
    for c in eq:
        if not (c.isalpha() or c in ",.->"):
            raise RuntimeError(f"einsum(): invalid subscript given at index "
                               f"{eq.index(c)} in the equation string, subscripts must be in "
                               f"[a-zA-Z]")
    used = set(eq)
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    ell_rank = 0
    for i, (s, shape) in enumerate(zip(subs, shapes)):
        labels = len(s.replace("...", ""))
        if "..." in s:
            if labels > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({labels}) is more than the number of dimensions "
                                   f"({len(shape)}) for operand {i}")
            ell_rank = max(ell_rank, len(shape) - labels)
        elif labels != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({labels}) "
                               f"does not match the number of dimensions ({len(shape)}) for "
                               f"operand {i} and no ellipsis was given")
    ell = "".join(free[:ell_rank])
    explicit = []
    for s, shape in zip(subs, shapes):
        if "..." in s:
            k = len(shape) - len(s.replace("...", ""))
            s = s.replace("...", ell[ell_rank - k:])
        explicit.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        joined = "".join(subs).replace("...", "")
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    return explicit, out


def _einsum_sizes(subs, shapes):
    """The size of every letter; a letter of size 1 broadcasts against a larger one."""
    sizes = {}
    for i, (s, shape) in enumerate(zip(subs, shapes)):
        own = {}
        for c, n in zip(s, shape):
            if own.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the "
                                   f"sizes don't match, {n} != {own[c]}")
            seen = sizes.get(c)
            if seen is None or seen == 1:
                sizes[c] = n
            elif n != seen and n != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which "
                                   f"does not broadcast with previously seen size {seen}")
    return sizes


def _einsum_check(equation, tensors):
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            raise RuntimeError(f"expected scalar type {_scalar_type_name(dt)} but found "
                               f"{_scalar_type_name(t.dtype)}")
    shapes = [t._size for t in tensors]
    subs, out = parse_einsum(equation, shapes)
    sizes = _einsum_sizes(subs, shapes)
    for c in out:
        if c not in sizes:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                               f"equation for any input operand")
    repeated = next((c for k, c in enumerate(out) if c in out[:k]), None)
    if repeated is not None:
        raise RuntimeError(f"einsum(): output subscript {repeated} appears more than once in "
                           f"the output")
    if dt is D.bool and len(tensors) > 1:
        raise not_implemented("bmm", dt)
    return subs, out, sizes


def _einsum_dtype(subs, out, dt):
    """One operand with letters summed away is a `sum`, which gives integers int64."""
    summed = len(subs) == 1 and len(set(out)) < len(set(subs[0]))
    return D.int64 if summed and not (dt.is_floating_point or dt.is_complex) else dt


@impl("einsum", "CPU")
def einsum(equation, tensors, path=None):
    subs, out, sizes = _einsum_check(equation, tensors)
    dt = tensors[0].dtype
    mdt = _accumulate(dt)
    arrays = []
    for s, t in zip(subs, tensors):
        a = t._np.astype(mdt, copy=False)
        full = tuple(sizes[c] for c in s)
        arrays.append(a if a.shape == full else np.broadcast_to(a, full))
    r = np.einsum(",".join(subs) + "->" + out, *arrays, optimize=len(arrays) > 1)
    r = np.asarray(r, dtype=_einsum_dtype(subs, out, dt)._np)
    if not r.flags.owndata:  # a permutation or a diagonal comes back as a view of the input
        r = r.copy()
    return _wrap(r)


@impl("einsum", "Meta")
def einsum_meta(equation, tensors, path=None):
    subs, out, sizes = _einsum_check(equation, tensors)
    return _meta(tuple(sizes[c] for c in out), _einsum_dtype(subs, out, tensors[0].dtype),
                 device=tensors[0]._device)


# ---- trace and cross -------------------------------------------------------------------------
def _trace_check(self):
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    if self.dtype is D.bool:
        raise not_implemented("trace", self.dtype)
    return D.int64 if not (self.dtype.is_floating_point or self.dtype.is_complex) else self.dtype


@impl("trace", "CPU")
def trace(self):
    dt = _trace_check(self)
    return _wrap(np.asarray(np.trace(self._np, dtype=_accumulate(dt)), dtype=dt._np))


@impl("trace", "Meta")
def trace_meta(self):
    return _meta((), _trace_check(self), device=self._device)


def _cross_check(self, other, dim):
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shape(self._size, other._size)
    d = _wrap_dim(dim, len(shape))
    if self._size[d] != 3 or other._size[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self._size[d]} and {other._size[d]}")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type_name(self.dtype)} but found "
                           f"{_scalar_type_name(other.dtype)}")
    if self.dtype is D.bool:
        raise not_implemented("cross", self.dtype)
    return shape, d


@impl("linalg_cross", "CPU")
def linalg_cross(self, other, dim=-1):
    shape, d = _cross_check(self, other, dim)
    mdt = _accumulate(self.dtype)
    r = np.cross(self._np.astype(mdt, copy=False), other._np.astype(mdt, copy=False), axis=d)
    return _wrap(np.asarray(np.broadcast_to(r, shape), dtype=self.dtype._np))


@impl("linalg_cross", "Meta")
def linalg_cross_meta(self, other, dim=-1):
    return _meta(_cross_check(self, other, dim)[0], self.dtype, device=self._device)


# ---- decompositions and solvers (torch.linalg) -----------------------------------------------
class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: the input has no such decomposition (singular, not positive
    definite, ...)."""


# PyTorch's class is torch._C._LinAlgError, and tracebacks and type(e).__name__ say so
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "ember._C"


_LOW_PRECISION_KERNEL = {"linalg.det": "lu_cpu", "linalg.solve": "lu_cpu",
                         "linalg.cholesky": "cholesky_cpu", "linalg.qr": "geqrf_cpu",
                         "linalg.svd": "linalg_svd_cpu"}


def _check_matrices(A, name, square=True):
    """PyTorch's checks on a linalg input: floating dtype, at least 2-D, square if asked."""
    dt = A.dtype
    if name == "linalg.eigh" and not (dt in (D.float32, D.float64) or dt.is_complex):
        raise not_implemented("linalg_eigh_cpu", dt)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_scalar_type_name(dt)}")
    if dt in (D.float16, D.bfloat16):
        kernel = _LOW_PRECISION_KERNEL.get(name)
        if kernel is None:
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                               f"{_scalar_type_name(dt)}")
        raise not_implemented(kernel, dt)
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A._size[-1] != A._size[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A._size[-2]} by {A._size[-1]} matrices")


def _lapack(fn, message):
    """Run a NumPy LAPACK call, raising PyTorch's LinAlgError where NumPy raises its own."""
    try:
        with np.errstate(all="ignore"):
            return fn()
    except np.linalg.LinAlgError:
        raise LinAlgError(message) from None


def _fresh(a, dt):
    return _wrap(np.array(a, dtype=dt._np))


@impl("linalg_inv", "CPU")
def linalg_inv(A):
    _check_matrices(A, "linalg.inv")
    if A.numel() == 0:
        return _fresh(A._np, A.dtype)
    try:
        with np.errstate(all="ignore"):
            inv = np.linalg.inv(A._np)
    except np.linalg.LinAlgError:  # name the first singular matrix and its zero pivot
        n = A._size[-1]
        _, info = _lu_solve_each(A._np, np.broadcast_to(np.eye(n, dtype=A.dtype._np), A._size))
        _raise_info(info, A.dim() > 2, lambda code: f"linalg.inv: The diagonal element {code} "
                    f"is zero, the inversion could not be completed because the input matrix "
                    f"is singular.")
        raise
    return _fresh(inv, A.dtype)


@impl("linalg_det", "CPU")
def linalg_det(A):
    _check_matrices(A, "linalg.det")
    return _fresh(np.linalg.det(A._np), A.dtype)


@impl("linalg_slogdet", "CPU")
def linalg_slogdet(A):
    _check_matrices(A, "linalg.slogdet")
    sign, logabsdet = np.linalg.slogdet(A._np)
    return _fresh(sign, A.dtype), _fresh(logabsdet, A.dtype.to_real())


def _is_vector_rhs(A, B):
    """linalg.solve reads B as a (batch of) vector(s) if it is 1-D or has A's batch shape."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and B._size == A._size[:-1])


@impl("linalg_solve", "CPU")
def linalg_solve(A, B, left=True):
    _check_matrices(A, "linalg.solve")
    _expect_same_dtype(A, B, "A", "B", "linalg.solve: ")
    _solve_shapes(A, B, left, "linalg.solve")
    a, b, vector = _as_left_system(A, B, left)
    x = _lapack(lambda: np.linalg.solve(a, b),
                "linalg.solve: The solver failed because the input matrix is singular.")
    return _fresh(_from_left_system(x, vector, left), A.dtype)


def _triangular_system(A, B, left):
    """The checks of linalg.solve_triangular and the batch shape A and B broadcast to. B is
    always a batch of matrices (unlike linalg.solve, which reads some shapes as vectors)."""
    _check_matrices(A, "linalg.solve_triangular")
    _check_same_dtype(A, B, "linalg.solve_triangular")
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    n = A._size[-1]
    if (B._size[-2] if left else B._size[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({A._size[-2]}x{n} and "
                           f"{B._size[-2]}x{B._size[-1]})")
    batch = tuple(broadcast_shape(A._size[:-2], B._size[:-2]))
    return batch


def _substitute(a, b, upper):
    """x with a x = b for triangular a, one row of x at a time from the triangle's corner, as
    LAPACK's trsm does: a zero on the diagonal gives inf and nan (PyTorch does not check)."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(a, b))
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        done = slice(i + 1, n) if upper else slice(0, i)
        x[..., i, :] = (b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, done],
                                                 x[..., done, :])) / a[..., i, i, None]
    return x


@impl("linalg_solve_triangular", "CPU")
def linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    batch = _triangular_system(self, B, left)
    a = np.triu(self._np, int(unitriangular)) if upper else np.tril(self._np,
                                                                     -int(unitriangular))
    if unitriangular:
        a = a + np.eye(a.shape[-1], dtype=a.dtype)
    b = B._np
    if not left:
        a, b, upper = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper
    with np.errstate(all="ignore"):
        if a.shape[-1] and (np.diagonal(a, 0, -2, -1) != 0).all():
            x = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]),
                                np.broadcast_to(b, batch + b.shape[-2:]))
        else:  # singular (or empty): substitution, never an error
            x = _substitute(a, b, upper)
    return _fresh(x if left else np.swapaxes(x, -1, -2), self.dtype)


@impl("linalg_solve_triangular", "Meta")
def linalg_solve_triangular_meta(self, B, upper, left=True, unitriangular=False):
    batch = _triangular_system(self, B, left)
    return _meta_like(self, batch + tuple(B._size[-2:]))


def _as_left_system(A, B, left):
    """(a, b, vector) with A X = B as a x = b: a vector right-hand side is a column, and
    X A = B is A^T X^T = B^T."""
    a, b = A._np, B._np
    vector = _is_vector_rhs(A, B)
    if vector:
        b = b[..., None]
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    return a, b, vector


def _from_left_system(x, vector, left):
    if not left:
        x = np.swapaxes(x, -1, -2)
    return x[..., 0] if vector else x


@impl("linalg_cholesky", "CPU")
def linalg_cholesky(self, upper=False):
    _check_matrices(self, "linalg.cholesky")
    try:
        with np.errstate(all="ignore"):
            L = np.linalg.cholesky(self._np)
    except np.linalg.LinAlgError:  # potrf's info names the failing minor, as PyTorch says
        info = linalg_cholesky_ex(self)[1]._np
        _raise_info(info, self.dim() > 2, lambda code: f"linalg.cholesky: The factorization "
                    f"could not be completed because the input is not positive-definite (the "
                    f"leading minor of order {code} is not positive-definite).")
        raise
    return _fresh(np.swapaxes(L, -1, -2).conj() if upper else L, self.dtype)


@impl("linalg_qr", "CPU")
def linalg_qr(A, mode="reduced"):
    _check_matrices(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    if mode == "r":
        return _fresh(np.empty(0), A.dtype), _fresh(np.linalg.qr(A._np, mode="r"), A.dtype)
    Q, R = np.linalg.qr(A._np, mode=mode)
    return _fresh(Q, A.dtype), _fresh(R, A.dtype)


@impl("linalg_svd", "CPU")
def linalg_svd(A, full_matrices=True, driver=None):
    _check_matrices(A, "linalg.svd", square=False)
    U, S, Vh = _lapack(lambda: np.linalg.svd(A._np, full_matrices=full_matrices),
                       "linalg.svd: The algorithm failed to converge.")
    return _fresh(U, A.dtype), _fresh(S, D._from_np[S.dtype]), _fresh(Vh, A.dtype)


@impl("linalg_svdvals", "CompositeImplicitAutograd")
def linalg_svdvals(A, driver=None):
    from .._dispatch.dispatcher import lookup
    return lookup("linalg_svd")(A, False, driver)[1]


@impl("linalg_eigh", "CPU")
def linalg_eigh(self, UPLO="L"):
    _check_matrices(self, "linalg.eigh")
    if UPLO.upper() not in ("L", "U") or len(UPLO) != 1:  # either case, as PyTorch
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = _lapack(lambda: np.linalg.eigh(self._np, UPLO=UPLO.upper()),
                   "linalg.eigh: The algorithm failed to converge.")
    return _fresh(w, self.dtype.to_real()), _fresh(v, self.dtype)


# ---- Meta kernels: the shapes and dtypes of the decompositions, after the same input checks
def _meta_like(A, shape, dtype=None):
    return _meta(shape, dtype or A.dtype, device=A._device)


@impl("linalg_inv", "Meta")
def linalg_inv_meta(A):
    _check_matrices(A, "linalg.inv")
    return _meta_like(A, A._size)


@impl("linalg_det", "Meta")
def linalg_det_meta(A):
    _check_matrices(A, "linalg.det")
    return _meta_like(A, A._size[:-2])


@impl("linalg_slogdet", "Meta")
def linalg_slogdet_meta(A):
    _check_matrices(A, "linalg.slogdet")
    return _meta_like(A, A._size[:-2]), _meta_like(A, A._size[:-2], A.dtype.to_real())


@impl("linalg_solve", "Meta")
def linalg_solve_meta(A, B, left=True):
    _check_matrices(A, "linalg.solve")
    _expect_same_dtype(A, B, "A", "B", "linalg.solve: ")
    if _is_vector_rhs(A, B):
        return _meta_like(A, B._size)
    batch = broadcast_shape(A._size[:-2], B._size[:-2])
    return _meta_like(A, tuple(batch) + tuple(B._size[-2:]))


@impl("linalg_cholesky", "Meta")
def linalg_cholesky_meta(self, upper=False):
    _check_matrices(self, "linalg.cholesky")
    return _meta_like(self, self._size)


@impl("linalg_qr", "Meta")
def linalg_qr_meta(A, mode="reduced"):
    _check_matrices(A, "linalg.qr", square=False)
    *batch, m, n = A._size
    k = min(m, n)
    batch = tuple(batch)
    if mode == "r":
        return _meta_like(A, (0,)), _meta_like(A, batch + (k, n))
    if mode == "complete":
        return _meta_like(A, batch + (m, m)), _meta_like(A, batch + (m, n))
    return _meta_like(A, batch + (m, k)), _meta_like(A, batch + (k, n))


@impl("linalg_svd", "Meta")
def linalg_svd_meta(A, full_matrices=True, driver=None):
    _check_matrices(A, "linalg.svd", square=False)
    *batch, m, n = A._size
    k = min(m, n)
    batch = tuple(batch)
    u, v = (m, n) if full_matrices else (k, k)
    return (_meta_like(A, batch + (m, u)), _meta_like(A, batch + (k,), A.dtype.to_real()),
            _meta_like(A, batch + (v, n)))


@impl("linalg_eigh", "Meta")
def linalg_eigh_meta(self, UPLO="L"):
    _check_matrices(self, "linalg.eigh")
    return (_meta_like(self, self._size[:-1], self.dtype.to_real()),
            _meta_like(self, self._size))


# ---- the _ex variants (info instead of an error), LDL, eig, matrix_exp (issue 13) ------------
# Note [info]
# LAPACK reports failure in an integer `info` per matrix instead of raising; PyTorch's `_ex`
# functions return it (int32, one per batch element) and raise only when check_errors=True,
# with the first failing batch element named. info > 0 means: getrf, U[info, info] is exactly
# zero (A singular); potrf, the leading minor of order info is not positive-definite; sytrf,
# D[info, info] is exactly zero. The factors are what LAPACK leaves behind either way.
def _lapack_fn(name, array):
    import scipy.linalg.lapack
    return scipy.linalg.lapack.get_lapack_funcs((name,), (array,))[0]


def _raise_info(info, batched, message, error=LinAlgError):
    """LinAlgError (or `error`) for the first batch element whose info is positive (PyTorch's
    _linalg_check_errors); message(code) is the text for that element."""
    flat = np.asarray(info).reshape(-1)
    bad = np.flatnonzero(flat > 0)
    if bad.size:
        k = int(bad[0])
        prefix = f"(Batch element {k}): " if batched else ""
        head, _, tail = message(int(flat[k])).partition(": ")
        raise error(f"{head}: {prefix}{tail}")


def _lu_solve_each(a, b):
    """(X, info) of A X = B, by getrf of each matrix of `a` and getrs for each of the right-hand
    sides `b` (whose batch `a`'s broadcasts to); info has `a`'s batch shape. A singular A gives
    info > 0 and the infinities and NaNs of dividing by the zero pivot, as in PyTorch."""
    a_batch, batch = a.shape[:-2], b.shape[:-2]
    x = np.empty(b.shape, dtype=a.dtype)
    info = np.zeros(a_batch, dtype=np.int32)
    if a.shape[-1] == 0 or a.size == 0:
        return x, info
    getrf, getrs = _lapack_fn("getrf", a), _lapack_fn("getrs", a)
    factors = {}
    with np.errstate(all="ignore"):
        for i in np.ndindex(*a_batch):
            lu, piv, info[i] = getrf(a[i])
            factors[i] = lu, piv
        which = np.broadcast_to(np.arange(info.size).reshape(a_batch), batch)
        for i in np.ndindex(*batch):
            lu, piv = factors[np.unravel_index(which[i], a_batch)]
            x[i] = getrs(lu, piv, b[i])[0]
    return x, info


def _solve_shapes(A, B, left, name):
    """PyTorch's linalg.solve shape rules: (vector rhs?, broadcast batch shape)."""
    vector = _is_vector_rhs(A, B)
    # a vector is a column: X A = B with one only works for 1x1 matrices
    shape = tuple(B._size[-1:]) + (1,) if vector else tuple(B._size[-2:])
    if B.dim() == 0 or len(shape) < 2 or A._size[-1] != shape[0 if left else 1]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A._size[-2]}x{A._size[-1]} and "
                           f"{'x'.join(map(str, shape))})")
    batch = broadcast_shape(A._size[:-2], B._size[:-1 if vector else -2])
    return vector, tuple(batch)


def _solve_ex_check(A, B, left):
    _check_matrices(A, "linalg.solve")
    _expect_same_dtype(A, B, "A", "B", "linalg.solve: ")
    return _solve_shapes(A, B, left, "linalg.solve")


@impl("linalg_solve_ex", "CPU")
def linalg_solve_ex(A, B, left=True, check_errors=False):
    _, batch = _solve_ex_check(A, B, left)
    a, b, vector = _as_left_system(A, B, left)
    x, info = _lu_solve_each(a, np.broadcast_to(b, batch + b.shape[-2:]))
    if check_errors:
        _raise_info(info, A.dim() > 2, lambda code: "torch.linalg.solve_ex: The solver failed "
                    "because the input matrix is singular.")
    return _fresh(_from_left_system(x, vector, left), A.dtype), _wrap(info)


@impl("linalg_solve_ex", "Meta")
def linalg_solve_ex_meta(A, B, left=True, check_errors=False):
    vector, batch = _solve_ex_check(A, B, left)
    shape = batch + ((B._size[-1],) if vector else tuple(B._size[-2:]))
    return _meta_like(A, shape), _meta_like(A, A._size[:-2], D.int32)


@impl("linalg_inv_ex", "CPU")
def linalg_inv_ex(A, check_errors=False):
    _check_matrices(A, "linalg.inv")
    n = A._size[-1]
    eye = np.broadcast_to(np.eye(n, dtype=A.dtype._np), A._size)
    inverse, info = _lu_solve_each(A._np, eye)
    if check_errors:
        _raise_info(info, A.dim() > 2, lambda code: f"linalg.inv_ex: The diagonal element "
                    f"{code} is zero, the inversion could not be completed because the input "
                    f"matrix is singular.")
    return _fresh(inverse, A.dtype), _wrap(info)


@impl("linalg_inv_ex", "Meta")
def linalg_inv_ex_meta(A, check_errors=False):
    _check_matrices(A, "linalg.inv")
    return _meta_like(A, A._size), _meta_like(A, A._size[:-2], D.int32)


@impl("linalg_cholesky_ex", "CPU")
def linalg_cholesky_ex(self, upper=False, check_errors=False):
    """potrf per matrix (lower); a failed factorization keeps LAPACK's partial factor."""
    _check_matrices(self, "linalg.cholesky")
    a = self._np
    L = np.zeros(a.shape, dtype=a.dtype)
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    if a.shape[-1]:
        potrf = _lapack_fn("potrf", a)
        for i in np.ndindex(*a.shape[:-2]):
            L[i], info[i] = potrf(a[i], lower=1, clean=1)
    if check_errors:
        _raise_info(info, self.dim() > 2, lambda code: f"linalg.cholesky_ex: The factorization "
                    f"could not be completed because the input is not positive-definite (the "
                    f"leading minor of order {code} is not positive-definite).")
    if upper:
        L = np.swapaxes(L, -1, -2).conj()
    return _fresh(L, self.dtype), _wrap(info)


@impl("linalg_cholesky_ex", "Meta")
def linalg_cholesky_ex_meta(self, upper=False, check_errors=False):
    _check_matrices(self, "linalg.cholesky")
    return _meta_like(self, self._size), _meta_like(self, self._size[:-2], D.int32)


# LDL^T (Bunch-Kaufman): LAPACK's sytrf (hetrf for hermitian complex input) with the lower
# triangle; LD holds L below the diagonal and the 1x1 and 2x2 blocks of D on and next to it,
# pivots LAPACK's 1-based interchanges (negative for a 2x2 block).
def _ldl_check(A, name, kernel):
    dt = A.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_scalar_type_name(dt)}")
    if dt in (D.float16, D.bfloat16):
        raise not_implemented(kernel, dt)
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A._size[-1] != A._size[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A._size[-2]} by {A._size[-1]} matrices")


def _ldl_routine(a, hermitian, stem):
    return _lapack_fn(("he" if hermitian and np.iscomplexobj(a) else "sy") + stem, a)


# ---- LU with partial pivoting: LAPACK's getrf (linalg/lu.py holds the Python functions)
def _lu_check(A, name, pivot):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._size)} instead")
    dt = A.dtype
    if not (dt.is_floating_point or dt.is_complex) or dt in (D.float16, D.bfloat16):
        raise not_implemented("lu_cpu", dt)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_factor_each(a):
    """getrf on each matrix of `a`: the packed factors (each matrix column-major, as LAPACK
    and PyTorch leave them), the 1-based row interchanges (int32) and info."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    lu_t = caching_allocator.empty(batch + (n, m), a.dtype)  # the transposes, row-major
    pivots = np.zeros(batch + (min(m, n),), np.int32)
    info = np.zeros(batch, np.int32)
    if a.size:
        getrf = _lapack_fn("getrf", a)
        with np.errstate(all="ignore"):
            for i in np.ndindex(*batch):
                lu, piv, code = getrf(a[i])
                lu_t[i] = lu.T
                pivots[i] = piv + 1
                info[i] = max(code, 0)
    return lu_t.swapaxes(-1, -2), pivots, info


def lu_factor_message(name):
    return lambda code: (f"{name}: U[{code},{code}] is zero and using it on lu_solve would result "
                         "in a division by zero. If you still want to perform the factorization, "
                         "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


@impl("linalg_lu_factor_ex", "CPU")
def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    _lu_check(A, "torch.lu_factor", pivot)
    LU, pivots, info = _lu_factor_each(A._np)
    if check_errors:
        _raise_info(info, A.dim() > 2, lu_factor_message("torch.linalg.lu_factor_ex"),
                    RuntimeError)
    LU = _wrap_external(LU)
    if not A.numel():  # (NumPy forgets an empty array's strides)
        LU._stride_, LU._offset_ = _column_major_strides(A._size), 0
    return LU, _wrap(pivots), _wrap(info)


@impl("linalg_lu_factor_ex", "Meta")
def linalg_lu_factor_ex_meta(A, pivot=True, check_errors=False):
    _lu_check(A, "torch.lu_factor", pivot)
    m, n = A._size[-2:]
    batch = A._size[:-2]
    return (_meta(A._size, A.dtype, _column_major_strides(A._size), device=A._device),
            _meta_like(A, batch + (min(m, n),), D.int32), _meta_like(A, batch, D.int32))


def _column_major_strides(shape):
    """A batch of column-major matrices (PyTorch's batched_matrix_contiguous_strides)."""
    strides = list(_contiguous_strides(shape))
    strides[-1], strides[-2] = max(shape[-2], 1), 1
    return tuple(strides)


def _permutations(pivots, m):
    """Row i of P^T A is row perm[i] of A, for the 1-based interchanges `pivots`."""
    batch = pivots.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    flat = perm.reshape(math.prod(batch), m)
    piv = pivots.reshape(flat.shape[0], pivots.shape[-1]).astype(np.int64) - 1
    rows = np.arange(flat.shape[0])
    for i in range(piv.shape[1]):
        p = piv[:, i]
        flat[rows, i], flat[rows, p] = flat[rows, p], flat[rows, i].copy()
    return perm


def permutation_matrices(pivots, m, dtype):
    """P with A = P L U: column i of P is the unit vector at perm[i]."""
    perm = _permutations(pivots, m)
    return (perm[..., None, :] == np.arange(m)[:, None]).astype(dtype)


@impl("linalg_lu", "CPU")
def linalg_lu(A, pivot=True):
    _lu_check(A, "linalg.lu", pivot)
    LU, pivots, _ = _lu_factor_each(A._np)
    m, n = A._size[-2:]
    k = min(m, n)
    L = np.tril(LU[..., :, :k], -1)
    idx = np.arange(k)
    L[..., idx, idx] = 1
    U = np.triu(LU[..., :k, :])
    P = permutation_matrices(pivots, m, A.dtype._np)
    return _wrap(np.ascontiguousarray(P)), _wrap(np.ascontiguousarray(L)), \
        _wrap(np.ascontiguousarray(U))


@impl("linalg_lu", "Meta")
def linalg_lu_meta(A, pivot=True):
    _lu_check(A, "linalg.lu", pivot)
    m, n = A._size[-2:]
    batch = A._size[:-2]
    k = min(m, n)
    return (_meta_like(A, batch + (m, m)), _meta_like(A, batch + (m, k)),
            _meta_like(A, batch + (k, n)))


@impl("linalg_ldl_factor_ex", "CPU")
def linalg_ldl_factor_ex(self, hermitian=False, check_errors=False):
    _ldl_check(self, "torch.linalg.ldl_factor_ex", "ldl_factor_kernel_cpu")
    a = self._np
    LD = np.zeros(a.shape, dtype=a.dtype)
    pivots = np.zeros(a.shape[:-1], dtype=np.int32)
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    if a.shape[-1]:
        sytrf = _ldl_routine(a, hermitian, "trf")
        for i in np.ndindex(*a.shape[:-2]):
            ld, pivots[i], info[i] = sytrf(a[i], lower=1)
            LD[i] = np.tril(ld)
    if check_errors:
        _raise_info(info, self.dim() > 2, lambda code: f"torch.linalg.ldl_factor_ex: The "
                    f"factorization could not be completed because D[{code},{code}] is exactly "
                    f"zero.")
    return _fresh(LD, self.dtype), _wrap(pivots), _wrap(info)


@impl("linalg_ldl_factor_ex", "Meta")
def linalg_ldl_factor_ex_meta(self, hermitian=False, check_errors=False):
    _ldl_check(self, "torch.linalg.ldl_factor_ex", "ldl_factor_kernel_cpu")
    return (_meta_like(self, self._size), _meta_like(self, self._size[:-1], D.int32),
            _meta_like(self, self._size[:-2], D.int32))


def _ldl_solve_check(LD, pivots, B):
    _ldl_check(LD, "torch.linalg.ldl_solve", "ldl_solve_kernel_cpu")
    if B.dim() == 0:  # PyTorch reads B.size(-2) before it checks B's rank
        raise IndexError("Dimension specified as -2 but tensor has no dimensions")
    if B.dim() < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if pivots._size != LD._size[:-1]:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to "
                           f"be the same, but got pivots with shape {list(pivots._size)} instead")
    if pivots.dtype not in (D.int32, D.int64):
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{_scalar_type_name(pivots.dtype)}")
    _expect_same_dtype(B, LD, "b", "A", end=".")
    n = LD._size[-1]
    if B._size[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A "
                           f"matrix is {n} by {n} but each b matrix is {B._size[-2]} by "
                           f"{B._size[-1]}")
    return tuple(broadcast_shape(LD._size[:-2], B._size[:-2])) + tuple(B._size[-2:])


@impl("linalg_ldl_solve", "CPU")
def linalg_ldl_solve(LD, pivots, B, hermitian=False):
    shape = _ldl_solve_check(LD, pivots, B)
    batch = shape[:-2]
    ld = np.broadcast_to(LD._np, batch + LD._size[-2:])
    piv = np.broadcast_to(pivots._np.astype(np.int32), batch + pivots._size[-1:])
    b = np.broadcast_to(B._np, shape)
    x = np.empty(shape, dtype=B.dtype._np)
    if x.size:
        sytrs = _ldl_routine(ld, hermitian, "trs")
        with np.errstate(all="ignore"):
            for i in np.ndindex(*batch):
                x[i] = sytrs(ld[i], piv[i], b[i], lower=1)[0]
    return _fresh(x, B.dtype)


@impl("linalg_ldl_solve", "Meta")
def linalg_ldl_solve_meta(LD, pivots, B, hermitian=False):
    return _meta_like(B, _ldl_solve_check(LD, pivots, B))


_COMPLEX_OF = {D.float32: D.complex64, D.float64: D.complex128, D.complex64: D.complex64,
               D.complex128: D.complex128}


def _eig_check(self):
    if self.dim() < 2:
        raise RuntimeError("linalg.eig: The input tensor A must have at least 2 dimensions.")
    if self._size[-1] != self._size[-2]:
        raise RuntimeError(f"linalg.eig: A must be batches of square matrices, but they are "
                           f"{self._size[-2]} by {self._size[-1]} "
                           f"matrices")
    if self.dtype not in _COMPLEX_OF:
        raise not_implemented("linalg_eig_out_cpu", self.dtype)
    return _COMPLEX_OF[self.dtype]


@impl("linalg_eig", "CPU")
def linalg_eig(self):
    """geev through NumPy (the routine PyTorch calls: the same order and normalisation of the
    eigenvectors); complex results for every input."""
    dtype = _eig_check(self)
    a = self._np
    if not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    if a.shape[-1] == 0:
        return _fresh(np.zeros(a.shape[:-1]), dtype), _fresh(np.zeros(a.shape), dtype)
    values, vectors = np.linalg.eig(a)
    return _fresh(values, dtype), _fresh(vectors, dtype)


@impl("linalg_eig", "Meta")
def linalg_eig_meta(self):
    dtype = _eig_check(self)
    return _meta_like(self, self._size[:-1], dtype), _meta_like(self, self._size, dtype)


def _matrix_exp_check(self):
    if self.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if self._size[-1] != self._size[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {self._size[-2]} by {self._size[-1]} "
                           f"matrices")
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {_scalar_type_name(self.dtype)}")


@impl("linalg_matrix_exp", "CPU")
def linalg_matrix_exp(self):
    """SciPy's expm (Al-Mohy and Higham's scaling and squaring of a Pade approximant), in double
    precision and rounded once to the input's dtype."""
    import scipy.linalg
    _matrix_exp_check(self)
    a = self._np
    if a.size == 0:
        return _fresh(a, self.dtype)
    wide = np.complex128 if np.iscomplexobj(a) else np.float64
    return _fresh(scipy.linalg.expm(a.astype(wide)), self.dtype)


@impl("linalg_matrix_exp", "Meta")
def linalg_matrix_exp_meta(self):
    _matrix_exp_check(self)
    return _meta_like(self, self._size)


def _linear_combination_shape(input, coefficients):
    if input.dim() == 0 or input.numel() == 0:
        raise RuntimeError("Empty tensor not supported")
    if coefficients.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(coefficients.dim(), 1)}, {max(coefficients.dim(), 1) - 1}], but "
                         f"got 1)")
    return (coefficients._size[0],) + tuple(input._size[1:])


@impl("_compute_linear_combination", "CPU")
def _compute_linear_combination(input, coefficients):
    """result[i] = sum_j coefficients[i, j] * input[j] over the coefficients' columns, in
    input's dtype: the step of matrix_exp's Taylor polynomials that PyTorch names as an op."""
    shape = _linear_combination_shape(input, coefficients)
    k = min(coefficients._size[1], input._size[0])   # PyTorch sums no further than input's
    c = coefficients._np[:, :k].astype(input.dtype._np, copy=False)
    r = np.tensordot(c, input._np[:k], axes=(1, 0)) if k else np.zeros(shape, input.dtype._np)
    return _fresh(r, input.dtype)


@impl("_compute_linear_combination", "Meta")
def _compute_linear_combination_meta(input, coefficients):
    return _meta_like(input, _linear_combination_shape(input, coefficients))


# ---- composites PyTorch writes from other ops (CompositeImplicitAutograd)
@impl("linalg_vander", "CompositeImplicitAutograd")
def linalg_vander(x, N=None):
    """Columns x^0, x^1, ..., x^(N-1): ones, then a running product (cumprod promotes
    integers to int64, as PyTorch's does)."""
    if x.dtype in (D.float16, D.bfloat16, D.bool):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_scalar_type_name(x.dtype)}")
    if x.dim() == 0:
        x = x.unsqueeze(0)
    n = x._size[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*x._size, n - 1).cumprod(-1)
    from .._dispatch.dispatcher import lookup
    return lookup("cat")([powers.new_ones((*x._size, 1)), powers], -1)


def _prod(shape):
    return int(np.prod(shape, dtype=np.int64))


@impl("linalg_tensorinv", "CompositeImplicitAutograd")
def linalg_tensorinv(self, ind=2):
    """The inverse of `self` read as a (prod(shape[:ind]) x prod(shape[ind:])) matrix, shaped
    shape[ind:] + shape[:ind]."""
    from .._dispatch.dispatcher import lookup
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > self.dim():  # PyTorch slices self.sizes() at ind unchecked
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {self.dim()}")
    front, back = tuple(self._size[:ind]), tuple(self._size[ind:])
    rows, cols = _prod(front), _prod(back)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse, info = lookup("linalg_inv_ex")(self.reshape(rows, cols))
    if int(info) > 0:
        raise LinAlgError(f"inv: The diagonal element {int(info)} is zero, the inversion could "
                          f"not be completed because the input matrix is singular.")
    return inverse.reshape(tuple(back + front))


@impl("linalg_tensorsolve", "CompositeImplicitAutograd")
def linalg_tensorsolve(self, other, dims=None):
    """X with tensordot(self, X, X.dim()) == other: a linear solve of self read as a
    (other.numel() x prod(rest)) matrix; `dims` are first moved to the end of self."""
    from .._dispatch.dispatcher import lookup
    A = self
    if dims is not None:
        nd = A.dim()
        moved = [_wrap_dim(d, nd) for d in dims]
        A = A.permute(tuple([d for d in range(nd) if d not in moved] + moved))
    result_shape = tuple(A._size[other.dim():])
    result_numel, other_numel = _prod(result_shape), other.numel()
    if result_numel != other_numel:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim"
                           f":]) == prod(self.shape[:other.ndim]), but got {result_numel} != "
                           f"{other_numel}")
    X = lookup("linalg_solve")(A.reshape(other_numel, result_numel), other.reshape(-1))
    return X.reshape(tuple(result_shape))
