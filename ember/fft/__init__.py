"""torch.fft: discrete Fourier transforms, written from the three spectral ops.

Every transform here is one of `_fft_r2c`, `_fft_c2r` or `_fft_c2c` (ember/_aten/fft.py, NumPy's
pocketfft) on an input that is first promoted (integers to the default float, real to complex
where the op needs it) and cut or zero-padded to the requested size, as PyTorch's SpectralOps
does, so autograd, explain and tracing see the same ops and nodes as in PyTorch:

    fft, ifft      complex input: c2c; real input: r2c with the full spectrum
    rfft, ihfft    r2c, the half spectrum (ihfft conjugates it)
    irfft, hfft    c2r from the half spectrum (hfft conjugates its input first)
    *2, *n         the same over several dims (fftn always runs c2c on a complex copy)

`norm` says which direction is scaled: "backward" (the default) scales the backward
transforms (ifft, irfft, ihfft) by 1/n, "forward" the forward ones, "ortho" both by 1/sqrt(n).
Half-precision inputs are refused, as by PyTorch's CPU transforms.
"""
import math
import operator

from .. import _refs as E
from .._core import dtype as D
from .._core.tensor import _wrap_dim
from .._aten.elementwise import _scalar_type_name, not_implemented
from .._bindings.factories import range_out
from .._bindings.out import _call_with_out, _finish
from .._dispatch.dispatcher import impl
from .._dispatch.ops import ops as _ops

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_r2c, _c2r, _c2c = _ops.aten._fft_r2c, _ops.aten._fft_c2r, _ops.aten._fft_c2c


# ---- argument handling, as PyTorch's SpectralOps ----------------------------------------------
def _norm_mode(norm, forward):
    """The ops' `normalization` for a transform in this direction: 0 (none), 1 (1/sqrt(n)) or 2
    (1/n)."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex=False):
    """x in a dtype the transforms take: complex as it is, integers as the default float,
    float32/float64 (as their complex type if `require_complex`)."""
    dt = x.dtype
    if dt.is_complex:
        return x
    if not dt.is_floating_point:
        dt = D.get_default_dtype()
    if dt not in (D.float32, D.float64):
        raise RuntimeError(f"Unsupported dtype {_scalar_type_name(dt)}")
    if require_complex:
        dt = dt.to_complex()
    return x if dt is x.dtype else x.to(dt)


def _wrap(dim, ndim):
    """A dim index; a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(operator.index(dim), ndim)


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """x cut to sizes[i] along dims[i], or zero-padded at the end up to it."""
    pad = [0] * (2 * x.dim())
    for d, n in zip(dims, sizes):
        if x.shape[d] > n:
            x = x.narrow(d, 0, n)
        elif x.shape[d] < n:
            pad[2 * (x.dim() - 1 - d) + 1] = n - x.shape[d]
    return E.constant_pad_nd(x, pad) if any(pad) else x


