"""ConvNeXt Tiny/Small/Base/Large (Liu et al. 2022) as torchvision builds them: `features`
(patchify stem, stages of CNBlock -- depthwise 7x7, Permute, LayerNorm, Linear, GELU, Linear,
Permute, times `layer_scale` -- and LayerNorm2d + 2x2 downsampling convs), `avgpool`,
`classifier` (LayerNorm2d, Flatten, Linear)."""
from functools import partial

import ember
from ... import nn
from ...nn import functional as F
from ..ops.misc import Conv2dNormActivation, Permute, StochasticDepth
from ._api import _weights_enum
from ._utils import _build, _builder

__all__ = ["ConvNeXt", "ConvNeXt_Tiny_Weights", "ConvNeXt_Small_Weights",
           "ConvNeXt_Base_Weights", "ConvNeXt_Large_Weights", "convnext_tiny", "convnext_small",
           "convnext_base", "convnext_large"]


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor."""

    def forward(self, x):
        x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias,
                         self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim, layer_scale, stochastic_depth_prob, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]), norm_layer(dim),
            nn.Linear(in_features=dim, out_features=4 * dim, bias=True), nn.GELU(),
            nn.Linear(in_features=4 * dim, out_features=dim, bias=True), Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(ember.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input):
        result = self.stochastic_depth(self.layer_scale * self.block(input))
        result += input
        return result


class CNBlockConfig:
    def __init__(self, input_channels, out_channels, num_layers):
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers

    def __repr__(self):
        return (f"{self.__class__.__name__}(input_channels={self.input_channels}, "
                f"out_channels={self.out_channels}, num_layers={self.num_layers})")


class ConvNeXt(nn.Module):
    def __init__(self, block_setting, stochastic_depth_prob=0.0, layer_scale=1e-6,
                 num_classes=1000, block=None, norm_layer=None, **kwargs):
        super().__init__()
        if not block_setting:
            raise ValueError("The block_setting should not be empty")
        if not (isinstance(block_setting, (list, tuple)) and
                all(isinstance(s, CNBlockConfig) for s in block_setting)):
            raise TypeError("The block_setting should be List[CNBlockConfig]")
        block = block if block is not None else CNBlock
        if norm_layer is None:
            norm_layer = partial(LayerNorm2d, eps=1e-6)
        layers = [Conv2dNormActivation(3, block_setting[0].input_channels, kernel_size=4,
                                       stride=4, padding=0, norm_layer=norm_layer,
                                       activation_layer=None, bias=True)]
        total_stage_blocks = sum(cnf.num_layers for cnf in block_setting)
        stage_block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(nn.Sequential(
                    norm_layer(cnf.input_channels),
                    nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        last_out = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm_layer(last_out), nn.Flatten(1),
                                        nn.Linear(last_out, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def _forward_impl(self, x):
        return self.classifier(self.avgpool(self.features(x)))

    def forward(self, x):
        return self._forward_impl(x)


def _convnext(block_setting, default_sd, weights, kwargs):
    sd = kwargs.pop("stochastic_depth_prob", default_sd)
    return _build(ConvNeXt, weights, block_setting=block_setting, stochastic_depth_prob=sd,
                  **kwargs)


C = CNBlockConfig
ConvNeXt_Tiny_Weights = _weights_enum("ConvNeXt_Tiny_Weights", __name__)
ConvNeXt_Small_Weights = _weights_enum("ConvNeXt_Small_Weights", __name__)
ConvNeXt_Base_Weights = _weights_enum("ConvNeXt_Base_Weights", __name__)
ConvNeXt_Large_Weights = _weights_enum("ConvNeXt_Large_Weights", __name__)


@_builder(ConvNeXt_Tiny_Weights)
def convnext_tiny(*, weights=None, progress=True, **kwargs):
    return _convnext([C(96, 192, 3), C(192, 384, 3), C(384, 768, 9), C(768, None, 3)], 0.1,
                     weights, kwargs)


@_builder(ConvNeXt_Small_Weights)
def convnext_small(*, weights=None, progress=True, **kwargs):
    return _convnext([C(96, 192, 3), C(192, 384, 3), C(384, 768, 27), C(768, None, 3)], 0.4,
                     weights, kwargs)


@_builder(ConvNeXt_Base_Weights)
def convnext_base(*, weights=None, progress=True, **kwargs):
    return _convnext([C(128, 256, 3), C(256, 512, 3), C(512, 1024, 27), C(1024, None, 3)], 0.5,
                     weights, kwargs)


@_builder(ConvNeXt_Large_Weights)
def convnext_large(*, weights=None, progress=True, **kwargs):
    return _convnext([C(192, 384, 3), C(384, 768, 3), C(768, 1536, 27), C(1536, None, 3)], 0.5,
                     weights, kwargs)
