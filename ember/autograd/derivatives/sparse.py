"""Derivatives of the sparse COO ops. A sparse tensor's gradient is a sparse tensor with its
coordinates (what PyTorch gives); a gradient arriving dense at a sparse construction is read at
the stored coordinates."""
from ..variable_type import derivative, not_differentiable, not_implemented
from ..._dispatch.ops import ops


def _at_indices(grad, indices):
    """The gradient of each stored value: the gradient at its coordinates."""
    dense = grad.to_dense() if grad.is_sparse else grad
    return dense[tuple(indices.unbind(0))]


derivative("_sparse_coo_tensor_with_dims_and_tensors",
           {"values": lambda grad, indices: _at_indices(grad, indices)},
           node_name="SparseCooTensorWithDimsAndTensorsBackward0")
derivative("_to_dense", {"self": lambda grad, self: grad.sparse_mask(self.coalesce())},
           node_name="ToDenseBackward0")
derivative("_to_sparse.sparse_dim", {"self": lambda grad: grad.to_dense()},
           node_name="ToSparseBackward0")
derivative("_coalesce", {"self": lambda grad: grad}, node_name="CoalesceBackward0")
derivative("_values", {"self": lambda grad, self: ops.aten._sparse_coo_tensor_with_dims_and_tensors(
    self.sparse_dim(), self.dense_dim(), list(self.shape), self._indices(), grad)},
    node_name="ValuesBackward0")
derivative("sparse_mask", {"self": lambda grad: grad.to_dense()},
           node_name="SparseMaskBackward0")
not_differentiable("_indices", "resize_as_sparse_")
not_implemented("hspmm", "sspaddmm", listed=False)  # as in PyTorch: their backward raises