def _shape_and_dims(input, s, dim):
    """The signal size and the dims of an n-dimensional transform: `dim` defaults to the last
    len(s) dims (all dims without s), `s` to the input's sizes (-1 in s too)."""
    ndim = input.dim()
    if dim is not None:
        dims = [_wrap(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [input.shape[d] if n == -1 else n for n, d in zip(s, dims)]
    elif dim is None:
        dims, shape = list(range(ndim)), list(input.shape)
    else:
        shape = [input.shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _c2r_shape_and_dims(name, input, s, dim):
    """As _shape_and_dims for a transform to a real signal: also the signal's last size (by
    default 2 * (m - 1) for m points of the half spectrum), the half spectrum's being n // 2 + 1."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    default = s is None or (s if isinstance(s, int) else s[-1]) == -1
    last_dim_size = 2 * (input.shape[dims[-1]] - 1) if default else shape[-1]
    _check_points(last_dim_size)
    shape[-1] = last_dim_size // 2 + 1
    return shape, dims, last_dim_size


def _real_only(name, input, what="a real input tensor"):
    if input.is_complex():
        raise RuntimeError(f"{name} expects {what}, but got {_scalar_type_name(input.dtype)}")


# ---- one dimension --------------------------------------------------------------------------
def _fft_c2c(input, n, dim, norm, forward):
    dim = _wrap(dim, input.dim())
    n = input.shape[dim] if n is None else n
    _check_points(n)
    return _c2c(_resize(input, [dim], [n]), [dim], _norm_mode(norm, forward), forward)


def _fft_r2c(name, input, n, dim, norm, forward, onesided):
    """rfft, ihfft, and fft/ifft of a real input: the r2c op runs forwards only, so a backward
    transform is the conjugate of the forward one."""
    _real_only(name, input)
    input = _promote(input)
    dim = _wrap(dim, input.dim())
    n = input.shape[dim] if n is None else n
    _check_points(n)
    out = _r2c(_resize(input, [dim], [n]), [dim], _norm_mode(norm, forward), onesided)
    return out if forward else out.conj()


def _fft_c2r(input, n, dim, norm, forward):
    """irfft, hfft: n points of a real signal from its first n // 2 + 1 frequencies; the c2r op
    runs backwards only, so hfft transforms the conjugate."""
    input = _promote(input, require_complex=True)
    dim = _wrap(dim, input.dim())
    last_dim_size = 2 * (input.shape[dim] - 1) if n is None else n
    _check_points(last_dim_size)
    if n is not None:
        input = _resize(input, [dim], [last_dim_size // 2 + 1])
    if forward:
        input = input.conj()
    return _c2r(input, [dim], _norm_mode(norm, forward), last_dim_size)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_fft, out, input, n, dim, norm, name="fft")


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_ifft, out, input, n, dim, norm, name="ifft")


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_rfft, out, input, n, dim, norm, name="rfft")


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_ihfft, out, input, n, dim, norm, name="ihfft")


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_irfft, out, input, n, dim, norm, name="irfft")


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_hfft, out, input, n, dim, norm, name="hfft")


@impl("fft_fft", "CompositeImplicitAutograd")
def _fft(input, n, dim, norm):
    if input.is_complex():
        return _fft_c2c(input, n, dim, norm, True)
    return _fft_r2c("fft", input, n, dim, norm, True, False)


@impl("fft_ifft", "CompositeImplicitAutograd")
def _ifft(input, n, dim, norm):
    if input.is_complex():
        return _fft_c2c(input, n, dim, norm, False)
    return _fft_r2c("ifft", input, n, dim, norm, False, False)


impl("fft_rfft", "CompositeImplicitAutograd")(
    lambda input, n, dim, norm: _fft_r2c("rfft", input, n, dim, norm, True, True))
impl("fft_ihfft", "CompositeImplicitAutograd")(
    lambda input, n, dim, norm: _fft_r2c("ihfft", input, n, dim, norm, False, True))
impl("fft_irfft", "CompositeImplicitAutograd")(
    lambda input, n, dim, norm: _fft_c2r(input, n, dim, norm, False))
impl("fft_hfft", "CompositeImplicitAutograd")(
    lambda input, n, dim, norm: _fft_c2r(input, n, dim, norm, True))


# ---- several dimensions ---------------------------------------------------------------------
def _fftn_c2c(input, s, dim, norm, forward):
    shape, dims = _shape_and_dims(input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _c2c(x, dims, _norm_mode(norm, forward), forward)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_fftn, out, input, s, dim, norm, name="fftn")


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_ifftn, out, input, s, dim, norm, name="fftn")


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_rfftn, out, input, s, dim, norm, name="rfftn")


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_irfftn, out, input, s, dim, norm, name="irfftn")


def _rfftn(input, s, dim, norm):
    _real_only("rfftn", input, "a real-valued input tensor")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return _r2c(x, dims, _norm_mode(norm, True), True)


def _irfftn(input, s, dim, norm):
    shape, dims, last_dim_size = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _c2r(x, dims, _norm_mode(norm, False), last_dim_size)


for _name, _fn in (("fftn", lambda input, s, dim, norm: _fftn_c2c(input, s, dim, norm, True)),
                   ("ifftn", lambda input, s, dim, norm: _fftn_c2c(input, s, dim, norm, False)),
                   ("rfftn", _rfftn), ("irfftn", _irfftn)):
    impl(f"fft_{_name}", "CompositeImplicitAutograd")(_fn)
    impl(f"fft_{_name[:-1]}2", "CompositeImplicitAutograd")(_fn)  # fft2: fftn over two dims


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The forward transform of a Hermitian-symmetric signal given by its half: c2c forward
    over all dims but the last, then c2r of the conjugate over the last."""
    shape, dims, last_dim_size = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _c2c(x, dims[:-1], mode, True)
    return _finish(_c2r(x.conj(), dims[-1:], mode, last_dim_size), False, out, "hfftn")


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of hfftn: r2c over the last dim, then c2c backward of its conjugate over
    the others."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    mode = _norm_mode(norm, False)
    half = _r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _finish(half.conj(), False, out, "ihfftn")
    return _finish(_c2c(E.conj_physical(half), dims[:-1], mode, False), False, out,
                   "ihfftn")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_fft2, out, input, s, dim, norm, name="fftn")


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_ifft2, out, input, s, dim, norm, name="fftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_rfft2, out, input, s, dim, norm, name="rfftn")


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _call_with_out(_ops.aten.fft_irfft2, out, input, s, dim, norm, name="irfftn")


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ihfftn(input, s, dim, norm, out=out)


# ---- helpers: sample frequencies and shifts ---------------------------------------------------
def _frequencies(name, size, n, d, out, dtype, device, requires_grad):
    """The first `size` frequencies of n samples d apart, [0, 1, 2, ...] / (d * n), with the
    upper half of them negative for fftfreq (the frequencies above the Nyquist frequency are
    those below zero: n - k = -k)."""
    dtype = out.dtype if out is not None else dtype or D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dtype.is_complex:  # PyTorch builds them with arange, which has no complex kernel
        raise not_implemented("arange_cpu", dtype)
    if size < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: [{size}]")
    k = E.arange(size, dtype=dtype, device=device)
    if name == "fftfreq":
        k = E.where(k < (n + 1) // 2, k, k - n)
    # 1 / (d * n) in double precision, infinite (not an error) for d = 0, as in C
    scale = 1.0 / (n * d) if n * d else math.copysign(math.inf, n * d)
    # PyTorch writes arange into out (resizing it, with arange's warning) and scales in place
    return range_out(k * scale, out, requires_grad, warn_resize=True)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The frequencies of fft's n points for samples d apart: [0, 1, ..., ceil(n/2) - 1,
    -floor(n/2), ..., -1] / (d * n)."""
    return _frequencies("fftfreq", n, n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The frequencies of rfft's n // 2 + 1 points for samples d apart:
    [0, ..., n // 2] / (d * n)."""
    half = abs(n) // 2 * (1 if n >= 0 else -1)  # n / 2 rounded towards zero, as C divides
    return _frequencies("rfftfreq", half + 1, n, d, out, dtype, device, requires_grad)


def _shift(input, dim, shift):
    dims = list(range(input.dim())) if dim is None else ([dim] if isinstance(dim, int) else
                                                         list(dim))
    return E.roll(input, [shift(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    """The zero frequency moved to the middle: each dim rolled by half its size."""
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of fftshift."""
    return _shift(input, dim, lambda n: (n + 1) // 2)
