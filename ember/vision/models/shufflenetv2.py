"""ShuffleNet V2 (Ma et al. 2018) as torchvision builds it: conv1, maxpool, stage2..4 (Sequentials
of InvertedResidual with branch1/branch2 and a channel shuffle), conv5, fc."""
from ... import nn, cat, transpose
from ._api import _weights_enum
from ._utils import _build, _builder

__all__ = ["ShuffleNetV2", "ShuffleNet_V2_X0_5_Weights", "ShuffleNet_V2_X1_0_Weights",
           "ShuffleNet_V2_X1_5_Weights", "ShuffleNet_V2_X2_0_Weights", "shufflenet_v2_x0_5",
           "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"]


def channel_shuffle(x, groups):
    batchsize, num_channels, height, width = x.size()
    x = x.view(batchsize, groups, num_channels // groups, height, width)
    x = transpose(x, 1, 2).contiguous()
    return x.view(batchsize, num_channels, height, width)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        if self.stride == 1 and inp != branch_features << 1:
            raise ValueError(f"Invalid combination of stride {stride}, inp {inp} and oup {oup} "
                             f"values. If stride == 1 then inp should be equal to oup // 2 << 1.")
        if self.stride > 1:
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=self.stride, padding=1),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if self.stride > 1 else branch_features, branch_features, kernel_size=1,
                      stride=1, padding=0, bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True),
            self.depthwise_conv(branch_features, branch_features, kernel_size=3,
                                stride=self.stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, kernel_size=1, stride=1, padding=0,
                      bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))

    @staticmethod
    def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = cat((x1, self.branch2(x2)), dim=1)
        else:
            out = cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000,
                 inverted_residual=InvertedResidual):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        self._stage_out_channels = stages_out_channels
        input_channels, output_channels = 3, stages_out_channels[0]
        self.conv1 = nn.Sequential(
            nn.Conv2d(input_channels, output_channels, 3, 2, 1, bias=False),
            nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        input_channels = output_channels
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for name, repeats, output_channels in zip(["stage2", "stage3", "stage4"], stages_repeats,
                                                  stages_out_channels[1:]):
            seq = [inverted_residual(input_channels, output_channels, 2)]
            seq += [inverted_residual(output_channels, output_channels, 1)
                    for _ in range(repeats - 1)]
            setattr(self, name, nn.Sequential(*seq))
            input_channels = output_channels
        output_channels = stages_out_channels[-1]
        self.conv5 = nn.Sequential(
            nn.Conv2d(input_channels, output_channels, 1, 1, 0, bias=False),
            nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        self.fc = nn.Linear(output_channels, num_classes)

    def _forward_impl(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))

    def forward(self, x):
        return self._forward_impl(x)


ShuffleNet_V2_X0_5_Weights = _weights_enum("ShuffleNet_V2_X0_5_Weights", __name__)
ShuffleNet_V2_X1_0_Weights = _weights_enum("ShuffleNet_V2_X1_0_Weights", __name__)
ShuffleNet_V2_X1_5_Weights = _weights_enum("ShuffleNet_V2_X1_5_Weights", __name__)
ShuffleNet_V2_X2_0_Weights = _weights_enum("ShuffleNet_V2_X2_0_Weights", __name__)


@_builder(ShuffleNet_V2_X0_5_Weights)
def shufflenet_v2_x0_5(*, weights=None, progress=True, **kwargs):
    return _build(ShuffleNetV2, weights, stages_repeats=[4, 8, 4],
                  stages_out_channels=[24, 48, 96, 192, 1024], **kwargs)


@_builder(ShuffleNet_V2_X1_0_Weights)
def shufflenet_v2_x1_0(*, weights=None, progress=True, **kwargs):
    return _build(ShuffleNetV2, weights, stages_repeats=[4, 8, 4],
                  stages_out_channels=[24, 116, 232, 464, 1024], **kwargs)


@_builder(ShuffleNet_V2_X1_5_Weights)
def shufflenet_v2_x1_5(*, weights=None, progress=True, **kwargs):
    return _build(ShuffleNetV2, weights, stages_repeats=[4, 8, 4],
                  stages_out_channels=[24, 176, 352, 704, 1024], **kwargs)


@_builder(ShuffleNet_V2_X2_0_Weights)
def shufflenet_v2_x2_0(*, weights=None, progress=True, **kwargs):
    return _build(ShuffleNetV2, weights, stages_repeats=[4, 8, 4],
                  stages_out_channels=[24, 244, 488, 976, 2048], **kwargs)
