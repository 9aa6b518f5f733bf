"""Spectral functions, forward + backward: an audio front end's stft, and a 2-d FFT round trip."""
from registry import benchmark


@benchmark(target=2.0)
def bench_stft(lib):
    """The power spectrogram of 8 one-second 16 kHz signals (n_fft 400, hop 160, Hann window,
    reflect padding), backwards to the signals."""
    lib.manual_seed(0)
    x = lib.randn(8, 16000, requires_grad=True)
    window = lib.hann_window(400)

    def step():
        s = lib.stft(x, 400, 160, window=window, return_complex=True)
        s.abs().pow(2).sum().backward()
    return step


@benchmark(target=2.0)
def bench_fft2_round_trip(lib):
    """rfft2 then irfft2 of a (16, 3, 64, 64) batch, backwards to the images."""
    lib.manual_seed(0)
    x = lib.randn(16, 3, 64, 64, requires_grad=True)

    def step():
        lib.fft.irfft2(lib.fft.rfft2(x, norm="ortho"), s=(64, 64), norm="ortho").sum().backward()
    return step
