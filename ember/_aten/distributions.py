"""The CPU distribution kernels: what PyTorch's random ops make of the generator's 32-bit stream.

In PyTorch terms this is ``DistributionsHelper.h`` (``uniform_real_distribution``,
``normal_distribution``) and the CPU kernels of ``DistributionTemplates.h`` (``uniform_``,
``normal_``, ``random_``, ``bernoulli_``, ``exponential_``, ``randperm``, ``multinomial``).
Each function takes the generator (the engine, ``ember/_core/generator.py``), a shape and a NumPy
dtype, and returns a new C-contiguous array, consuming the stream exactly as the matching
PyTorch 2.x CPU kernel does for a contiguous tensor of that shape: seeding both libraries alike
gives bit-identical arrays and leaves both streams at the same position.

Floating-point details that bit-exactness depends on.  They follow torch's x86-64 kernels
compiled for AVX2/AVX512, which any recent x86-64 CPU runs; torch forced to its DEFAULT
capability, or built for another architecture, rounds some float results differently.

* PyTorch's CPU kernels are compiled with FMA contraction, so ``x * a + b`` is one fused
  multiply-add there; ``_fma32``/``_fma64`` reproduce that rounding.
* ``normal_`` on float32/float16/bfloat16 tensors of 16 or more contiguous elements uses the
  AVX ``log256_ps``/``sincos256_ps`` routines of ``avx_mathfun.h`` (Cephes polynomials, zlib
  licence); ``_log_ps`` and ``_sincos_ps`` evaluate the same polynomials in the same order, with
  the multiply-adds GCC fuses.
* The double-precision kernels call the C library's ``log``, ``log1p``, ``sin`` and ``cos``.
  NumPy's SIMD loops for these differ from the C library in the last bit for a fraction of
  inputs, whereas Python's ``math`` module calls the C library itself, so those paths evaluate
  element-wise through ``math`` (see ``_libm``).  That is exact wherever Python and PyTorch
  share the C math library (they do, in one process), but slower than the vectorised
  single-precision paths.

Known gap: ``multinomial`` without replacement ranks ``probs / q`` with torch's ``topk``, whose
order among exactly equal scores comes from ``std::partial_sort``/``std::nth_element``
internals; tied scores (e.g. more samples requested than there are non-zero probabilities) may
come out in a different order here.
"""

import array
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

from .._core.complex32 import NP_COMPLEX32

from .._core import dtype as D
from .._core.generator import _locked  # the draw holds the generator's lock, as torch's mutex

_F32 = np.float32
_UINT64_MASK = (1 << 64) - 1


# ----------------------------------------------------------------------------
# dtype helpers
# ----------------------------------------------------------------------------

def _is_bfloat16(dt):
    return dt.kind == "V" and dt.type.__name__ == "bfloat16"


def _is_float(dt):
    return dt.kind == "f" or _is_bfloat16(dt)


def _float_digits(dt):
    """std::numeric_limits<T>::digits of a floating dtype."""
    if _is_bfloat16(dt):
        return 8
    return np.finfo(dt).nmant + 1


_LIMITS = {}


def _float_limits(dt):
    if dt not in _LIMITS:
        if _is_bfloat16(dt):
            import ml_dtypes

            info = ml_dtypes.finfo(dt)
        else:
            info = np.finfo(dt)
        _LIMITS[dt] = (float(info.min), float(info.max))
    return _LIMITS[dt]


def _cast(x, dt):
    """static_cast<T>(x) as C++ does it.

    c10::Half and c10::BFloat16 are constructed from float, so a double or an
    integer reaches them through float32 (two roundings, not one).
    """
    if dt.itemsize == 2 and _is_float(dt) and x.dtype not in (np.float32, dt):
        x = x.astype(np.float32)
    return x.astype(dt)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _numel(shape):
    return math.prod(shape)


