"""torch.nested with the strided layout: a NestedTensor holds a list of tensors with the same
number of dimensions and different sizes (sentences of different lengths), as one tensor whose
dimension 0 indexes them.

ember's NestedTensor is a Tensor subclass holding its components; functions reach it through
`__torch_function__` (as MaskedTensor does). What it supports: construction
(`nested_tensor` copies, `as_nested_tensor` keeps the components' autograd history), `size(d)`
for regular dimensions (an irregular one raises as PyTorch), `dim`, `numel`, `unbind`,
`to_padded_tensor` (differentiable), elementwise unary functions and arithmetic with a scalar
or a nested tensor of the same structure, applied component by component, and PyTorch's
printing. Any other function raises NotImplementedError naming it, as PyTorch's does for an op
without a NestedTensorCPU kernel. The jagged layout is not provided.
"""
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

from .._core.tensor import Tensor

__all__ = ["nested_tensor", "as_nested_tensor", "to_padded_tensor"]

# the elementwise functions PyTorch's NestedTensorCPU kernels cover (others raise there too)
_UNARY = ["abs", "cos", "neg", "relu", "sgn", "sin", "sqrt", "tanh", "gelu", "silu", "clone",
          "detach", "float", "double", "half", "to", "logical_not", "isnan"]
_BINARY = ["add", "sub", "mul", "div", "__add__", "__radd__", "__sub__", "__mul__", "__rmul__",
           "__truediv__", "__iadd__", "__isub__", "__imul__", "__itruediv__"]
_METADATA = {"dim", "ndimension", "numel", "size", "unbind", "to_padded_tensor", "__repr__",
             "__format__", "requires_grad_", "is_contiguous", "backward", "__len__",
             "element_size", "nelement"}


class NestedTensor(Tensor):
    """A list of tensors with the same number of dimensions, as one tensor."""
    _plain_tensor_in_torch = True   # a torch.Tensor in PyTorch (C++ NestedTensorImpl)

    @staticmethod
    def _from_components(components):
        import ember
        flat = [c.detach().reshape(-1) for c in components]
        buffer = ember.cat(flat) if flat else ember.empty(0)
        nt = Tensor._make_subclass(NestedTensor, buffer)
        nt._components = list(components)
        return nt

    # ---- metadata ----------------------------------------------------------------------------
    @property
    def is_nested(self):
        return True

    @property
    def shape(self):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file "
                           "an issue.")

    @property
    def requires_grad(self):
        return any(c.requires_grad for c in self._components)

    @property
    def grad_fn(self):
        return None

    def requires_grad_(self, requires_grad=True):
        for c in self._components:
            c.requires_grad_(requires_grad)
        return self

    def dim(self):
        return (self._components[0].dim() if self._components else 0) + 1

    ndimension = dim

    def size(self, dim=None):
        if dim is None:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                               "file an issue.")
        ndim = self.dim()
        if not -ndim <= dim < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {dim})")
        d = dim % ndim
        if d == 0:
            return len(self._components)
        sizes = {c.shape[d - 1] for c in self._components}
        if len(sizes) != 1:
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return sizes.pop()

    def stride(self, dim=None):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please "
                           "file an issue.")

    def numel(self):
        return sum(c.numel() for c in self._components)

    nelement = numel

    def is_contiguous(self, memory_format=None):
        return True

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        return tuple(self._components)

    def to_padded_tensor(self, padding, output_size=None):
        """One strided tensor: the components padded with `padding` to the largest size (or
        `output_size`) in every dimension, stacked."""
        import ember
        if not self._components:
            return ember.empty(output_size or (0,))
        ndim = self._components[0].dim()
        target = [max(c.shape[i] for c in self._components) for i in range(ndim)]
        if output_size is not None:
            if len(output_size) != ndim + 1:
                raise RuntimeError(f"Length of output_size does not match NestedTensor dims. "
                                   f"Broadcasting is not supported.")
            target = list(output_size[1:])
        padded = []
        for c in self._components:
            pads = []
            for i in reversed(range(ndim)):
                pads += [0, target[i] - c.shape[i]]
            padded.append(ember.nn.functional.pad(c, pads, value=padding) if ndim else c)
        return ember.stack(padded)

    def __repr__(self):
        parts = [_indent(repr(c)) for c in self._components]
        body = ",\n".join(parts) if parts else ""
        suffix = ", requires_grad=True" if self.requires_grad else ""
        return f"nested_tensor([\n{body}\n]{suffix})"

    def __len__(self):
        return len(self._components)

    def __reduce_ex__(self, protocol):
        # Pickled as its components (DataLoader workers send nested tensors this way).
        return _rebuild_nested, (self._components,)

    # ---- functions ---------------------------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in _METADATA:
            return func(*args, **kwargs)
        if name in ("get", "__get__"):  # properties (dtype, layout, device): the buffer's
            return super().__torch_function__(func, types, args, kwargs)
        if name in _UNARY:
            nt, rest = args[0], args[1:]
            return NestedTensor._from_components([func(c, *rest, **kwargs)
                                                  for c in nt._components])
        if name.endswith("_") and name[:-1] in _UNARY + _BINARY and \
                isinstance(args[0], NestedTensor):  # in place, component by component
            others = args[1:]
            if others and isinstance(others[0], NestedTensor):
                for c, o in zip(args[0]._components, _matching(name, args[0], others[0])):
                    func(c, o, *others[1:], **kwargs)
            else:
                _dense_operand(name, others[0] if others else None)
                for c in args[0]._components:
                    func(c, *others, **kwargs)
            return args[0]
        if name in _BINARY:
            return _binary(func, name, args, kwargs)
        if name == "is_same_size":
            return _is_same_size(*args, **kwargs)
        raise NotImplementedError(f"Could not run 'aten::{name.strip('_')}' with arguments from "
                                  "the 'NestedTensorCPU' backend. (ember.nested supports "
                                  "elementwise functions, to_padded_tensor and unbind)")


