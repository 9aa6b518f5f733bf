"""VGG (Simonyan & Zisserman 2014) as torchvision builds it: `features` (3x3 convolutions, ReLU
and 2x2 max pools, with BatchNorm after each convolution in the _bn variants), `avgpool`
(adaptive to 7x7) and `classifier` (three Linear layers with ReLU and Dropout between).
Configurations A, B, D, E are VGG-11, -13, -16, -19.
"""
from ... import nn, flatten
from ._api import _weights_enum
from ._utils import _build, _builder

__all__ = ["VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
           "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights", "VGG",
           "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]

cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512,
          "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512,
          512, 512, 512, "M"],
}


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))


def make_layers(cfg, batch_norm=False):
    """`features` from a configuration: a number is a 3x3 convolution to that many channels,
    "M" a 2x2 max pool."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


def _vgg(cfg, batch_norm, weights, progress, **kwargs):
    if weights is not None:
        kwargs["init_weights"] = False  # the loaded weights replace the init anyway
    return _build(lambda **kw: VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kw),
                  weights, **kwargs)


VGG11_Weights = _weights_enum("VGG11_Weights", __name__)
VGG11_BN_Weights = _weights_enum("VGG11_BN_Weights", __name__)
VGG13_Weights = _weights_enum("VGG13_Weights", __name__)
VGG13_BN_Weights = _weights_enum("VGG13_BN_Weights", __name__)
VGG16_Weights = _weights_enum("VGG16_Weights", __name__)
VGG16_BN_Weights = _weights_enum("VGG16_BN_Weights", __name__)
VGG19_Weights = _weights_enum("VGG19_Weights", __name__)
VGG19_BN_Weights = _weights_enum("VGG19_BN_Weights", __name__)


@_builder(VGG11_Weights)
def vgg11(*, weights=None, progress=True, **kwargs):
    return _vgg("A", False, weights, progress, **kwargs)


@_builder(VGG11_BN_Weights)
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    return _vgg("A", True, weights, progress, **kwargs)


@_builder(VGG13_Weights)
def vgg13(*, weights=None, progress=True, **kwargs):
    return _vgg("B", False, weights, progress, **kwargs)


@_builder(VGG13_BN_Weights)
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    return _vgg("B", True, weights, progress, **kwargs)


@_builder(VGG16_Weights)
def vgg16(*, weights=None, progress=True, **kwargs):
    return _vgg("D", False, weights, progress, **kwargs)


@_builder(VGG16_BN_Weights)
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    return _vgg("D", True, weights, progress, **kwargs)


@_builder(VGG19_Weights)
def vgg19(*, weights=None, progress=True, **kwargs):
    return _vgg("E", False, weights, progress, **kwargs)


@_builder(VGG19_BN_Weights)
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    return _vgg("E", True, weights, progress, **kwargs)
