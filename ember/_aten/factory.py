"""Factory kernels (CPU and Meta): empty, full, arange, linspace, eye, tensors from Python
data, and the random fills. Memory for `empty` comes from the device's allocator."""
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np
from .._core.float8 import as_strided, to_float8
from .._core import complex32 as _c32

from .._core import dtype as D
from .._dispatch.dispatcher import impl, lookup as _op
from .._core.storage import get_allocator, UntypedStorage
from .._core import deterministic
from .._core.tensor import Tensor, _wrap, _wrap_external, _meta
from . import distributions
from .distributions import _fma32, _fma64, _libm
from .elementwise import _scalar_type_name, not_implemented


def _dt(dtype):
    return dtype if dtype is not None else D.get_default_dtype()


def _check_size(size):
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return tuple(size)


# c10's storage_max(): a storage's size in bytes must fit in int64_t (and size_t)
STORAGE_MAX = 2 ** 63 - 1


def check_contiguous_strides(size):
    """c10's check when it gives a tensor the contiguous strides of `size` (the first, the
    largest, is the product of the later sizes, each at least 1) that they fit in int64_t."""
    stride = 1
    for s in size[1:]:
        stride *= max(s, 1)
    if stride > STORAGE_MAX:
        raise RuntimeError("Stride calculation overflowed")


def contiguous_nbytes(size, itemsize, storage_offset=0):
    """The bytes a contiguous tensor of `size` needs from `storage_offset` on, or c10's error
    when they do not fit (computeStorageNbytesContiguous)."""
    nbytes = (math.prod(size) + storage_offset) * itemsize
    if nbytes > STORAGE_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}")
    return nbytes


@impl("empty.memory_format", "CPU")
def empty(size, dtype=None, device=None, requires_grad=False):
    size = _check_size(size)
    check_contiguous_strides(size)
    dt = _dt(dtype)
    buf = get_allocator("cpu").allocate(contiguous_nbytes(size, dt.itemsize))
    t = _wrap(buf.view(D.np_dtype(dt)).reshape(size))
    _fill_uninitialized(t._np, dt)
    return t


def _fill_uninitialized(arr, dt):
    """Deterministic mode's filling of memory a factory leaves uninitialized."""
    value = deterministic.fill_value(dt)
    if value is not None:
        arr[...] = value


@impl("empty.memory_format", "Meta")
def empty_meta(size, dtype=None, device=None, requires_grad=False):
    size = _check_size(size)
    check_contiguous_strides(size)
    contiguous_nbytes(size, _dt(dtype).itemsize)   # (meta storage has a size too)
    return _meta(size, _dt(dtype))


def _check_strides(size, stride):
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")


