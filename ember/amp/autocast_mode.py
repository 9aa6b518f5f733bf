"""torch.autocast: a context manager (and decorator) that turns on the AutocastCPU dispatch key
for its region, with a lower-precision dtype, and restores the previous state on exit.

The casting itself is the key's kernel, `ember/_aten/autocast.py`; this module only switches the
state in `ember/_core/autocast_state.py`. Leaving the outermost region drops the cast cache.
`custom_fwd` / `custom_bwd` let an `autograd.Function` opt out of autocast or cast its inputs.
"""
import collections.abc
import functools
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

from .._core import autocast_state as S
from .._core import dtype as D
from .._core.tensor import Tensor

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd",
           "custom_bwd"]

# the device types PyTorch's is_autocast_available accepts
_AVAILABLE = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia", "hip")


def is_autocast_available(device_type):
    return S._device_type(device_type) in _AVAILABLE


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    """Run the region's ops in the op-specific dtypes of PyTorch's autocast lists:
    matmuls and convolutions in `dtype` (bfloat16 by default on CPU), reductions, losses and
    decompositions in float32, cat/stack in the widest input type.

        with ember.autocast("cpu", dtype=ember.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()   # backward ops run in the dtypes the forward used
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = S.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = (S.is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            if device_type == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=_user_stacklevel())
                enabled = False
            elif self.fast_dtype not in (D.bfloat16, D.float16):
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              f"torch.bfloat16, torch.float16 currently.", stacklevel=_user_stacklevel())
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = S.is_autocast_cache_enabled()
        self.prev = S.is_autocast_enabled(self.device)
        self.prev_fastdtype = S.get_autocast_dtype(self.device)
        S.set_autocast_enabled(self.device, self._enabled)
        S.set_autocast_dtype(self.device, self.fast_dtype)
        S.autocast_increment_nesting()
        S.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if S.autocast_decrement_nesting() == 0:
            S.clear_autocast_cache()
        S.set_autocast_enabled(self.device, self.prev)
        S.set_autocast_dtype(self.device, self.prev_fastdtype)
        S.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")
        return autocast_decorator(self, func)


def _cast(value, device_type, dtype):
    """Floating tensors on `device_type` (not float64) inside `value`'s containers cast to
    `dtype`; strings and NumPy arrays pass through."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not D.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate an autograd.Function's forward: with `cast_inputs`, inside an autocast region
    its floating inputs are cast to that dtype and it runs with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = S.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = S.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if S.is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate an autograd.Function's backward to run in the autocast state of its forward."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


def _enter_autocast(*vals):
    """Enter an autocast region outside a `with` statement (what graph capture records)."""
    mode = autocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode):
    mode.__exit__(None, None, None)
