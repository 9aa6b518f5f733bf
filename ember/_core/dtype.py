"""dtypes and PyTorch's type-promotion rules.

A `dtype` is a small immutable object (PyTorch's ScalarType) that knows its NumPy twin. Promotion
follows PyTorch, not NumPy: categories bool < integer < floating < complex, and an operand only
changes the result's dtype if it is of a higher category than the operands of higher priority
(dimensioned tensors > zero-dim tensors > Python scalars). See `result_type`.
"""
from ember._core._warnings import user_stacklevel as _user_stacklevel
import builtins
import numpy as np

from . import complex32 as _c32

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    __module__ = "ember"  # printed as <class 'torch.dtype'> is
    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex", "is_signed", "_np", "_cat",
                 "_kind")

    def __init__(self, name, np_dtype, itemsize, cat, is_signed, kind=None):
        self._kind = kind  # the dtypes outside the promotion lattice say which kind they are
        self.name = name
        self._np = np_dtype
        self.itemsize = itemsize
        self._cat = cat
        self.is_floating_point = cat == _FLOAT
        self.is_complex = cat == _COMPLEX
        self.is_signed = is_signed

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return {"complex64": float32, "complex128": float64, "complex32": float16}.get(self.name, self)

    def to_complex(self):
        """The complex dtype of this float's width (complex dtypes are their own); RuntimeError
        for a dtype with none, as PyTorch's."""
        if self.is_complex:
            return self
        if self is float16:
            return complex32
        if not self.is_floating_point:
            raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(self)}")
        return complex128 if self is float64 else complex64


