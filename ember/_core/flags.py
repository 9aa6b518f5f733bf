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


_warned_once = set()


def warn_once(message, category=UserWarning, key=None):
    """PyTorch's TORCH_WARN_ONCE: `message` is shown the first time in the process (per `key`,
    by default the message), or every time while `set_warn_always(True)` is on; it names the
    user's line."""
    key = message if key is None else key
    if _warn_always or key not in _warned_once:
        _warned_once.add(key)
        import warnings
        from ._warnings import user_stacklevel
        warnings.warn(message, category, stacklevel=user_stacklevel())
