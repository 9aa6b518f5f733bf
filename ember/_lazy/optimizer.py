"""Optimizer steps on lazy parameters: each parameter's update is recorded as one op.

ember's optimizers update a parameter with a chain of NumPy calls on its arrays (ember/optim/
_foreach.py), which a lazy parameter does not have. On the lazy device the same update becomes
one recorded call, `lazy::_optimizer_update_` (PyTorch's fused optimizer kernels, `_fused_sgd_`
or `_fused_adam_`, play this part for whole parameter lists): it writes the parameter and its
state when the graph runs, with the very NumPy code of the eager step, so a lazy training step
gives eager mode's parameters. The update's float hyperparameters (Adam's bias corrections change
every step) travel in a small tensor input rather than in the op's arguments, so that a new
learning rate or step count reuses the compiled graph instead of compiling another.
"""
import numpy as np

from .._core.tensor import _wrap_external
from .._dispatch import dispatcher as _dispatcher
from ..autograd.grad_mode import no_grad
from ..optim import _foreach
from .tensor import lazy_from_data

_update_op = _dispatcher.define(
    "_optimizer_update_(Tensor(a!) param, Tensor grad, Tensor(b!)? state0, Tensor(c!)? state1, "
    "Tensor(d!)? state2, Tensor hyper, Any update) -> ()", "lazy")


class Update:
    """Which update function runs, with its non-float hyperparameters (the graph's constants);
    the float ones are the op's `hyper` tensor, named by `floats`."""
    __slots__ = ("fn", "floats", "fixed")

    def __init__(self, fn, floats, fixed):
        self.fn, self.floats, self.fixed = fn, floats, fixed

    def __eq__(self, other):
        return type(other) is Update and (self.fn, self.floats, self.fixed) == \
            (other.fn, other.floats, other.fixed)

    def __hash__(self):
        return hash((self.fn, self.floats, self.fixed))

    def __repr__(self):
        return f"Update({self.fn.__name__}, {dict(self.fixed)})"


def _update_cpu(param, grad, state0, state1, state2, hyper, update):
    scalars = dict(update.fixed)
    scalars.update(zip(update.floats, hyper._np.tolist()))
    states = [s for s in (state0, state1, state2) if s is not None]
    _foreach.apply(update.fn, param, grad, states, **scalars)


_dispatcher.register_kernel(_update_op, "CPU", _update_cpu)
_dispatcher.register_kernel(_update_op, "Meta", lambda *args: None)


def lazy_update(fn, param, grad, states, scalars):
    """Record `fn`'s update of lazy `param` (what `_foreach.apply` does for a CPU one)."""
    if len(states) > 3:
        raise NotImplementedError(f"the lazy device records optimizer updates with up to 3 "
                                  f"state tensors; {fn.__name__} has {len(states)}")
    floats = tuple(sorted(k for k, v in scalars.items() if type(v) is float))
    fixed = tuple(sorted((k, v) for k, v in scalars.items() if type(v) is not float))
    hyper = lazy_from_data(_wrap_external(np.array([scalars[k] for k in floats], dtype=np.float64)))
    padded = list(states) + [None] * (3 - len(states))
    with no_grad():
        _update_op(param, grad, *padded, hyper, Update(fn, floats, fixed))
    param._bump_version()  # as _foreach.apply does for a CPU parameter
    for s in states:
        s._bump_version()


def state_like(p, fill_value=None):
    """An optimizer state tensor for lazy parameter `p` (zeros_like / full_like / empty_like)."""
    from .._bindings.factories import empty_like, full_like
    with no_grad():
        if fill_value is None:
            return empty_like(p)
        return full_like(p, fill_value)
