"""Autograd functions behind nn modules (PyTorch's torch/nn/modules/_functions.py): SyncBatchNorm's,
which communicates, and the identity that marks a module's boundary for its backward hooks."""
import ember
from ... import distributed as dist
from ...autograd import Function

__all__ = ["SyncBatchNorm", "BackwardHookFunction"]


def _stats_dtype(dtype):
    """Statistics of 16-bit inputs are computed (and communicated) in float32."""
    return ember.float32 if dtype in (ember.float16, ember.bfloat16) else dtype


class SyncBatchNorm(Function):
    """Batch normalisation whose statistics cover the batches of every rank in the group.

    Forward: each rank computes, per channel, its element count n_r, mean m_r and sum of
    squared deviations M2_r; one all_gather brings every rank the (n, m, M2) of all ranks,
    which combine exactly (Chan's parallel formula) into the global mean and biased
    variance: N = sum n_r, mean = sum n_r m_r / N, M2 = sum (M2_r + n_r (m_r - mean)^2).
    All ranks normalise with these, and update the running statistics with them (the
    variance unbiased, M2 / (N - 1)), as one process holding all N samples would.

    Backward: the input gradient of batch norm needs two per-channel sums over the whole
    batch, sum(dy) and sum(dy * (x - mean)); each rank computes its part and one all_reduce
    adds them up. The weight and bias gradients are left local (DistributedDataParallel
    averages them with the other gradients), as in PyTorch.

        dx = invstd * w * (dy - sum(dy)/N - (x - mean) * invstd^2 * sum(dy (x - mean))/N)
    """

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        input = input.contiguous()
        channels = input.shape[1]
        local = input.numel() // channels
        if local == 1 and world_size < 2:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {local}")
        dims = [0] + list(range(2, input.dim()))
        shape = [1, channels] + [1] * (input.dim() - 2)
        dtype = _stats_dtype(input.dtype)
        x = input.to(dtype)
        if local > 0:
            mean = x.mean(dims)
            m2 = (x - mean.view(shape)).square().sum(dims)
        else:
            mean = ember.zeros(channels, dtype=dtype)
            m2 = ember.zeros(channels, dtype=dtype)
        mine = ember.cat([mean, m2, ember.full((1,), float(local), dtype=dtype)])
        everyone = [ember.empty_like(mine) for _ in range(world_size)]
        dist.all_gather(everyone, mine, group=process_group)
        stats = ember.stack(everyone)                       # (world_size, 2C + 1)
        means, m2s, counts = stats[:, :channels], stats[:, channels:-1], stats[:, -1:]
        total = counts.sum()
        mean = (means * counts).sum(0) / total
        m2 = (m2s + counts * (means - mean).square()).sum(0)
        invstd = (m2 / total + eps).rsqrt()
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = m2 / (total - 1) if total.item() > 1 else m2 / total
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        ctx.save_for_backward(input, weight, mean, invstd, total)
        ctx.process_group = process_group
        ctx.has_bias = bias is not None
        out = (x - mean.view(shape)) * invstd.view(shape)
        if weight is not None:
            out = out * weight.to(dtype).view(shape)
        if bias is not None:
            out = out + bias.to(dtype).view(shape)
        return out.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, mean, invstd, total = ctx.saved_tensors
        channels = input.shape[1]
        dims = [0] + list(range(2, input.dim()))
        shape = [1, channels] + [1] * (input.dim() - 2)
        dtype = mean.dtype
        dy = grad_output.contiguous().to(dtype)
        xmu = input.to(dtype) - mean.view(shape)
        sum_dy = dy.sum(dims)
        sum_dy_xmu = (dy * xmu).sum(dims)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            both = ember.cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(both, group=ctx.process_group)
            mean_dy, mean_dy_xmu = both[:channels] / total, both[channels:] / total
            scale = invstd if weight is None else invstd * weight.to(dtype)
            grad_input = ((dy - mean_dy.view(shape)
                           - xmu * (invstd.square() * mean_dy_xmu).view(shape))
                          * scale.view(shape)).to(input.dtype)
        if weight is not None and ctx.needs_input_grad[1]:
            grad_weight = (sum_dy_xmu * invstd).to(weight.dtype)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = sum_dy.to(weight.dtype if weight is not None else input.dtype)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


class BackwardHookFunction(Function):
    """Identity on a module's input (or output) tensors: its only job is to be a node of the
    backward graph that the module's backward hooks (utils.hooks.BackwardHook) attach to."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads
