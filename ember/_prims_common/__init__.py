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


def compare_tensor_meta(a, b, check_strides=False, *, allow_rhs_unbacked=False, check_conj=True):
    """Raise MetadataMismatchError if tensors `a` and `b` differ in shape, dtype, device or,
    when asked, in significant strides and storage offset, or in the conjugate/negative bits:
    the check that a fake or meta result describes the real one."""
    from .._core.tensor import Tensor
    from .._subclasses.fake_tensor import MetadataMismatchError
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, Tensor):
            raise AssertionError(f"{name} must be TensorLike, got {type(t)}")
    if tuple(a.shape) != tuple(b.shape):
        raise MetadataMismatchError(f"Shapes {a.shape} and {b.shape} are not equal!")
    if a.dtype != b.dtype:
        raise MetadataMismatchError(f"Dtypes {a.dtype} and {b.dtype} are not equal!")
    if _canonical_device(a.device) != _canonical_device(b.device):
        raise MetadataMismatchError(f"Devices {a.device} and {b.device} are not equal!")
    if check_strides:
        same, idx = check_significant_strides(a, b, allow_rhs_unbacked=allow_rhs_unbacked)
        if not same:
            raise MetadataMismatchError(f"Stride mismatch! Strides are {a.stride()} and "
                                        f"{b.stride()} (mismatched at {idx})!")
        if a.storage_offset() != b.storage_offset():
            raise MetadataMismatchError(f"Storage offset mismatch! Storage offsets are "
                                        f"{a.storage_offset()} and {b.storage_offset()}!")
    if check_conj and a.is_conj() != b.is_conj():
        raise MetadataMismatchError(f"Conj mismatch! is_conj is set to {a.is_conj()} and "
                                    f"{b.is_conj()}")
    if a.is_neg() != b.is_neg():
        raise MetadataMismatchError(f"Neg mismatch! is_neg is set to {a.is_neg()} and "
                                    f"{b.is_neg()}")


def _canonical_device(device):
    from .._core.device import device as device_cls
    return device_cls("cuda", 0) if device.type == "cuda" and device.index is None else device


def suggest_memory_format(t):
    from .._core.memory_format import suggest_memory_format as suggest
    return suggest(t)
