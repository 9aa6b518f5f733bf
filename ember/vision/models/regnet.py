"""RegNet X / Y (Radosavovic et al. 2020) as torchvision builds them: `stem`
(Conv2dNormActivation), `trunk_output` (block1..4 AnyStage Sequentials of ResBottleneckBlock
named `block{stage}-{i}`, each with `proj` and `f` = a / b / [se] / c), `avgpool`, `fc`. The
stage widths come from the quantised linear rule of BlockParams.from_init_params, computed in
float32 as torchvision's."""
import math
from collections import OrderedDict
from functools import partial

import ember
from ... import nn
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ._api import _weights_enum
from ._utils import _build, _builder, _make_divisible

__all__ = ["RegNet", "RegNet_Y_400MF_Weights", "RegNet_Y_800MF_Weights", "RegNet_Y_1_6GF_Weights",
           "RegNet_Y_3_2GF_Weights", "RegNet_Y_8GF_Weights", "RegNet_Y_16GF_Weights",
           "RegNet_Y_32GF_Weights", "RegNet_Y_128GF_Weights", "RegNet_X_400MF_Weights",
           "RegNet_X_800MF_Weights", "RegNet_X_1_6GF_Weights", "RegNet_X_3_2GF_Weights",
           "RegNet_X_8GF_Weights", "RegNet_X_16GF_Weights", "RegNet_X_32GF_Weights",
           "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf",
           "regnet_y_16gf", "regnet_y_32gf", "regnet_y_128gf", "regnet_x_400mf", "regnet_x_800mf",
           "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf", "regnet_x_32gf"]


class SimpleStemIN(Conv2dNormActivation):
    def __init__(self, width_in, width_out, norm_layer, activation_layer):
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width,
                 bottleneck_multiplier, se_ratio):
        layers = OrderedDict()
        w_b = int(round(width_out * bottleneck_multiplier))
        g = w_b // group_width
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride, groups=g,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        if se_ratio:
            layers["se"] = SqueezeExcitation(input_channels=w_b,
                                             squeeze_channels=int(round(se_ratio * width_in)),
                                             activation=activation_layer)
        layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, stride=1,
                                           norm_layer=norm_layer, activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width=1,
                 bottleneck_multiplier=1.0, se_ratio=None):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride,
                                             norm_layer=norm_layer, activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer,
                                     group_width, bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x):
        x = self.proj(x) + self.f(x) if self.proj is not None else x + self.f(x)
        return self.activation(x)


class AnyStage(nn.Sequential):
    def __init__(self, width_in, width_out, stride, depth, block_constructor, norm_layer,
                 activation_layer, group_width, bottleneck_multiplier, se_ratio=None,
                 stage_index=0):
        super().__init__()
        for i in range(depth):
            self.add_module(f"block{stage_index}-{i}", block_constructor(
                width_in if i == 0 else width_out, width_out, stride if i == 0 else 1,
                norm_layer, activation_layer, group_width, bottleneck_multiplier, se_ratio))


class BlockParams:
    def __init__(self, depths, widths, group_widths, bottleneck_multipliers, strides,
                 se_ratio=None):
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier=1.0,
                         se_ratio=None, **kwargs):
        QUANT, STRIDE = 8, 2
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError("Invalid RegNet settings")
        widths_cont = ember.arange(depth) * w_a + w_0
        block_capacity = ember.round(ember.log(widths_cont / w_0) / math.log(w_m))
        block_widths = (ember.round(ember.divide(w_0 * ember.pow(w_m, block_capacity), QUANT))
                        * QUANT).int().tolist()
        num_stages = len(set(block_widths))
        split_helper = zip(block_widths + [0], [0] + block_widths, block_widths + [0],
                           [0] + block_widths)
        splits = [w != wp or r != rp for w, wp, r, rp in split_helper]
        stage_widths = [w for w, t in zip(block_widths, splits[:-1]) if t]
        stage_depths = ember.diff(ember.tensor([d for d, t in enumerate(splits) if t])) \
            .int().tolist()
        strides = [STRIDE] * num_stages
        bottleneck_multipliers = [bottleneck_multiplier] * num_stages
        group_widths = [group_width] * num_stages
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(
            stage_widths, bottleneck_multipliers, group_widths)
        return cls(depths=stage_depths, widths=stage_widths, group_widths=group_widths,
                   bottleneck_multipliers=bottleneck_multipliers, strides=strides,
                   se_ratio=se_ratio)

    def _get_expanded_params(self):
        return zip(self.widths, self.strides, self.depths, self.group_widths,
                   self.bottleneck_multipliers)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
        widths = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        group_widths_min = [min(g, w_bot) for g, w_bot in zip(group_widths, widths)]
        ws_bot = [_make_divisible(w_bot, g) for w_bot, g in zip(widths, group_widths_min)]
        stage_widths = [int(w_bot / b) for w_bot, b in zip(ws_bot, bottleneck_ratios)]
        return stage_widths, group_widths_min


class RegNet(nn.Module):
    def __init__(self, block_params, num_classes=1000, stem_width=32, stem_type=None,
                 block_type=None, norm_layer=None, activation=None):
        super().__init__()
        stem_type = stem_type or SimpleStemIN
        norm_layer = norm_layer or nn.BatchNorm2d
        block_type = block_type or ResBottleneckBlock
        activation = activation or nn.ReLU
        self.stem = stem_type(3, stem_width, norm_layer, activation)
        current_width = stem_width
        blocks = []
        for i, (width_out, stride, depth, group_width, bottleneck_multiplier) in enumerate(
                block_params._get_expanded_params()):
            blocks.append((f"block{i + 1}", AnyStage(
                current_width, width_out, stride, depth, block_type, norm_layer, activation,
                group_width, bottleneck_multiplier, block_params.se_ratio, stage_index=i + 1)))
            current_width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=current_width, out_features=num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(x.flatten(start_dim=1))


