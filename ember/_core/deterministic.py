"""torch.use_deterministic_algorithms: the process-wide switch, and what it does on the CPU.

ember's CPU kernels are deterministic already (NumPy, and scatter-adds that run in index order),
so the visible effect is PyTorch's other one: memory a factory leaves uninitialized (`empty`,
`empty_strided`, `empty_like`, the new part of a `resize_`) is filled with NaN (floating and
complex dtypes) or the dtype's largest value (integers, True for bool), so that results never
depend on what the memory held before. `ember.utils.deterministic.fill_uninitialized_memory =
False` turns the filling off, as in PyTorch.
"""


class _State:
    enabled = False
    warn_only = False
    fill_uninitialized_memory = True


state = _State()


def use_deterministic_algorithms(mode, *, warn_only=False):
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    state.enabled, state.warn_only = mode, warn_only


def are_deterministic_algorithms_enabled():
    return state.enabled


def is_deterministic_algorithms_warn_only_enabled():
    return state.warn_only


_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not state.enabled:
        return 0
    return 1 if state.warn_only else 2


def fill_value(dtype):
    """What uninitialized memory of `dtype` holds in deterministic mode, or None for leaving it."""
    if not (state.enabled and state.fill_uninitialized_memory):
        return None
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype.name == "bool":
        return True
    import numpy as np
    return np.iinfo(dtype._np).max
