"""torch._prims_common: the dtype bookkeeping PyTorch's Python references share -- the Python
type of a dtype (`dtype_to_type`), and `elementwise_dtypes`, the (computation dtype, result dtype)
of an elementwise op under one of the type-promotion kinds its references declare. The result
dtype is ember's own promotion (`result_type_of`, the TensorIterator rule); the kinds then map it
as PyTorch's do."""
import builtins
from enum import Enum

from .._core import dtype as D


def corresponding_complex_dtype(dtype):
    """The complex dtype whose real and imaginary parts have `dtype` (float -> cfloat, ...)."""
    return dtype.to_complex()


def dtype_to_type(dtype):
    """The Python type of a dtype's values: bool, int, float or complex."""
    if not isinstance(dtype, D.dtype):
        raise AssertionError(f"Expected torch.dtype, got {type(dtype)}")
    if dtype is D.bool:
        return builtins.bool
    if dtype.is_complex:
        return builtins.complex
    if dtype.is_floating_point:
        return builtins.float
    if dtype._cat == D._INT:
        return builtins.int
    raise ValueError("Invalid dtype!")


class ELEMENTWISE_TYPE_PROMOTION_KIND(Enum):
    """How an elementwise op's result dtype follows from its operands' promoted dtype, with an
    example op: DEFAULT as is (add); NO_OPMATH as is, computed in it too (where, cat);
    INT_TO_FLOAT bool/integer to the default float (sin); COMPLEX_TO_FLOAT complex to its real
    dtype (abs); BOOL_TO_LONG bool to int64 (pow); ALWAYS_BOOL bool (eq)."""
    DEFAULT = (0,)
    NO_OPMATH = (1,)
    INT_TO_FLOAT = (2,)
    ALWAYS_BOOL = (3,)
    COMPLEX_TO_FLOAT = (4,)
    BOOL_TO_LONG = (5,)


# "op math": low-precision floats are computed in float32 (complex32 in complex64)
_COMPUTATION_DTYPE = {D.float16: D.float32, D.bfloat16: D.float32, D.complex32: D.complex64}


def get_computation_dtype(dtype):
    return _COMPUTATION_DTYPE.get(dtype, dtype)


def elementwise_dtypes(*args, type_promotion_kind):
    """(computation dtype, result dtype) of an elementwise op on `args` (tensors and numbers;
    None is ignored) under `type_promotion_kind`."""
    kind = ELEMENTWISE_TYPE_PROMOTION_KIND
    promoted = D.result_type_of([a for a in args if a is not None])
    if type_promotion_kind is kind.NO_OPMATH:
        return promoted, promoted
    if type_promotion_kind is kind.INT_TO_FLOAT and not (promoted.is_floating_point
                                                        or promoted.is_complex):
        promoted = D.get_default_dtype()
    computation = get_computation_dtype(promoted)
    if type_promotion_kind is kind.COMPLEX_TO_FLOAT:
        return computation, promoted.to_real()
    if type_promotion_kind is kind.BOOL_TO_LONG and promoted is D.bool:
        return D.int64, D.int64
    if type_promotion_kind is kind.ALWAYS_BOOL:
        return computation, D.bool
    return computation, promoted


def _check_strides(a, b, only_cuda, significant_only):
    """(same, first differing dim or None). PyTorch compares strides only when a tensor is on
    CUDA (its CPU kernels' strides are not the reference) unless `only_cuda` is False, only for
    a tensor with elements, and (`significant_only`) only in dims longer than 1."""
    if (not only_cuda or a.device.type == "cuda" or b.device.type == "cuda") and a.numel() > 0:
        for i in range(a.ndim):
            if a.stride()[i] != b.stride()[i] and (not significant_only or a.shape[i] > 1):
                return False, i
    return True, None


def check_significant_strides(a, b, *, only_cuda=True, allow_rhs_unbacked=False):
    return _check_strides(a, b, only_cuda, True)


def check_all_strides(a, b, *, only_cuda=True):
    return _check_strides(a, b, only_cuda, False)
