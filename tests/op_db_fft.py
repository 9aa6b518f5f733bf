"""The op test table's rows for the spectral functions: torch.fft (every transform on real and
on complex input, with n/s, dim and norm, cropping and zero-padding; fftfreq, rfftfreq,
fftshift, ifftshift), the spectral ops themselves (_fft_r2c, _fft_c2r, _fft_c2c),
unfold_backward, stft and istft (and the round trip), and torch.signal.windows.

Same conventions as op_db.py, which appends these rows to its OPS. Complex inputs are built
with view_as_complex from float tensors whose last dim is 2, and complex outputs compared as
view_as_real (resolve_conj first: PyTorch's conj is lazy), so values and gradients are checked
through real tensors; the row names of complex-input variants end in "_complex".
"""
import numpy as np

from op_db import (ALL, BOOL, FLOATS, INTS, DT, ErrorInput, OpInfo, Sample, T, f32, make,
                   round_to)

PAIR = ("float32", "float64")   # rows that build complex tensors
REAL = BOOL + INTS + PAIR       # what the transforms take: integers promote, half is refused
NORMS = ({}, {"norm": "backward"}, {"norm": "forward"}, {"norm": "ortho"})


def _as_real(m, y):
    return m.view_as_real(y.resolve_conj()) if y.is_complex() else y


def _fft(name):
    """m.fft.<name> on a real input."""
    return lambda m, x, *a, **kw: _as_real(m, getattr(m.fft, name)(x, *a, **kw))


def _fft_complex(name):
    """m.fft.<name> on the complex tensor whose real and imaginary parts are x's last dim."""
    return lambda m, x, *a, **kw: _as_real(m, getattr(m.fft, name)(m.view_as_complex(x), *a,
                                                                   **kw))


# ---- samples ---------------------------------------------------------------------------------
def _one_dim_samples(dtype, rng, complex_input=False, half_input=False):
    """1-d transforms: every norm; n cropping, padding and equal; other dims; non-contiguous
    inputs; a single point. With complex_input, shapes gain a last dim of 2; half_input halves
    the default transformed size (a half spectrum, for irfft and hfft)."""
    def x(shape, layout="contiguous"):
        return make(rng, shape + ((2,) if complex_input else ()), dtype,
                    layout if not complex_input else "contiguous")
    n = 3 if half_input else 6
    out = [Sample(x((n,)), **kw) for kw in NORMS]
    out += [Sample(x((3, n)), n=k) for k in (2, n, 9, 1 if not half_input else 3)]
    out += [Sample(x((4, 3)), dim=0), Sample(x((2, n, 3)), n=5, dim=1, norm="ortho"),
            Sample(x((2, 3, n)), dim=-1, norm="forward"), Sample(x((1,)), n=4)]
    if not complex_input:
        out += [Sample(x((3, 5), "transposed")), Sample(x((2, 3, 5), "sliced"), dim=1)]
    return out


def _n_dim_samples(dtype, rng, complex_input=False, two_dims=False):
    """n-d transforms: s and dim alone and together (negative dims, -1 in s, cropping and
    padding), every norm, a single dim."""
    def x(shape, layout="contiguous"):
        return make(rng, shape + ((2,) if complex_input else ()), dtype,
                    layout if not complex_input else "contiguous")
    out = [Sample(x((3, 4)), **kw) for kw in NORMS]
    out += [Sample(x((2, 3))), Sample(x((2, 3, 4)), s=(5, 2)), Sample(x((2, 3, 4)), dim=(0, 2)),
            Sample(x((2, 3, 4)), s=(-1, 6), dim=(-1, 0), norm="ortho"),
            Sample(x((3, 4)), dim=(0,) if two_dims else 0, s=(2,) if two_dims else 5)]
    if not two_dims:
        out += [Sample(x((2, 3, 4))), Sample(x((2, 3, 4)), s=(3, 4, 5), norm="forward")]
    if not complex_input:
        out += [Sample(x((4, 3), "transposed")), Sample(x((2, 3, 5), "sliced"))]
    return out


