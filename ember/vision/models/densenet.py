"""DenseNet-121/161/169/201 (Huang et al. 2016) as torchvision builds them: `features`
(conv0/norm0/relu0/pool0, denseblockN ModuleDicts of denselayerN, transitionN, norm5) and
`classifier`. Old checkpoints' `norm.1.weight`-style keys are renamed on loading, as
torchvision does. memory_efficient=True recomputes each bottleneck under checkpoint."""
import re
from collections import OrderedDict

from ... import nn, flatten, cat, Tensor
from ...nn import functional as F
from ...utils import checkpoint as cp
from ._api import _weights_enum
from ._utils import _build, _builder

__all__ = ["DenseNet", "DenseNet121_Weights", "DenseNet161_Weights", "DenseNet169_Weights",
           "DenseNet201_Weights", "densenet121", "densenet161", "densenet169", "densenet201"]


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate,
                 memory_efficient=False):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1,
                               stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1,
                               padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs):
        return self.conv1(self.relu1(self.norm1(cat(inputs, 1))))

    def any_requires_grad(self, input):
        return any(t.requires_grad for t in input)

    def call_checkpoint_bottleneck(self, input):
        def closure(*inputs):
            return self.bn_function(inputs)
        return cp.checkpoint(closure, *input, use_reentrant=False)

    def forward(self, input):
        prev_features = [input] if isinstance(input, Tensor) else input
        if self.memory_efficient and self.any_requires_grad(prev_features):
            bottleneck_output = self.call_checkpoint_bottleneck(prev_features)
        else:
            bottleneck_output = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    _version = 2

    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate,
                 memory_efficient=False):
        super().__init__()
        for i in range(num_layers):
            self.add_module("denselayer%d" % (i + 1), _DenseLayer(
                num_input_features + i * growth_rate, growth_rate=growth_rate, bn_size=bn_size,
                drop_rate=drop_rate, memory_efficient=memory_efficient))

    def forward(self, init_features):
        features = [init_features]
        for _, layer in self.items():
            features.append(layer(features))
        return cat(features, 1)


class _Transition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1,
                              bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64,
                 bn_size=4, drop_rate=0, num_classes=1000, memory_efficient=False):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3,
                                bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1))]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add_module("denseblock%d" % (i + 1), _DenseBlock(
                num_layers=num_layers, num_input_features=num_features, bn_size=bn_size,
                growth_rate=growth_rate, drop_rate=drop_rate, memory_efficient=memory_efficient))
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module("transition%d" % (i + 1), _Transition(
                    num_input_features=num_features, num_output_features=num_features // 2))
                num_features = num_features // 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.features(x), inplace=True)
        out = flatten(F.adaptive_avg_pool2d(out, (1, 1)), 1)
        return self.classifier(out)


_OLD_KEY = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\."
                      r"(?:weight|bias|running_mean|running_var))$")


def _remap_old_keys(state_dict):
    """The published checkpoints name `norm.1.weight` what the model calls `norm1.weight`."""
    state_dict = dict(state_dict)
    for key in list(state_dict):
        res = _OLD_KEY.match(key)
        if res:
            state_dict[res.group(1) + res.group(2)] = state_dict.pop(key)
    return state_dict


def _densenet(growth_rate, block_config, num_init_features, weights, **kwargs):
    return _build(DenseNet, weights, _remap=_remap_old_keys, growth_rate=growth_rate,
                  block_config=block_config, num_init_features=num_init_features, **kwargs)


DenseNet121_Weights = _weights_enum("DenseNet121_Weights", __name__)
DenseNet161_Weights = _weights_enum("DenseNet161_Weights", __name__)
DenseNet169_Weights = _weights_enum("DenseNet169_Weights", __name__)
DenseNet201_Weights = _weights_enum("DenseNet201_Weights", __name__)


@_builder(DenseNet121_Weights)
def densenet121(*, weights=None, progress=True, **kwargs):
    return _densenet(32, (6, 12, 24, 16), 64, weights, **kwargs)


@_builder(DenseNet161_Weights)
def densenet161(*, weights=None, progress=True, **kwargs):
    return _densenet(48, (6, 12, 36, 24), 96, weights, **kwargs)


@_builder(DenseNet169_Weights)
def densenet169(*, weights=None, progress=True, **kwargs):
    return _densenet(32, (6, 12, 32, 32), 64, weights, **kwargs)


@_builder(DenseNet201_Weights)
def densenet201(*, weights=None, progress=True, **kwargs):
    return _densenet(32, (6, 12, 48, 32), 64, weights, **kwargs)
