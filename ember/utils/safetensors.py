"""safetensors, the second checkpoint format: a JSON header (name -> dtype, shape, byte range)
followed by the raw bytes. There is no pickle, so loading a file cannot run code.

Files are read and written through the `safetensors` package's NumPy API (`pip install
safetensors`), so they are interchangeable with `safetensors.torch.save_file` / `load_file`.
Like `safetensors.torch`, saving refuses non-contiguous tensors and tensors that share memory.
"""
from .._core.tensor import Tensor, _wrap


def _safetensors_numpy():
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError("ember.utils.safetensors needs the 'safetensors' package: "
                          "pip install safetensors") from None
    return safetensors.numpy


def _to_arrays(tensors):
    """The tensors' NumPy arrays, after safetensors.torch's checks."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    by_memory = {}
    arrays = {}
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received "
                             f"{type(t)}")
        if t.is_meta:
            raise ValueError(f"You are trying to save a meta tensor: `{name}`, which has no data")
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. "
                "It either means you are trying to save tensors which are reference of each "
                "other in which case it's recommended to save only the full tensors, and reslice "
                "at load time, or simply call `.contiguous()` on your tensor to pack it before "
                "saving.")
        storage = t.untyped_storage()
        if storage.nbytes():
            by_memory.setdefault(id(storage._array), []).append(name)
        arrays[name] = t.detach().numpy()
    shared = [names for names in by_memory.values() if len(names) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {shared}.\nSave one tensor of each group and "
            "re-create the others (e.g. re-tie the weights) after loading.")
    return arrays


def _to_tensors(arrays, device="cpu"):
    out = {}
    for name, arr in arrays.items():
        if not arr.flags.writeable or not arr.flags.owndata:
            arr = arr.copy()  # own the bytes: the file's mapping or buffer may go away
        t = _wrap(arr)
        out[name] = t if str(device) == "cpu" else t.to(device)
    return out


def save(tensors, metadata=None):
    """The safetensors bytes of a dict of contiguous tensors that share no memory."""
    return _safetensors_numpy().save(_to_arrays(tensors), metadata=metadata)


def save_file(tensors, filename, metadata=None):
    """Write a dict of contiguous tensors that share no memory to `filename`."""
    _safetensors_numpy().save_file(_to_arrays(tensors), filename, metadata=metadata)


def load(data):
    """The tensors of safetensors bytes, as a dict name -> Tensor on the CPU."""
    return _to_tensors(_safetensors_numpy().load(data))


def load_file(filename, device="cpu"):
    """The tensors of a safetensors file, as a dict name -> Tensor on `device`."""
    return _to_tensors(_safetensors_numpy().load_file(filename), device)