def _samples(kind, **options):
    def samples(dtype, rng):
        return kind(dtype, rng, **options)
    return samples


# ---- errors ----------------------------------------------------------------------------------
def _f16(*shape):
    return T(f32(*shape).data, "float16")


def _transform_errors(name, n_dim=False):
    """What every transform refuses: a point count below 1, a bad norm, a dim out of range,
    half precision (PyTorch's CPU transforms have no float16 kernels)."""
    size = {"s": (0, 4)} if n_dim else {"n": 0}
    out = [ErrorInput(f32(3, 4), **size, match=r"Invalid number of data points \(0\)"),
           ErrorInput(f32(3, 4), norm="bad", match='Invalid normalization mode: "bad"'),
           ErrorInput(f32(3, 4), dim=(0, 5) if n_dim else 5, match="out of range"),
           ErrorInput(_f16(3, 4), match="Unsupported dtype Half")]
    if n_dim:
        out += [ErrorInput(f32(3, 4), dim=(0, 0), match="FFT dims must be unique"),
                ErrorInput(f32(3, 4), s=(2,), dim=(0, 1), match="same length"),
                ErrorInput(f32(3, 4), s=(2, 2, 2),  # the 2-d forms have dims by default
                           match="Got shape with 3 values|same length")]
    else:
        out.append(ErrorInput(f32(), match="no dimensions"))
    return out


def _real_input_errors(name, n_dim=False, what="a real input tensor"):
    """Transforms of real signals refuse complex input."""
    def errors():
        z = T(f32(3, 4).data, "complex64")
        return _transform_errors(name, n_dim) + [
            ErrorInput(z, match=f"{name} expects {what}, but got ComplexFloat")]
    return errors


def _complex_input_error(name):
    return lambda: [ErrorInput(T(f32(3, 4, 2).data, "float32"), dim=(0, 2) if name[-1] in "2n"
                               else 2, match="out of range")]


def _at_least_one_axis(name):
    return lambda: _transform_errors(name, True) + [
        ErrorInput(f32(), match=f"{name} must transform at least one axis"),
        ErrorInput(f32(3, 4), dim=(), match="at least one axis")]


# ---- rows --------------------------------------------------------------------------------------
def _rows():
    one, n_dim = _one_dim_samples, _n_dim_samples
    rows = []
    # fft, ifft: r2c with the full spectrum on real input, c2c on complex input
    for name in ("fft", "ifft"):
        rows += [OpInfo("fft." + name, _fft(name), REAL, _samples(one),
                        errors=lambda name=name: _transform_errors(name)),
                 OpInfo(f"fft.{name}_complex", _fft_complex(name), PAIR,
                        _samples(one, complex_input=True), other_dtypes_raise=False,
                        errors=_complex_input_error(name))]
    # rfft, ihfft: the half spectrum of a real signal
    for name in ("rfft", "ihfft"):
        rows.append(OpInfo("fft." + name, _fft(name), REAL, _samples(one),
                           errors=_real_input_errors(name)))
    # irfft, hfft: a real signal from a half spectrum (a real one is made complex)
    for name in ("irfft", "hfft"):
        rows += [OpInfo("fft." + name, _fft(name), REAL, _samples(one, half_input=True),
                        errors=lambda name=name: _transform_errors(name)),
                 OpInfo(f"fft.{name}_complex", _fft_complex(name), PAIR,
                        _samples(one, complex_input=True, half_input=True),
                        other_dtypes_raise=False, errors=_complex_input_error(name))]
    # the n-d and 2-d transforms
    for base in ("fft", "ifft", "irfft", "hfft"):
        for name, two in ((base + "n", False), (base + "2", True)):
            errors = _at_least_one_axis(name) if base in ("irfft", "hfft") and not two else \
                (lambda name=name: _transform_errors(name, True))
            rows += [OpInfo("fft." + name, _fft(name), REAL, _samples(n_dim, two_dims=two),
                            errors=errors),
                     OpInfo(f"fft.{name}_complex", _fft_complex(name), PAIR,
                            _samples(n_dim, complex_input=True, two_dims=two),
                            other_dtypes_raise=False, errors=_complex_input_error(name))]
    for base in ("rfft", "ihfft"):
        for name, two in ((base + "n", False), (base + "2", True)):
            errors = _real_input_errors("rfftn", True, "a real-valued input tensor") \
                if name == "rfftn" else (_at_least_one_axis(name) if name == "ihfftn" else
                                         (lambda name=name: _transform_errors(name, True)))
            rows.append(OpInfo("fft." + name, _fft(name), REAL, _samples(n_dim, two_dims=two),
                               errors=errors))
    return rows


