"""dtypes and PyTorch's type-promotion rules.

A `dtype` is a small immutable object (PyTorch's ScalarType) that knows its NumPy twin. Promotion
follows PyTorch, not NumPy: categories bool < integer < floating < complex, and an operand only
changes the result's dtype if it is of a higher category than the operands of higher priority
(dimensioned tensors > zero-dim tensors > Python scalars). See `result_type`.
"""
from ember._core._warnings import user_stacklevel as _user_stacklevel
import builtins
import numpy as np

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    __module__ = "ember"  # printed as <class 'torch.dtype'> is
    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex", "is_signed", "_np", "_cat")

    def __init__(self, name, np_dtype, itemsize, cat, is_signed):
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
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        return {"float64": complex128, "float16": complex64}.get(self.name, complex64) \
            if not self.is_complex else self


def _bfloat16_np():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


bool = dtype("bool", np.dtype(np.bool_), 1, _BOOL, False)
uint8 = dtype("uint8", np.dtype(np.uint8), 1, _INT, False)
int8 = dtype("int8", np.dtype(np.int8), 1, _INT, True)
int16 = dtype("int16", np.dtype(np.int16), 2, _INT, True)
int32 = dtype("int32", np.dtype(np.int32), 4, _INT, True)
int64 = dtype("int64", np.dtype(np.int64), 8, _INT, True)
float16 = dtype("float16", np.dtype(np.float16), 2, _FLOAT, True)
bfloat16 = dtype("bfloat16", _bfloat16_np(), 2, _FLOAT, True)
float32 = dtype("float32", np.dtype(np.float32), 4, _FLOAT, True)
float64 = dtype("float64", np.dtype(np.float64), 8, _FLOAT, True)
complex64 = dtype("complex64", np.dtype(np.complex64), 8, _COMPLEX, True)
complex128 = dtype("complex128", np.dtype(np.complex128), 16, _COMPLEX, True)

all_dtypes = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_by_name = {d.name: d for d in all_dtypes}
_by_name.update(half=float16, float=float32, double=float64, short=int16, int=int32, long=int64,
                cfloat=complex64, cdouble=complex128)
_from_np = {d._np: d for d in all_dtypes if d._np is not None}


def _dtype_by_name(name):
    return _by_name[name]


def from_numpy_dtype(np_dtype):
    try:
        return _from_np[np_dtype]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type {np_dtype}. The only supported types "
                        "are: float64, float32, float16, complex64, complex128, int64, int32, "
                        "int16, int8, uint8, and bool.") from None


_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                     "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                     "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                     "complex128": "ComplexDouble"}


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
                 "complex128": "c10::complex<double>", "complex32": "c10::complex<c10::Half>"}


def np_dtype(d):
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


_PROMOTE = {(a, b): _promote(a, b) for a in all_dtypes for b in all_dtypes}


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
        if higher is float16:  # PyTorch keeps the float's width: complex32
            raise NotImplementedError(
                "not implemented for 'ComplexHalf': ember has no complex32 dtype, which a "
                "float16 tensor with a complex number (or 0-dim complex tensor) promotes to in "
                "PyTorch; convert the float16 tensor to float32 first")
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


# PyTorch's argument parser takes a Python number type where a dtype goes: dtype=float is float64
PYTHON_TYPE_DTYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool,
                      builtins.complex: complex128}