def _ml_np(name):
    """The ml_dtypes NumPy type of that name (bfloat16, the float8 formats), or None without
    the package (then making a tensor of the dtype says to install it)."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(getattr(ml_dtypes, name))


bool = dtype("bool", np.dtype(np.bool_), 1, _BOOL, False)
uint8 = dtype("uint8", np.dtype(np.uint8), 1, _INT, False)
int8 = dtype("int8", np.dtype(np.int8), 1, _INT, True)
int16 = dtype("int16", np.dtype(np.int16), 2, _INT, True)
int32 = dtype("int32", np.dtype(np.int32), 4, _INT, True)
int64 = dtype("int64", np.dtype(np.int64), 8, _INT, True)
float16 = dtype("float16", np.dtype(np.float16), 2, _FLOAT, True)
bfloat16 = dtype("bfloat16", _ml_np("bfloat16"), 2, _FLOAT, True)
float32 = dtype("float32", np.dtype(np.float32), 4, _FLOAT, True)
float64 = dtype("float64", np.dtype(np.float64), 8, _FLOAT, True)
complex64 = dtype("complex64", np.dtype(np.complex64), 8, _COMPLEX, True)
complex128 = dtype("complex128", np.dtype(np.complex128), 16, _COMPLEX, True)
# PyTorch's "barebones" unsigned types: made, copied, converted, viewed, saved and sorted like any
# dtype, but they promote only with themselves and with floating types (see _promote)
uint16 = dtype("uint16", np.dtype(np.uint16), 2, _INT, False)
uint32 = dtype("uint32", np.dtype(np.uint32), 4, _INT, False)
uint64 = dtype("uint64", np.dtype(np.uint64), 8, _INT, False)
barebones_unsigned = (uint16, uint32, uint64)

all_dtypes = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128, uint16, uint32, uint64)


class _Float8Dtype(dtype):
    """PyTorch's float8 formats, stored as ml_dtypes' types of the same bits. Like the barebones
    unsigned types they promote only with themselves; converting to them rounds as PyTorch does
    (ember/_core/float8.py)."""
    __slots__ = ()

    def __init__(self, *args):
        super().__init__(*args, kind="float8")


float8_dtypes = tuple(_Float8Dtype(n, _ml_np(n), 1, _FLOAT, n != "float8_e8m0fnu") for n in (
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"))
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu = float8_dtypes
# dtypes whose NumPy twin is an ml_dtypes type (few NumPy loops: kernels compute in float32)
ml_dtypes_dtypes = (bfloat16,) + float8_dtypes


# complex32 (ComplexHalf): pairs of float16 in a structured NumPy dtype (ember/_core/complex32.py);
# it promotes as _promote_tensorless says
complex32 = dtype("complex32", _c32.NP_COMPLEX32, 4, _COMPLEX, True, kind="complex32")
# dtypes NumPy has no type of (Tensor.numpy() refuses them; their values are read widened)
numpyless_dtypes = ml_dtypes_dtypes + (complex32,)
# dtypes saved with their dtype beside an untyped storage (_rebuild_tensor_v3): no typed
# storage class of theirs exists in PyTorch's pickles
v3_dtypes = barebones_unsigned + float8_dtypes + (complex32,)


class _TensorlessDtype(dtype):
    """A dtype PyTorch names that ember has no tensors of (quantized, sub-byte, float4): it exists, prints and compares, so code that names it imports; making a tensor
    of it raises NotImplementedError naming it."""
    __slots__ = ()

    def __init__(self, name, itemsize, cat, is_signed, kind):
        self.name, self.itemsize, self._cat, self._kind = name, itemsize, cat, kind
        self._np = _NoNumpyDtype(self)
        self.is_floating_point = cat == _FLOAT
        self.is_complex = cat == _COMPLEX
        dtype.is_signed.__set__(self, is_signed)  # (the slot, under the property)

    @property
    def is_signed(self):
        if self._kind == "quantized":
            raise RuntimeError("isSignedType not supported for quantized types")
        if self._kind == "bits":
            raise RuntimeError("Bits types are undefined")
        return dtype.is_signed.__get__(self)


class _NoNumpyDtype:
    """A tensorless dtype's NumPy twin: NumPy asks it for its `.dtype`, which raises (so a
    kernel that reaches NumPy with it fails naming the dtype, never silently as float64)."""
    __slots__ = ("owner",)

    def __init__(self, owner):
        self.owner = owner

    @property
    def dtype(self):
        raise _no_tensors(self.owner)


def _no_tensors(d):
    return NotImplementedError(f"ember has no tensors of dtype {d} (no {d._kind} dtypes yet)")


tensorless_dtypes = (
    *(_TensorlessDtype(n, size, _INT, None, "quantized") for n, size in (
        ("qint8", 1), ("quint8", 1), ("qint32", 4), ("quint4x2", 1), ("quint2x4", 1))),
    *(_TensorlessDtype(n, size, _INT, None, "bits") for n, size in (
        ("bits1x8", 1), ("bits2x4", 1), ("bits4x2", 1), ("bits8", 1), ("bits16", 2))),
    *(_TensorlessDtype(f"uint{k}", 1, _INT, False, "sub-byte") for k in range(1, 8)),
    *(_TensorlessDtype(f"int{k}", 1, _INT, True, "sub-byte") for k in range(1, 8)),
    _TensorlessDtype("float4_e2m1fn_x2", 1, _FLOAT, True, "float8"),  # two values per byte
)

globals().update({d.name: d for d in tensorless_dtypes})  # ember.qint8, ember.float8_e5m2, ...
float4_e2m1fn_x2 = tensorless_dtypes[-1]

_by_name = {d.name: d for d in all_dtypes + float8_dtypes + (complex32,) + tensorless_dtypes}
_by_name.update(half=float16, float=float32, double=float64, short=int16, int=int32, long=int64,
                cfloat=complex64, cdouble=complex128, chalf=complex32)
_from_np = {d._np: d for d in all_dtypes + float8_dtypes + (complex32,) if d._np is not None}


def _dtype_by_name(name):
    return _by_name[name]


def from_numpy_dtype(np_dtype):
    """The dtype of a NumPy dtype of either byte order (the caller refuses a non-native one)."""
    d = _from_np.get(np_dtype)
    if d is None and not np_dtype.isnative:
        d = _from_np.get(np_dtype.newbyteorder("="))
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The "
                        "only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                        "and bool.")
    return d


_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                     "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                     "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                     "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32",
                     "uint64": "UInt64", "complex32": "ComplexHalf", "qint8": "QInt8",
                     "quint8": "QUInt8", "qint32": "QInt32", "quint4x2": "QUInt4x2",
                     "quint2x4": "QUInt2x4", "bits1x8": "Bits1x8", "bits2x4": "Bits2x4",
                     "bits4x2": "Bits4x2", "bits8": "Bits8", "bits16": "Bits16",
                     "float8_e4m3fn": "Float8_e4m3fn", "float8_e4m3fnuz": "Float8_e4m3fnuz",
                     "float8_e5m2": "Float8_e5m2", "float8_e5m2fnuz": "Float8_e5m2fnuz",
                     "float8_e8m0fnu": "Float8_e8m0fnu", "float4_e2m1fn_x2": "Float4_e2m1fn_x2",
                     **{f"uint{k}": f"UInt{k}" for k in range(1, 8)},
                     **{f"int{k}": f"Int{k}" for k in range(1, 8)}}


def scalar_type_name(d):
    """c10's name of a dtype, as PyTorch's error messages say it ("Long", "Float")."""
    return _SCALAR_TYPE_NAMES[d.name]


def c_type_name(d):
    """The C++ type of a dtype, as some of PyTorch's messages say it ("long int", "float")."""
    return _C_TYPE_NAMES[d.name]