def _freq_samples(dtype, rng):
    return [Sample(n, dtype=DT(dtype)) for n in (5, 6, 1, 0)] + [
        Sample(7, 0.25, dtype=DT(dtype)), Sample(4, d=-2.0, dtype=DT(dtype)),
        Sample(4, 0.0, dtype=DT(dtype))]


def _freq_errors():
    return [ErrorInput(4, dtype=DT("complex64"), match="arange_cpu"),
            ErrorInput(-4, dtype=DT("float32"), match="negative dimension")]


def _shift_samples(dtype, rng):
    x = make(rng, (3, 4), dtype)
    return [Sample(make(rng, (5,), dtype)), Sample(x), Sample(x, 0), Sample(x, dim=(1,)),
            Sample(make(rng, (2, 3, 5), dtype), dim=(-1, 0)),
            Sample(make(rng, (4, 3), dtype, "transposed")), Sample(make(rng, (0, 3), dtype))]


def _op_samples(op):
    """The spectral ops called directly: every normalization, one and several dims, negative
    dims, the full and the half spectrum, even and odd signal sizes."""
    def samples(dtype, rng):
        if op == "_fft_r2c":
            return [Sample(make(rng, (3, 5), dtype), dim, norm, onesided)
                    for dim, norm, onesided in (([1], 0, True), ([0, 1], 1, True),
                                                ([0], 2, False), ([1, 0], 0, False))]
        z = make(rng, (2, 4, 2), dtype)
        if op == "_fft_c2r":
            return [Sample(z, [1], 0, 6), Sample(z, [1], 1, 7), Sample(z, [0, 1], 2, 6),
                    Sample(make(rng, (2, 3, 2), dtype), [0, 1], 0, 4)]
        return [Sample(z, dim, norm, forward) for dim, norm, forward in (
            ([1], 0, True), ([0, 1], 1, False), ([0], 2, True), ([], 0, True))]
    return samples


def _op(name):
    def op(m, x, *args):
        if name != "_fft_r2c":
            x = m.view_as_complex(x)
        return _as_real(m, getattr(m.ops.aten, name)(x, *args))
    return op


def _real_input_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), [1], 0, True)]


def _unfold_backward_samples(dtype, rng):
    """Windows that overlap, touch, leave gaps and run past the end; along a middle dim."""
    return [Sample(make(rng, (3, 4), dtype), [10], 0, 4, 3),
            Sample(make(rng, (4, 2), dtype), [9], 0, 2, 2),
            Sample(make(rng, (3, 2), dtype), [10], 0, 2, 3),
            Sample(make(rng, (3, 4), dtype), [5], 0, 4, 3),
            Sample(make(rng, (2, 3, 4, 5), dtype), [2, 11, 4], 1, 5, 3),
            Sample(make(rng, (1,), dtype), [], 0, 1, 1)]


