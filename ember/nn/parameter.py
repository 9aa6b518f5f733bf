"""nn.Parameter and nn.Buffer: tensors that a Module registers as its state."""
from .._tensor import Tensor, _alias


class Parameter(Tensor):
    """A leaf tensor that requires grad and that Module.__setattr__ registers as a parameter."""
    _is_param = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._python_bindings import empty
            data = empty(0)
        t = _alias(data)._as_subclass(cls)
        t._rg = bool(requires_grad)
        return t

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        from .._tensor import _alias as alias
        return (_rebuild_parameter, (alias(self), self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self._rg)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    """`isinstance(t, Buffer)` asks whether `t` was marked as a buffer: Buffer(...) returns the
    tensor itself, flagged, rather than an instance of a subclass."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._python_bindings import empty
            data = empty(0)
        t = _alias(data)
        t.persistent = persistent
        t._is_buffer = True
        return t