def _rebuild_nested(components):
    return NestedTensor._from_components(components)


def _matching(name, a, b):
    if [c.shape for c in a._components] != [c.shape for c in b._components]:
        raise RuntimeError(f"{name}: nested tensors must have the same structure, got "
                           f"component sizes {[tuple(c.shape) for c in a._components]} and "
                           f"{[tuple(c.shape) for c in b._components]}")
    return b._components


def _dense_operand(name, x):
    if isinstance(x, Tensor) and not isinstance(x, NestedTensor) and x.numel() != 1:
        raise NotImplementedError(f"{name}: a NestedTensor with a dense tensor of {x.numel()} "
                                  "elements is not supported by ember.nested")


def _binary(func, name, args, kwargs):
    a, b = args[0], args[1]
    if isinstance(a, NestedTensor) and isinstance(b, NestedTensor):
        pairs = zip(a._components, _matching(name, a, b))
    elif isinstance(a, NestedTensor):
        _dense_operand(name, b)
        pairs = ((c, b) for c in a._components)
    else:
        _dense_operand(name, a)
        pairs = ((a, c) for c in b._components)
    return NestedTensor._from_components([func(x, y, *args[2:], **kwargs) for x, y in pairs])


def _is_same_size(a, other):
    """Nested tensors are the same size when their components are, one by one; a nested
    tensor and a dense one are not comparable."""
    nested = [isinstance(t, NestedTensor) for t in (a, other)]
    if not all(nested):
        words = ["nested" if n else "not nested" for n in nested]
        raise RuntimeError(f"Expected both self and other to be nested tensors. Self is "
                           f"{words[0]}. While Other is {words[1]}.")
    return [c.shape for c in a._components] == [c.shape for c in other._components]


def _indent(text):
    return "\n".join("  " + line for line in text.split("\n"))


def _components(tensor_list, dtype, device, copy):
    import ember
    comps = []
    for t in tensor_list:
        if not isinstance(t, Tensor):
            t = ember.tensor(t, dtype=dtype, device=device)
        elif copy:
            t = t.detach().clone()
        if dtype is not None or device is not None:
            t = t.to(device=device, dtype=dtype)
        comps.append(t)
    for i, c in enumerate(comps[1:], 1):
        if c.dim() != comps[0].dim():
            raise RuntimeError(f"All Tensors given to nested_tensor must have the same "
                               f"dimension. Found dimension {c.dim()} for Tensor at index {i} "
                               f"and dimension {comps[0].dim()} for Tensor at index 0.")
    if comps and dtype is None:
        comps = [c.to(comps[0].dtype) for c in comps]
    return comps


def _check_layout(layout):
    from .._core.layout import strided
    if layout is not None and layout is not strided:
        raise NotImplementedError(f"ember.nested supports the strided layout only, got "
                                  f"{layout}")
    warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change in "
                  "the near future. We recommend specifying layout=torch.jagged when "
                  "constructing a nested tensor, as this layout receives active development, "
                  "has better operator coverage, and works with torch.compile.", stacklevel=_user_stacklevel())


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A NestedTensor of copies of `tensor_list` (a leaf: no autograd history)."""
    _check_layout(layout)
    comps = _components(tensor_list, dtype, device, copy=True)
    if requires_grad:
        for c in comps:
            c.requires_grad_()
    return NestedTensor._from_components(comps)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A NestedTensor of `ts` that keeps their autograd history (gradients flow back to them)."""
    _check_layout(layout)
    if isinstance(ts, NestedTensor):
        return ts
    if isinstance(ts, Tensor):
        ts = list(ts.unbind(0))
    elif not isinstance(ts, (list, tuple)):
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list "
                        f"/ tuple of tensors, got {type(ts).__name__}")
    return NestedTensor._from_components(_components(ts, dtype, device, copy=False))


def to_padded_tensor(input, padding, output_size=None, out=None):
    """`input.to_padded_tensor(padding, output_size)`."""
    return input.to_padded_tensor(padding, output_size)