FFT_OPS = _rows() + [
    OpInfo("fft.fftfreq", lambda m, *a, **kw: m.fft.fftfreq(*a, **kw), FLOATS, _freq_samples,
           grad=False, errors=_freq_errors),
    OpInfo("fft.rfftfreq", lambda m, *a, **kw: m.fft.rfftfreq(*a, **kw), FLOATS, _freq_samples,
           grad=False, errors=_freq_errors),
    OpInfo("fft.fftshift", lambda m, x, *a, **kw: m.fft.fftshift(x, *a, **kw), ALL,
           _shift_samples, errors=lambda: [ErrorInput(f32(), match="`shifts` required")]),
    OpInfo("fft.ifftshift", lambda m, x, *a, **kw: m.fft.ifftshift(x, *a, **kw), ALL,
           _shift_samples),
] + [OpInfo(name, _op(name), PAIR, _op_samples(name), other_dtypes_raise=False)
      for name in ("_fft_r2c", "_fft_c2r", "_fft_c2c")] + [
    # r2c refuses complex input; c2r and c2c refuse real input, in every dtype
    OpInfo("_fft_r2c_complex_input", lambda m, x, *a: m.ops.aten._fft_r2c(x.to(m.complex64), *a),
           (), _real_input_samples, errors=lambda: [ErrorInput(
               f32(3, 4), [1], 0, True, match="Only supports floating-point dtypes, but found: "
                                              "ComplexFloat")]),
    OpInfo("_fft_c2r_real_input", lambda m, x, dim, norm, onesided: m.ops.aten._fft_c2r(
        x, dim, norm, 6), (), _real_input_samples, errors=lambda: [ErrorInput(
            f32(3, 4), [1], 0, True, match="Only supports complex dtypes, but found: Float")]),
    OpInfo("_fft_c2c_real_input", lambda m, x, *a: m.ops.aten._fft_c2c(x, *a), (),
           _real_input_samples),
] + [
    OpInfo("unfold_backward", lambda m, g, *a: m.ops.aten.unfold_backward(g, *a), ALL,
           _unfold_backward_samples, other_dtypes_raise=False),
]


# ---- stft and istft ----------------------------------------------------------------------------
def _hann(n, dtype, grad=True):
    """A Hann window as a tensor argument (its gradient is compared too)."""
    return T(round_to(np.sin(np.pi * np.arange(n) / n) ** 2, dtype), dtype, grad=grad)


def _stft_samples(dtype, rng):
    """1-d and batched signals; windows given (and differentiated), shorter than n_fft, or
    none; every pad mode; no centering, aligned windows; normalized; the full spectrum."""
    x16, x40 = make(rng, (16,), dtype), make(rng, (40,), dtype)
    return [
        Sample(x16, 8, 4, window=_hann(8, dtype), return_complex=True),
        Sample(make(rng, (2, 9), dtype), 8, 3, window=_hann(8, dtype), center=False,
               return_complex=True),
        Sample(x40, 16, return_complex=True),
        Sample(x40, 16, 5, 10, window=_hann(10, dtype), return_complex=True),
        Sample(make(rng, (3, 37), dtype), 16, 4, 9, pad_mode="constant", normalized=True,
               return_complex=True),
        Sample(x40, 16, 4, pad_mode="replicate", onesided=False, return_complex=True),
        Sample(make(rng, (2, 40), dtype), 16, 3, window=_hann(16, dtype), pad_mode="circular",
               return_complex=True),
        Sample(x40, 16, 4, 9, window=_hann(9, dtype), center=False, align_to_window=True,
               return_complex=True),
        Sample(x40, 16, 4, window=_hann(16, dtype), return_complex=False),
    ]


def _stft_complex_samples(dtype, rng):
    return [Sample(make(rng, (10, 2), dtype), 4, 2, window=_hann(4, dtype)),
            Sample(make(rng, (24, 2), dtype), 8, 2, window=_hann(8, dtype)),
            Sample(make(rng, (2, 20, 2), dtype), 8, 3, center=False, onesided=False)]