@impl("empty_strided", "CPU")
def empty_strided(size, stride, dtype=None, device=None):
    _check_size(size)
    _check_strides(size, stride)
    if any(k < 0 for k in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    dt = _dt(dtype)
    n = 1 + sum((s - 1) * k for s, k in zip(size, stride) if s > 0) if all(size) else 0
    if n * dt.itemsize > STORAGE_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    buf = get_allocator("cpu").allocate(n * dt.itemsize).view(D.np_dtype(dt))
    it = dt.itemsize
    _fill_uninitialized(buf, dt)
    arr = as_strided(buf, tuple(size), tuple(k * it for k in stride))
    t = _wrap(arr)
    if not n:  # NumPy forgets the strides of an empty array; PyTorch keeps them
        t._stride_, t._offset_ = tuple(stride), 0
    elif n != arr.size:  # gaps or overlaps: the storage is the whole buffer the strides span
        t._storage = UntypedStorage._adopt(buf, t.device)
    return t


@impl("empty_strided", "Meta")
def empty_strided_meta(size, stride, dtype=None, device=None):
    _check_strides(size, stride)
    return _meta(size, _dt(dtype), stride)


_F32_MAX = float(np.finfo(np.float32).max)
_SCALAR_RANGES = {
    D.float16: (-65504.0, 65504.0, "c10::Half"),
    D.bfloat16: (-3.3895313892515355e38, 3.3895313892515355e38, "c10::BFloat16"),
    D.float32: (-_F32_MAX, _F32_MAX, "float"),
    D.complex64: (-_F32_MAX, _F32_MAX, "c10::complex<float>"),
    D.complex32: (-65504.0, 65504.0, "c10::complex<c10::Half>"),
    D.int8: (-128, 127, "int8_t"),
    D.uint8: (-255, 255, "uint8_t"),  # negative values wrap around (two's complement)
    D.int16: (-2 ** 15, 2 ** 15 - 1, "int16_t"),
    D.int32: (-2 ** 31, 2 ** 31 - 1, "int"),
    D.int64: (-2 ** 63, 2 ** 63 - 1, "int64_t"),
    # an unsigned type takes a negative int down to -max (it wraps); a float must be >= 0
    D.uint16: (-(2 ** 16 - 1), 2 ** 16 - 1, "uint16_t"),
    D.uint32: (-(2 ** 32 - 1), 2 ** 32 - 1, "uint32_t"),
    D.uint64: (-2 ** 63, 2 ** 64 - 1, "uint64_t"),
}


def wrapped_scalar(value, dt):
    """A Python number made a tensor of dtype `dt` (`scalar_tensor`, a number in `where`),
    float16/bfloat16 as _reduced_float makes them; other dtypes checked as ever."""
    if dt is D.float16 or dt is D.bfloat16:
        return _reduced_float(value, dt)
    value = checked_scalar(value, dt)
    return value if dt is D.complex32 else np.array(value).astype(D.np_dtype(dt))


def _reduced_float(value, dt):
    """A number as a 0-d float16/bfloat16 array as PyTorch converts one for scalar_tensor and
    where: with no overflow check, through float -- a double rounds twice, and one beyond
    float's range is inf (a complex still needs a zero imaginary part). (fill_ checks, except
    -- PyTorch's quirk, not followed -- on a one-element tensor.)"""
    if isinstance(value, Tensor) or type(value) not in (float, int, complex):
        return np.array(checked_scalar(value, dt)).astype(D.np_dtype(dt))
    if type(value) is complex:
        value = _checked_number(value, D.float32)
    return _c32.through_float(float(value)).astype(D.np_dtype(dt))


def checked_scalar(value, dt):
    """A Python number as a value of dtype `dt`, with PyTorch's overflow check (c10's
    checked_convert): out-of-range values raise instead of wrapping, infinities may become
    floats, and a negative int wraps into an unsigned dtype. A complex32 value is a 0-d
    array of ember's complex32 twin (NumPy would store a number in it wrongly)."""
    if dt is D.complex32 and not isinstance(value, Tensor):
        return _c32.narrow(_checked_number(value, dt))
    return _checked_number(value, dt)


def _checked_number(value, dt):
    if type(value) is complex and not dt.is_complex and dt is not D.bool:
        if value.imag != 0:  # c10 counts a lost imaginary part as an overflow
            name = _SCALAR_RANGES[dt][2] if dt in _SCALAR_RANGES else "double"
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        value = value.real
    bounds = _SCALAR_RANGES.get(dt)
    if bounds is None:
        return value if dt._kind != "float8" else _float8_scalar(value, dt)
    kind = type(value)
    if (kind is float or kind is int) and bounds[0] <= value <= bounds[1]:
        if value >= 0 or dt.is_signed:
            return value
        if kind is int:  # a negative int wraps into an unsigned type (two's complement)
            return value & ((1 << 8 * dt.itemsize) - 1)
        # a negative float is below an unsigned type's range: the overflow below
    if kind is bool or isinstance(value, Tensor):
        return value
    lo, hi, name = bounds
    if not dt.is_signed:
        lo = 0  # (negative ints wrapped above)
    floating = dt.is_floating_point or dt.is_complex
    for v in (value.real, value.imag) if isinstance(value, complex) and dt.is_complex else \
            (value.real,):
        if not (lo <= v <= hi or floating and not math.isfinite(v)):
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value


def _fill_dtype(value, dtype):
    if dtype is not None:
        return dtype
    return D.scalar_dtype(value.item() if isinstance(value, Tensor) else value)


def _float8_scalar(value, dt):
    """A Python number as a 0-d float8 array: an int beyond the format's finite range overflows
    (c10's checked conversion), a float rounds as converting a tensor does (float8.py)."""
    if isinstance(value, Tensor):
        return value
    if type(value) is int and abs(value) > _float8_max(dt):
        raise RuntimeError(f"value cannot be converted to type c10::{D.scalar_type_name(dt)} "
                           "without overflow")
    return to_float8(np.asarray(float(value)), dt)


def _float8_max(dt):
    from .._core.type_info import finfo
    return finfo(dt).max


@impl("full", "CPU")
def full(size, fill_value, dtype=None, device=None):
    dt = _fill_dtype(fill_value, dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _wrap(np.full(_check_size(size), fill_scalar(fill_value, dt), dtype=D.np_dtype(dt)))


def fill_scalar(fill_value, dt):
    """fill_'s value (full's, full_like's) as a value of `dt` (see checked_scalar)."""
    if dt is D.complex32:  # PyTorch checks the value as complex<float>, then rounds it
        return _c32.narrow(checked_scalar(fill_value, D.complex64))
    value = checked_scalar(fill_value, dt)
    if (dt is D.float16 or dt is D.bfloat16) and type(value) is float:
        return _c32.through_float(value)
    return value


@impl("full", "Meta")
def full_meta(size, fill_value, dtype=None, device=None):
    dt = _fill_dtype(fill_value, dtype)
    fill_scalar(fill_value, dt)
    return _meta(_check_size(size), dt)


def _arange_dtype(start, end, step, dtype):
    if dtype is not None:
        return dtype
    if all(isinstance(x, (int, np.integer)) or (isinstance(x, Tensor) and not
           x.dtype.is_floating_point) for x in (start, end, step)):
        return D.int64
    return D.get_default_dtype()


def _arange_len(start, end, step, dt):
    """PyTorch's arange size: ceil((end - start) / step) in double, except that an int64
    result truncates all three to integers first."""
    for x in (start, end, step):
        if isinstance(x, complex):
            raise RuntimeError("value cannot be converted to type double without overflow")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    for x in (start, end):
        if not math.isfinite(x):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dt is D.int64:
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
        sign = 1 if step > 0 else -1
        return max(0, _div_toward_zero(end - start + step - sign, step))
    size = math.ceil((end - start) / step)
    if size > 2 ** 63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    return max(0, size)


def _div_toward_zero(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


# Note [arange, bit for bit]
# PyTorch's CPU arange kernel is compiled for AVX2 and runs through cpu_serial_kernel_vec: the
# output is filled two 32-byte vectors at a time, and each vector is built from its first
# index `b` as `first(b) + k * step` (k = 0 .. width - 1) with first(b) = start + step * b
# rounded to the output dtype, while the elements after the last whole pair of vectors are
# computed one at a time as first(i). So element i's rounding depends on where its vector
# starts. It computes in the accumulation type (double for float and double, float for half
# and bfloat16), and the compiler fuses each `a + b * c` into one FMA (rounded once). We
# replay exactly that. Past 32768 elements PyTorch splits the work among threads, each
# starting its own vectors; this replays a single thread.
_VECTOR_BYTES = 32


def _vectorized_fill(n, itemsize, first, vector):
    """Values of a cpu_serial_kernel_vec fill: vector(b, k) for element b + k of a vector
    starting at index b, first(i) for the elements that remain after whole pairs."""
    width = _VECTOR_BYTES // itemsize
    paired = n - n % (2 * width)
    i = np.arange(n, dtype=np.int64)
    k = i[:paired] % width
    return np.concatenate([vector(i[:paired] - k, k), first(i[paired:])])


def _exact_in(out, start, step, n):
    """Whether start + step * i is an integer that float32/float64 `out` holds exactly for
    every i < n (then every way of computing it gives the same value)."""
    limit = {np.float32: 2 ** 24, np.float64: 2 ** 53}.get(out.type)
    return limit is not None and float(start).is_integer() and float(step).is_integer() and \
        max(abs(start), abs(start + step * n)) <= limit


def _fma(acc):
    return _fma64 if acc == np.float64 else _fma32


@impl("arange.start_step", "CPU")
def arange(start, end, step=1, dtype=None, device=None):
    start, end, step = _num(start), _num(end), _num(step)
    if any(isinstance(x, complex) for x in (start, end, step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    dt = _arange_dtype(start, end, step, dtype)
    if dt.is_complex or dt is D.bool:
        raise not_implemented("arange_cpu", dt)
    n = _arange_len(start, end, step, dt)
    if not dt.is_floating_point:  # integers: start + step * i in int64, arguments truncated
        values = int(start) + np.arange(n, dtype=np.int64) * int(step)
        return _wrap(values.astype(dt._np))
    out = D.np_dtype(dt)
    if _exact_in(out, start, step, n):  # every value is exact, so no rounding to replay
        return _wrap((start + step * np.arange(n, dtype=np.float64)).astype(out))
    acc = np.float64 if dt in (D.float32, D.float64) else np.float32
    fma = _fma(acc)
    start_a, step_a = acc(start), acc(step)

    def first(i):
        return fma(step_a, i.astype(acc), start_a).astype(out)

    def vector(b, k):
        return fma(k.astype(acc), step_a, first(b).astype(acc)).astype(out)
    with np.errstate(over="ignore"):  # values past a half's range become inf, silently
        return _wrap(_vectorized_fill(n, dt.itemsize, first, vector))


@impl("arange.start_step", "Meta")
def arange_meta(start, end, step=1, dtype=None, device=None):
    start, end, step = _num(start), _num(end), _num(step)
    dt = _arange_dtype(start, end, step, dtype)
    return _meta((_arange_len(start, end, step, dt),), dt)


@impl("linspace", "CPU")
def linspace(start, end, steps, dtype=None, device=None):
    """PyTorch's CPU linspace, element by element: the first half counts up from start, the
    second half down from end, each value one FMA (or, for half and bfloat16, rounded after
    every operation); integer outputs step in double and truncate."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _num(start), _num(end)
    dt = linspace_dtype(start, end, dtype, "torch.linspace()")
    _check_not_bool(dt, "linspace")
    start, end = checked_scalar(start, dt), checked_scalar(end, dt)
    out = D.np_dtype(dt)
    if steps <= 1:
        return _wrap(np.full((steps,), start, dtype=out))
    i = np.arange(steps, dtype=np.int64)
    up, down = i < steps // 2, steps - 1 - i
    if dt in (D.float32, D.float64) or not dt.is_floating_point and not dt.is_complex:
        t = out if dt.is_floating_point else np.dtype(np.float64)
        if not dt.is_floating_point:
            start, end = int(start), int(end)
        start, end = t.type(start), t.type(end)
        step = (end - start) / t.type(steps - 1)
        fma = _fma(t)
        values = np.where(up, fma(step, i.astype(t), start), fma(-step, down.astype(t), end))
        return _wrap(values.astype(out) if dt.is_floating_point else
                     np.trunc(values).astype(out))
    start, end = out.type(start), out.type(end)
    step = (end - start) / out.type(steps - 1)
    return _wrap(np.where(up, start + step * i.astype(out), end - step * down.astype(out))
                 .astype(out))


def _kind(x):
    """A number of x's kind (complex or not), without reading x if it is a (meta) tensor."""
    if isinstance(x, Tensor):
        return 0j if x.dtype.is_complex else 0.0
    return x


@impl("linspace", "Meta")
def linspace_meta(start, end, steps, dtype=None, device=None):
    return _meta((steps,), linspace_dtype(_kind(start), _kind(end), dtype, "torch.linspace()"))


def linspace_dtype(start, end, dtype, fn_name):
    """linspace's and logspace's dtype: a complex start or end asks for the default complex
    dtype, and refuses a real one passed."""
    if not (isinstance(start, complex) or isinstance(end, complex)):
        return _dt(dtype)
    default = D.complex128 if D.get_default_dtype() is D.float64 else D.complex64
    if dtype is None:
        return default
    if not dtype.is_complex:
        raise RuntimeError(f"{fn_name}: inferred dtype {D.c_type_name(default)} can't be safely "
                           f"cast to passed dtype {_scalar_type_name(dtype)}")
    return dtype


def _check_not_bool(dt, name):
    if dt is D.bool or dt is D.complex32:
        raise not_implemented(f"{name}_cpu", dt)


@impl("eye.m", "CPU")
def eye(n, m, dtype=None, device=None):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    if _dt(dtype) is D.complex32:
        raise not_implemented("eye", D.complex32)
    return _wrap(np.eye(n, m, dtype=D.np_dtype(_dt(dtype))))


@impl("eye.m", "Meta")
def eye_meta(n, m, dtype=None, device=None):
    return _meta((n, m), _dt(dtype))


@impl("scalar_tensor", "CPU")
def scalar_tensor(s, dtype=None, device=None):
    return _wrap(wrapped_scalar(s, _dt(dtype)))


@impl("scalar_tensor", "Meta")
def scalar_tensor_meta(s, dtype=None, device=None):
    return _meta((), _dt(dtype))


# ---- tensors from Python data ------------------------------------------------------------------
def _scan(data):
    """(the inferred dtype, whether a tensor is among the leaves)."""
    if type(data) is list:  # the common flat list of Python ints or floats in one look
        kinds = set(map(type, data))
        if kinds == {int}:
            return D.int64, False
        if kinds == {float}:
            return D.get_default_dtype(), False
    first = data
    while isinstance(first, (list, tuple)) and first:  # PyTorch sizes data by first elements:
        _not_self_referential(first)                    # a str there is one more dimension
        first = first[0]
        if isinstance(first, str):
            raise ValueError("too many dimensions 'str'")
    result = None
    has_tensor = False
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple, range)) and x:
            _not_self_referential(x)
            stack.extend(x)
            continue
        has_tensor = has_tensor or isinstance(x, Tensor)
        dt = _leaf_dtype(x)
        result = dt if result is None else D.promote_types(result, dt)
    return result, has_tensor


def _is_other_sequence(data):
    """A Python object that is a sequence to PyTorch's binding (it has __len__ and
    __getitem__) without being a list, tuple, array, tensor, string or mapping."""
    return (hasattr(type(data), "__getitem__") and hasattr(type(data), "__len__")
            and not isinstance(data, (list, tuple, range, str, bytes, dict, np.ndarray, Tensor,
                                      UntypedStorage))
            and not isinstance(getattr(data, "_untyped_storage", None), UntypedStorage))


def _sequence_items(seq):
    """The items of such a sequence, read by index as PyTorch reads them to size it."""
    try:
        return [seq[i] for i in range(len(seq))]
    except Exception:
        raise ValueError(f"could not determine the shape of object type "
                         f"'{type(seq).__name__}'") from None


def _not_self_referential(seq):
    """A list that holds itself has no shape (PyTorch checks each list's own items)."""
    if any(item is seq for item in seq):
        raise TypeError("new(): self-referential lists are incompatible")


def _leaf_dtype(x):
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):  # before float: np.float64 is a float
        return D.from_numpy_dtype(x.dtype)
    if isinstance(x, bool):
        return D.bool
    if isinstance(x, int):
        return D.int64
    default = D.get_default_dtype()
    if isinstance(x, float) or isinstance(x, (list, tuple, range)):
        return default
    if isinstance(x, complex):
        return D.complex128 if default is D.float64 else D.complex64
    if isinstance(x, str):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _to_nested_numpy(data, integral):
    """Nested lists with the tensors in them replaced by their values: inside a list a tensor
    is a scalar, so it must have one element (PyTorch reads it as a number of the result's
    kind: with __index__ for an integral result, else with __float__/__complex__)."""
    if isinstance(data, (list, tuple)):
        return [_to_nested_numpy(x, integral) for x in data]
    if isinstance(data, Tensor):
        if data.numel() != 1:
            if integral:
                raise TypeError("only integer tensors of a single element can be converted to "
                                "an index")
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    return data


def _check_nesting(data):
    """PyTorch's errors for ragged or mixed nesting (NumPy would build an object array); a
    NumPy array inside the lists is a sequence like a list."""
    level = [data]
    dim = 0
    while level and _is_sequence(level[0]):
        n = len(level[0])
        for x in level:
            if not _is_sequence(x):
                raise TypeError("not a sequence")
            if len(x) != n:
                raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(x)})")
        level = [y for x in level for y in x]
        dim += 1
    for x in level:
        if _is_sequence(x):
            raise ValueError(f"expected sequence of length 0 at dim {dim} (got {len(x)})")


