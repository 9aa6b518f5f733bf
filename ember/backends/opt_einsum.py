"""torch.backends.opt_einsum: whether torch.einsum asks the opt_einsum package for a
contraction order. ember's einsum contracts through NumPy, which picks its own order, so the
package is only reported (available when it is installed) and the flags are recorded."""
from contextlib import contextmanager

try:
    import opt_einsum as _opt_einsum
except ImportError:
    _opt_einsum = None


def is_available():
    """Whether the opt_einsum package could be imported."""
    return _opt_einsum is not None


def get_opt_einsum():
    """The opt_einsum package, or None when it is not installed."""
    return _opt_einsum


enabled = is_available()
strategy = "auto" if is_available() else None


def set_flags(_enabled=None, _strategy=None):
    """Set `enabled` / `strategy` (None leaves one alone) and return the previous pair."""
    global enabled, strategy
    orig = (enabled, strategy)
    if _enabled is not None:
        if _enabled and not is_available():
            raise ValueError(
                f"opt_einsum is not available, so setting `enabled` to {_enabled} will not reap "
                "the benefits of calculating an optimal path for einsum. torch.einsum will "
                "fall back to contracting from left to right. To enable this optimal path "
                "calculation, please install opt-einsum.")
        enabled = _enabled
    if _strategy is not None:
        if not is_available():
            raise ValueError(
                f"opt_einsum is not available, so setting `strategy` to {_strategy} will not "
                "be meaningful. torch.einsum will bypass path calculation and simply contract "
                "from left to right. Please install opt_einsum or unset `strategy`.")
        if _strategy not in ("auto", "greedy", "optimal"):
            raise ValueError(f"`strategy` must be one of the following: [auto, greedy, "
                             f"optimal] but is {_strategy}")
        strategy = _strategy
    return orig


@contextmanager
def flags(enabled=None, strategy=None):
    """Set the flags for the `with` block and restore them after."""
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)