def _stft_errors():
    x = f32(40)
    return [ErrorInput(x, 16, match="return_complex parameter be given"),
            ErrorInput(T(x.data, "int64"), 16, return_complex=True, match="floating point"),
            ErrorInput(f32(2, 2, 40), 16, return_complex=True, match="1D or 2D"),
            ErrorInput(x, 64, center=False, return_complex=True, match="n_fft"),
            ErrorInput(x, 16, 0, return_complex=True, match="hop_length > 0"),
            ErrorInput(x, 16, 4, 20, return_complex=True, match="win_length"),
            ErrorInput(x, 16, 4, 8, window=f32(7), return_complex=True, match="window"),
            ErrorInput(x, 16, align_to_window=True, return_complex=True,
                       match="align_to_window should only be set when center = false"),
            ErrorInput(T(x.data, "complex64"), 16, onesided=True, match="onesided"),
            ErrorInput(f32(5), 16, return_complex=True, match="Padding size")]


def _istft_samples(dtype, rng):
    """Spectra (not necessarily of any signal: istft is defined on all of them) of 1 and 2
    channels, onesided and full, with windows given, shorter than n_fft, or none; normalized,
    with a length (shorter, or longer: zero-padded), without centering."""
    def spectrum(*shape):
        return make(rng, shape + (2,), dtype)
    return [
        Sample(spectrum(3, 3), 4, 1, window=_hann(4, dtype)),
        Sample(spectrum(5, 4), 8, 2, window=_hann(8, dtype)),
        Sample(spectrum(2, 5, 3), 8, 2, normalized=True),
        Sample(spectrum(9, 11), 16, 4, window=_hann(16, dtype)),
        Sample(spectrum(9, 11), 16, 4, 10, window=_hann(10, dtype), length=30),
        Sample(spectrum(16, 11), 16, 4, onesided=False, length=50),
        Sample(spectrum(9, 7), 16, 4, center=False),
        Sample(spectrum(16, 7), 16, 4, window=_hann(16, dtype), onesided=False,
               return_complex=True),
    ]


def _istft_errors():
    def spectrum(*shape):
        return T(f32(*shape, 2).data, "float32")
    # (an empty array from NumPy has strides 0, which view_as_complex refuses, as torch's does)
    return [ErrorInput(spectrum(9, 0), 16, match="stride 1"),
            ErrorInput(spectrum(1, 1, 9, 11), 16, match="3 or 4 dimensions"),
            ErrorInput(spectrum(9, 11), 18, match="n_fft / 2 \\+ 1"),
            ErrorInput(spectrum(9, 11), 16, onesided=False, match="onesided=False"),
            ErrorInput(spectrum(9, 11), 16, 20, match="hop_length <= win_length"),
            ErrorInput(spectrum(9, 11), 16, 4, 20, match="win_length <= n_fft"),
            ErrorInput(spectrum(9, 11), 16, 4, window=f32(15), match="window shape"),
            ErrorInput(spectrum(9, 11), 16, 4, window=T(np.zeros(16), "float32"),
                       match="overlap add min"),
            ErrorInput(spectrum(9, 11), 16, 4, return_complex=True, match="onesided"),
            ErrorInput(spectrum(9, 11), 16, 4, window=T(f32(16).data, "complex64"),
                       match="Complex windows")]


def _istft(m, z, *args, **kwargs):
    return _as_real(m, m.istft(m.view_as_complex(z), *args, **kwargs))


def _round_trip(m, x, n_fft, hop, window, **kwargs):
    """istft(stft(x)) is x where the squared window overlap-adds to nonzero values."""
    spectrum = m.stft(x, n_fft, hop, window=window, return_complex=True, **kwargs)
    return m.istft(spectrum, n_fft, hop, window=window, length=x.shape[-1], **kwargs)


def _round_trip_samples(dtype, rng):
    return [Sample(make(rng, (16,), dtype), 8, 2, _hann(8, dtype, grad=False)),
            Sample(make(rng, (2, 40), dtype), 16, 4, _hann(16, dtype, grad=False),
                   normalized=True),
            Sample(make(rng, (37,), dtype), 16, 5, None, onesided=False)]


