"""Replicate a module for each device (PyTorch's torch.nn.parallel.replicate).

A replica is a shallow copy of every submodule whose parameters are not Parameters but
differentiable aliases of the original ones (PyTorch broadcasts them to each GPU with an
autograd function whose backward sums the replicas' gradients; on the CPU the alias is a
view, and the autograd engine sums the gradients that reach the shared leaf). With
`detach=True` (no_grad forward) the aliases are detached. Buffers: replica 0 uses the
module's own buffers (so, as in PyTorch, BatchNorm's running statistics follow replica 0's
batch); the other replicas get copies.
"""
from collections import OrderedDict

__all__ = ["replicate"]


def _replicate_module(module):
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica._parameters = OrderedDict()
    replica._buffers = replica._buffers.copy()
    replica._modules = replica._modules.copy()
    replica._is_replica = True
    return replica


def replicate(network, devices, detach=False):
    """One replica of `network` per entry of `devices`."""
    if not devices:
        return []
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    copies = [[_replicate_module(m) for m in modules] for _ in devices]
    for i, module in enumerate(modules):
        for j, replicas in enumerate(copies):
            replica = replicas[i]
            for key, child in module._modules.items():
                replica._modules[key] = None if child is None else replicas[index[id(child)]]
            for key, param in module._parameters.items():
                if param is None:
                    replica._parameters[key] = None
                else:
                    alias = param.detach() if detach else param.view_as(param)
                    object.__setattr__(replica, key, alias)
            if j > 0:
                for key, buf in module._buffers.items():
                    if buf is not None:
                        keep_graph = buf.requires_grad and not detach
                        replica._buffers[key] = buf.clone() if keep_graph else \
                            buf.detach().clone()
    return [replicas[0] for replicas in copies]
