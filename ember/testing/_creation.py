"""torch.testing.make_tensor: a random tensor of a given shape and dtype for tests.

Values are uniform in [low, high): default [-9, 9) for floating and complex dtypes (the 8-bit
floats drawn in float32 and rounded), [-9, 10) for integers (clamped to what the dtype holds),
{False, True} for bool. The draws are the
ones PyTorch makes (`uniform_` for floats, `randint` for integers), so the same seed gives
the same tensor in both. `noncontiguous=True` returns a strided view into a buffer twice as
wide; `exclude_zero=True` replaces zeros (by 1, or the dtype's smallest normal number).
"""
import collections.abc
import functools
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import ember

__all__ = ["make_tensor"]

_INTEGRAL_TYPES = [ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64, ember.uint16,
                   ember.uint32, ember.uint64]
_FLOATING_TYPES = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
_COMPLEX_TYPES = [ember.complex32, ember.complex64, ember.complex128]
_FLOATING_8BIT_TYPES = [ember.float8_e4m3fn, ember.float8_e5m2, ember.float8_e4m3fnuz,
                        ember.float8_e5m2fnuz]
_BOOLEAN_OR_INTEGRAL_TYPES = [ember.bool, *_INTEGRAL_TYPES]
_FLOATING_OR_COMPLEX_TYPES = [*_FLOATING_TYPES, *_COMPLEX_TYPES]


def _uniform_random_(t, low, high):
    # an interval wider than the dtype's max would overflow uniform_: draw half of it, double
    if high - low >= ember.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` and `dtype` on `device` filled with uniform random values.

    Args:
        shape: ints, or one sequence of ints.
        low, high: the half-open interval [low, high) of the values (clamped to the dtype).
        requires_grad: for floating and complex dtypes only.
        noncontiguous: return a non-contiguous view (when the tensor has 2+ elements).
        exclude_zero: replace zeros by 1 (integers) or the smallest normal number (floats).
        memory_format: clone into this memory format (exclusive with noncontiguous).
    """
    def modify_low_high(low, high, *, lowest_inclusive, highest_exclusive, default_low,
                        default_high):
        low = default_low if low is None else low
        high = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={low!r} and high={high!r}")
        elif low == high and dtype in _FLOATING_OR_COMPLEX_TYPES:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                          "complex types is deprecated since 2.1 and will be removed in 2.3. "
                          "Use `torch.full(...)` instead.", FutureWarning, stacklevel=_user_stacklevel())
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest_inclusive or low >= highest_exclusive:
            raise ValueError(f"The value interval specified by `low` and `high` is [{low}, "
                             f"{high}), but {dtype} only supports [{lowest_inclusive}, "
                             f"{highest_exclusive})")
        low = min(max(low, lowest_inclusive), highest_exclusive)
        high = min(max(high, lowest_inclusive), highest_exclusive)
        if dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous!r} and "
                         f"memory_format={memory_format!r}")
    if requires_grad and dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype!r}")

    noncontiguous = noncontiguous and functools.reduce(lambda x, y: x * y, shape, 1) > 1
    if noncontiguous:  # draw twice the last dim, keep every other element
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is ember.bool:
        low, high = modify_low_high(low, high, lowest_inclusive=0, highest_exclusive=2,
                                    default_low=0, default_high=2)
        result = ember.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        info = ember.iinfo(dtype)
        low, high = modify_low_high(
            low, high, lowest_inclusive=info.min,
            highest_exclusive=info.max + (1 if dtype is not ember.int64 else 0),
            default_low=-9, default_high=10)
        result = ember.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX_TYPES:
        info = ember.finfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=info.min,
                                    highest_exclusive=info.max, default_low=-9, default_high=9)
        result = ember.empty(shape, device=device, dtype=dtype)
        _uniform_random_(ember.view_as_real(result) if dtype in _COMPLEX_TYPES else result,
                         low, high)
    elif dtype in _FLOATING_8BIT_TYPES:  # drawn in float32, then rounded to the 8-bit type
        info = ember.finfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=info.min,
                                    highest_exclusive=info.max, default_low=-9, default_high=9)
        result = ember.empty(shape, device=device, dtype=ember.float32)
        result = _uniform_random_(result, low, high).to(dtype)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOLEAN_OR_INTEGRAL_TYPES else ember.finfo(dtype).tiny
    if dtype in _FLOATING_OR_COMPLEX_TYPES:
        result.requires_grad = requires_grad
    return result
