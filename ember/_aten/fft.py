"""Spectral kernels (CPU and Meta): the three discrete Fourier transforms that every torch.fft
function, stft and istft are built from, as in PyTorch's SpectralOps.

    _fft_r2c(self, dim, normalization, onesided)       real signal -> spectrum (only its first
                                                       half along dim[-1] if onesided)
    _fft_c2r(self, dim, normalization, last_dim_size)  half spectrum -> real signal of
                                                       last_dim_size points along dim[-1]
    _fft_c2c(self, dim, normalization, forward)        complex -> complex, forward (e^-i) or
                                                       backward (e^+i)

r2c transforms forward, c2r backward (torch.fft.hfft conjugates its input to run forwards).
NumPy's pocketfft computes them; float32 stays in single precision (complex64), float64 in
double (complex128), as in PyTorch.

`normalization` scales the result by 1 (0), 1/sqrt(n) (1) or 1/n (2), n the number of points
transformed (the product of the signal's sizes along `dim`), whichever the direction: so the
adjoint of a transform is the opposite direction with the same normalization, which is how the
derivatives read (ember/autograd/derivatives/fft.py). NumPy names a scaling by the direction
that carries it ("forward": 1/n on forward transforms, none on backward ones), hence the two
tables below.
"""
import numpy as np

from .._dispatch.dispatcher import impl
from .._core.tensor import _wrap, _meta, _wrap_dim
from .elementwise import _scalar_type_name

# NumPy's `norm` for scaling 1, 1/sqrt(n), 1/n
_FORWARD_NORM = ("backward", "ortho", "forward")
_BACKWARD_NORM = ("forward", "ortho", "backward")


def _dims(self, dim, normalization):
    if self.dim() == 0 and dim:  # PyTorch's kernels reshape to (batch, *signal) and fail
        raise RuntimeError(f"shape '{[-1] + [0] * len(dim)}' is invalid for input of size 1")
    if normalization not in (0, 1, 2):
        raise RuntimeError(f"Invalid normalization mode: {normalization}")
    dims = [_wrap_dim(d, self.dim()) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    for d in dims:
        if self._size[d] == 0:
            raise RuntimeError("Invalid number of data points (0) specified")
    return dims


def _check_real(self):
    dt = self.dtype
    if dt.is_complex or not dt.is_floating_point:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{_scalar_type_name(dt)}")
    if dt.itemsize == 2:
        raise RuntimeError(f"Unsupported dtype {_scalar_type_name(dt)}")


def _check_complex(self):
    if not self.dtype.is_complex:
        raise RuntimeError(f"Only supports complex dtypes, but found: "
                           f"{_scalar_type_name(self.dtype)}")


def _with_size(shape, dim, n):
    shape = list(shape)
    shape[dim] = n
    return tuple(shape)


# ---- real to complex ----------------------------------------------------------------------------
def _r2c_shape(self, dim, normalization, onesided):
    _check_real(self)
    dims = _dims(self, dim, normalization)
    if not dims:
        raise RuntimeError("_fft_r2c must transform at least one dim")
    last = dims[-1]
    return dims, _with_size(self._size, last, self._size[last] // 2 + 1) if onesided else \
        self._size


@impl("_fft_r2c", "CPU")
def fft_r2c(self, dim, normalization, onesided):
    dims, _ = _r2c_shape(self, dim, normalization, onesided)
    transform = np.fft.rfftn if onesided else np.fft.fftn
    return _wrap(transform(self._np, axes=dims, norm=_FORWARD_NORM[normalization]))


@impl("_fft_r2c", "Meta")
def fft_r2c_meta(self, dim, normalization, onesided):
    _, shape = _r2c_shape(self, dim, normalization, onesided)
    return _meta(shape, self.dtype.to_complex(), device=self._device)


# ---- complex to real ----------------------------------------------------------------------------
def _c2r_shape(self, dim, normalization, last_dim_size):
    """The half spectrum must hold last_dim_size // 2 + 1 points along the last dim: the rest
    of the spectrum is their complex conjugates, mirrored."""
    _check_complex(self)
    dims = _dims(self, dim, normalization)
    if not dims:
        raise RuntimeError("_fft_c2r must transform at least one dim")
    last = dims[-1]
    if last_dim_size < 1 or self._size[last] != last_dim_size // 2 + 1:
        raise RuntimeError(f"_fft_c2r: expected {last_dim_size // 2 + 1} points along dim "
                           f"{last} for a signal of {last_dim_size}, but got "
                           f"{self._size[last]}")
    return dims, _with_size(self._size, last, last_dim_size)


@impl("_fft_c2r", "CPU")
def fft_c2r(self, dim, normalization, last_dim_size):
    dims, shape = _c2r_shape(self, dim, normalization, last_dim_size)
    return _wrap(np.fft.irfftn(self._np, s=[shape[d] for d in dims], axes=dims,
                               norm=_BACKWARD_NORM[normalization]))


@impl("_fft_c2r", "Meta")
def fft_c2r_meta(self, dim, normalization, last_dim_size):
    _, shape = _c2r_shape(self, dim, normalization, last_dim_size)
    return _meta(shape, self.dtype.to_real(), device=self._device)


# ---- complex to complex -------------------------------------------------------------------------
@impl("_fft_c2c", "CPU")
def fft_c2c(self, dim, normalization, forward):
    _check_complex(self)
    dims = _dims(self, dim, normalization)
    if not dims:  # nothing to transform
        return _wrap(self._np.copy())
    if forward:
        return _wrap(np.fft.fftn(self._np, axes=dims, norm=_FORWARD_NORM[normalization]))
    return _wrap(np.fft.ifftn(self._np, axes=dims, norm=_BACKWARD_NORM[normalization]))


@impl("_fft_c2c", "Meta")
def fft_c2c_meta(self, dim, normalization, forward):
    _check_complex(self)
    _dims(self, dim, normalization)
    return _meta(self._size, self.dtype, device=self._device)
