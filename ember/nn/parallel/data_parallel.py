"""DataParallel: one process, one replica of the module per device, the batch split among
them (PyTorch's torch.nn.DataParallel).

Each forward scatters the inputs along `dim`, replicates the module onto the devices, runs
the replicas concurrently (parallel_apply) and gathers the outputs on `output_device`;
backward flows through the gather, the replicas and the scatter into the original
parameters. As in PyTorch on a host without GPUs, `DataParallel(model)` (or device_ids
given as GPU indices) simply wraps the module and calls it, so programs written with
`model = nn.DataParallel(model)` run unchanged. To run replicas, name the devices:
`DataParallel(model, device_ids=["cpu", "cpu"])` runs two CPU replicas in threads.
DistributedDataParallel (one process per replica) is the faster and recommended tool,
as in PyTorch.
"""
import ember
from ..modules.module import Module
from .scatter_gather import scatter_kwargs, gather
from .replicate import replicate
from .parallel_apply import parallel_apply

__all__ = ["DataParallel", "data_parallel"]


def _named_devices(device_ids):
    """The devices `device_ids` names, or None when they are GPU indices (or None): ember
    has no GPU, so those mean "no device to spread over", as on PyTorch's CPU-only hosts."""
    if device_ids is None or all(isinstance(d, int) for d in device_ids):
        return None
    devices = []
    for d in device_ids:
        if isinstance(d, int):
            raise ValueError(f"DataParallel: device_ids mixes GPU indices and devices: "
                             f"{list(device_ids)}")
        d = ember.device(d)
        if d.type != "cpu":
            raise ValueError(f"DataParallel: ember runs replicas on the CPU only, got {d}")
        devices.append(d)
    return devices


class DataParallel(Module):
    """Split each batch among replicas of `module` on the devices `device_ids`, run them
    concurrently and gather the outputs on `output_device` (see the module docstring)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        devices = _named_devices(device_ids)
        if devices is None:
            self.module = module
            self.device_ids = []
            return
        self.dim = dim
        self.module = module
        self.device_ids = devices
        self.output_device = ember.device(output_device) if output_device is not None \
            else devices[0]
        self.src_device_obj = devices[0]

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not ember.is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional DataParallel: evaluate `module(*inputs)` with the batch split among
    replicas on `device_ids`."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    devices = _named_devices(device_ids)
    if devices is None:
        raise RuntimeError("data_parallel: no devices to run on (ember has no GPU); name "
                           "them, e.g. device_ids=['cpu', 'cpu']")
    output_device = ember.device(output_device) if output_device is not None else devices[0]
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, devices, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(devices) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = devices[:len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, output_device, dim)
