"""torch.ao.nn.qat.Linear: nn.Linear whose weight passes through its QConfig's weight observer
(or fake-quantizer) on every forward, for quantization-aware training."""
from .....nn import functional as F
from .....nn.modules.linear import Linear as _FloatLinear
from .....nn.utils.parametrize import (is_parametrized, transfer_parametrizations_and_params,
                                      type_before_parametrizations)

__all__ = ["Linear"]


class Linear(_FloatLinear):
    """nn.Linear with `weight_fake_quant = qconfig.weight()`, applied to the weight in
    forward (an observer records it and passes it through unchanged)."""
    _FLOAT_MODULE = _FloatLinear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(in_features, out_features, bias, **factory_kwargs)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight(factory_kwargs=factory_kwargs)

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT version of a float nn.Linear carrying a `qconfig`, sharing its parameters
        (and moving over its parametrizations)."""
        float_type = type_before_parametrizations(mod)
        if float_type != cls._FLOAT_MODULE:
            raise AssertionError(f"qat.{cls.__name__}.from_float only works for "
                                 f"{cls._FLOAT_MODULE.__name__}, got {float_type.__name__}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if not mod.qconfig:
            raise AssertionError("Input float module must have a valid qconfig")
        qat_linear = cls(mod.in_features, mod.out_features, bias=mod.bias is not None,
                         qconfig=mod.qconfig)
        for name in ("weight", "bias"):
            if is_parametrized(mod, name):
                transfer_parametrizations_and_params(mod, qat_linear, name)
            else:
                setattr(qat_linear, name, getattr(mod, name))
        return qat_linear

    def to_float(self):
        from .....nn.parameter import Parameter
        linear = _FloatLinear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = Parameter(self.bias.detach())
        linear.train(self.training)
        return linear
