"""Gradient clipping: rescale the gradients of a set of parameters so that their joint norm is
at most `max_norm` (clip_grad_norm_), or clamp every gradient element into [-v, v]
(clip_grad_value_).

The joint norm is the norm of the per-tensor norms, so it never needs the gradients
concatenated. `foreach` is accepted for PyTorch's signature: ember's per-tensor loop already is
its fused path, and both give the same numbers.
"""
import types
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from ... import _refs as E
from ... import linalg
from ...autograd.grad_mode import no_grad
from ..._core.tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def _get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The `norm_type`-norm of all `tensors` taken together, as a 0-dim tensor."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return E.tensor(0.0)
    norms = [linalg.vector_norm(t, norm_type) for t in tensors]
    total_norm = linalg.vector_norm(E.stack(norms), norm_type)
    if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@no_grad()
def _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the parameters' gradients by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    clip_coef = E.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
    # PyTorch always multiplies, to spare a GPU a sync; on the CPU reading the coefficient is
    # free, and multiplying by exactly 1.0 changes no value (not even NaN or -0.0)
    if clip_coef.item() == 1.0:
        return
    for g in grads:
        g.mul_(clip_coef)


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clip the gradients of `parameters` in place to a joint norm of at most `max_norm`;
    returns the joint norm they had before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        was_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # it is walked twice
        if was_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=_user_stacklevel())
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = _get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=_user_stacklevel())
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element of `parameters` into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
