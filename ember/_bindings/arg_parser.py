"""The argument checks of PyTorch's PythonArgParser (torch/csrc/utils/python_arg_parser.cpp): what
a binding accepts for each schema type, what it converts, and the TypeError it raises otherwise.

A generated binding (codegen.py) tests each argument with one class comparison — `dim.__class__
is not int`, `alpha.__class__ not in NUMBERS` — which every ordinary call passes; only an argument
that fails it reaches the functions here, which convert what PyTorch accepts and refuse the rest:

    int, SymInt       a Python int or NumPy integer (not bool); a 0-d integer tensor that does not
                      require grad; a SymInt also takes any `__index__` object and a one-element
                      integer tensor of any shape
    int[], SymInt[]   a tuple or list whose first element is an int as above (the others are read
                      with `__index__`); `int[N]` also takes one int for all N; a method whose
                      only positional argument is the list also takes the ints spread out
                      (`x.view(2, 3)`)
    Scalar, float     a Python or NumPy number; a 0-d tensor that does not require grad
    bool              a Python bool only
    Tensor|Scalar     a tensor, a Python or NumPy number (a wrapped number)
    str, ScalarType   a str; a dtype (or Python's `float`, `int`, `bool`, `complex`)

The messages are PyTorch's: "view(): argument 'size' (position 1) must be tuple of ints, but
found element of type float at pos 0", "add(): argument 'alpha' must be Number, not str" (no
position: the argument is keyword-only).
"""
import operator

import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor, Size

NUMBERS = frozenset((int, float, complex, bool))
REALS = frozenset((int, float))
INT_SEQUENCES = frozenset((tuple, list, Size))
_HEAP_TYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class statement made the type
_PYTHON_TYPES = {float: D.float64, int: D.int64, bool: D.bool, complex: D.complex128}


def type_name(value):
    """The type of `value` as PyTorch's messages print it (Python's tp_name)."""
    if isinstance(value, Tensor):
        return "Tensor"
    t = type(value)
    if t is Size:
        return "torch.Size"
    if isinstance(value, D.dtype):
        return "torch.dtype"
    if t.__flags__ & _HEAP_TYPE or t.__module__ == "builtins":
        return t.__name__   # a class written in Python: its tp_name is its bare name
    return f"{t.__module__}.{t.__name__}"   # a C type's (numpy.ndarray)


def wrong_type(fn, name, pos, expected, value):
    """PyTorch's error for an argument of the wrong type; `pos` None for a keyword-only one."""
    where = "" if pos is None else f" (position {pos})"
    return TypeError(f"{fn}(): argument '{name}'{where} must be {expected}, not "
                     f"{type_name(value)}")


def two_numbers(fn, names, values):
    """The TypeError of an op whose overloads take a number for one of two operands, never both
    (`torch.pow(2, 3)`): no overload matches two numbers."""
    a, b = names
    raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                    f"({', '.join(type_name(v) for v in values)}), but expected one of:\n"
                    f" * (Tensor {a}, Tensor {b})\n * (Number {a}, Tensor {b})\n"
                    f" * (Tensor {a}, Number {b})")


def is_int(value, symint):
    """Whether PyTorch's parser takes `value` for an int (a SymInt if `symint`)."""
    if isinstance(value, (int, np.integer)):
        return value.__class__ is not bool
    if isinstance(value, Tensor):
        if symint:
            return value.numel() == 1 and not value.dtype.is_floating_point \
                and not value.dtype.is_complex and value.dtype is not D.bool
        return value.ndim == 0 and not value.requires_grad and \
            not (value.dtype.is_floating_point or value.dtype.is_complex or value.dtype is D.bool)
    if symint and not isinstance(value, (float, complex, np.bool_)):
        try:
            operator.index(value)
        except TypeError:
            return False
        return True
    return False


def as_int(fn, name, pos, value, symint=False):
    """An `int`/`SymInt` argument that is not a Python int: converted, or refused."""
    if is_int(value, symint):
        return operator.index(value)
    raise wrong_type(fn, name, pos, "SymInt" if symint else "int", value)


def as_symint(fn, name, pos, value):
    return as_int(fn, name, pos, value, symint=True)


def as_tensor_or_symint(fn, name, pos, value):
    """A `SymInt` argument of an op whose `.Tensor` overload ember's kernel also serves
    (`narrow`'s start): a tensor passes to the kernel."""
    return value if isinstance(value, Tensor) else as_int(fn, name, pos, value, symint=True)


