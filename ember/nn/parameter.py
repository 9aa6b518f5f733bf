"""nn.Parameter and nn.Buffer: tensors that a Module registers as its state."""
from .._core import torch_function as _torch_function
from .._core.tensor import Tensor, _alias_with_bits


class _ParameterMeta(type):
    """`isinstance(t, Parameter)` is also true of a tensor of another subclass that
    Parameter(...) flagged with `_is_param` (see Parameter.__new__)."""

    def __instancecheck__(cls, instance):
        # only a tensor's flag is read: other objects (an fx Proxy answers every attribute
        # with a new Proxy) get the ordinary check, as in PyTorch's _ParameterMeta
        if cls is Parameter and isinstance(instance, Tensor) and \
                getattr(instance, "_is_param", False):
            return True
        return type.__instancecheck__(cls, instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A leaf tensor that requires grad and that Module.__setattr__ registers as a parameter.
    Its `__torch_function__` is the disabled one, as in PyTorch: ops on it return plain
    tensors.

    As in PyTorch, only a plain Tensor (or a Parameter) becomes an instance of Parameter: a
    tensor of another subclass (a wrapper subclass such as TwoTensor) is detached, keeps its
    type and is flagged `_is_param`, which `isinstance(t, Parameter)` honours. ember's own
    subclasses that stand for what PyTorch implements in C++ (nested, batched) say
    `_plain_tensor_in_torch` and become Parameters as a plain tensor does."""
    _is_param = True
    __torch_function__ = _torch_function._disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._bindings.factories import empty
            data = empty(0)
        if (type(data) is not Tensor and type(data) is not Parameter
                and not getattr(type(data), "_plain_tensor_in_torch", False)):
            t = data.detach().requires_grad_(requires_grad)
            if type(t) is not type(data):
                raise RuntimeError(
                    f"Creating a Parameter from an instance of type {type(data).__name__} "
                    "requires that detach() returns an instance of the same type, but return "
                    f"type {type(t).__name__} was found instead. To use the type as a "
                    "Parameter, please correct the detach() semantics defined by "
                    "its __torch_dispatch__() implementation.")
            t._is_param = True
            return t
        if requires_grad:
            from .._bindings.out import check_can_require_grad
            check_can_require_grad(data)
        t = _alias_with_bits(data)._as_subclass(cls)
        t._rg = bool(requires_grad)
        return t

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (_alias_with_bits(self), self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self._rg)
        memo[id(self)] = result
        return result


_torch_function.never_dispatches(Parameter)
Parameter._is_subclass_to_print = False   # "Parameter containing:\ntensor(...)"


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
            from .._bindings.factories import empty
            data = empty(0)
        t = _alias_with_bits(data)
        t.persistent = persistent
        t._is_buffer = True
        return t


# ---- uninitialized parameters and buffers (lazy modules) ---------------------------------------
_NP_SLOT = Tensor.__dict__["_np"]  # the slot that holds a tensor's NumPy array
_USE_ERROR = ("Attempted to use an uninitialized parameter in {}. This error happens when you "
              "are using a `LazyModule` or explicitly manipulating "
              "`torch.nn.parameter.{}` objects. When using LazyModules Call `forward` with a "
              "dummy batch to initialize the parameters before calling torch functions")


class UninitializedTensorMixin:
    """A placeholder whose shape a lazy module learns from its first input.

    Until `materialize(shape)` gives it storage, every operation that reads its data fails:
    the NumPy array behind it, which all kernels reach through the `_np` slot, is guarded by a
    property that raises. Only metadata (size, dtype, device, requires_grad) and the
    conversions a Module applies to all its tensors (`to`, `float`, `cpu`, ...) work, on the
    empty placeholder data; materialize swaps in real data and turns the object into a plain
    Parameter or Tensor (`cls_to_become`)."""
    _is_uninitialized = True
    # its data is guarded by the `_np` property below instead (an uninitialized buffer is a
    # Tensor subclass whose ops must not become placeholders)
    __torch_function__ = _torch_function._disabled_torch_function_impl

    cls_to_become = None
    _allowed_methods = ("size", "copy_", "is_complex", "is_floating_point", "half", "float",
                        "double", "char", "short", "int", "long", "cuda", "cpu", "to",
                        "get_device")

    @property
    def _np(self):
        raise ValueError(_USE_ERROR.format("an operation", type(self).__name__))

    @_np.setter
    def _np(self, array):
        _NP_SLOT.__set__(self, array)

    def _placeholder(self):
        """The empty data as an ordinary tensor, for the allowed methods."""
        from .._core.tensor import _wrap
        t = _wrap(_NP_SLOT.__get__(self))
        t.dtype, t._device = self.dtype, self._device
        return t

    def materialize(self, shape, device=None, dtype=None):
        from .._bindings.factories import empty
        data = empty(shape, device=self.device if device is None else device,
                     dtype=self.dtype if dtype is None else dtype)
        self.__class__ = self.cls_to_become  # first: the setter below writes the plain slot
        self.data = data

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This "
                           "error usually happens in `load_state_dict` when trying to load an "
                           "uninitialized parameter into an initialized one. Call `forward` to "
                           "initialize the parameters before accessing their attributes.")

    def numel(self):
        raise ValueError(_USE_ERROR.format("numel", type(self).__name__))

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def _forward_to_placeholder(name):
    """An allowed method run on the placeholder data. As in PyTorch, a conversion that changes
    nothing returns the object itself, and a converted buffer stays uninitialized (a converted
    parameter comes back as a plain tensor)."""
    def method(self, *args, **kwargs):
        data = self._placeholder()
        # uninitialized arguments too (copy_ between two placeholders, as load_state_dict does)
        args = [a._placeholder() if isinstance(a, UninitializedTensorMixin) else a for a in args]
        result = getattr(data, name)(*args, **kwargs)
        if result is data:
            return self
        if isinstance(result, Tensor) and not isinstance(self, Parameter):
            return result._as_subclass(type(self))
        return result
    method.__name__ = name
    return method


for _name in UninitializedTensorMixin._allowed_methods:
    setattr(UninitializedTensorMixin, _name, _forward_to_placeholder(_name))


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


def _uninitialized(cls, requires_grad, device, dtype):
    from .._bindings.factories import empty
    t = empty(0, device=device, dtype=dtype)._as_subclass(cls)
    t._rg = bool(requires_grad)
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _uninitialized(cls, requires_grad, device, dtype)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _uninitialized(cls, requires_grad, device, dtype)
        t.persistent = persistent
        t._is_buffer = True
        return t