def _regnet(block_params, weights, **kwargs):
    norm_layer = kwargs.pop("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    return _build(RegNet, weights, block_params=block_params, norm_layer=norm_layer, **kwargs)


_BLOCK_PARAM_NAMES = ("depth", "w_0", "w_a", "w_m", "group_width", "bottleneck_multiplier",
                      "se_ratio")


def _params(kwargs, **defaults):
    """BlockParams from the builder's settings, overridable through kwargs as torchvision's
    (which passes the same kwargs to from_init_params and to RegNet)."""
    settings = {**defaults, **{k: kwargs.pop(k) for k in list(kwargs) if k in _BLOCK_PARAM_NAMES}}
    return BlockParams.from_init_params(**settings)


RegNet_Y_400MF_Weights = _weights_enum("RegNet_Y_400MF_Weights", __name__)
RegNet_Y_800MF_Weights = _weights_enum("RegNet_Y_800MF_Weights", __name__)
RegNet_Y_1_6GF_Weights = _weights_enum("RegNet_Y_1_6GF_Weights", __name__)
RegNet_Y_3_2GF_Weights = _weights_enum("RegNet_Y_3_2GF_Weights", __name__)
RegNet_Y_8GF_Weights = _weights_enum("RegNet_Y_8GF_Weights", __name__)
RegNet_Y_16GF_Weights = _weights_enum("RegNet_Y_16GF_Weights", __name__)
RegNet_Y_32GF_Weights = _weights_enum("RegNet_Y_32GF_Weights", __name__)
RegNet_Y_128GF_Weights = _weights_enum("RegNet_Y_128GF_Weights", __name__)
RegNet_X_400MF_Weights = _weights_enum("RegNet_X_400MF_Weights", __name__)
RegNet_X_800MF_Weights = _weights_enum("RegNet_X_800MF_Weights", __name__)
RegNet_X_1_6GF_Weights = _weights_enum("RegNet_X_1_6GF_Weights", __name__)
RegNet_X_3_2GF_Weights = _weights_enum("RegNet_X_3_2GF_Weights", __name__)
RegNet_X_8GF_Weights = _weights_enum("RegNet_X_8GF_Weights", __name__)
RegNet_X_16GF_Weights = _weights_enum("RegNet_X_16GF_Weights", __name__)
RegNet_X_32GF_Weights = _weights_enum("RegNet_X_32GF_Weights", __name__)


@_builder(RegNet_Y_400MF_Weights)
def regnet_y_400mf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=16, w_0=48, w_a=27.89, w_m=2.09,
                           group_width=8, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_Y_800MF_Weights)
def regnet_y_800mf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=14, w_0=56, w_a=38.84, w_m=2.4,
                           group_width=16, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_Y_1_6GF_Weights)
def regnet_y_1_6gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=27, w_0=48, w_a=20.71, w_m=2.65,
                           group_width=24, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_Y_3_2GF_Weights)
def regnet_y_3_2gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=21, w_0=80, w_a=42.63, w_m=2.66,
                           group_width=24, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_Y_8GF_Weights)
def regnet_y_8gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=17, w_0=192, w_a=76.82, w_m=2.19,
                           group_width=56, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_Y_16GF_Weights)
def regnet_y_16gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=18, w_0=200, w_a=106.23, w_m=2.48,
                           group_width=112, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_Y_32GF_Weights)
def regnet_y_32gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=20, w_0=232, w_a=115.89, w_m=2.53,
                           group_width=232, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_Y_128GF_Weights)
def regnet_y_128gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=27, w_0=456, w_a=160.83, w_m=2.52,
                           group_width=264, se_ratio=0.25), weights, **kwargs)


@_builder(RegNet_X_400MF_Weights)
def regnet_x_400mf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=22, w_0=24, w_a=24.48, w_m=2.54,
                           group_width=16), weights, **kwargs)


@_builder(RegNet_X_800MF_Weights)
def regnet_x_800mf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=16, w_0=56, w_a=35.73, w_m=2.28,
                           group_width=16), weights, **kwargs)


@_builder(RegNet_X_1_6GF_Weights)
def regnet_x_1_6gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=18, w_0=80, w_a=34.01, w_m=2.25,
                           group_width=24), weights, **kwargs)


@_builder(RegNet_X_3_2GF_Weights)
def regnet_x_3_2gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=25, w_0=88, w_a=26.31, w_m=2.25,
                           group_width=48), weights, **kwargs)


@_builder(RegNet_X_8GF_Weights)
def regnet_x_8gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=23, w_0=80, w_a=49.56, w_m=2.88,
                           group_width=120), weights, **kwargs)


@_builder(RegNet_X_16GF_Weights)
def regnet_x_16gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=22, w_0=216, w_a=55.59, w_m=2.1,
                           group_width=128), weights, **kwargs)


@_builder(RegNet_X_32GF_Weights)
def regnet_x_32gf(*, weights=None, progress=True, **kwargs):
    return _regnet(_params(kwargs, depth=23, w_0=320, w_a=69.86, w_m=2.0,
                           group_width=168), weights, **kwargs)
