"""Matrix products (CPU and Meta): mm, bmm, matmul, addmm, linear. NumPy's BLAS does the work."""
import numpy as np

from .. import _dtype as D
from .._dispatcher import impl
from .._tensor import _wrap, _meta
from .elementwise import broadcast_shape


def _check_dtypes(a, b, name):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != "
                           f"{b.dtype}")


def _mm_shape(a, b):
    if len(a._size) != 2:
        raise RuntimeError(f"self must be a matrix")
    if len(b._size) != 2:
        raise RuntimeError(f"mat2 must be a matrix")
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._size[0]}x"
                           f"{a._size[1]} and {b._size[0]}x{b._size[1]})")
    return (a._size[0], b._size[1])


@impl("mm", "CPU")
def mm(self, mat2):
    _mm_shape(self, mat2)
    _check_dtypes(self, mat2, "mm")
    return _wrap(np.matmul(self._np, mat2._np))


@impl("mm", "Meta")
def mm_meta(self, mat2):
    _check_dtypes(self, mat2, "mm")
    return _meta(_mm_shape(self, mat2), self.dtype, device=self._device)


def _bmm_shape(a, b):
    if len(a._size) != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if len(b._size) != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor")
    if a._size[0] != b._size[0] or a._size[2] != b._size[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._size[0]}, {a._size[2]}] but got: [{b._size[0]}, {b._size[1]}].")
    return (a._size[0], a._size[1], b._size[2])


@impl("bmm", "CPU")
def bmm(self, mat2):
    _bmm_shape(self, mat2)
    _check_dtypes(self, mat2, "bmm")
    return _wrap(np.matmul(self._np, mat2._np))


@impl("bmm", "Meta")
def bmm_meta(self, mat2):
    return _meta(_bmm_shape(self, mat2), self.dtype, device=self._device)


def matmul_shape(a, b):
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
        ra = sa if len(sa) > 1 else (1,) + tuple(sa)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({int(np.prod(ra[:-1]))}x{ka} and {kb}x{sb[-1] if len(sb) > 1 else 1})")
    batch = broadcast_shape(tuple(sa[:-2]), tuple(sb[:-2]))
    out = list(batch)
    if len(sa) > 1:
        out.append(sa[-2])
    if len(sb) > 1:
        out.append(sb[-1])
    return tuple(out)


@impl("matmul", "CPU")
def matmul(self, other):
    matmul_shape(self, other)
    _check_dtypes(self, other, "matmul")
    return _wrap(np.asarray(np.matmul(self._np, other._np)))


@impl("matmul", "Meta")
def matmul_meta(self, other):
    _check_dtypes(self, other, "matmul")
    return _meta(matmul_shape(self, other), self.dtype, device=self._device)


@impl("addmm", "CPU")
def addmm(self, mat1, mat2, beta=1, alpha=1):
    shape = _mm_shape(mat1, mat2)
    r = np.matmul(mat1._np, mat2._np)
    if alpha != 1:
        r *= alpha
    if beta != 0:
        r += self._np * beta if beta != 1 else self._np
    if r.shape != shape:
        raise RuntimeError(f"The expanded size of the tensor must match: self "
                           f"{list(self._size)} vs {list(shape)}")
    return _wrap(r)


@impl("addmm", "Meta")
def addmm_meta(self, mat1, mat2, beta=1, alpha=1):
    return _meta(_mm_shape(mat1, mat2), mat1.dtype, device=mat1._device)


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
                           f"{_tn(input.dtype)} and {_tn(weight.dtype)}")


def _tn(dt):
    from .elementwise import _scalar_type_name
    return _scalar_type_name(dt)


@impl("linear", "CPU")
def linear(input, weight, bias=None):
    _linear_check(input, weight, bias)
    r = np.matmul(input._np, weight._np.T)
    if bias is not None:
        r += bias._np
    return _wrap(np.asarray(r))


@impl("linear", "Meta")
def linear_meta(input, weight, bias=None):
    _linear_check(input, weight, bias)
    shape = tuple(input._size[:-1]) + ((weight._size[0],) if len(weight._size) == 2 else ())
    return _meta(shape, input.dtype, device=input._device)
