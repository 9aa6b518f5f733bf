"""torch.signal: signal processing; so far its window functions, `ember.signal.windows`."""
from . import windows

__all__ = ["windows"]