def _complex_part(dt):
    """The real dtype torch fills through view_as_real, or None."""
    if dt.kind == "c":
        return np.dtype(np.float32 if dt.itemsize == 8 else np.float64)
    if dt == NP_COMPLEX32:
        return np.dtype(np.float16)
    return None


# ----------------------------------------------------------------------------
# Floating-point primitives matching the compiled kernels
# ----------------------------------------------------------------------------

def _round_to_odd(s, err):
    """Turn round-to-nearest results into round-to-odd, given their exact errors.

    A value rounded to odd at 53 bits rounds correctly to 24 bits, and
    survives one further rounded addition (see _fma64), without the error
    that rounding twice to nearest can make.
    """
    s = np.array(s, dtype=np.float64, copy=True)
    err = np.broadcast_to(err, s.shape).reshape(-1)
    s = s.reshape(-1)
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0)
    bits[fix] += np.where((err[fix] > 0) == (s[fix] > 0), 1, -1)
    return s


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


_FLOAT32_TIE = np.int64(1 << 28)  # the dropped 29 bits of a float64 halfway between two float32
_DROPPED = np.int64((1 << 29) - 1)


def _fma32(a, b, c):
    """float32 fused multiply-add, rounded once like the FMA instruction.

    The product of two float32 is exact in float64, so only the addition
    rounds there; rounding that sum again to float32 is already the correctly
    rounded result unless it landed exactly halfway between two float32
    values (or in the subnormal range), which the few such elements redo
    exactly.
    """
    p = np.multiply(a, b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    s = p + c
    out = s.astype(np.float32)
    doubtful = ((s.view(np.int64) & _DROPPED) == _FLOAT32_TIE) | (np.abs(s) < 2.0**-126)
    if doubtful.any():
        where = np.nonzero(doubtful)
        p_d = np.broadcast_to(p, s.shape)[where]
        c_d = np.broadcast_to(c, s.shape)[where]
        exact = _round_to_odd(*_two_sum(p_d, c_d))
        out[where] = exact.astype(np.float32)
    return out


def _split(x):
    t = x * 134217729.0  # 2**27 + 1 (Veltkamp split)
    hi = t - (t - x)
    return hi, x - hi


def _fma64(a, b, c):
    """float64 fused multiply-add (Boldo & Melquiond, emulation via round-to-odd)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    hi = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl
    th, tl = _two_sum(c, hi)
    v, v_err = _two_sum(tl, lo)
    return th + _round_to_odd(v, v_err).reshape(np.shape(v))


def _affine32(x, scale, shift):
    """fma(x, scale, shift) in float32; with scale 1 that is one plain addition
    (which still turns -0.0 into +0.0, as the FMA does)."""
    if scale == 1:
        return x + _F32(shift)
    return _fma32(x, _F32(scale), _F32(shift))


def _affine64(x, scale, shift):
    """fma(x, scale, shift) in float64, see _affine32."""
    if scale == 1:
        return x + float(shift)
    return _fma64(x, scale, shift)


def _libm(fn, x):
    """Apply a ``math`` function element-wise.

    ``math`` returns the C library's own result, which is what torch's scalar
    double-precision code computes; NumPy's vectorised loops may not.
    """
    flat = np.fromiter(map(fn, x.ravel().tolist()), dtype=np.float64, count=x.size)
    return flat.reshape(x.shape)


_MIN_NORM_POS = np.array(0x00800000, np.int32).view(np.float32)
_SQRTHF = _F32(0.707106781186547524)
_LOG_P = [_F32(v) for v in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
    1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
    3.3333331174e-1,
)]
_LOG_Q1 = _F32(-2.12194440e-4)
_LOG_Q2 = _F32(0.693359375)
_FOPI = _F32(1.27323954473516)  # 4 / pi
_MINUS_DP = [_F32(v) for v in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)]
_SINCOF = [_F32(v) for v in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]
_COSCOF = [_F32(v) for v in (2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002)]
_SIGN_BIT = np.int32(-(1 << 31))


def _log_ps(x):
    """log256_ps of avx_mathfun.h for positive float32 input."""
    x = np.maximum(x, _MIN_NORM_POS)
    exponent = (x.view(np.uint32) >> 23).astype(np.int32)
    # Keep the mantissa, put it in [0.5, 1).
    x = ((x.view(np.int32) & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(np.float32)
    e = (exponent - 127).astype(np.float32) + _F32(1)
    small = x < _SQRTHF
    tmp = np.where(small, x, _F32(0))
    x = x - _F32(1)
    e = e - np.where(small, _F32(1), _F32(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for coef in _LOG_P[1:]:
        y = _fma32(y, x, coef)
    y = y * x
    # y*z + e*q1: GCC fuses the first product and rounds e*q1 on its own
    # (checked bit for bit against torch).
    y = _fma32(y, z, e * _LOG_Q1)
    y = y - z * _F32(0.5)  # fused or not, z * 0.5 is exact
    x = x + y
    return _fma32(e, _LOG_Q2, x)


def _sincos_ps(x):
    """sincos256_ps of avx_mathfun.h: (sin(x), cos(x)) for float32 input."""
    sign_sin = x.view(np.int32) & _SIGN_BIT
    x = np.abs(x)
    j = (x * _FOPI).astype(np.int32)  # truncation, as cvttps2dq
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    sign_sin = sign_sin ^ ((j & 4) << 29)
    sign_cos = (~(j - 2) & 4) << 29
    use_sin_poly = (j & 2) == 0
    for dp in _MINUS_DP:  # extended-precision reduction x - y * pi/4
        x = _fma32(y, dp, x)
    z = x * x
    yc = _fma32(_COSCOF[0], z, _COSCOF[1])
    yc = _fma32(yc, z, _COSCOF[2])
    yc = yc * z
    yc = _fma32(yc, z, -(z * _F32(0.5)))  # y*z - z*0.5, the first product fused
    yc = yc + _F32(1)
    ys = _fma32(_SINCOF[0], z, _SINCOF[1])
    ys = _fma32(ys, z, _SINCOF[2])
    ys = ys * z
    ys = _fma32(ys, x, x)
    s = np.where(use_sin_poly, ys, yc)
    c = np.where(use_sin_poly, yc, ys)
    s = (s.view(np.int32) ^ sign_sin).view(np.float32)
    c = (c.view(np.int32) ^ sign_cos).view(np.float32)
    return s, c


_TWO_PI_F32 = _F32(2.0 * math.pi)


def _box_muller16_f32(u, mean, std):
    """NormalFill16<float> (the AVX specialisation) over rows of 16 uniforms."""
    u = u.reshape(-1, 16)
    radius = np.sqrt(_F32(-2) * _log_ps(_F32(1) - u[:, :8]))
    sin_t, cos_t = _sincos_ps(_TWO_PI_F32 * u[:, 8:])
    out = np.empty_like(u)
    out[:, :8] = _affine32(radius * cos_t, std, mean)
    out[:, 8:] = _affine32(radius * sin_t, std, mean)
    return out.reshape(-1)


def _box_muller16_f64(u, mean, std):
    """NormalFill16<double>: the scalar loop, through the C library."""
    u = u.reshape(-1, 16)
    radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - u[:, :8]))
    theta = (2.0 * math.pi) * u[:, 8:]
    out = np.empty_like(u)
    out[:, :8] = _affine64(radius * _libm(math.cos, theta), std, mean)
    out[:, 8:] = _affine64(radius * _libm(math.sin, theta), std, mean)
    return out.reshape(-1)


_BLOCK = 16 * 2048


def _box_muller_blocks(u, n, bm):
    """normal_fill: whole blocks of 16, then the last 16 outputs redone from
    the 16 uniforms at the end of ``u`` when n is not a multiple of 16."""
    whole = n - n % 16
    out = np.empty(n, dtype=u.dtype)
    step = _BLOCK  # cache-sized pieces: the emulated math makes many float64 temporaries
    for start in range(0, whole, step):
        stop = min(start + step, whole)
        out[start:stop] = bm(u[start:stop])
    if n % 16:
        out[n - 16:] = bm(u[-16:])
    return out


# ----------------------------------------------------------------------------
# uniform_real_distribution: the generator's words as floats in [0, 1)
# ----------------------------------------------------------------------------

def uniform_real_f32(gen, n):
    """uniform_real_distribution<float>(0, 1): 24 random bits."""
    return (gen._random32(n) & np.uint32(0xFFFFFF)).astype(np.float32) * _F32(2.0**-24)

def uniform_real_f64(gen, n):
    """uniform_real_distribution<double>(0, 1): 53 random bits.

    The 53-bit integer is (high & 0x1FFFFF) * 2**32 + low; both terms
    scaled by 2**-53 are exact doubles, and so is their sum.
    """
    high, low = gen._random_pairs(n)
    return (high & np.uint32(0x1FFFFF)) * 2.0**-21 + low * 2.0**-53

def uniform_real_f64_below(gen, n, p):
    """``uniform_real_f64(n) < p`` without building the doubles.

    u = k * 2**-53 for the 53-bit integer k, so u < p exactly when
    k < ceil(p * 2**53) (p * 2**53 is exact); k is compared as its high
    21 and low 32 bits.
    """
    threshold = math.ceil(p * 2.0**53)
    t_high, t_low = threshold >> 32, threshold & 0xFFFFFFFF
    high, low = gen._random_pairs(n)
    high &= np.uint32(0x1FFFFF)
    below = high < t_high
    below |= (high == t_high) & (low < t_low)
    return below

# ---- uniform_ --------------------------------------------------------------

@_locked
def uniform(gen, shape, np_dtype, low=0.0, high=1.0):
    """torch.rand / Tensor.uniform_(low, high)."""
    shape, dt = _shape(shape), np.dtype(np_dtype)
    real = _complex_part(dt)
    if real is not None:
        return uniform(gen, shape + (2,), real, low, high).view(dt).reshape(shape)
    if not _is_float(dt):
        raise TypeError(f"uniform_ is not implemented for {dt}")
    lowest, highest = _float_limits(dt)
    low, high = float(low), float(high)
    for name, v in (("from", low), ("to", high)):
        if not lowest <= v <= highest:
            raise RuntimeError(f"{name} is out of bounds for {_c_type_name(dt)}")
    if low > high:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={low:g} > "
            f"to={high:g}"
        )
    if high - low > highest:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{dt}>::max()")
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    if dt == np.float64:
        value = _affine64(uniform_real_f64(gen, n), high - low, low)
    else:
        # Half and BFloat16 are drawn and scaled in float (their opmath type).
        lo32, hi32 = _F32(low), _F32(high)
        value = _cast(_affine32(uniform_real_f32(gen, n), hi32 - lo32, lo32), dt)
    # Rounding may land exactly on `to`; torch folds that back onto `from`.
    to_scalar = _cast(np.array(high), dt)
    value[value == to_scalar] = _cast(np.array(low), dt)
    return value.reshape(shape)

# ---- normal -----------------------------------------------------------------

@_locked
def normal(gen, shape, np_dtype, mean=0.0, std=1.0, *, contiguous=True):
    """torch.randn / Tensor.normal_ / torch.normal.

    ``mean`` and ``std`` may be numpy arrays (torch.normal with tensor
    arguments): torch then draws standard normals and applies ``mul_(std)``
    and ``add_(mean)`` as separate ops, which is reproduced here.  Pass
    ``contiguous=False`` when the values fill a non-contiguous tensor:
    torch then takes its element-by-element Box-Muller path.
    """
    shape, dt = _shape(shape), np.dtype(np_dtype)
    mean_is_array = isinstance(mean, np.ndarray)
    std_is_array = isinstance(std, np.ndarray)
    if std_is_array:
        if std.size and not (std >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        out = _normal(gen, shape, dt, 0.0, 1.0, contiguous)
        out = _inplace_binop(np.multiply, out, std)
        mean_operand = mean if mean_is_array else _cast(np.array(float(mean)), dt)
        return _inplace_binop(np.add, out, mean_operand)
    if mean_is_array:
        out = _normal(gen, shape, dt, 0.0, float(std), contiguous)
        return _inplace_binop(np.add, out, mean)
    return _normal(gen, shape, dt, float(mean), float(std), contiguous)

def _normal(gen, shape, dt, mean, std, contiguous):
    if std < 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    real = _complex_part(dt)
    if real is not None:
        # Real and imaginary parts each get half the variance.
        out = _normal(gen, shape + (2,), real, mean, std / math.sqrt(2), contiguous)
        return out.view(dt).reshape(shape)
    if not _is_float(dt):
        raise TypeError(f"normal_ is not implemented for {dt}")
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    if n >= 16 and contiguous:
        tail = 16 if n % 16 else 0
        if dt == np.float64:
            u = uniform_real_f64(gen, n + tail)
            out = _box_muller_blocks(u, n, lambda b: _box_muller16_f64(b, mean, std))
        elif dt == np.float32:
            u = uniform_real_f32(gen, n + tail)
            out = _box_muller_blocks(u, n, lambda b: _box_muller16_f32(b, mean, std))
        else:
            # Half/BFloat16 fill a float buffer block by block, so the
            # values past the last whole block are never drawn.
            u = uniform_real_f32(gen, n - n % 16 + tail)
            out = _cast(_box_muller_blocks(u, n, lambda b: _box_muller16_f32(b, mean, std)), dt)
        return out.reshape(shape)
    return _cast(_normal_scalar_path(gen, n, mean, std), dt).reshape(shape)

def _normal_scalar_path(gen, n, mean, std):
    """at::normal_distribution<double>, one element after the other.

    Each pair of 53-bit uniforms yields r*cos(theta), returned, and
    r*sin(theta), cached on the generator for the next normal draw.
    """
    values = []
    if gen._normal_cache is not None:
        values.append(np.array([gen._normal_cache]))
        gen._normal_cache = None
    fresh = n - len(values)
    pairs = (fresh + 1) // 2
    if pairs:
        u = uniform_real_f64(gen, 2 * pairs).reshape(pairs, 2)
        radius = np.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))
        theta = (2.0 * math.pi) * u[:, 0]
        both = np.empty((pairs, 2))
        both[:, 0] = radius * _libm(math.cos, theta)
        both[:, 1] = radius * _libm(math.sin, theta)
        both = both.reshape(-1)
        if fresh % 2:
            gen._normal_cache = float(both[-1])
        values.append(both[:fresh])
    return _affine64(np.concatenate(values), std, mean)

# ---- integers ---------------------------------------------------------------

@_locked
def random_int(gen, shape, np_dtype, low, high=None):
    """torch.randint / Tensor.random_(low, high); ``high=None`` is
    Tensor.random_(low) (up to the dtype's largest value)."""
    shape, dt = _shape(shape), np.dtype(np_dtype)
    low = int(low)
    int64_min, int64_max = -(1 << 63), (1 << 63) - 1
    if high is not None and high - low == 1 << 64:
        # [-2**63, 2**63), which torch can only spell random_(-2**63, None).
        high = None
    if high is not None:
        high = int(high)
        if low >= high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        if _is_float(dt):
            low, high = _update_from(low, dt), _update_to(high, dt)
            if low >= high:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                    f"but got from={low} >= to={high}"
                )
        to_inc = high - 1
    elif low != int64_min:
        if _is_float(dt):
            to_inc = min(1 << _float_digits(dt), int64_max)
            low = _update_from(low, dt)
            if low >= to_inc:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                    f"casted to dtype, but got from={low} > to_inc={to_inc}"
                )
        elif dt == np.bool_:
            to_inc = 1
        elif dt.kind in "iu":
            to_inc = int(np.iinfo(dt).max)
        else:
            raise TypeError(f"random_from_to is not implemented for {dt}")
    else:
        return _random_full_64(gen, shape, dt)
    _check_from_to_in_range(low, to_inc, dt)
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    span = (to_inc - low + 1) & _UINT64_MASK
    # Public torch builds switch to 64-bit draws from a range of 2**28 on,
    # whatever the dtype, to keep the modulo bias small.
    raw = gen._random64(n) if span >= 1 << 28 else gen._random(n)
    # (val % range) + base, in uint64 arithmetic, then int64, then T.
    value = (raw % np.uint64(span) + np.uint64(low & _UINT64_MASK)).view(np.int64)
    return _cast(value, dt).reshape(shape)

