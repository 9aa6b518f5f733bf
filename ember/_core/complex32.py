"""complex32 (PyTorch's ComplexHalf, `torch.chalf`): how ember stores it and converts to it.

PyTorch keeps a complex32 value as two float16s, real then imaginary (c10::complex<c10::Half>,
4 bytes), so `view_as_real` of a complex32 tensor is a float16 view of the same bytes with a
trailing dim of 2, and `view_as_complex` of such a float16 tensor is complex32. Its CPU build
calls the dtype experimental (it warns once, when the first complex32 tensor is made) and
compiles few kernels for it: factories, copies and conversions, views and indexing, add, sub,
mul, neg, conj, sgn, abs, eq/ne and the isfinite-style predicates; the others raise
`"<kernel>" not implemented for 'ComplexHalf'`. Its kernels load each value as
complex<float>, compute there, and round each part back to float16 (the "opmath" dtype).

NumPy has no complex32. ember stores one as a structured NumPy dtype of two float16 fields
(`NP_COMPLEX32`): an array of it has one 4-byte element per complex value, so every strided
view, copy, index, cat and transpose works on it unchanged and a tensor's strides count
elements as PyTorch's do. NumPy has no arithmetic on it: a kernel computes in complex64
(`widen`) and rounds back (`narrow`), where ember's kernels already branch on the dtype
(elementwise.py's _OPMATH, shape.py's _cast, the factories).
"""
import warnings

import numpy as np

NP_COMPLEX32 = np.dtype([("real", np.float16), ("imag", np.float16)])


def through_float(a):
    """`a` (an array or a number) as the value PyTorch makes a float16 / bfloat16 from: c10's
    Half and BFloat16 are built from a float, so a double -- or each part of a complex double --
    is rounded twice, to float32 first (66 in a million random doubles land on another float16
    than rounding once gives). Beyond float32's range it is inf."""
    a = np.asarray(a)
    if a.dtype == np.float64 or a.dtype == np.complex128:
        with np.errstate(over="ignore"):
            return a.astype(np.complex64 if a.dtype.kind == "c" else np.float32)
    return a


def narrow(a):
    """NumPy array (or number) `a` of any dtype as a complex32 array, each part rounded to
    float16 as PyTorch's conversion does (beyond float16's range: inf)."""
    a = np.asarray(a)
    if a.dtype == NP_COMPLEX32:
        return a
    out = np.empty(a.shape, NP_COMPLEX32)
    a = through_float(a)
    with np.errstate(over="ignore", invalid="ignore"):
        if a.dtype.kind == "c":
            out["real"] = a.real
            out["imag"] = a.imag
        else:
            out["real"] = a if a.dtype.kind in "fiub" else a.astype(np.float32)
            out["imag"] = 0
    return out


def widen(a):
    """complex32 array `a` as complex64 (exact): the dtype its kernels compute in."""
    out = np.empty(a.shape, np.complex64)
    out.real = a["real"]
    out.imag = a["imag"]
    return out


def values(a):
    """Array `a` as NumPy can compute with it: complex32 as complex64 (exactly), others as
    they are."""
    return widen(a) if a.dtype == NP_COMPLEX32 else a


def astype(a, target):
    """`a.astype(target)` (NumPy dtypes), where either may be complex32 (through complex64)."""
    if a.dtype == NP_COMPLEX32:
        a = widen(a)
    return narrow(a) if target == NP_COMPLEX32 else a.astype(target)


def copyto(dst, src):
    """`np.copyto(dst, src, casting="unsafe")`, where either may be complex32."""
    if src.dtype != dst.dtype and NP_COMPLEX32 in (src.dtype, dst.dtype):
        src = astype(src, dst.dtype)
    np.copyto(dst, src, casting="unsafe")


def warn_experimental():
    """PyTorch's one warning about the dtype, given when the first complex32 tensor is made."""
    global _warned
    if not _warned:
        _warned = True
        from ._warnings import user_stacklevel
        warnings.warn("ComplexHalf support is experimental and many operators don't support it "
                      "yet.", UserWarning, stacklevel=user_stacklevel())


_warned = False