def _is_sequence(x):
    return isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.ndim > 0)


def _check_integral_range(src, dt):
    """torch.tensor(list, dtype=<integral>): each Python number is converted with c10's
    checked_convert, so one out of range raises (a negative int still wraps into uint8; a
    float must lie in the dtype's range, NaN and infinities never do)."""
    bounds = _SCALAR_RANGES.get(dt)
    if bounds is None or not src.size or src.dtype.kind not in "iuf":
        return
    lo, hi, _ = bounds
    if src.dtype.kind == "f":
        lo = 0 if dt is D.uint8 or dt in D.barebones_unsigned else lo
        bad = ~((src >= lo) & (src <= hi))  # (NaN compares false)
    else:
        bad = (src < lo) | (src > hi)
    if bad.any():  # (this path names the dtype as torch prints it: int32, not int)
        raise RuntimeError(f"value cannot be converted to type {str(dt)[6:]} without overflow")


def _check_uint64_numbers(raw):
    """torch.tensor(list, dtype=torch.uint64) reads each number as an unsigned 64-bit int:
    a float is a TypeError, a negative or too large int an OverflowError."""
    for x in np.array(raw, dtype=object).ravel():
        if isinstance(x, (float, np.floating)):
            raise TypeError("an integer is required")
        if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
            if x < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if x > 2 ** 64 - 1:
                raise OverflowError("int too big to convert")


