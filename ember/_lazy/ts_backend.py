"""torch._lazy.ts_backend: PyTorch selects its TorchScript backend for the lazy device here.
ember's lazy device has one backend (ember/_inductor's generated NumPy code), always ready."""


def init():
    """Accepted for PyTorch compatibility: ember's lazy backend needs no initialisation."""
