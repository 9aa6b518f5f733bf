"""torch.backends.quantized: the quantized engine (`engine`, the library quantized kernels run
on) and the engines this build has (`supported_engines`). ember has no quantized kernels, so
the only engine is "none"; choosing another raises RuntimeError as a PyTorch build without
that library does."""
import sys
import types

_ENGINE_IDS = {"none": 0, "fbgemm": 1, "qnnpack": 2, "onednn": 3, "x86": 4}
_SUPPORTED = ("none",)


def _get_qengine_id(qengine):
    if qengine in ("", None):
        return 0
    if qengine not in _ENGINE_IDS:
        raise RuntimeError(f"{qengine} is not a valid value for quantized engine")
    return _ENGINE_IDS[qengine]


def _get_qengine_str(qengine):
    return {v: k for k, v in _ENGINE_IDS.items()}.get(qengine, "*undefined")


class _QuantizedBackend(types.ModuleType):
    """The module object: `engine` reads and sets the engine, `supported_engines` is read-only."""

    _engine = "none"

    @property
    def engine(self):
        return self._engine

    @engine.setter
    def engine(self, value):
        name = _get_qengine_str(_get_qengine_id(value))
        if name not in _SUPPORTED:
            raise RuntimeError(f"quantized engine {name.upper()} is not supported")
        type(self)._engine = name

    @property
    def supported_engines(self):
        return list(_SUPPORTED)

    @supported_engines.setter
    def supported_engines(self, value):
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _QuantizedBackend
