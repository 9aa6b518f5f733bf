"""Converting to PyTorch's float8 formats, with PyTorch's rounding at the edges.

ember keeps a float8 tensor's bytes in an array of ml_dtypes' type of the same bit layout, and
ml_dtypes converts with round-to-nearest-even as c10 does. Three edges differ, and PyTorch's CPU
conversion (c10/util/Float8_*.h, as torch 2.13 runs it) decides them:
  * float8_e4m3fn has no infinity: PyTorch saturates a value beyond its range (inf too) to
    +-448, where ml_dtypes gives NaN;
  * float8_e5m2's NaN is 0x7F (sign kept), ml_dtypes' 0x7E;
  * float8_e8m0fnu holds only a power of two's exponent: PyTorch takes the magnitude's (a
    negative number converts as its absolute value) and zero becomes the smallest value 2**-127,
    where ml_dtypes gives NaN for both.
The fnuz formats convert as ml_dtypes does (overflow to their one NaN).
"""
import numpy as np

from . import dtype as D


def to_float8(a, dt):
    """NumPy array `a` (any real dtype) as an array of float8 dtype `dt`, rounded as PyTorch."""
    target = D.np_dtype(dt)
    if a.dtype.kind != "f" or a.dtype.itemsize > 4:
        with np.errstate(over="ignore", invalid="ignore"):
            a = a.astype(np.float32)  # PyTorch converts through float as well
    if dt is D.float8_e4m3fn:
        a = np.asarray(np.clip(a, -448.0, 448.0))  # NaN stays NaN
    elif dt is D.float8_e8m0fnu:
        a = np.asarray(np.abs(a))
    out = a.astype(target)
    if dt is D.float8_e5m2:
        bits = out.view(np.uint8)
        bits[np.isnan(a)] |= 1
    elif dt is D.float8_e8m0fnu:
        out.view(np.uint8)[a == 0] = 0
    return out



def as_strided(a, shape, strides):
    """NumPy's as_strided, for every array ember keeps: ml_dtypes' float8_e5m2 describes itself
    to NumPy's array interface as '<f1', which NumPy cannot read back, so it goes as bytes."""
    if a.dtype is _E5M2:
        return _as_strided(a.view(np.uint8), shape, strides).view(_E5M2)
    try:
        # a view over `a`'s own buffer: one C call, where NumPy's as_strided builds an object
        # with an __array_interface__ (7x the time); NumPy refuses a view reaching outside
        # the buffer, or a non-contiguous `a` (no buffer to export), and as_strided does those
        return _ndarray(shape, a.dtype, a, 0, strides)
    except (TypeError, ValueError, BufferError):
        return _as_strided(a, shape, strides)


_as_strided = np.lib.stride_tricks.as_strided
_ndarray = np.ndarray
_E5M2 = D.float8_e5m2._np
