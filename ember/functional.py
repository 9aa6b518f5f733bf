"""torch.functional's spectral functions: the short-time Fourier transform and its inverse,
written from ops as PyTorch's SpectralOps writes them, so autograd sees unfold, the window
product, the FFT ops and the overlap-add.

    stft:   signal --pad (center)--> frames (unfold) --x window--> _fft_r2c / _fft_c2c
            --> (batch, frequency, frame)
    istft:  spectrum --_fft_c2r / _fft_c2c--> frames --x window--> overlap-add
            (unfold_backward) --/ overlap-added squared window--> signal

The inverse is exact wherever the squared windows overlap-add to a nonzero value (the NOLA
condition), which istft checks.
"""
import warnings

from . import _refs as E
from ._dispatch.ops import ops as _ops
from ._bindings import install_methods
from .nn import functional as F

__all__ = ["stft", "istft"]   # and _TOP_LEVEL's, at the end

_aten = _ops.aten


def _centered_window(window, win_length, n_fft, like):
    """The window zero-padded on both sides to n_fft points (a window of ones if None)."""
    if window is None:
        window = E.ones(win_length, dtype=like.dtype, device=like.device)
    left = (n_fft - win_length) // 2
    return E.constant_pad_nd(window, [left, n_fft - win_length - left])


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The Fourier transforms of the frames of `input` (1-d, or 2-d with a batch dim): frame
    m holds the n_fft samples from m * hop_length (centered there if `center`: the signal is
    padded by n_fft // 2 on both sides), times the window. The result has a frequency dim and
    a frame dim, (batch?, n_fft // 2 + 1 or n_fft, frames)."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        ndim = input.dim()
        pad = n_fft // 2
        input = F.pad(input.view([1] * (3 - ndim) + list(input.shape)), [pad, pad], pad_mode)
        input = input.view(input.shape[-ndim:])
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is "
                      "known to cause spectral leakage. Other windows such as torch.hann_window "
                      "or torch.hamming_window are recommended to reduce spectral leakage.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    elif not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning)
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values, got "
                           f"{input.dtype}")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, got {input.dim()}D")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    if align_to_window and win_length < n_fft:
        # the window, not the frame, starts at m * hop_length: frames start `left` samples
        # earlier, over zeros before the signal's start
        left = (n_fft - win_length) // 2
        x = E.constant_pad_nd(x, [left, n_fft - win_length - left])
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    if win_length < n_fft:
        window = _centered_window(window, win_length, n_fft, x)
    frames = x.unfold(-1, n_fft, hop_length)  # (batch, frames, n_fft)
    if window is not None:
        frames = frames * window
    onesided = not frames.is_complex() if onesided is None else onesided
    normalization = 1 if normalized else 0
    if frames.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _aten._fft_c2c(frames, [2], normalization, True)
    else:
        out = _aten._fft_r2c(frames, [2], normalization, onesided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex else E.view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The signal whose stft is `input`: each frame's inverse transform, times the window,
    added up where the frames overlap, divided by the overlap-added squared window."""
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.numel() == 0:
        raise RuntimeError("istft: input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 3 or 4 dimensions, but got "
                           f"{input.dim() + 1} (counting the real and imaginary parts)")
    fft_size, n_frames = input.shape[-2], input.shape[-1]
    onesided = fft_size != n_fft if onesided is None else onesided
    expected = n_fft // 2 + 1 if onesided else n_fft
    if fft_size != expected:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match {'n_fft / 2 + 1' if onesided else 'n_fft'} "
                           f"when onesided={onesided}, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError("istft(...): expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError("istft(...): expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError("istft: Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    # the window of ones has the real dtype (`.real`: a conjugate view has no view_as_real)
    window = _centered_window(window, win_length, n_fft, input.real)
    x = (input.unsqueeze(0) if input.dim() == 2 else input).transpose(1, 2)
    normalization = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _aten._fft_c2c(x, [2], normalization, False)
    else:
        if window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _aten._fft_c2r(x, [2], normalization, n_fft)  # (batch, frames, n_fft)
    signal_length = n_fft + hop_length * (n_frames - 1)
    y = _aten.unfold_backward(x * window, [x.shape[0], signal_length], 1, n_fft, hop_length)
    envelope = _aten.unfold_backward(window.pow(2).expand(1, n_frames, n_fft),
                                     [1, signal_length], 1, n_fft, hop_length)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else signal_length
    y, envelope = y[:, start:end], envelope[:, start:end]
    if (envelope.abs().min() < 1e-11).item():
        raise RuntimeError("istft: window overlap add min: 1 (the squared window does not "
                           "overlap-add to a nonzero value everywhere: the NOLA condition)")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > signal_length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning)
        y = E.constant_pad_nd(y, [0, end - signal_length])
    return y


install_methods(dict(stft=stft, istft=istft))


# PyTorch defines the rest of its public torch.functional functions in this module too and
# re-exports them as torch.<name>: here they are the same objects, looked up on first use.
_TOP_LEVEL = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
              "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "lu", "norm",
              "meshgrid", "pca_lowrank", "split", "svd_lowrank", "tensordot", "unique",
              "unique_consecutive", "unravel_index")


def __getattr__(name):
    if name in _TOP_LEVEL:
        import ember
        return getattr(ember, name)
    raise AttributeError(f"module 'ember.functional' has no attribute '{name}'")


__all__ += _TOP_LEVEL
