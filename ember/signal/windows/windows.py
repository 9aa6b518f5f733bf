"""The window functions of torch.signal.windows, written from ops as PyTorch writes them.

Each window evaluates a formula on M evenly spaced points made by `linspace`. A symmetric
window (sym=True, for filter design) spans the M points end to end; a periodic one (sym=False,
for spectral analysis) is the symmetric window of M + 1 points without its last point, which
is the same formula with M in place of M - 1 in the spacing. `requires_grad` is passed to the
linspace, so the window is the result of ops on a leaf that requires grad, as in PyTorch.
"""
import math
from collections.abc import Iterable

from ... import _refs as E
from ..._core import dtype as D
from ..._core.layout import strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checked(name, M, dtype, layout):
    """The window's dtype, after PyTorch's checks of the arguments every window takes."""
    dtype = D.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _spacing(M, sym):
    """The number of steps the points span: M - 1 for a symmetric window, M for a periodic
    one (one window of a longer signal); a single point is symmetric either way."""
    return M - 1 if sym or M <= 1 else M


def _filled(M, fill, dtype, device, requires_grad):
    """The window of 0 or 1 point, where no formula is needed."""
    return E.full((M,), fill, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau): the Poisson window."""
    dtype = _checked("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return E.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = _spacing(M, sym) / 2.0
    constant = 1 / tau
    k = E.linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype=dtype,
                   device=device, requires_grad=requires_grad)
    return E.exp(-E.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """sin(pi (n + 1/2) / M): the sine window, starting and ending above zero (SciPy's)."""
    dtype = _checked("cosine", M, dtype, layout)
    if M == 0:
        return E.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    constant = math.pi / (_spacing(M, sym) + 1)
    k = E.linspace(0.5 * constant, (0.5 + (M - 1)) * constant, M, dtype=dtype, device=device,
                   requires_grad=requires_grad)
    return E.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    """exp(-(n / (2 std))^2) around the middle of the window."""
    dtype = _checked("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return E.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    start = -_spacing(M, sym) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = E.linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype,
                   device=device, requires_grad=requires_grad)
    return E.exp(-k ** 2)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta), N = M - 1 (M if periodic)."""
    dtype = _checked("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _filled(M, 1.0, dtype, device, requires_grad)
    # beta as a tensor of the window's dtype, and the last point clamped to it: rounding must
    # not leave beta^2 - k^2 below zero under the square root
    beta = E.tensor(beta, dtype=dtype, device=device)
    constant = 2.0 * beta / _spacing(M, sym)
    k = E.linspace(-beta, E.minimum(beta, -beta + (M - 1) * constant), M, dtype=dtype,
                   device=device, requires_grad=requires_grad)
    return E.i0(E.sqrt(beta * beta - E.pow(k, 2))) / E.i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / N): the weighted sum of cosines the Hann, Hamming,
    Blackman and Nuttall windows are."""
    dtype = _checked("general_cosine", M, dtype, layout)
    if M <= 1:
        return _filled(M, 1.0, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / _spacing(M, sym)
    k = E.linspace(0, (M - 1) * constant, M, dtype=dtype, device=device,
                   requires_grad=requires_grad)
    a_i = E.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                   requires_grad=requires_grad)
    i = E.arange(a_i.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (a_i.unsqueeze(-1) * E.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / N)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    _checked("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window according to Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """1 - |2n / N - 1|: the triangle."""
    dtype = _checked("bartlett", M, dtype, layout)
    if M <= 1:
        return _filled(M, 1.0, dtype, device, requires_grad)
    k = E.linspace(-1, -1 + (M - 1) * (2 / _spacing(M, sym)), M, dtype=dtype, device=device,
                   requires_grad=requires_grad)
    return 1 - E.abs(k)
