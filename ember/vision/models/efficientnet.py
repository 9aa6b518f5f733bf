"""EfficientNet B0-B7 (Tan & Le 2019) and V2 S/M/L (2021) as torchvision builds them:
`features` (stem Conv2dNormActivation, one Sequential per stage of MBConv / FusedMBConv blocks
each with `block` and `stochastic_depth`, 1x1 head), `avgpool`, `classifier` (Dropout, Linear).
Stochastic depth grows linearly with the block index as torchvision's."""
import copy
import math
from functools import partial

from ... import nn, flatten
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation, StochasticDepth
from ._api import _weights_enum
from ._utils import _build, _builder, _init_mobile_weights, _make_divisible

__all__ = ["EfficientNet", "EfficientNet_B0_Weights", "EfficientNet_B1_Weights",
           "EfficientNet_B2_Weights", "EfficientNet_B3_Weights", "EfficientNet_B4_Weights",
           "EfficientNet_B5_Weights", "EfficientNet_B6_Weights", "EfficientNet_B7_Weights",
           "EfficientNet_V2_S_Weights", "EfficientNet_V2_M_Weights", "EfficientNet_V2_L_Weights",
           "efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "efficientnet_b3",
           "efficientnet_b4", "efficientnet_b5", "efficientnet_b6", "efficientnet_b7",
           "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"]



def _uniform_by_fan_out(linear):
    """EfficientNet's Linear weights: uniform in +-1/sqrt(out_features)."""
    bound = 1.0 / math.sqrt(linear.out_features)
    nn.init.uniform_(linear.weight, -bound, bound)

class _MBConvConfig:
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 block):
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers
        self.block = block

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return _make_divisible(channels * width_mult, 8, min_value)


class MBConvConfig(_MBConvConfig):
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 width_mult=1.0, depth_mult=1.0, block=None):
        super().__init__(expand_ratio, kernel, stride,
                         self.adjust_channels(input_channels, width_mult),
                         self.adjust_channels(out_channels, width_mult),
                         self.adjust_depth(num_layers, depth_mult),
                         block if block is not None else MBConv)

    @staticmethod
    def adjust_depth(num_layers, depth_mult):
        return int(math.ceil(num_layers * depth_mult))


class FusedMBConvConfig(_MBConvConfig):
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 block=None):
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                         block if block is not None else FusedMBConv)


class MBConv(nn.Module):
    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.SiLU
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=act))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel,
                                           stride=cnf.stride, groups=expanded,
                                           norm_layer=norm_layer, activation_layer=act))
        layers.append(se_layer(expanded, max(1, cnf.input_channels // 4),
                               activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class FusedMBConv(nn.Module):
    def __init__(self, cnf, stochastic_depth_prob, norm_layer):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.SiLU
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers = [Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=cnf.kernel,
                                           stride=cnf.stride, norm_layer=norm_layer,
                                           activation_layer=act),
                      Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None)]
        else:
            layers = [Conv2dNormActivation(cnf.input_channels, cnf.out_channels,
                                           kernel_size=cnf.kernel, stride=cnf.stride,
                                           norm_layer=norm_layer, activation_layer=act)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2,
                 num_classes=1000, norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not (isinstance(inverted_residual_setting, (list, tuple)) and
                all(isinstance(s, _MBConvConfig) for s in inverted_residual_setting)):
            raise TypeError("The inverted_residual_setting should be List[MBConvConfig]")
        norm_layer = norm_layer if norm_layer is not None else nn.BatchNorm2d
        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels,
                                       kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.SiLU)]
        total_stage_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        stage_block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                sd_prob = stochastic_depth_prob * float(stage_block_id) / total_stage_blocks
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_out, num_classes))
        _init_mobile_weights(self, _uniform_by_fan_out)

    def _forward_impl(self, x):
        return self.classifier(flatten(self.avgpool(self.features(x)), 1))

    def forward(self, x):
        return self._forward_impl(x)