def _legacy_name(dtype):
    """The scalar type's name in PyTorch's messages (Float, Long, ...)."""
    return D.LEGACY_TYPE_NAMES[dtype][:-len("Tensor")]


def _storage_elements(storage, dtype):
    """torch.tensor(storage): a TypedStorage's elements (dtype, if given, must be its own), or an
    UntypedStorage's bytes read as `dtype` (int64 if none, as PyTorch's binding reads them)."""
    from .._core.storage import UntypedStorage
    if not isinstance(storage, UntypedStorage):   # a TypedStorage
        if dtype is not None and dtype is not storage.dtype:
            raise RuntimeError(f"Expected a Storage of type {_legacy_name(dtype)} or an "
                               f"UntypedStorage, but got {_legacy_name(storage.dtype)}")
        dtype, storage = storage.dtype, storage._untyped_storage
    dtype = D.int64 if dtype is None else dtype
    if storage._array is None:
        raise NotImplementedError("torch.tensor() of a meta storage is not supported by ember")
    raw = storage._bytes()
    return raw[:raw.size // dtype.itemsize * dtype.itemsize].view(D.np_dtype(dtype)).copy(), dtype


def check_numpy_array(ndarray):
    """The dtype of a NumPy array PyTorch can read as a tensor (from_numpy, torch.tensor,
    as_tensor): a supported dtype in native byte order, strides that are non-negative
    multiples of the element size."""
    dt = D.from_numpy_dtype(ndarray.dtype)
    strides = ndarray.strides
    if any(s < 0 for s in strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if any(s % ndarray.itemsize for s in strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    return dt


@impl("_tensor_from_data", "CPU")
def tensor_from_data(data, dtype=None, device=None):
    if isinstance(data, memoryview):   # a sequence to PyTorch, read item by item (not as a buffer)
        if data.ndim != 1:
            raise ValueError("could not determine the shape of object type 'memoryview'")
        data = data.tolist()
    elif _is_other_sequence(data):
        data = _sequence_items(data)
    if isinstance(data, UntypedStorage) or isinstance(getattr(data, "_untyped_storage", None),
                                                       UntypedStorage):   # a TypedStorage too
        arr, dt = _storage_elements(data, dtype)
        return _wrap_external(arr, dt)
    if isinstance(data, np.ndarray):
        check_numpy_array(data)
        if dtype is None:
            return _wrap(np.array(data, copy=True))
    if isinstance(data, Tensor):
        raw, inferred, has_tensor = data._np, data.dtype, False
    else:
        inferred, has_tensor = _scan(data)
        raw = data
    dt = dtype if dtype is not None else inferred
    if has_tensor:
        raw = _to_nested_numpy(data, not (dt.is_floating_point or dt.is_complex or dt is D.bool))
    if inferred.is_complex and not (dt.is_complex or dt is D.bool) \
            and not isinstance(data, (np.ndarray, Tensor)):
        raise TypeError("must be real number, not complex" if dt.is_floating_point else
                        "'complex' object cannot be interpreted as an integer")
    if isinstance(data, list) and data and isinstance(data[0], np.ndarray):
        warnings.warn("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                      "consider converting the list to a single numpy.ndarray with numpy.array() "
                      "before converting to a tensor.", UserWarning, stacklevel=_user_stacklevel())
    nd = D.np_dtype(dt)
    unsigned64 = dt is D.uint64 and not isinstance(data, (np.ndarray, Tensor))
    if unsigned64:
        _check_uint64_numbers(raw)
    try:
        if dt._kind == "float8":  # through float32, rounded as PyTorch (float8.py)
            arr = to_float8(np.array(raw, dtype=np.float32), dt)
        elif dt is D.complex32:  # (complex32.py)
            arr = _c32.narrow(raw if getattr(raw, "dtype", None) == _c32.NP_COMPLEX32 else
                              np.array(raw, dtype=np.complex128))
        elif dt is D.float16:
            arr = _c32.through_float(np.array(raw, dtype=np.float64)).astype(np.float16)
        elif dt.is_floating_point or dt.is_complex or dt is D.bool:
            arr = np.array(raw, dtype=nd)
        else:  # through NumPy's own dtype first, so floats truncate toward zero
            src = np.array(raw, dtype=np.uint64 if unsigned64 else None)
            if not isinstance(data, (np.ndarray, Tensor)):
                _check_integral_range(src, dt)
            with np.errstate(invalid="ignore", over="ignore"):
                arr = src.astype(nd)
    except ValueError:
        _check_nesting(raw)  # raises PyTorch's error for ragged or mixed nesting
        raise
    except OverflowError:  # a Python int beyond int64, read as PyTorch's binding reads it
        raise ValueError("Overflow when unpacking long long") from None
    return _wrap(arr if arr.base is None else arr.copy())


@impl("_tensor_from_data", "Meta")
def tensor_from_data_meta(data, dtype=None, device=None):
    t = tensor_from_data(data, dtype)
    return _meta(t._size, t.dtype)


# ---- random fills (streams bit-identical to PyTorch's CPU generator) ----------------------------
def _gen(generator):
    from .._core import generator as _generator
    return generator if generator is not None else _generator.default_generator


def _gen_impl(g):
    return getattr(g, "_impl", g)


def _in_memory_order(a):
    """A view of `a` whose C order is the order of its elements in memory. PyTorch's random
    fills walk a tensor that way (TensorIterator sorts dims by stride), so a transposed tensor
    receives the stream in the same memory positions as a contiguous one."""
    if a.flags.c_contiguous:
        return a
    return np.transpose(a, sorted(range(a.ndim), key=lambda d: -a.strides[d]))


@impl("uniform_", "CPU")
def uniform_(self, low=0.0, high=1.0, generator=None):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for '
                                  f"'{_scalar_type_name(self.dtype)}'")
    g = _gen_impl(_gen(generator))
    a = _in_memory_order(self._np)
    a[...] = distributions.uniform(g, a.shape, a.dtype, low, high)
    return self


@impl("normal_", "CPU")
def normal_(self, mean=0.0, std=1.0, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if self.numel() == 0:   # PyTorch returns before its dtype dispatch: randn(0, dtype=int8) works
        return self
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for '
                                  f"'{_scalar_type_name(self.dtype)}'")
    g = _gen_impl(_gen(generator))
    a = _in_memory_order(self._np)
    a[...] = distributions.normal(g, a.shape, a.dtype, mean, std, contiguous=a is self._np)
    return self


@impl("random_.from", "CPU")
def random_(self, low, high=None, generator=None):
    """random_(from, to) draws from [from, to); random_(from, None) up to the dtype's largest
    value (the generator spells that high=None)."""
    g = _gen_impl(_gen(generator))
    if high is not None and low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    a = _in_memory_order(self._np)
    a[...] = distributions.random_int(g, a.shape, a.dtype, low, high)
    return self


@impl("random_", "CPU")
def random_unbounded_(self, generator=None):
    """random_() with no bounds: [0, 2**mantissa] for floats, [0, max] for integers."""
    g = _gen_impl(_gen(generator))
    a = _in_memory_order(self._np)
    a[...] = distributions.random(g, a.shape, a.dtype)
    return self


@impl("bernoulli_.float", "CPU")
def bernoulli_(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    g = _gen_impl(_gen(generator))
    a = _in_memory_order(self._np)
    a[...] = distributions.bernoulli(g, p, a.shape, a.dtype)
    return self


@impl("bernoulli", "CPU")
def bernoulli(self, generator=None):
    g = _gen_impl(_gen(generator))
    return _wrap(np.asarray(distributions.bernoulli(g, self._np, self._size, self._np.dtype)))


@impl("randperm", "CPU")
def randperm(n, generator=None, dtype=None, device=None):
    if n < 0:  # (PyTorch's binding makes the result with empty(n) first)
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype = dtype or D.int64
    if dtype is D.bool or dtype.is_complex:
        raise NotImplementedError(f"\"randperm\" not implemented for '{_scalar_type_name(dtype)}'")
    checked_scalar(n - 1 if n > 0 else n, dtype)
    limit = _RANDPERM_LIMITS.get(dtype)
    if limit is not None and n > limit[0]:
        raise RuntimeError(f"n cannot be greater than {limit[1]} for {_scalar_type_name(dtype)} "
                           f"type.")
    g = _gen_impl(_gen(generator))
    return _wrap(np.asarray(distributions.randperm(g, n, D.np_dtype(dtype))))


# the largest n whose permutation a floating dtype holds exactly, and how PyTorch names it
_RANDPERM_LIMITS = {D.float16: (2 ** 11 + 1, "2049"), D.float32: (2 ** 24 + 1, "2^24+1"),
                    D.float64: (2 ** 53 + 1, "2^53+1")}


# ---- more distributions (issue 3, random) ------------------------------------------------------
# cauchy_'s message names the C++ type of the kernel it would have run
_CPP_TYPE_NAMES = {D.int64: "long int", D.int32: "int", D.int16: "short int",
                   D.int8: "signed char", D.uint8: "unsigned char", D.bool: "bool",
                   D.complex64: "c10::complex<float>", D.complex128: "c10::complex<double>"}


def _check_floating(self, name, type_names=None):
    if not self.dtype.is_floating_point:
        what = (type_names or {}).get(self.dtype) or _scalar_type_name(self.dtype)
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {what}")


@impl("exponential_", "CPU")
def exponential_(self, lambd=1.0, generator=None):
    _check_floating(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    g = _gen_impl(_gen(generator))
    a = _in_memory_order(self._np)
    a[...] = distributions.exponential(g, a.shape, a.dtype, lambd)
    return self


def _uniform_doubles(self, generator):
    """One 53-bit uniform double per element, in memory order (what torch's geometric_ and
    cauchy_ transform), and the memory-order view to write the result to."""
    g = _gen_impl(_gen(generator))
    a = _in_memory_order(self._np)
    with g._lock:
        u = distributions.uniform_real_f64(g, a.size).reshape(a.shape)
    return a, u


@impl("geometric_", "CPU")
def geometric_(self, p, generator=None):
    """The number of Bernoulli(p) trials to the first success: ceil(log(u) / log1p(-p))."""
    if self.dtype is D.bool:
        raise not_implemented("geometric_cpu", self.dtype)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    a, u = _uniform_doubles(self, generator)
    with np.errstate(divide="ignore"):
        a[...] = np.ceil(np.log(u) / np.log1p(-p))
    return self


@impl("cauchy_", "CPU")
def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    _check_floating(self, "Cauchy", _CPP_TYPE_NAMES)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    a, u = _uniform_doubles(self, generator)
    a[...] = median + sigma * np.tan(np.pi * (u - 0.5))
    return self


@impl("log_normal_", "CPU")
def log_normal_(self, mean=1.0, std=2.0, generator=None):
    if not self.dtype.is_floating_point:
        raise not_implemented("log_normal_cpu", self.dtype)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    g = _gen_impl(_gen(generator))
    a = _in_memory_order(self._np)
    # torch draws the normals element by element (Box-Muller) and takes libm's exp in double
    normals = distributions.normal(g, a.shape, np.float64, mean, std, contiguous=False)
    a[...] = _libm(math.exp, normals)
    return self


@impl("multinomial", "CPU")
def multinomial(self, num_samples, replacement=False, generator=None):
    if self.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_scalar_type_name(self.dtype)}")
    if self._size[-1] == 0:
        raise RuntimeError("multinomial: prob_dist must have at least one category")
    if self._size[-1] > 2 ** 24:   # beyond float32's consecutive integers
        raise RuntimeError("number of categories cannot exceed 2^24")
    g = _gen_impl(_gen(generator))
    rows = self._np.reshape(-1, self._size[-1])
    out = distributions.multinomial(g, rows, num_samples, replacement)
    return _wrap(out.reshape(self._size[:-1] + (num_samples,)))


impl("multinomial", "Meta")(lambda self, num_samples, replacement=False, generator=None:
                            _meta(self._size[:-1] + (num_samples,), D.int64))
for _n in ("random_", "exponential_", "geometric_", "cauchy_", "log_normal_"):
    impl(_n, "Meta")(lambda self, *rest: self)
for _n in ("uniform_", "normal_", "random_.from", "bernoulli_.float"):
    impl(_n, "Meta")(lambda self, *rest: self)
impl("bernoulli", "Meta")(lambda self, generator=None: _meta(self._size, self.dtype))
impl("randperm", "Meta")(lambda n, generator=None, dtype=None, device=None:
                         _meta((n,), dtype or D.int64))


# ---- poisson (issue 3, remaining ops) -------------------------------------------------------
def _sample_poisson(lam, uniform):
    """One draw of PyTorch's CPU sample_poisson, reading doubles from `uniform()`: the
    transformed rejection method (Hoermann 1993) for rates >= 10, else multiplying uniforms
    until the product drops below exp(-rate). Same uniforms, same libm: the same integers."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uniform() - 0.5
            v = uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= \
                    -lam + k * loglam - math.lgamma(k + 1.0):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= uniform()
        if prod > enlam:
            x += 1
        else:
            return x


@impl("poisson", "CPU")
def poisson(self, generator=None):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for "
                                  f"'{_scalar_type_name(self.dtype)}'")
    rates = self._np.astype(np.float64).reshape(-1)  # row-major: PyTorch's serial loop order
    if rates.size and not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = _gen_impl(_gen(generator))
    with g._lock:
        def uniform():
            return float(distributions.uniform_real_f64(g, 1)[0])
        out = [_sample_poisson(float(lam), uniform) for lam in rates]
    return _wrap(np.asarray(out, dtype=np.float64).astype(self._np.dtype).reshape(self._size))


@impl("poisson", "Meta")
def poisson_meta(self, generator=None):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for "
                                  f"'{_scalar_type_name(self.dtype)}'")
    return _meta(self._size, self.dtype, device=self._device)


@impl("_new_zeros_with_same_feature_meta", "CompositeImplicitAutograd")
def new_zeros_with_same_feature_meta(self, other, self_num_batch_dims=0):
    """Zeros laid out in memory as `other` is (its sizes, strides, storage offset and storage
    size), behind `self`'s first `self_num_batch_dims` dims, each batch slice a whole copy of
    other's storage: what forward AD gives a primal as its tangent when the tangent passed in
    is laid out otherwise, so that any view of the primal is the same view of the tangent."""
    storage_numel = other.untyped_storage().nbytes() // other.element_size()
    batch = list(self.shape[:self_num_batch_dims])
    strides = []
    numel = storage_numel
    for n in reversed(batch):
        strides.insert(0, numel)
        numel *= n
    zeros = _op("zeros")([numel], dtype=other.dtype, device=other.device)
    return _op("as_strided")(zeros, batch + list(other.shape), strides + list(other.stride()),
                             other.storage_offset())
