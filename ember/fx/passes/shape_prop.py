"""torch.fx.passes.shape_prop: run a GraphModule node by node and record in each node's
`meta["tensor_meta"]` the shape, dtype, strides and requires_grad of what it computes.

PyTorch runs the pass on the example inputs themselves (or on fake tensors); ember runs it on
its meta device: inputs, parameters and buffers are replaced by meta tensors of the same
metadata, so the Meta kernels compute every shape and dtype without touching data. The
GraphModule itself is left as it was.
"""
import copy
from typing import Any, NamedTuple

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    """The memory format recorded is the first of contiguous, channels_last, channels_last_3d
    the tensor's strides satisfy (None if none)."""
    from ... import channels_last, channels_last_3d, contiguous_format
    memory_format = None
    if include_contiguity:
        memory_format = next((fmt for fmt in (contiguous_format, channels_last, channels_last_3d)
                              if result.is_contiguous(memory_format=fmt)), None)
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, False, {})


def _to_meta(t):
    """A meta tensor with t's shape, strides, dtype and requires_grad (Parameters stay
    Parameters)."""
    from ... import empty_strided
    from ...nn import Parameter
    meta = empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
    if isinstance(t, Parameter):
        return Parameter(meta, requires_grad=t.requires_grad)
    return meta.requires_grad_(t.requires_grad) if t.is_floating_point() or t.is_complex() \
        else meta


def _meta_copy(module):
    """A copy of module whose parameters, buffers and plain tensor attributes (the traced
    `_tensor_constant`s among them) are meta tensors (no data is copied)."""
    from ..._core.tensor import Tensor
    memo = {}
    tensors = [*module.parameters(), *module.buffers()]
    for m in module.modules():
        tensors.extend(v for v in vars(m).values() if isinstance(v, Tensor))
    for t in tensors:
        memo[id(t)] = _to_meta(t)
    return copy.deepcopy(module, memo)


class ShapeProp(Interpreter):
    """ShapeProp(gm).propagate(*example_inputs) fills node.meta['tensor_meta'] (a TensorMetadata,
    or a structure of them for tuple results) and node.meta['type'] for every node."""

    def __init__(self, gm, fake_mode=None):
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp(fake_mode=...): ember propagates shapes on "
                                      "its meta device instead of fake tensors")
        super().__init__(gm)
        self.real_module = self.module

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with "
                               f"meta={n.meta}") from e
        from ..._core.tensor import Tensor
        found_tensor = False

        def extract_tensor_meta(obj):
            nonlocal found_tensor
            if isinstance(obj, Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract_tensor_meta)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run on meta copies of args and of the module; returns the (meta) outputs."""
        from ..._core.tensor import Tensor
        meta_args = map_aggregate(args, lambda a: _to_meta(a) if isinstance(a, Tensor) else a)
        self.module = _meta_copy(self.real_module)
        self.submodules = dict(self.module.named_modules())
        try:
            return super().run(*meta_args)
        finally:
            self.module = self.real_module
            self.submodules = dict(self.module.named_modules())
