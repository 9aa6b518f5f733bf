"""torch.autograd.Variable, the pre-0.4 wrapper that tensors absorbed. Old programs still write
`Variable(x, requires_grad=True)`: it gives a tensor sharing x's data, detached from x's history,
with the requested requires_grad; every tensor is an instance of Variable."""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .._core.tensor import Tensor, _require_grad
from .engine import _ImperativeEngine

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    _execution_engine = _ImperativeEngine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=_user_stacklevel())
        if data is None:
            data = Tensor()  # empty, of the default dtype
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        return _require_grad(t, requires_grad) if requires_grad else t
