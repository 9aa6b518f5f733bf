"""The strided-layout NestedTensor: a list of tensors with the same number of dimensions and
different sizes (sentences of different lengths), as one tensor whose dimension 0 indexes them.

PyTorch keeps the components packed in one buffer with a table of sizes and strides
(NestedTensorImpl). ember keeps the component tensors themselves, so that autograd needs nothing
new: every nested op is the dense op applied component by component, and a gradient reaches a
nested tensor's components through their own graphs. What PyTorch says about the whole is read
off the components:

    is_contiguous    every component is contiguous (a transpose or a chunk of the last
                     dimension makes components that are not)
    requires_grad    some component requires grad
    is_leaf, grad    the components are leaves; the gradient is the nested tensor of theirs
                     (a component that got none counts as zeros, as in PyTorch's one buffer)
    grad_fn          the components' (one op made them all)

The dense tensor under the subclass is an empty buffer that carries dtype, device and layout.
The functions PyTorch's NestedTensorCPU kernels cover are in _ops.py; any other raises as
PyTorch's dispatcher does for an op without a nested kernel.
"""
from .._core.tensor import Tensor


class NestedTensor(Tensor):
    """A list of tensors with the same number of dimensions, as one tensor."""
    _plain_tensor_in_torch = True   # a torch.Tensor in PyTorch (C++ NestedTensorImpl)

    @staticmethod
    def _from_components(components, dtype=None, device=None):
        import ember
        if components:
            dtype, device = components[0].dtype, components[0].device
        nt = Tensor._make_subclass(NestedTensor, ember.empty(0, dtype=dtype, device=device))
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

    def dim(self):
        return (self._components[0].dim() if self._components else 0) + 1

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def size(self, dim=None):
        if dim is None:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                               "file an issue.")
        d = _wrap_dim(dim, self.dim())
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
        return all(c.is_contiguous() for c in self._components)

    def data_ptr(self):
        return self._components[0].data_ptr() if self._components else 0

    def _nested_tensor_size(self):
        import ember
        return ember.tensor([list(c.shape) for c in self._components], dtype=ember.int64)

    def _nested_tensor_strides(self):
        import ember
        return ember.tensor([list(c.stride()) for c in self._components], dtype=ember.int64)

    def to_padded_tensor(self, padding, output_size=None):
        from ._ops import _to_padded_tensor
        return _to_padded_tensor(None, self, padding, output_size)

    def _nested_tensor_storage_offsets(self):
        import ember
        from ._ops import storage_offsets
        return ember.tensor(storage_offsets(self), dtype=ember.int64)

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        return tuple(self._components)

    def __iter__(self):
        return iter(self._components)

    def __len__(self):
        return len(self._components)

    def __reduce_ex__(self, protocol):
        # Pickled as PyTorch pickles one: torch._utils._rebuild_nested_tensor(buffer, sizes,
        # strides, storage_offsets), so checkpoints load in either library.
        import ember
        from ._ops import storages
        with ember.no_grad():
            whole = [c.as_strided((c.untyped_storage().nbytes() // c.element_size(),), (1,), 0)
                     for _, c in storages(self).values()]
            buffer = ember.cat(whole) if whole else ember.empty(0, dtype=self.dtype)
        return _rebuild_nested_tensor, (buffer, self._nested_tensor_size(),
                                        self._nested_tensor_strides(),
                                        self._nested_tensor_storage_offsets())

    # ---- autograd: read off the components ---------------------------------------------------
    @property
    def requires_grad(self):
        return any(c.requires_grad for c in self._components)

    def requires_grad_(self, requires_grad=True):
        for c in self._components:
            c.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return next((c.grad_fn for c in self._components if c.grad_fn is not None), None)

    @property
    def is_leaf(self):
        return all(c.grad_fn is None for c in self._components)

    @property
    def grad(self):
        if not self.is_leaf:
            return None
        grads = [c.grad for c in self._components]
        if all(g is None for g in grads):
            return None
        return NestedTensor._from_components(
            [c.new_zeros(c.shape) if g is None else g for c, g in zip(self._components, grads)])

    @grad.setter
    def grad(self, value):
        parts = value._components if value is not None else [None] * len(self._components)
        for c, g in zip(self._components, parts):
            c.grad = g

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        import ember
        if not isinstance(gradient, NestedTensor):
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        pairs = [(c, g) for c, g in zip(self._components, gradient._components)
                 if c.requires_grad]
        if not pairs:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                               "grad_fn")
        ember.autograd.backward([c for c, _ in pairs], [g for _, g in pairs],
                                retain_graph=retain_graph, create_graph=create_graph,
                                inputs=inputs)

    def detach(self):
        return NestedTensor._from_components([c.detach() for c in self._components],
                                             self.dtype, self.device)

    # ---- printing ----------------------------------------------------------------------------
    def __repr__(self):
        # the components print as PyTorch's unbind() views of one buffer: marked requires_grad
        shown = [c.detach().requires_grad_() if c.requires_grad else c
                 for c in self._components]
        body = ",\n".join(_indent(repr(c)) for c in shown)
        if self.grad_fn is not None:
            suffix = f", grad_fn=<{type(self.grad_fn).__name__}>"
        else:
            suffix = ", requires_grad=True" if self.requires_grad else ""
        return f"nested_tensor([\n{body}\n]{suffix})"

    __str__ = __repr__

    # ---- functions ---------------------------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ._ops import dispatch
        return dispatch(func, args, kwargs or {})


def _rebuild_nested_tensor(buffer, sizes, strides, storage_offsets):
    """A nested tensor whose components view `buffer` (torch._nested_view_from_buffer)."""
    components = [buffer.as_strided(size, stride, offset) for size, stride, offset in
                  zip(sizes.tolist(), strides.tolist(), storage_offsets.tolist())]
    return NestedTensor._from_components(components, buffer.dtype, buffer.device)


def _wrap_dim(dim, ndim):
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def _indent(text):
    return "\n".join("  " + line for line in text.split("\n"))
