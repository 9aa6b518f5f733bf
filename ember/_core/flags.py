"""Process-wide switches PyTorch keeps in its global context: whether warnings meant to be shown
once are shown every time (`set_warn_always`), and flushing denormal floats to zero (which NumPy
cannot do, so `set_flush_denormal` reports it unsupported, as PyTorch does on such CPUs)."""
_warn_always = False


def set_warn_always(b):
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled():
    return _warn_always


def set_flush_denormal(mode):
    """Returns whether flushing denormals is supported: NumPy kernels keep IEEE behaviour."""
    return False
