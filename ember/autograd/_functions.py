"""The autograd Functions behind PyTorch's deprecated out-of-place `Tensor.resize` and
`Tensor.resize_as` (torch.autograd._functions.Resize): unlike resize_, they may only change the
shape, keeping every element, and so are differentiable (the gradient is reshaped back)."""
import math

from .function import Function


class Resize(Function):
    @staticmethod
    def forward(ctx, tensor, sizes):
        numel = math.prod(sizes)
        if tensor.numel() != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), "
                f"but the given tensor has a size of {'x'.join(map(str, tensor.size()))} "
                f"({tensor.numel()} elements). autograd's resize can only change the shape of a "
                f"given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(tuple(sizes))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None