def _random_full_64(gen, shape, dt):
    """random_(from=int64 min, to=None): every int64 equally likely."""
    if not (dt in (np.int64, np.float64, np.float32) or _is_bfloat16(dt)):
        raise RuntimeError(
            "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16"
        )
    n = _numel(shape)
    return _cast(gen._random64(n).view(np.int64), dt).reshape(shape)

@_locked
def random(gen, shape, np_dtype):
    """Tensor.random_() with no bounds: [0, 2**mantissa] for floats,
    [0, max] for integers."""
    shape, dt = _shape(shape), np.dtype(np_dtype)
    n = _numel(shape)
    if dt == np.bool_:
        return (gen._random(n) & np.uint64(1)).astype(np.bool_).reshape(shape)
    if _is_float(dt):
        modulus = (1 << _float_digits(dt)) + 1
    elif dt.kind == "i" or dt == np.uint8:
        modulus = int(np.iinfo(dt).max) + 1
    else:
        raise TypeError(f"random_ is not implemented for {dt}")
    raw = gen._random64(n) if dt in (np.int64, np.float64) else gen._random(n)
    return _cast((raw % np.uint64(modulus)).astype(np.int64), dt).reshape(shape)

@_locked
def randperm(gen, n, np_dtype=np.int64):
    """torch.randperm: Fisher-Yates as torch's CPU kernel runs it."""
    n = int(n)
    dt = np.dtype(np_dtype)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got {n}")
    if n <= 1:
        perm = np.arange(n, dtype=np.int64)
    elif n < 0xFFFFFFFF // 20:
        # Swap position i with i + random() % (n - i), for i = 0 .. n-2.
        offsets = gen._random(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
        perm = _apply_swaps(np.arange(n - 1, dtype=np.int64) + offsets.astype(np.int64))
    else:
        perm = _inside_out_shuffle(gen, n)
    return _cast(perm, dt)

def _inside_out_shuffle(gen, n, chunk=1 << 20):
    """randperm for n >= 2**32 // 20: a[i] = a[z]; a[z] = i, z = random64() % (i + 1).

    Replayed step by step in Python (minutes at these sizes); the draws
    come in chunks so memory stays at the result's 8 bytes per element.
    """
    perm = array.array("q", bytes(8 * n))
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        picks = gen._random64(stop - start) % np.arange(start + 1, stop + 1, dtype=np.uint64)
        for i, z in enumerate(picks.tolist(), start):
            perm[i] = perm[z]
            perm[z] = i
    return np.frombuffer(perm, dtype=np.int64)

# ---- bernoulli, exponential, multinomial ----------------------------------

@_locked
def bernoulli(gen, p, shape, np_dtype):
    """Tensor.bernoulli_(p) / torch.bernoulli.

    A scalar ``p`` draws a 53-bit uniform per element; an array ``p``
    draws 53 bits when it is float64 and 24 bits (compared in float)
    otherwise, as torch does for a probability tensor of that dtype.
    """
    shape, dt = _shape(shape), np.dtype(np_dtype)
    n = _numel(shape)
    if not isinstance(p, np.ndarray):
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        if n == 0:
            return np.empty(shape, dtype=dt)
        return uniform_real_f64_below(gen, n, p).astype(dt).reshape(shape)
    if not _is_float(p.dtype):
        name = D.scalar_type_name(D.from_numpy_dtype(p.dtype))
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{name}'")
    probs = np.broadcast_to(p, shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    if p.dtype == np.float64:
        probs = probs.reshape(-1)
        u = uniform_real_f64(gen, n)
    else:
        probs = probs.astype(np.float32).reshape(-1)
        u = uniform_real_f32(gen, n)
    if not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true")
    return (u < probs).astype(dt).reshape(shape)

@_locked
def exponential(gen, shape, np_dtype, lambd=1.0):
    """Tensor.exponential_(lambd): -1/lambd * log1p(-u) in double."""
    shape, dt = _shape(shape), np.dtype(np_dtype)
    if not _is_float(dt):
        raise TypeError(
            "Exponential distribution is a continuous probability distribution. "
            f"dtype must be a floating point but you specified {dt}"
        )
    lambd = float(lambd)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    value = (-1.0 / lambd) * _libm(math.log1p, -uniform_real_f64(gen, n))
    return _cast(value, dt).reshape(shape)

@_locked
def multinomial(gen, probs_2d, num_samples, replacement=False):
    """torch.multinomial for a 2-D probability array (rows are distributions).

    Without replacement, or for a single sample, torch draws q ~ Exp(1)
    shaped like the input and takes the top entries of probs / q; with
    replacement it inverts the normalised cumulative sum with one 53-bit
    uniform per sample.  Both are reproduced; only the order of exactly
    tied probs / q values inside topk is not guaranteed to match.
    """
    probs = np.asarray(probs_2d)
    if probs.ndim != 2:
        raise ValueError("multinomial expects a 2-D probability array")
    dt = probs.dtype
    if not _is_float(dt):
        raise TypeError(f"multinomial only supports floating-point dtypes for input, got: {dt}")
    num_samples = int(num_samples)
    n_dist, n_categories = probs.shape
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_dist == 0:
        return np.empty((0, num_samples), dtype=np.int64)
    if not replacement or num_samples == 1:
        as_float = probs.astype(np.float64)
        if not (np.isfinite(as_float).all() and (as_float >= 0).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (as_float.sum(axis=1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = exponential(gen, probs.shape, dt, 1.0)
        scores = probs / q
        scores = scores.astype(np.float64)
        if num_samples == 1:
            return np.argmax(scores, axis=1).astype(np.int64).reshape(n_dist, 1)
        order = np.argsort(-scores, axis=1, kind="stable")
        return order[:, :num_samples].astype(np.int64)
    # Half and BFloat16 accumulate in float.
    acc = np.float32 if dt.itemsize <= 4 else np.float64
    result = np.empty((n_dist, num_samples), dtype=np.int64)
    for row in range(n_dist):
        values = probs[row].astype(acc)
        if (values < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(values).all():
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
            )
        cumulative = np.add.accumulate(values, dtype=acc)  # sequential, like the kernel
        total = cumulative[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cumulative = cumulative / total
        cumulative[-1] = 1
        u = uniform_real_f64(gen, num_samples)
        # First slot whose cumulative probability is >= u: the kernel's binary search.
        result[row] = np.searchsorted(cumulative.astype(np.float64), u, side="left")
    return result


def _apply_swaps(targets):
    """arange(n) after ``for i, j in enumerate(targets): a[i], a[j] = a[j], a[i]``.

    Each ``targets[i] >= i`` (torch's randperm), so position i is final after
    step i and holds what position ``targets[i]`` held just before: that
    index itself if no earlier step targeted it, else the value carried in by
    the latest earlier step that did.  A step k carries the value position k
    held just before step k, which is defined the same way; following those
    links back (pointer jumping) resolves every step at once instead of
    replaying the swaps in a Python loop.
    """
    n = targets.size + 1
    steps = np.arange(n - 1, dtype=np.int64)
    order = np.argsort(targets, kind="stable")  # grouped by target, steps ascending
    grouped = targets[order]
    boundary = grouped[1:] != grouped[:-1]
    first_in_group = np.concatenate(([True], boundary))
    last_in_group = np.concatenate((boundary, [True]))
    # Previous step with the same target, or -1.
    earlier = np.full(n - 1, -1, dtype=np.int64)
    earlier[order[~first_in_group]] = order[np.flatnonzero(~first_in_group) - 1]
    # writer[k]: the last step before step k that swapped into position k.
    writer = np.full(n, -1, dtype=np.int64)
    writer[grouped[last_in_group]] = order[last_in_group]
    self_swap = targets == steps
    writer[:-1][self_swap] = earlier[self_swap]
    # incoming[k]: the value at position k just before step k; a position
    # nobody wrote to still holds its own index.
    incoming = np.where(writer < 0, np.arange(n), writer)
    while True:
        jumped = incoming[incoming]
        if np.array_equal(jumped, incoming):
            break
        incoming = jumped
    out = np.empty(n, dtype=np.int64)
    out[:-1] = np.where(earlier >= 0, incoming[np.maximum(earlier, 0)], targets)
    out[-1] = incoming[-1]
    return out


def _inplace_binop(op, out, other):
    """out.op_(other) with torch's promotion: compute in the common dtype
    (a 0-d operand does not widen a floating output) and store as out's dtype."""
    other = np.asarray(other)
    if other.ndim == 0 and _is_float(other.dtype):
        other = other.astype(out.dtype)
    # Store through _cast: a double result reaches half/bfloat16 via float.
    result = op(out, other)
    if result.shape != out.shape:
        raise ValueError(f"operand of shape {other.shape} does not broadcast to {out.shape}")
    return _cast(result, out.dtype)


def _round_trip_int(value, dt):
    """static_cast<int64_t>(static_cast<T>(value)) on x86-64, where a value
    that does not fit (inf after a Half overflow) converts to INT64_MIN."""
    as_float = float(_cast(np.array(value, dtype=np.int64), dt))
    if math.isfinite(as_float) and -(2.0**63) <= as_float < 2.0**63:
        return int(as_float)
    return -(1 << 63)


def _update_from(frm, dt):
    """Move `from` right until casting it to dt cannot land below it."""
    from_plus_1 = _round_trip_int(frm + 1, dt)
    if from_plus_1 < frm:
        n = max(abs(frm + 1).bit_length() - 1, 0)
        frm = from_plus_1 + (1 << (n - _float_digits(dt) + 1))
    return frm


def _update_to(to, dt):
    """Move `to` left until casting `to - 1` to dt cannot reach `to`."""
    to_minus_1 = _round_trip_int(to - 1, dt)
    if to_minus_1 >= to:
        n = max(abs(to - 1).bit_length() - 1, 0)
        to = to_minus_1 - (1 << (n - _float_digits(dt) + 1))
    return to


def _c_type_name(np_dtype):
    """The C++ type PyTorch's bounds messages name ("unsigned char", "c10::Half")."""
    return D.c_type_name(D.from_numpy_dtype(np_dtype))


def _check_from_to_in_range(frm, to_inc, dt):
    if _is_float(dt):
        lowest, highest = _float_limits(dt)
        digits = _float_digits(dt)
        for name, v in (("from", frm), ("to - 1", to_inc)):
            if not lowest <= v <= highest:
                raise RuntimeError(f"{name} is out of bounds for {_c_type_name(dt)}")
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(
                    f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {dt} can support discrete uniform distribution only within this range.",
                    stacklevel=_user_stacklevel(),
                )
        return
    if dt == np.bool_:
        lowest, highest = 0, 1
    elif dt == np.uint64:
        lowest, highest = 0, (1 << 63) - 1
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lowest, highest = int(info.min), int(info.max)
    else:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean "
                           "types")
    for name, v in (("from", frm), ("to - 1", to_inc)):
        if not lowest <= v <= highest:
            raise RuntimeError(f"{name} is out of bounds for {_c_type_name(dt)}")