def as_int_list(fn, name, pos, value, size=0, varargs=False):
    """An `int[]`/`SymInt[]` argument that is not a tuple or list of Python ints: the list of ints
    PyTorch's parser reads from it, or its TypeError. `size` is N of `int[N]` (0 for `int[]`);
    `varargs` says the method took the list as `*size` (so `value` is the tuple of its
    positional arguments)."""
    if varargs and value:
        first = value[0]
        if len(value) == 1:
            if type(first) in INT_SEQUENCES or not is_int(first, True):
                value = first   # x.view((2, 3)); anything else lone is checked as the list
        elif first.__class__ is not int and not is_int(first, True):
            raise TypeError(f"{fn}() takes 1 positional argument but {len(value)} were given")
    if type(value) not in INT_SEQUENCES and not isinstance(value, (tuple, list)):
        if size and is_int(value, True):
            return [operator.index(value)] * size
        raise wrong_type(fn, name, pos, "tuple of ints", value)
    ints = []
    for i, v in enumerate(value):
        if v.__class__ is not int:
            if i == 0 and not is_int(v, True):
                where = "" if pos is None else f" (position {pos})"
                raise TypeError(f"{fn}(): argument '{name}'{where} must be tuple of ints, but "
                                f"found element of type {type_name(v)} at pos 0")
            if isinstance(v, (float, complex, str)) or v is None:
                raise TypeError(f"{fn}(): argument '{name}' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type_name(v)}\"")
            v = operator.index(v)
        ints.append(v)
    return ints


def varargs_keyword(fn, name, given, keywords):
    """The int list of a method that takes it as varargs (`x.permute(1, 0)`) passed by keyword
    instead (`x.permute(dims=(1, 0))`): as the one positional value it stands for, or the
    parser's error (`given`: the positional values, `keywords`: the other keywords)."""
    if name not in keywords:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "{name}"')
    if given:
        raise TypeError(f"{fn}() got multiple values for argument '{name}'")
    other = next((k for k in keywords if k != name), None)
    if other is not None:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{other}'")
    value = keywords[name]
    if not isinstance(value, (tuple, list)):
        raise wrong_type(fn, name, None, "tuple of ints", value)
    return (value,)


def numpy_scalar(value):
    """A NumPy scalar given for a `Scalar` argument, read as PyTorch's parser reads it: a NumPy
    integer as an int, a complex128 (a Python complex) as a complex, and anything else through
    __float__ -- so a NumPy bool is the number 1.0 or 0.0, and a complex64 keeps only its real
    part (NumPy warns that the imaginary part is discarded)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, complex):
        return complex(value)
    return float(value)


def as_scalar(fn, name, pos, value, expected="Number"):
    """A `Scalar` (or `float`) argument that is not a Python number: converted, or refused."""
    if isinstance(value, (np.number, np.bool_)):
        return numpy_scalar(value)
    if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
        return value.item()
    raise wrong_type(fn, name, pos, expected, value)


def as_float(fn, name, pos, value):
    return as_scalar(fn, name, pos, value, "float")


def as_tensor_or_number(fn, name, pos, value):
    """A `Tensor|Scalar` argument that is neither a Tensor nor a Python number (checked after
    `__torch_function__` had its turn): a Tensor subclass passes, a NumPy number is read as a
    Scalar."""
    if isinstance(value, (np.number, np.bool_)):
        return numpy_scalar(value)
    if isinstance(value, Tensor):
        return value
    raise wrong_type(fn, name, pos, "Tensor", value)


def as_tensor(fn, name, pos, value):
    """A `Tensor?` argument that is neither None nor exactly a Tensor."""
    if isinstance(value, Tensor):
        return value
    raise wrong_type(fn, name, pos, "Tensor", value)


def as_bool(fn, name, pos, value):
    """A `bool` argument that is not a Python bool: PyTorch's parser takes nothing else."""
    raise wrong_type(fn, name, pos, "bool", value)


def as_str(fn, name, pos, value):
    raise wrong_type(fn, name, pos, "str", value)


def as_dtype(fn, name, pos, value):
    """A `ScalarType` argument that is not a dtype: Python's number types name one."""
    if isinstance(value, D.dtype):
        return value
    dtype = _PYTHON_TYPES.get(value) if isinstance(value, type) else None
    if dtype is None:
        raise wrong_type(fn, name, pos, "torch.dtype", value)
    return dtype


# ---- the same checks for bindings written by hand ------------------------------------------------
def int_arg(fn, name, pos, value, symint=False):
    """An `int` argument of a hand-written binding, as the generated ones check it."""
    if value.__class__ is int:
        return value
    return as_int(fn, name, pos, value, symint)


def int_list_arg(fn, name, pos, value, size=0, varargs=False):
    """An `int[]` argument of a hand-written binding (`varargs`: its `*size` tuple)."""
    given = value
    if varargs and len(value) == 1 and value[0].__class__ in INT_SEQUENCES:
        value = value[0]
    if value.__class__ in INT_SEQUENCES:
        for v in value:
            if v.__class__ is not int:
                return as_int_list(fn, name, pos, given, size, varargs)
        return value
    return as_int_list(fn, name, pos, given, size, varargs)


def int_or_int_list_arg(fn, name, pos, value):
    """An argument PyTorch's overloads take as an int or an int list (`squeeze(dim)`,
    `movedim(source)`): an int (or what stands for one), else a list of ints."""
    if value.__class__ is int or is_int(value, False):
        return operator.index(value)
    return list(as_int_list(fn, name, pos, value))


def scalar_arg(fn, name, pos, value):
    """A `Scalar` argument of a hand-written binding, as the generated ones check it."""
    if value.__class__ in NUMBERS:
        return value
    return as_scalar(fn, name, pos, value)
