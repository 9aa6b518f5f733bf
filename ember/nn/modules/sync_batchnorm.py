"""SyncBatchNorm: batch normalization whose batch statistics span every rank of a process
group (PyTorch's torch.nn.SyncBatchNorm); the communication is in _functions.SyncBatchNorm."""
from .batchnorm import _BatchNorm
from ... import distributed as dist
from ._functions import SyncBatchNorm as _sync_batch_norm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over the combined batch of every rank of `process_group` (all
    ranks by default): in training, N ranks with batch B compute the outputs, gradients and
    running statistics of one process with batch N x B (see _functions.SyncBatchNorm). In
    evaluation, or when no process group is running or it has one rank, it is BatchNorm.
    Input: (N, C, *) with any number of spatial dimensions. Unlike PyTorch's, it runs on
    the CPU (ember has no GPU)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        group = self._sync_group()
        if group is None:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        return _sync_batch_norm.apply(input, self.weight, self.bias, self.running_mean,
                                      self.running_var, self.eps, factor, group,
                                      dist.get_world_size(group))

    def _sync_group(self):
        """The group to normalise over: only in training, with a process group of more than
        one rank; otherwise None (plain batch norm)."""
        if not (self.training and dist.is_available() and dist.is_initialized()):
            return None
        group = self.process_group if self.process_group is not None else dist.group.WORLD
        return group if dist.get_world_size(group) > 1 else None

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """A copy of `module` in which every BatchNorm*D layer is a SyncBatchNorm sharing the
        original's parameters and buffers."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = cls(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group)
            if module.affine:
                module_output.weight = module.weight
                module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return module_output
