"""safetensors, the second checkpoint format: a JSON header (name -> dtype, shape, byte range)
followed by the raw bytes. There is no pickle, so loading a file cannot run code.

Files are written and read through the `safetensors` package's own dtype-agnostic layer
(`serialize` of TensorSpecs, `deserialize` to raw bytes; `pip install safetensors`), so they are
interchangeable with `safetensors.torch.save_file` / `load_file` for every dtype it has, bfloat16
and the float8 formats included (its NumPy API has neither). Like `safetensors.torch`, saving
refuses non-contiguous tensors and tensors that share memory.
"""
import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor, _wrap

# the header's dtype names, as safetensors.torch reads them
_DTYPES = {"F64": D.float64, "F32": D.float32, "F16": D.float16, "BF16": D.bfloat16,
           "I64": D.int64, "I32": D.int32, "I16": D.int16, "I8": D.int8, "U8": D.uint8,
           "BOOL": D.bool, "C64": D.complex64, "U64": D.uint64, "U32": D.uint32,
           "U16": D.uint16, "F8_E4M3": D.float8_e4m3fn, "F8_E4M3FNUZ": D.float8_e4m3fnuz,
           "F8_E5M2": D.float8_e5m2, "F8_E5M2FNUZ": D.float8_e5m2fnuz,
           "F8_E8M0": D.float8_e8m0fnu}


def _safetensors():
    try:
        import safetensors
        safetensors.TensorSpec  # (the dtype-agnostic layer: safetensors 0.8 and later)
    except (ImportError, AttributeError):
        raise ImportError("ember.utils.safetensors needs the 'safetensors' package, 0.8 or "
                          "later: pip install 'safetensors>=0.8'") from None
    return safetensors


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
        arrays[name] = t.detach()._np
    shared = [names for names in by_memory.values() if len(names) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {shared}.\nSave one tensor of each group and "
            "re-create the others (e.g. re-tie the weights) after loading.")
    return arrays


def _specs(tensors):
    """The TensorSpecs `serialize` reads (each pointing into its tensor's array, which
    `arrays` keeps alive meanwhile)."""
    safetensors = _safetensors()
    arrays = _to_arrays(tensors)
    specs = {name: safetensors.TensorSpec(dtype=tensors[name].dtype.name,
                                          shape=list(arr.shape), data_ptr=arr.ctypes.data,
                                          data_len=arr.nbytes)
             for name, arr in arrays.items()}
    return specs, arrays


def _to_tensors(flat, device="cpu"):
    out = {}
    for name, entry in flat:
        dt = _DTYPES.get(entry["dtype"])
        if dt is None:
            raise ValueError(f"safetensors: tensor {name!r} has dtype {entry['dtype']}, which "
                             "ember has no tensors of")
        # a copy of its own: the deserialized buffer is dropped with the dict
        arr = np.frombuffer(entry["data"], dtype=D.np_dtype(dt)).reshape(entry["shape"]).copy()
        t = _wrap(arr)
        out[name] = t if str(device) == "cpu" else t.to(device)
    return out


def save(tensors, metadata=None):
    """The safetensors bytes of a dict of contiguous tensors that share no memory."""
    specs, arrays = _specs(tensors)
    data = _safetensors().serialize(specs, metadata=metadata)
    del arrays  # (alive until here: the specs point into them)
    return data


def save_file(tensors, filename, metadata=None):
    """Write a dict of contiguous tensors that share no memory to `filename`."""
    specs, arrays = _specs(tensors)
    _safetensors().serialize_file(specs, filename, metadata=metadata)
    del arrays


def load(data):
    """The tensors of safetensors bytes, as a dict name -> Tensor on the CPU."""
    return _to_tensors(_safetensors().deserialize(data))


def load_file(filename, device="cpu"):
    """The tensors of a safetensors file, as a dict name -> Tensor on `device`."""
    with open(filename, "rb") as f:
        data = f.read()
    return _to_tensors(_safetensors().deserialize(data), device)
