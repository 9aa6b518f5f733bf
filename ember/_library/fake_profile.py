"""torch._library.fake_profile: operator profiles -- for each op, the (rank, dtype, device,
layout) of its inputs and of the output they give -- saved as YAML, from which PyTorch builds
fake kernels for ops that have none (`unsafe_generate_fake_kernels`). ember has no fake
tensors, so it keeps the profiles and their file format; building kernels from them raises."""
import contextlib
import io
import os
from dataclasses import dataclass
from typing import Optional

__all__ = ["MissingOpProfile", "TensorMetadata", "OpProfile", "generate_yaml_from_profiles",
           "save_op_profiles", "read_profiles_from_yaml", "load_op_profiles",
           "unsafe_generate_fake_kernels"]


class MissingOpProfile(RuntimeError):
    """No profile of the op matches the inputs it was called with."""


@dataclass(frozen=True)
class TensorMetadata:
    rank: int
    dtype: object
    device: object
    layout: object

    @staticmethod
    def maybe_from_tensor(t) -> Optional["TensorMetadata"]:
        from .._core.tensor import Tensor
        if not isinstance(t, Tensor):
            return None
        return TensorMetadata(t.dim(), t.dtype, t.device, t.layout)


@dataclass(frozen=True)
class OpProfile:
    args_profile: tuple
    out_profile: object   # a TensorMetadata, or a tuple of them


def _torch_version():
    from ..version import __version__
    major, minor = __version__.split(".")[:2]
    return f"{int(major)}.{int(minor)}"


def _meta_to_yaml(t):
    return {"rank": t.rank, "dtype": str(t.dtype).removeprefix("torch."),
            "device": str(t.device), "layout": str(t.layout).removeprefix("torch.")}


def _meta_from_yaml(d):
    import ember
    return TensorMetadata(d["rank"], getattr(ember, d["dtype"]), ember.device(d["device"]),
                          getattr(ember, d["layout"]))


def generate_yaml_from_profiles(op_profiles):
    import yaml
    ops = {name: [{"args_profile": [_meta_to_yaml(a) for a in p.args_profile if a is not None],
                   "out_profile": (_meta_to_yaml(p.out_profile)
                                   if isinstance(p.out_profile, TensorMetadata)
                                   else [_meta_to_yaml(o) for o in p.out_profile])}
                  for p in profiles]
           for name, profiles in op_profiles.items()}
    return yaml.dump({"torch_version": _torch_version(), "operators": ops}, sort_keys=False)


def read_profiles_from_yaml(yaml_str):
    import yaml
    data = yaml.safe_load(yaml_str)
    if data["torch_version"] != _torch_version():
        raise RuntimeError(f"Unable to load outdated profile. It was saved with torch version: "
                           f"{data['torch_version']} but the current torch version is: "
                           f"{_torch_version()}")

    def profile(p):
        out = p["out_profile"]
        return OpProfile(tuple(_meta_from_yaml(a) for a in p["args_profile"]),
                         tuple(_meta_from_yaml(o) for o in out) if isinstance(out, list)
                         else _meta_from_yaml(out))
    return {name: {profile(p) for p in profiles} for name, profiles in data["operators"].items()}


def save_op_profiles(op_profiles, f):
    text = generate_yaml_from_profiles(op_profiles)
    if isinstance(f, (str, os.PathLike)):
        with open(os.fspath(f), "w") as file:
            file.write(text)
    elif isinstance(f, io.BytesIO):
        f.write(text.encode("utf-8"))
    else:
        raise ValueError(f"Invalid type of file {f}")


def load_op_profiles(f):
    if isinstance(f, (str, os.PathLike)):
        with open(os.fspath(f)) as file:
            text = file.read()
    elif isinstance(f, io.BytesIO):
        text = f.read().decode("utf-8")
    else:
        raise ValueError(f"Invalid type of file {f}")
    return read_profiles_from_yaml(text)


@contextlib.contextmanager
def unsafe_generate_fake_kernels(op_profiles):
    raise NotImplementedError("unsafe_generate_fake_kernels: ember has no fake tensors to run "
                              "generated fake kernels on")
    yield
