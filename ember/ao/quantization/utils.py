"""torch.ao.quantization.utils: the quantization range of a dtype and the checks observers make
on the ranges they are given and the min/max they record."""
import warnings

from ..._core import dtype as D
from ..._core import qscheme as Q

__all__ = ["calculate_qmin_qmax", "validate_qmin_qmax", "check_min_max_valid", "is_per_tensor",
           "is_per_channel"]


def is_per_tensor(qscheme):
    return qscheme in (Q.per_tensor_affine, Q.per_tensor_symmetric)


def is_per_channel(qscheme):
    return qscheme in (Q.per_channel_affine, Q.per_channel_affine_float_qparams,
                       Q.per_channel_symmetric)


def validate_qmin_qmax(quant_min, quant_max):
    """A user-given range must contain 0 and not be empty."""
    if not (quant_min <= 0 <= quant_max):
        raise AssertionError("Used-specified quantization range must include 0.")
    if quant_min >= quant_max:
        raise AssertionError(
            "qmin must be strictly less than qmax for user-specified quantization range.")


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The integer range values are quantized into: the user's (halved by `reduce_range`),
    checked against the dtype's width, or else the dtype's full 8-, 16- or 32-bit range (one bit
    less with `reduce_range`)."""
    if has_customized_qrange:
        wide = dtype in (D.qint32, D.int32)
        qrange_len = quant_max - quant_min + 1
        if dtype in (D.qint8, D.int8) and not 0 < qrange_len <= 256:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=256).")
        if wide and not 0 < qrange_len <= 2 ** 32:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=4294967296).")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in (D.qint8, D.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (D.quint8, D.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (D.qint32, D.int32):
        return -(2 ** 31), 2 ** 31 - 1
    if dtype is D.uint16:
        return 0, 2 ** 16 - 1
    if dtype is D.int16:
        return -(2 ** 15), 2 ** 15 - 1
    return 0, 15


def check_min_max_valid(min_val, max_val):
    """Whether an observer has recorded anything (warning if not) to compute qparams from; a
    min above the max is an error."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default "
                      "values.", stacklevel=2)
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if min_val == float("inf") and max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default values.", stacklevel=2)
            return False
        if min_val > max_val:
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif (min_val > max_val).any():
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True
