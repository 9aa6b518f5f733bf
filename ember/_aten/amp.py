"""GradScaler's two ops, as PyTorch's AmpKernels: unscale gradients in place while noting any
inf/NaN in them, and update the loss scale from that note.

    _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        each grad *= inv_scale (in float32 for half-precision grads); found_inf = 1 if any
        element of any grad is inf or NaN
    _amp_update_scale_(scale, growth_tracker, found_inf, growth, backoff, interval)
        after an overflow: scale *= backoff, tracker = 0; otherwise the tracker counts the
        step, and after `interval` clean steps in a row: scale *= growth (if that stays
        finite), tracker = 0
"""
import numpy as np

from .._dispatch.dispatcher import impl
from .elementwise import _scalar_type_name


def _check_scalar_float(t, what):
    if t.numel() != 1:
        raise RuntimeError(f"{what} must be a 1-element tensor.")
    if t.dtype.name != "float32":
        raise RuntimeError(f"{what} must be a float tensor.")


@impl("_amp_foreach_non_finite_check_and_unscale_", "CPU")
def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    _check_scalar_float(inv_scale, "inv_scale")
    _check_scalar_float(found_inf, "found_inf")
    inv = np.float32(inv_scale._np.reshape(()))
    for g in self:
        if not g.dtype.is_floating_point:
            raise NotImplementedError('"_amp_foreach_non_finite_check_and_unscale_cpu" not '
                                      f"implemented for '{_scalar_type_name(g.dtype)}'")
        a = g._np
        if not np.isfinite(a).all():
            found_inf._np[...] = 1.0
        if inv != 1.0:
            # half-precision grads are scaled in float32 and rounded once, as PyTorch's opmath
            wide = a.astype(np.float32) if a.itemsize < 4 else a
            with np.errstate(invalid="ignore", over="ignore"):
                g._np[...] = (wide * inv.astype(wide.dtype)).astype(a.dtype)
        g._storage_()._version += 1  # the dispatcher bumps only a `self` tensor's counter
    found_inf._storage_()._version += 1


@impl("_amp_foreach_non_finite_check_and_unscale_", "Meta")
def _amp_foreach_non_finite_check_and_unscale_meta(self, found_inf, inv_scale):
    return None


@impl("_amp_update_scale_", "CPU")
def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor,
                       scale_backoff_factor, growth_interval):
    _check_scalar_float(self, "current_scale")
    _check_scalar_float(found_inf, "found_inf")
    if growth_tracker.numel() != 1:
        raise RuntimeError("growth_tracker must be a 1-element tensor.")
    if growth_tracker.dtype.name != "int32":
        raise RuntimeError("growth_tracker must be an int tensor.")
    scale = float(self._np.reshape(()))
    if float(found_inf._np.reshape(())):
        self._np[...] = np.float32(scale * scale_backoff_factor)
        growth_tracker._np[...] = 0
    else:
        successful = int(growth_tracker._np.reshape(())) + 1
        if successful == growth_interval:
            grown = np.float32(scale * scale_growth_factor)
            if np.isfinite(grown):
                self._np[...] = grown
            growth_tracker._np[...] = 0
        else:
            growth_tracker._np[...] = successful
    growth_tracker._storage_()._version += 1
    return self


@impl("_amp_update_scale_", "Meta")
def _amp_update_scale_meta(self, growth_tracker, found_inf, scale_growth_factor,
                           scale_backoff_factor, growth_interval):
    return self
