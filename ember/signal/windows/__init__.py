"""torch.signal.windows: SciPy's window functions (bartlett, blackman, cosine, exponential,
gaussian, general_cosine, general_hamming, hamming, hann, kaiser, nuttall)."""
from .windows import (bartlett, blackman, cosine, exponential, gaussian, general_cosine,
                      general_hamming, hamming, hann, kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