SPECTRAL_OPS = [
    OpInfo("stft", lambda m, x, *a, **kw: _as_real(m, m.stft(x, *a, **kw)), PAIR, _stft_samples,
           other_dtypes_raise=False, errors=_stft_errors),
    OpInfo("stft_complex", lambda m, x, *a, **kw: _as_real(m, m.stft(m.view_as_complex(x), *a,
                                                                     **kw)),
           PAIR, _stft_complex_samples, other_dtypes_raise=False),
    OpInfo("Tensor.stft", lambda m, x, *a, **kw: _as_real(m, x.stft(*a, **kw)), PAIR,
           lambda dtype, rng: _stft_samples(dtype, rng)[:2], other_dtypes_raise=False),
    OpInfo("istft", _istft, PAIR, _istft_samples, other_dtypes_raise=False, errors=_istft_errors),
    OpInfo("Tensor.istft", lambda m, z, *a, **kw: _as_real(m, m.view_as_complex(z).istft(*a,
                                                                                        **kw)),
           PAIR, lambda dtype, rng: _istft_samples(dtype, rng)[:2], other_dtypes_raise=False),
    OpInfo("istft_of_stft", _round_trip, PAIR, _round_trip_samples, other_dtypes_raise=False),
]


# ---- torch.signal.windows ----------------------------------------------------------------------
_WINDOW_PARAMETERS = {"exponential": ({"tau": 2.5}, {"center": 1.0, "sym": False}),
                      "gaussian": ({"std": 0.5},), "kaiser": ({"beta": 5.0}, {"beta": 0.0}),
                      "general_cosine": ({"a": [0.46, 0.23, 0.31]}, {"a": (1.0,)}),
                      "general_hamming": ({"alpha": 0.6},)}


def _window_samples(name):
    """Lengths 0, 1, 2 and longer, symmetric and periodic, the window's own parameters, and
    requires_grad (the window is then a result of ops on a leaf, as in PyTorch)."""
    required = {"a": [0.5, 0.5]} if name == "general_cosine" else {}

    def samples(dtype, rng):
        out = [Sample(M, sym=sym, dtype=DT(dtype), **required)
               for M in (0, 1, 2, 5, 10) for sym in (True, False)]
        out += [Sample(7, dtype=DT(dtype), **dict(required, **kw))
                for kw in _WINDOW_PARAMETERS.get(name, ())]
        out.append(Sample(6, dtype=DT(dtype), requires_grad=True, **required))
        return out
    return samples


def _window_errors(name):
    required = {"a": [0.5, 0.5]} if name == "general_cosine" else {}
    own = {"exponential": [ErrorInput(4, tau=0.0, match="Tau must be positive"),
                           ErrorInput(4, center=1.0, match="Center must be None")],
           "gaussian": [ErrorInput(4, std=0.0, match="Standard deviation must be positive")],
           "kaiser": [ErrorInput(4, beta=-1.0, match="beta must be non-negative")],
           "general_cosine": [ErrorInput(4, a=1.0, match="Coefficients must be a list"),
                              ErrorInput(4, a=[], match="Coefficients cannot be empty")]}
    return lambda: [ErrorInput(-1, match="non-negative window length", **required),
                    ErrorInput(4, dtype=DT("float16"), match="float32 or float64", **required),
                    ErrorInput(4, layout=_Layout("sparse_coo"), match="strided tensors only",
                               **required)] + own.get(name, [])


class _Layout(DT):
    """A layout argument, resolved to `m.<name>` like a dtype."""


WINDOW_OPS = [OpInfo("signal.windows." + name,
                     lambda m, *a, name=name, **kw: getattr(m.signal.windows, name)(*a, **kw),
                     PAIR, _window_samples(name), grad=False, errors=_window_errors(name))
              for name in ("bartlett", "blackman", "cosine", "exponential", "gaussian",
                           "general_cosine", "general_hamming", "hamming", "hann", "kaiser",
                           "nuttall")]
FFT_OPS += SPECTRAL_OPS + WINDOW_OPS