_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                 "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
                 "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                 "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>", "complex32": "c10::complex<c10::Half>",
                 "uint16": "short unsigned int", "uint32": "unsigned int",
                 "uint64": "long unsigned int",
                 **{d.name: "c10::" + _SCALAR_TYPE_NAMES[d.name] for d in float8_dtypes}}


def np_dtype(d):
    if d._kind is not None:
        if isinstance(d, _TensorlessDtype):
            raise _no_tensors(d)
        if d is complex32:  # (factories and conversions ask here first)
            _c32.warn_experimental()
    if d._np is None:
        raise RuntimeError(f"{d} needs the 'ml_dtypes' package (pip install ml_dtypes)")
    return d._np


# ---- the promotion lattice -----------------------------------------------------------------
# Same kind: the wider type wins. Signed/unsigned mix goes to the next signed width that holds
# both (uint8 + int8 -> int16). float16 + bfloat16 -> float32. Across kinds: the higher kind
# wins, except that complex keeps the float's width (float64 + complex64 -> complex128).
def _promote(a, b):
    if a is b:
        return a
    if a._kind is not None or b._kind is not None:  # tensorless or float8
        return _promote_tensorless(a, b)
    if a in barebones_unsigned or b in barebones_unsigned:
        return _promote_barebones(a, b)
    if a._cat != b._cat:
        hi, lo = (a, b) if a._cat > b._cat else (b, a)
        if hi.is_complex and lo is float64:
            return complex128
        return hi
    if a._cat == _FLOAT:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a._cat == _INT:
        if a.is_signed == b.is_signed:
            return a if a.itemsize >= b.itemsize else b
        u, s = (a, b) if not a.is_signed else (b, a)
        return s if s.itemsize > u.itemsize else int16
    return a if a.itemsize >= b.itemsize else b


def _barebones(d):
    """uint16/32/64 and the sub-byte uint1..uint7, int1..int7: outside the promotion lattice."""
    return d in barebones_unsigned or getattr(d, "_kind", None) == "sub-byte"


def _unsigned_barebones(d):
    return _barebones(d) and d.name.startswith("uint")


def _promote_barebones(a, b):
    """An unsigned barebones type promotes only with a floating type (to it); anything else is
    PyTorch's error."""
    bare, other = (a, b) if _barebones(a) else (b, a)
    if _unsigned_barebones(bare) and other.is_floating_point and \
            not isinstance(other, _TensorlessDtype):
        return other
    raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted "
                       f"to promote {scalar_type_name(a)} and {scalar_type_name(b)}")


def _promote_tensorless(a, b):
    """promote_types where a dtype ember has no tensors of takes part: PyTorch's answer."""
    kinds = {getattr(d, "_kind", None) for d in (a, b)}
    names = f"{scalar_type_name(a)} and {scalar_type_name(b)}"
    if "quantized" in kinds:
        raise RuntimeError("promoteTypes with quantized numbers is not handled yet; figure out "
                           "what the correct rules should be, offending types: "
                           f"{scalar_type_name(a)} {scalar_type_name(b)}")
    if "bits" in kinds:
        raise RuntimeError(f"Promotion from {names} is unsupported.")
    if "float8" in kinds:
        if float4_e2m1fn_x2 in (a, b) and any(map(_unsigned_barebones, (a, b))):
            return float4_e2m1fn_x2  # (PyTorch counts float4 among the floating types here)
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote "
                           f"{names}")
    if _barebones(a) or _barebones(b):
        return _promote_barebones(a, b)
    # complex32 (ComplexHalf) with another dtype: the complex of the wider float part
    other = b if a is complex32 else a
    if other in (float64, complex128):
        return complex128
    if other in (bfloat16, float32, complex64):
        return complex64
    return complex32


