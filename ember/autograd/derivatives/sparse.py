"""Derivatives of the sparse ops, COO and compressed. A sparse tensor's gradient is a sparse
tensor with its coordinates, or a dense one where PyTorch's is (a product's); a gradient arriving
dense at a sparse construction is read at the stored coordinates."""
import numpy as np

from ..variable_type import derivative, not_differentiable, not_implemented
from ..._core.layout import strided as _strided
from ..._core.sparse_compressed import LAYOUTS as _layouts, block_coordinates
from ..._core.tensor import _wrap
from ._common import _aten


def _at_indices(grad, indices):
    """The gradient of each stored value: the gradient at its coordinates."""
    dense = grad.to_dense() if grad.is_sparse else grad
    if indices.shape[0] == 0:  # no sparse dims: every stored value is the whole tensor
        return dense.expand(indices.shape[1], *dense.shape)
    return dense[tuple(indices.unbind(0))]


derivative("_sparse_coo_tensor_with_dims_and_tensors",
           {"values": lambda grad, indices: _at_indices(grad, indices)},
           node_name="SparseCooTensorWithDimsAndTensorsBackward0")
derivative("_to_dense", {"self": lambda grad, self: grad.sparse_mask(
    self.coalesce() if self.is_sparse else self)}, node_name="ToDenseBackward0")
derivative("_coalesce", {"self": lambda grad: grad}, node_name="CoalesceBackward0")
derivative("_values", {"self": lambda grad, self: _aten._sparse_coo_tensor_with_dims_and_tensors(
    self.sparse_dim(), self.dense_dim(), list(self.shape), self._indices(), grad)},
    node_name="ValuesBackward0")


def _sparse_mask_grad(grad, mask):
    """Only the entries at mask's positions came from self: a dense gradient (double
    backward's) is read there too."""
    if grad.layout is _strided:
        grad = grad.sparse_mask(mask)
    return grad.to_dense()


derivative("sparse_mask", {"self": _sparse_mask_grad}, node_name="SparseMaskBackward0")
not_differentiable("_indices", "resize_as_sparse_")
not_implemented("hspmm", "sspaddmm", listed=False)  # as in PyTorch: their backward raises


# ---- compressed layouts (CSR, CSC, BSR, BSC)
def _compressed_values_at(grad, compressed_indices, plain_indices, layout, values):
    """The gradient of each stored value (or block) of a compressed tensor: grad there."""
    if grad.layout is _layouts[layout] and grad.values().shape == values.shape and \
            grad._sparse.compressed_indices.equal(compressed_indices) and \
            grad._sparse.plain_indices.equal(plain_indices):
        return grad.values()  # the same entries: their values, as they are
    dense = grad.to_dense() if grad.layout is not _strided else grad
    rows, cols = (_wrap(np.asarray(a, dtype=np.int64)) for a in block_coordinates(
        _layouts[layout], compressed_indices._np, plain_indices._np))  # indices: no gradient
    if values.dim() >= 3 and layout in ("sparse_bsr", "sparse_bsc"):
        bh, bw = values.shape[1], values.shape[2]
        n, m = dense.shape[0], dense.shape[1]
        dense = dense.reshape((n // bh, bh, m // bw, bw) + tuple(dense.shape[2:])).transpose(1, 2)
    return dense[rows, cols]


def _to_layout_of(grad, self):
    """A conversion's gradient, back in the layout of what was converted."""
    if self.layout is _strided:
        return grad.to_dense() if grad.layout is not _strided else grad
    if self.is_sparse:
        return grad.to_sparse()
    blocksize = tuple(self.values().shape[1:3]) if self.layout.name in (
        "sparse_bsr", "sparse_bsc") else None
    return grad.to_sparse(layout=self.layout, blocksize=blocksize)



derivative("_to_sparse.sparse_dim", {"self": _to_layout_of}, node_name="ToSparseBackward0")
derivative("_sparse_compressed_tensor_unsafe",
           {"values": lambda grad, compressed_indices, plain_indices, layout, values:
            _compressed_values_at(grad, compressed_indices, plain_indices, layout, values)},
           node_name="SparseCompressedTensorBackward0")
for _name, _node in (("_to_sparse_csr", "ToSparseCsrBackward0"),
                     ("_to_sparse_csc", "ToSparseCscBackward0"),
                     ("_to_sparse_bsr", "ToSparseBsrBackward0"),
                     ("_to_sparse_bsc", "ToSparseBscBackward0")):
    derivative(_name, {"self": _to_layout_of}, node_name=_node)
derivative("values", {"self": lambda grad, self: _aten._sparse_compressed_tensor_unsafe(
    self._sparse.compressed_indices, self._sparse.plain_indices, grad, list(self.shape),
    self.layout.name)}, node_name="ValuesBackward0")
derivative("sparse_sampled_addmm", {
    "self": lambda grad, beta: grad if beta == 1 else grad * beta,
    "mat1": lambda grad, mat2, alpha: _scaled(grad.mm(mat2.mH if mat2.is_complex() else mat2.mT),
                                              alpha),
    "mat2": lambda grad, mat1, alpha: _scaled((mat1.mH if mat1.is_complex() else mat1.mT).mm(
        grad), alpha)}, node_name="SparseSampledAddmmBackward0")
not_differentiable("crow_indices", "col_indices", "ccol_indices", "row_indices")


def _scaled(g, s):
    return g if s == 1 else g * s
