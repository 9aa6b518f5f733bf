"""Derivatives of sorting and selection."""
from ..variable_type import derivative, not_differentiable, not_implemented
from ... import _refs as E
from ._common import _aten


# ---- sorting and selection


def _sort_grad(grads, self, dim, result1):
    if self.dim() == 0:
        return grads[0]
    return _aten.scatter_add(E.zeros_like(self, dtype=grads[0].dtype), dim, result1,
                                  grads[0])


derivative("sort.stable", {"self": _sort_grad}, node_name="SortBackward0",
           output_differentiability=[True, False])
derivative("topk", {"self": _sort_grad}, output_differentiability=[True, False])
not_differentiable("isnan", "isinf", "isfinite", "bitwise_left_shift.Tensor",
                   "bitwise_left_shift_.Tensor", "bitwise_right_shift.Tensor",
                   "bitwise_right_shift_.Tensor", "logical_not_", "bitwise_not_",
                   "count_nonzero.dim_IntList", "searchsorted.Tensor", "bucketize.Tensor",
                   "histc")
not_implemented("_unique2", "unique_dim", "unique_consecutive")
