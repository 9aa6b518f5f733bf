"""Checkpoint save and load: ResNet-18's state dict (47 MB) and a 500 MB state dict.

Each library saves with its own `save` and loads (weights_only=True, the default) the file its
own `save` wrote, in a temporary directory. `mmap` loads map the file instead of reading it.
"""
import atexit
import shutil
import tempfile
from collections import OrderedDict

from registry import benchmark

_DIR = tempfile.mkdtemp(prefix="ember-bench-serialization-")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)


def resnet18_shapes():
    """(name, shape) of torchvision's resnet18().state_dict(), in its order."""
    out = [("conv1.weight", (64, 3, 7, 7))]

    def bn(prefix, c):
        out.extend((f"{prefix}.{k}", (c,)) for k in ("weight", "bias", "running_mean",
                                                     "running_var"))
        out.append((f"{prefix}.num_batches_tracked", ()))
    bn("bn1", 64)
    cin = 64
    for layer, c in enumerate((64, 128, 256, 512), 1):
        for block in range(2):
            p = f"layer{layer}.{block}"
            out.append((f"{p}.conv1.weight", (c, cin if block == 0 else c, 3, 3)))
            bn(f"{p}.bn1", c)
            out.append((f"{p}.conv2.weight", (c, c, 3, 3)))
            bn(f"{p}.bn2", c)
            if block == 0 and layer > 1:
                out.append((f"{p}.downsample.0.weight", (c, cin, 1, 1)))
                bn(f"{p}.downsample.1", c)
        cin = c
    return out + [("fc.weight", (1000, 512)), ("fc.bias", (1000,))]


def resnet18_state_dict(lib):
    lib.manual_seed(0)
    return OrderedDict(
        (name, lib.zeros(shape, dtype=lib.int64) if name.endswith("num_batches_tracked")
         else lib.randn(shape)) for name, shape in resnet18_shapes())


def big_state_dict(lib):
    """40 layers of a 2048 x 1536 weight and its bias: 503 MB of float32."""
    lib.manual_seed(0)
    sd = OrderedDict()
    for i in range(40):
        sd[f"layers.{i}.weight"] = lib.randn(2048, 1536)
        sd[f"layers.{i}.bias"] = lib.randn(2048)
    return sd


def _path(lib, name):
    return f"{_DIR}/{lib.__name__}-{name}.pt"


def _saver(lib, make, name):
    sd, path = make(lib), _path(lib, name)
    return lambda: lib.save(sd, path)


def _loader(lib, make, name, **kwargs):
    path = _path(lib, name)
    lib.save(make(lib), path)
    return lambda: lib.load(path, **kwargs)


@benchmark(target=1.2)
def bench_save_resnet18(lib):
    return _saver(lib, resnet18_state_dict, "resnet18")


@benchmark(target=1.2)
def bench_load_resnet18(lib):
    return _loader(lib, resnet18_state_dict, "resnet18")


@benchmark(target=1.2)
def bench_save_500mb(lib):
    return _saver(lib, big_state_dict, "big")


@benchmark(target=1.2)
def bench_load_500mb(lib):
    return _loader(lib, big_state_dict, "big")


@benchmark(target=1.2)  # and <= 0.1 s in absolute terms
def bench_load_500mb_mmap(lib):
    return _loader(lib, big_state_dict, "big", mmap=True)
