"""MobileNetV2 (Sandler et al. 2018) as torchvision builds it: `features` (a Sequential of a
stem Conv2dNormActivation, the InvertedResidual blocks and a 1x1 head), then `classifier`
(Dropout, Linear). Module names match torchvision's, e.g. `features.0.0.weight` (stem conv),
`features.1.conv.0.0.weight` (first block's depthwise conv).
"""
from ... import nn, flatten
from ..ops.misc import Conv2dNormActivation
from ._api import _weights_enum
from ._utils import _build, _builder, _init_mobile_weights, _make_divisible, _normal_001

__all__ = ["MobileNet_V2_Weights",
           "MobileNetV2", "InvertedResidual", "mobilenet_v2"]


class InvertedResidual(nn.Module):
    """1x1 expand (unless expand_ratio is 1) -> 3x3 depthwise -> 1x1 linear projection; the
    shortcut is added when the block keeps both stride and width."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        self.stride = stride
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                        norm_layer=norm_layer, activation_layer=nn.ReLU6),
                   nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                   norm_layer(oup)]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000, width_mult=1.0, inverted_residual_setting=None,
                 round_nearest=8, block=None, norm_layer=None, dropout=0.2):
        super().__init__()
        if block is None:
            block = InvertedResidual
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        input_channel, last_channel = 32, 1280
        if inverted_residual_setting is None:
            # t (expansion), c (output channels), n (repeats), s (first block's stride)
            inverted_residual_setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2],
                                         [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                                         [6, 320, 1, 1]]
        if len(inverted_residual_setting) == 0 or len(inverted_residual_setting[0]) != 4:
            raise ValueError("inverted_residual_setting should be non-empty or a 4-element "
                             f"list, got {inverted_residual_setting}")
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                         activation_layer=nn.ReLU6)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1,
                                      expand_ratio=t, norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout),
                                        nn.Linear(self.last_channel, num_classes))

        _init_mobile_weights(self, _normal_001)

    def _forward_impl(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(flatten(x, 1))

    def forward(self, x):
        return self._forward_impl(x)


MobileNet_V2_Weights = _weights_enum("MobileNet_V2_Weights", __name__)


@_builder(MobileNet_V2_Weights)
def mobilenet_v2(*, weights=None, progress=True, **kwargs):
    return _build(MobileNetV2, weights, **kwargs)
