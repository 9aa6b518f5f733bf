"""The Scalar overloads core ATen graphs name: `mul.Scalar`, `eq.Scalar`, `any.dim`.

ember's `mul.Tensor` / `eq.Tensor` take a number as well as a tensor (`Tensor|Scalar`), and
`any.dims` a single dim, so eager code never needs these. torch's decompositions call them by
name (`scaled_dot_product_attention` scales q and k with `mul.Scalar`, `_safe_softmax` tests
rows with `eq.Scalar` and `any.dim`), so `run_decompositions()` records them to give torch's
graphs. Each runs its general overload's kernel for every backend that overload has.
"""
from .._dispatch.dispatcher import lookup, register_kernel


def _share_kernels(name, general, adapt=None):
    op, source = lookup(name), lookup(general)
    for key, kernel in source._table.items():
        register_kernel(op, key, kernel if adapt is None else adapt(kernel))


_share_kernels("mul.Scalar", "mul.Tensor")
_share_kernels("eq.Scalar", "eq.Tensor")
_share_kernels("any.dim", "any.dims",
               lambda kernel: lambda self, dim, keepdim=False: kernel(self, [dim], keepdim))
