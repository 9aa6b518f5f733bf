"""torch.ao.quantization.qconfig: a QConfig names how to observe a layer's activations and its
weight -- two observer factories (classes, or `Observer.with_args(...)`), instantiated afresh
for every layer it configures."""
from collections import namedtuple

from ...nn.modules.module import Module
from .observer import (HistogramObserver, default_observer, default_per_channel_weight_observer,
                       default_weight_observer)

__all__ = ["QConfig", "default_qconfig", "default_per_channel_qconfig", "get_default_qconfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """(activation, weight): observer factories. An observer *instance* is refused: one
    instance would be shared by every layer."""
    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class "
                             "instead. Use MyObserver.with_args(x=1) to override arguments to "
                             "constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer,
                                      weight=default_per_channel_weight_observer)


def get_default_qconfig(backend="x86", version=0):
    """The post-training quantization QConfig PyTorch uses for a backend: histogram-observed
    activations (7-bit on fbgemm and x86, whose kernels could overflow with 8), per-channel
    symmetric int8 weights (per-tensor on qnnpack)."""
    supported_backends = ["fbgemm", "x86", "qnnpack", "onednn"]
    if backend not in supported_backends:
        raise AssertionError("backend: " + str(backend) +
                             f" not supported. backend must be one of {supported_backends}")
    if version != 0:
        raise AssertionError("Version number: " + str(version) + " in get_default_qconfig is "
                             "not supported. Version number must be 0")
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_weight_observer)
    if backend == "onednn":   # (PyTorch warns here on CPUs without VNNI instructions)
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_per_channel_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                   weight=default_per_channel_weight_observer)