class _PromotionTable(dict):
    """(dtype, dtype) -> promoted dtype; the pairs that do not promote raise on lookup."""

    def __missing__(self, pair):
        return _promote(*pair)


_PROMOTE = _PromotionTable()
for _a in all_dtypes + (complex32,):
    for _b in all_dtypes + (complex32,):
        try:
            _PROMOTE[_a, _b] = _promote(_a, _b)
        except RuntimeError:  # (looked up, it raises again: __missing__)
            pass
del _a, _b


def promote_types(type1, type2):
    return _PROMOTE[type1, type2]


_default_dtype = float32


def get_default_dtype():
    return _default_dtype


def set_default_dtype(d):
    global _default_dtype
    if not isinstance(d, dtype) or d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype = d


def set_default_tensor_type(t, /):
    """The deprecated torch.set_default_tensor_type: a legacy floating type (torch.DoubleTensor,
    or its name) sets the default dtype."""
    import warnings
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=_user_stacklevel())
    name = t if isinstance(t, str) else f"{getattr(t, '__module__', '')}.{getattr(t, '__name__', t)}"
    if name.startswith("torch.cuda."):
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
    by_name = {"torch." + n: d for d, n in LEGACY_TYPE_NAMES.items()}
    if name not in by_name:
        raise TypeError(f"invalid type: '{name}'")
    d = by_name[name]
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(d)


def scalar_dtype(x):
    """The dtype PyTorch gives a Python scalar on its own (torch.tensor(x).dtype)."""
    t = type(x)
    if t is builtins_bool or isinstance(x, (np.bool_,)):
        return bool
    if t is int or isinstance(x, np.integer):
        return int64
    if t is float or isinstance(x, np.floating):
        return _default_dtype
    if t is complex or isinstance(x, np.complexfloating):
        return complex128 if _default_dtype is float64 else complex64
    raise TypeError(f"expected a number, got {type(x).__name__}")


builtins_bool = type(True)


def _combine_categories(higher, lower):
    # c10's combine_categories: a lower-priority operand only matters if its category is higher
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        if higher is float16:  # PyTorch keeps the float's width
            return complex32
        return complex128 if higher is float64 else (complex64 if higher._cat == _FLOAT else lower)
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return _PROMOTE[higher, lower]
    return higher


def result_type_of(operands):
    """PyTorch's result_type over tensors and Python scalars (the TensorIterator rule).

    Three priority classes, each promoted on its own: tensors with dim > 0, zero-dim tensors, and
    Python scalars ("wrapped numbers", which count as the default dtype of their category). A
    lower class changes the result only if its category is higher.
    """
    dim_t = zero_t = scal = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim_t = d if dim_t is None else _PROMOTE[dim_t, d]
            else:
                zero_t = d if zero_t is None else _PROMOTE[zero_t, d]
        elif x is not None:
            s = scalar_dtype(x)
            scal = s if scal is None else _PROMOTE[scal, s]
    return _combine_categories(dim_t, _combine_categories(zero_t, scal))


def binary_dtype(a, b):
    """result_type for the common two-operand case, with the same-dtype fast path."""
    da = getattr(a, "dtype", None)
    db = getattr(b, "dtype", None)
    if da is db and isinstance(da, dtype):
        return da
    return result_type_of((a, b))


# dtype -> its legacy tensor type's name (torch.FloatTensor; also what Tensor.type() returns)
LEGACY_TYPE_NAMES = {float32: "FloatTensor", float64: "DoubleTensor", float16: "HalfTensor",
                     bfloat16: "BFloat16Tensor", int64: "LongTensor", int32: "IntTensor",
                     int16: "ShortTensor", int8: "CharTensor", uint8: "ByteTensor",
                     bool: "BoolTensor", complex64: "ComplexFloatTensor",
                     complex128: "ComplexDoubleTensor"}
# Tensor.type()'s names, which also cover the types without a legacy class
TENSOR_TYPE_NAMES = {**LEGACY_TYPE_NAMES,
                     **{d: f"{scalar_type_name(d)}Tensor" for d in v3_dtypes}}


# PyTorch's argument parser takes a Python number type where a dtype goes: dtype=float is float64
PYTHON_TYPE_DTYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool,
                      builtins.complex: complex128}