def _efficientnet_conf(arch, **kwargs):
    if arch.startswith("efficientnet_b"):
        c = partial(MBConvConfig, width_mult=kwargs.pop("width_mult"),
                    depth_mult=kwargs.pop("depth_mult"))
        return [c(1, 3, 1, 32, 16, 1), c(6, 3, 2, 16, 24, 2), c(6, 5, 2, 24, 40, 2),
                c(6, 3, 2, 40, 80, 3), c(6, 5, 1, 80, 112, 3), c(6, 5, 2, 112, 192, 4),
                c(6, 3, 1, 192, 320, 1)], None
    F, M = FusedMBConvConfig, MBConvConfig
    if arch.startswith("efficientnet_v2_s"):
        return [F(1, 3, 1, 24, 24, 2), F(4, 3, 2, 24, 48, 4), F(4, 3, 2, 48, 64, 4),
                M(4, 3, 2, 64, 128, 6), M(6, 3, 1, 128, 160, 9), M(6, 3, 2, 160, 256, 15)], 1280
    if arch.startswith("efficientnet_v2_m"):
        return [F(1, 3, 1, 24, 24, 3), F(4, 3, 2, 24, 48, 5), F(4, 3, 2, 48, 80, 5),
                M(4, 3, 2, 80, 160, 7), M(6, 3, 1, 160, 176, 14), M(6, 3, 2, 176, 304, 18),
                M(6, 3, 1, 304, 512, 5)], 1280
    if arch.startswith("efficientnet_v2_l"):
        return [F(1, 3, 1, 32, 32, 4), F(4, 3, 2, 32, 64, 7), F(4, 3, 2, 64, 96, 7),
                M(4, 3, 2, 96, 192, 10), M(6, 3, 1, 192, 224, 19), M(6, 3, 2, 224, 384, 25),
                M(6, 3, 1, 384, 640, 7)], 1280
    raise ValueError(f"Unsupported model type {arch}")


def _efficientnet(arch, weights, kwargs, dropout, norm_layer=None, **conf):
    setting, last_channel = _efficientnet_conf(arch, **conf)
    if norm_layer is not None:
        kwargs["norm_layer"] = norm_layer
    return _build(EfficientNet, weights, inverted_residual_setting=setting,
                  dropout=kwargs.pop("dropout", dropout), last_channel=last_channel, **kwargs)


_BN_B5 = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
_BN_V2 = partial(nn.BatchNorm2d, eps=0.001)

EfficientNet_B0_Weights = _weights_enum("EfficientNet_B0_Weights", __name__)
EfficientNet_B1_Weights = _weights_enum("EfficientNet_B1_Weights", __name__)
EfficientNet_B2_Weights = _weights_enum("EfficientNet_B2_Weights", __name__)
EfficientNet_B3_Weights = _weights_enum("EfficientNet_B3_Weights", __name__)
EfficientNet_B4_Weights = _weights_enum("EfficientNet_B4_Weights", __name__)
EfficientNet_B5_Weights = _weights_enum("EfficientNet_B5_Weights", __name__)
EfficientNet_B6_Weights = _weights_enum("EfficientNet_B6_Weights", __name__)
EfficientNet_B7_Weights = _weights_enum("EfficientNet_B7_Weights", __name__)
EfficientNet_V2_S_Weights = _weights_enum("EfficientNet_V2_S_Weights", __name__)
EfficientNet_V2_M_Weights = _weights_enum("EfficientNet_V2_M_Weights", __name__)
EfficientNet_V2_L_Weights = _weights_enum("EfficientNet_V2_L_Weights", __name__)


@_builder(EfficientNet_B0_Weights)
def efficientnet_b0(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b0", weights, kwargs, 0.2, width_mult=1.0, depth_mult=1.0)


@_builder(EfficientNet_B1_Weights)
def efficientnet_b1(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b1", weights, kwargs, 0.2, width_mult=1.0, depth_mult=1.1)


@_builder(EfficientNet_B2_Weights)
def efficientnet_b2(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b2", weights, kwargs, 0.3, width_mult=1.1, depth_mult=1.2)


@_builder(EfficientNet_B3_Weights)
def efficientnet_b3(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b3", weights, kwargs, 0.3, width_mult=1.2, depth_mult=1.4)


@_builder(EfficientNet_B4_Weights)
def efficientnet_b4(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b4", weights, kwargs, 0.4, width_mult=1.4, depth_mult=1.8)


@_builder(EfficientNet_B5_Weights)
def efficientnet_b5(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b5", weights, kwargs, 0.4, _BN_B5, width_mult=1.6,
                         depth_mult=2.2)


@_builder(EfficientNet_B6_Weights)
def efficientnet_b6(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b6", weights, kwargs, 0.5, _BN_B5, width_mult=1.8,
                         depth_mult=2.6)


@_builder(EfficientNet_B7_Weights)
def efficientnet_b7(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_b7", weights, kwargs, 0.5, _BN_B5, width_mult=2.0,
                         depth_mult=3.1)


@_builder(EfficientNet_V2_S_Weights)
def efficientnet_v2_s(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_v2_s", weights, kwargs, 0.2, _BN_V2)


@_builder(EfficientNet_V2_M_Weights)
def efficientnet_v2_m(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_v2_m", weights, kwargs, 0.3, _BN_V2)


@_builder(EfficientNet_V2_L_Weights)
def efficientnet_v2_l(*, weights=None, progress=True, **kwargs):
    return _efficientnet("efficientnet_v2_l", weights, kwargs, 0.4, _BN_V2)
