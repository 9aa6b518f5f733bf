"""torch.testing._internal.two_tensor: TwoTensor, a wrapper subclass holding two tensors `a`
and `b` that runs every op on both (PyTorch's example of a traceable wrapper subclass)."""
from ..._core.tensor import Tensor
from ...utils import _pytree as pytree
from ...utils._python_dispatch import TorchDispatchMode, return_and_correct_aliasing

__all__ = ["TwoTensor", "TwoTensorMode"]


class TwoTensor(Tensor):
    @staticmethod
    def __new__(cls, a, b, outer_size=None, outer_stride=None, *, requires_grad=None):
        if outer_size is None:
            outer_size = a.size()
        if outer_stride is None:
            outer_stride = a.stride()
        if not (a.device == b.device and a.layout == b.layout
                and a.requires_grad == b.requires_grad and a.dtype == b.dtype):
            raise AssertionError("Expected a and b to have same device, layout, requires_grad, "
                                 "and dtype")
        out = Tensor._make_wrapper_subclass(
            cls, outer_size, strides=outer_stride, storage_offset=a.storage_offset(),
            device=a.device, layout=a.layout, requires_grad=requires_grad or a.requires_grad,
            dtype=a.dtype)
        if a.shape != b.shape:
            raise AssertionError(f"Expected a.shape == b.shape, got {a.shape} != {b.shape}")
        if a.stride() != b.stride():
            raise AssertionError(f"Expected a.stride() == b.stride(), got {a.stride()} != "
                                 f"{b.stride()}")
        if a.storage_offset() != b.storage_offset():
            raise AssertionError(f"Expected a.storage_offset() == b.storage_offset(), got "
                                 f"{a.storage_offset()} != {b.storage_offset()}")
        return out

    def __init__(self, a, b, outer_size=None, outer_stride=None, *, requires_grad=None):
        self.a = a
        self.b = b

    def __repr__(self):
        return f"TwoTensor({self.a!r}, {self.b!r})"

    def __tensor_flatten__(self):
        return ["a", "b"], None

    @staticmethod
    def __tensor_unflatten__(inner_tensors, meta, outer_size, outer_stride):
        if meta is not None:
            raise AssertionError("Expected meta to be None")
        a, b = inner_tensors["a"], inner_tensors["b"]
        return TwoTensor(a, b, outer_size, outer_stride)

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs):
        if kwargs is None:
            kwargs = {}
        args_a = pytree.tree_map_only(TwoTensor, lambda x: x.a, args)
        args_b = pytree.tree_map_only(TwoTensor, lambda x: x.b, args)
        kwargs_a = pytree.tree_map_only(TwoTensor, lambda x: x.a, kwargs)
        kwargs_b = pytree.tree_map_only(TwoTensor, lambda x: x.b, kwargs)
        out_a = func(*args_a, **kwargs_a)
        out_b = func(*args_b, **kwargs_b)
        out_a_flat, spec = pytree.tree_flatten(out_a)
        out_b_flat = pytree.tree_leaves(out_b)
        # an op returning non-tensors: the two inner results are taken to agree
        out_flat = [cls(o_a, o_b) if isinstance(o_a, Tensor) else o_a
                    for o_a, o_b in zip(out_a_flat, out_b_flat, strict=True)]
        out = pytree.tree_unflatten(out_flat, spec)
        return return_and_correct_aliasing(func, args, kwargs, out)

    def get_elem_a(self):
        return self.a


class TwoTensorMode(TorchDispatchMode):
    """Every tensor a factory op makes becomes a TwoTensor of it and a clone."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not func._schema.arguments or not any(a.is_tensor or a.is_tensor_list
                                                 for a in func._schema.arguments):
            out = TwoTensor(out, out.clone())
        return out
