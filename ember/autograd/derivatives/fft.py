"""Derivatives of the spectral ops (PyTorch's fft_r2c_backward and fft_c2r_backward).

Each transform is linear, so its gradient is its adjoint applied to `grad`, with PyTorch's
convention for complex gradients (the adjoint is the conjugate transpose). The adjoint of a
DFT is the DFT in the opposite direction with the same scaling (see ember/_aten/fft.py on
`normalization`); what r2c and c2r add is the real part, and the half spectrum.
"""
from ..variable_type import derivative
from ... import _refs as E
from ._common import _aten


def _wrapped(dim, ndim):
    return [d % ndim for d in dim]


def _r2c_backward(grad, dim, normalization, onesided, self_shape):
    """r2c is "make complex, c2c forward, keep the first half if onesided": backwards, fill the
    dropped half with zeros, c2c backward, keep the real part."""
    dim = _wrapped(dim, len(self_shape))
    last = dim[-1]
    dropped = self_shape[last] - grad.shape[last]
    if onesided and dropped > 0:
        zeros_shape = list(grad.shape)
        zeros_shape[last] = dropped
        grad = E.cat([grad, E.zeros(zeros_shape, dtype=grad.dtype)], last)
    return E.real(_aten._fft_c2c(grad, dim, normalization, False))


def _c2r_backward(grad, dim, normalization):
    """c2r is "fill the other half with the conjugates of this one, c2c backward, keep the real
    part": backwards, r2c forward, and every point whose mirror image lies in the half that c2r
    filled in (indices 1 ... n - (n // 2 + 1) along the last dim) gets the gradient of both."""
    dim = _wrapped(dim, grad.dim())
    last = dim[-1]
    half = _aten._fft_r2c(grad, dim, normalization, True)
    mirrored = grad.shape[last] - half.shape[last]
    if mirrored <= 0:
        return half
    weights = [1.0] + [2.0] * mirrored + [1.0] * (half.shape[last] - 1 - mirrored)
    shape = [1] * grad.dim()
    shape[last] = -1
    return half * E.tensor(weights, dtype=grad.dtype).reshape(shape)


derivative("_fft_r2c", {"self": _r2c_backward})
derivative("_fft_c2r", {"self": _c2r_backward})
derivative("_fft_c2c", {"self": lambda grad, dim, normalization, forward:
                        _aten._fft_c2c(grad, dim, normalization, not forward)})
