"""torch._C._fft: the torch.fft functions under their ATen names (`fft_hfft2`, ...)."""
from .. import fft as _fft

globals().update({"fft_" + name: getattr(_fft, name) for name in _fft.__all__})
