"""torch.ao.quantization: observers and QConfigs -- the float-side machinery of quantization.
ember has no quantized tensors, so no quantize/convert passes; what is here needs none:
observers record statistics of float tensors and compute scales and zero points, and a QConfig
tells quantization-aware-training modules (ember.ao.nn.qat) which observers to build."""
from . import observer, qconfig, utils  # noqa: F401
from .observer import *  # noqa: F401,F403
from .qconfig import *  # noqa: F401,F403
from .observer import __all__ as _observer_all
from .qconfig import __all__ as _qconfig_all

__all__ = [*_observer_all, *_qconfig_all]
