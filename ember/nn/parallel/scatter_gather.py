"""Scatter a batch across devices and gather the results back (PyTorch's
torch.nn.parallel.scatter_gather).

ember runs on the CPU, so every "device" here is the CPU: scattering a tensor is `chunk`
along `dim` (each replica gets a view of its slice), gathering is `cat` along `dim`. Both
are differentiable ops, so backward routes each replica's gradient to its slice of the
input, which is what PyTorch's Scatter and Gather autograd functions do between GPUs.
"""
import warnings

import ember

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim=0):
    """Split tensors into len(target_gpus) chunks along `dim` (fewer if the batch is
    smaller), recursing into tuples, lists, dicts and namedtuples; other objects are
    repeated for every device."""
    def scatter_map(obj):
        if isinstance(obj, ember.Tensor):
            return list(obj.chunk(len(target_gpus), dim))
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]
    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter() for positional and keyword arguments; pads the shorter of the two."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def _gather_tensors(dim, tensors):
    if all(t.dim() == 0 for t in tensors):
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                      "scalars; will instead unsqueeze and return a vector.")
        return ember.stack(list(tensors))
    return ember.cat(list(tensors), dim)


def gather(outputs, target_device, dim=0):
    """Concatenate the replicas' outputs along `dim`, recursing into dicts, namedtuples and
    sequences (0-d tensors are stacked into a vector, with PyTorch's warning)."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, ember.Tensor):
            return _gather_tensors(dim, outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs)))
        return type(out)(map(gather_map, zip(*outputs)))
    return gather_map(outputs)
