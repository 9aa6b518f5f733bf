"""The frame of the functional optimizers (`torch.optim.adam.adam(params, grads, ...)` and the
others, which the optimizer classes' `step()` call): which of PyTorch's implementations a call
takes, the errors that implementation raises, and the one update ember runs for all of them.

PyTorch writes each algorithm up to three times: a loop over the parameters ("single tensor",
the default on the CPU), a multi-tensor version on `torch._foreach_*` ops (`foreach=True`, the
default on CUDA) and one fused kernel (`fused=True`: Adam, AdamW, SGD, Adagrad). They compute the
same update, up to rounding. ember has one update per algorithm, written on NumPy arrays
(_foreach.py), so `foreach` and `fused` only decide which of PyTorch's checks apply, and the
fused kernels' AMP arguments (`grad_scale`, `found_inf`). (PyTorch also refuses foreach and
fused under TorchScript; ember never runs as TorchScript, so those errors cannot arise.)
"""
from .._core.tensor import Tensor
from .._dynamo.eval_frame import is_compiling
from ..autograd.grad_mode import is_grad_enabled, no_grad
from . import _differentiable, _foreach
from .optimizer import _default_to_fused_or_foreach, _get_capturable_supported_devices


def implementation(params, foreach, fused=None, differentiable=False):
    """"fused", "foreach" or "single": the implementation PyTorch's functional call runs."""
    if foreach is None and fused is None:
        _, foreach = _default_to_fused_or_foreach(params, differentiable, use_fused=False)
    return "fused" if fused else "foreach" if foreach else "single"


def check_state_steps(steps, name="state_steps"):
    """`step` is a 0-d tensor since PyTorch 1.12; older callers passed Python numbers."""
    if not all(isinstance(t, Tensor) for t in steps):
        raise RuntimeError(f"API has changed, `{name}` argument must contain a list of "
                           "singleton tensors")


def check(kind, params, *, differentiable=False, grad_scale=None, found_inf=None,
          fused_name=None, capturable=False, capturable_tensors="params and state_steps",
          supports_xla=True):
    """PyTorch's errors for implementation `kind`: the fused kernels refuse differentiable=True,
    the others `grad_scale` and `found_inf` (foreach also differentiable=True), and capturable=True
    needs an accelerator. foreach and fused return at once, unchecked, for no parameters."""
    if not params and kind != "single":
        return
    if kind == "fused":
        if differentiable:
            raise RuntimeError(f"{fused_name} with fused=True does not support "
                               "differentiable=True")
        return
    if capturable and params and not is_compiling():
        devices = _get_capturable_supported_devices(supports_xla)
        if any(p.device.type not in devices for p in params):
            raise AssertionError(f"If capturable=True, {capturable_tensors} must be on "
                                 f"supported devices: {devices}.")
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    if kind == "foreach" and differentiable:
        raise AssertionError("_foreach ops don't support autograd")


def unscale(grads, grad_scale, found_inf):
    """What the fused kernels do with AMP's arguments (GradScaler passes them to optimizers
    that take them): nothing moves when `found_inf` is set (False is returned); otherwise the
    gradients are divided by `grad_scale` in place."""
    if found_inf is not None and found_inf.item() != 0:
        return False
    if grad_scale is not None:
        with no_grad():
            for g in grads:
                g.div_(grad_scale)
    return True


def update(fn, param, grad, states, scalars):
    """Run `fn(scratch, param, grad, *states, **scalars)`, the update of one parameter: as
    tensor ops autograd records when grad mode is on and a tensor needs a gradient (an
    optimizer with differentiable=True; Note [differentiable updates]), as one recorded op for a
    lazy parameter, and otherwise on the NumPy arrays, block by block (_foreach.apply)."""
    if is_grad_enabled() and (
            param.requires_grad or grad.requires_grad
            or any(s.requires_grad for s in states)
            or any(isinstance(v, Tensor) and v.requires_grad for v in scalars.values())):
        _differentiable.apply(fn, param, grad, states, **scalars)
    elif param._lazy is not None:
        from .._lazy.optimizer import lazy_update
        lazy_update(fn, param, grad, states, scalars)
    else:
        _foreach.apply(fn, param, grad, states, **scalars)
