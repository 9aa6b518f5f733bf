"""Matrix products (CPU and Meta): mm, bmm, matmul, addmm, linear. NumPy's BLAS does the work.

float16 and bfloat16 products accumulate in float32 and round once, as PyTorch's CPU kernels
do; integer products are exact (NumPy's integer matmul wraps around like C). Bool has no
matrix product in PyTorch.
"""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import _wrap, _meta
from .elementwise import broadcast_shape, not_implemented, _scalar_type_name, _OPMATH


def _check_same_dtype(a, b, name):
    if a.dtype is not b.dtype:
        an, bn = _scalar_type_name(a.dtype), _scalar_type_name(b.dtype)
        raise RuntimeError(f"{name}: expected both operands to have the same dtype, but got "
                           f"{an} and {bn}")


def _product(a, b, kernel):
    """a @ b on NumPy arrays of a's dtype, with PyTorch's accumulation."""
    dt = a.dtype
    if dt is D.bool:
        raise not_implemented(kernel, dt)
    mdt = _OPMATH.get(dt)
    if mdt is None:
        return np.asarray(np.matmul(a._np, b._np))
    return np.matmul(a._np.astype(mdt._np), b._np.astype(mdt._np)).astype(dt._np)


def _mm_shape(a, b, first="self"):
    if len(a._size) != 2:
        raise RuntimeError(f"{first} must be a matrix, got {len(a._size)}-D tensor")
    if len(b._size) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {len(b._size)}-D tensor")
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._size[0]}x"
                           f"{a._size[1]} and {b._size[0]}x{b._size[1]})")
    return (a._size[0], b._size[1])


@impl("mm", "CPU")
def mm(self, mat2):
    _mm_shape(self, mat2)
    _check_same_dtype(self, mat2, "mm")
    return _wrap(_product(self, mat2, "addmm_impl_cpu_"))


@impl("mm", "Meta")
def mm_meta(self, mat2):
    shape = _mm_shape(self, mat2)
    _check_same_dtype(self, mat2, "mm")
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
    _check_same_dtype(self, mat2, "bmm")
    return _wrap(_product(self, mat2, "bmm"))


@impl("bmm", "Meta")
def bmm_meta(self, mat2):
    shape = _bmm_shape(self, mat2)
    _check_same_dtype(self, mat2, "bmm")
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
    _check_same_dtype(self, other, "matmul")
    return _wrap(_product(self, other, _matmul_kernel_name(self, other)))


@impl("matmul", "Meta")
def matmul_meta(self, other):
    shape = matmul_shape(self, other)
    _check_same_dtype(self, other, "matmul")
    return _meta(shape, self.dtype, device=self._device)


def _addmm_check(self, mat1, mat2):
    shape = _mm_shape(mat1, mat2, "mat1")
    _check_same_dtype(mat1, mat2, "addmm")
    _check_same_dtype(self, mat1, "addmm")
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
    r = np.matmul(mat1._np.astype(mdt, copy=False), mat2._np.astype(mdt, copy=False))
    if alpha != 1:
        r = np.multiply(r, alpha, dtype=mdt)
    if beta != 0:
        bias = self._np.astype(mdt, copy=False)
        r = np.add(r, bias if beta == 1 else np.multiply(bias, beta, dtype=mdt), dtype=mdt)
    return _wrap(np.broadcast_to(r, shape).astype(dt._np))


@impl("addmm", "Meta")
def addmm_meta(self, mat1, mat2, beta=1, alpha=1):
    return _meta(_addmm_check(self, mat1, mat2), mat1.dtype, device=mat1._device)


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
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_scalar_type_name(input.dtype)} and "
                           f"{_scalar_type_name(weight.dtype)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_scalar_type_name(bias.dtype)} and "
                           f"{_scalar_type_name(input.dtype)}")


def _linear_shape(input, weight):
    return tuple(input._size[:-1]) + ((weight._size[0],) if len(weight._size) == 2 else ())


@impl("linear", "CPU")
def linear(input, weight, bias=None):
    _linear_check(input, weight, bias)
    dt = input.dtype
    if dt is D.bool:
        raise not_implemented("addmm_impl_cpu_", dt)
    mdt = _OPMATH.get(dt, dt)._np
    r = np.asarray(np.matmul(input._np.astype(mdt, copy=False),
                             weight._np.astype(mdt, copy=False).T))
    if bias is not None:
        r += bias._np
    return _wrap(r.astype(dt._np, copy=False))


@impl("linear", "Meta")
def linear_meta(input, weight, bias=None):
    _linear_check(input, weight, bias)
    return _meta(_linear_shape(input, weight), input.dtype, device=input._device)
