"""torch.amp.GradScaler: dynamic loss scaling for mixed-precision training.

    scaler = ember.amp.GradScaler("cpu")
    scaler.scale(loss).backward()   # loss * scale, so small float16 gradients do not underflow
    scaler.step(optimizer)          # unscale the grads; skip the step if any is inf/NaN
    scaler.update()                 # halve the scale after an overflow, double it after
                                    # `growth_interval` clean steps in a row

The arithmetic is two ops, `_amp_foreach_non_finite_check_and_unscale_` and
`_amp_update_scale_` (`ember/_aten/amp.py`); this class keeps the per-optimizer bookkeeping
(READY -> UNSCALED -> STEPPED between updates) that PyTorch's does.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from collections import abc, defaultdict
from enum import Enum

from .._bindings.factories import full
from .._core import dtype as D
from .._core.tensor import Tensor
from .._dispatch.dispatcher import lookup
from ..autograd.grad_mode import no_grad

__all__ = ["OptState", "GradScaler"]

_unscale = lookup("_amp_foreach_non_finite_check_and_unscale_")
_update_scale = lookup("_amp_update_scale_")


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=_user_stacklevel())
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = full((), self._init_scale, dtype=D.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=D.int32, device=dev)

    def scale(self, outputs):
        """`outputs` (a tensor, or tensors in nested lists/tuples) multiplied by the scale."""
        if not self._enabled:
            return outputs

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_dtype = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got "
                                             f"{type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    per_dtype[param.grad.dtype].append(param.grad)
            for grads in per_dtype.values():
                _unscale(grads, found_inf, inv_scale)
        # one device here, so one found_inf (PyTorch keeps one per device)
        return {found_inf.device: found_inf} if per_dtype else {}

    def unscale_(self, optimizer):
        """Divide `optimizer`'s gradients by the scale in place (e.g. before clipping them)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=D.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale the gradients if `unscale_` was not called, then run `optimizer.step` unless
        they hold an inf or NaN; returns what `optimizer.step` returned, or None if skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Set the scale for the next iteration: `new_scale` if given, else back off after an
        inf/NaN this iteration, or grow after `growth_interval` clean iterations."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for found_inf in found_infs[1:]:
                found_inf_combined += found_inf
            _update_scale(_scale, _growth_tracker, found_inf_combined, self._growth_factor,
                          self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
