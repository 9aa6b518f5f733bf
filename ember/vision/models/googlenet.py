"""GoogLeNet / Inception v1 (Szegedy et al. 2014) as torchvision builds it: BasicConv2d stem
(conv1..conv3), inception3a..5b blocks of four branches, the aux1/aux2 heads used in training,
avgpool, dropout, fc. In training with aux_logits the forward returns
GoogLeNetOutputs(logits, aux_logits2, aux_logits1)."""
import warnings
from collections import namedtuple

from ... import nn, flatten, cat
from ...nn import functional as F
from ._api import WeightsEnum, _weights_enum
from ._utils import _build, _builder, _ovewrite_named_param
from .inception import BasicConv2d, Inception3

__all__ = ["GoogLeNet", "GoogLeNetOutputs", "_GoogLeNetOutputs", "GoogLeNet_Weights",
           "googlenet"]

GoogLeNetOutputs = namedtuple("GoogLeNetOutputs", ["logits", "aux_logits2", "aux_logits1"])
_GoogLeNetOutputs = GoogLeNetOutputs


class Inception(nn.Module):
    def __init__(self, in_channels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj,
                 conv_block=None):
        super().__init__()
        c = conv_block or BasicConv2d
        self.branch1 = c(in_channels, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(c(in_channels, ch3x3red, kernel_size=1),
                                     c(ch3x3red, ch3x3, kernel_size=3, padding=1))
        # torchvision's "5x5" branch uses a 3x3 convolution (a known quirk its weights keep)
        self.branch3 = nn.Sequential(c(in_channels, ch5x5red, kernel_size=1),
                                     c(ch5x5red, ch5x5, kernel_size=3, padding=1))
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
            c(in_channels, pool_proj, kernel_size=1))

    def _forward(self, x):
        return [self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)]

    def forward(self, x):
        return cat(self._forward(x), 1)


class InceptionAux(nn.Module):
    def __init__(self, in_channels, num_classes, conv_block=None, dropout=0.7):
        super().__init__()
        c = conv_block or BasicConv2d
        self.conv = c(in_channels, 128, kernel_size=1)
        self.fc1 = nn.Linear(2048, 1024)
        self.fc2 = nn.Linear(1024, num_classes)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        x = flatten(self.conv(F.adaptive_avg_pool2d(x, (4, 4))), 1)
        return self.fc2(self.dropout(F.relu(self.fc1(x), inplace=True)))


class GoogLeNet(nn.Module):
    __constants__ = ["aux_logits", "transform_input"]

    def __init__(self, num_classes=1000, aux_logits=True, transform_input=False,
                 init_weights=None, blocks=None, dropout=0.2, dropout_aux=0.7):
        super().__init__()
        if blocks is None:
            blocks = [BasicConv2d, Inception, InceptionAux]
        if init_weights is None:
            warnings.warn("The default weight initialization of GoogleNet will be changed in "
                          "future releases of torchvision. If you wish to keep the old behavior "
                          "(which leads to long initialization times due to scipy/scipy#11299), "
                          "please set init_weights=True.", FutureWarning)
            init_weights = True
        if len(blocks) != 3:
            raise ValueError(f"blocks length should be 3 instead of {len(blocks)}")
        conv, inc, aux = blocks
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        self.conv1 = conv(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.conv2 = conv(64, 64, kernel_size=1)
        self.conv3 = conv(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = inc(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = inc(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception4a = inc(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = inc(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = inc(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = inc(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = inc(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.inception5a = inc(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = inc(832, 384, 192, 384, 48, 128, 128)
        if aux_logits:
            self.aux1 = aux(512, num_classes, dropout=dropout_aux)
            self.aux2 = aux(528, num_classes, dropout=dropout_aux)
        else:
            self.aux1 = None
            self.aux2 = None
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(1024, num_classes)
        if init_weights:
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    nn.init.trunc_normal_(m.weight, mean=0.0, std=0.01, a=-2, b=2)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

    _transform_input = Inception3._transform_input  # the same re-normalisation

    def _forward(self, x):
        x = self.maxpool2(self.conv3(self.conv2(self.maxpool1(self.conv1(x)))))
        x = self.inception4a(self.maxpool3(self.inception3b(self.inception3a(x))))
        aux1 = self.aux1(x) if self.aux1 is not None and self.training else None
        x = self.inception4d(self.inception4c(self.inception4b(x)))
        aux2 = self.aux2(x) if self.aux2 is not None and self.training else None
        x = self.inception5b(self.inception5a(self.maxpool4(self.inception4e(x))))
        x = self.dropout(flatten(self.avgpool(x), 1))
        return self.fc(x), aux2, aux1

    def eager_outputs(self, x, aux2, aux1):
        if self.training and self.aux_logits:
            return _GoogLeNetOutputs(x, aux2, aux1)
        return x

    def forward(self, x):
        x, aux2, aux1 = self._forward(self._transform_input(x))
        return self.eager_outputs(x, aux2, aux1)


GoogLeNet_Weights = _weights_enum("GoogLeNet_Weights", __name__)


@_builder(GoogLeNet_Weights)
def googlenet(*, weights=None, progress=True, **kwargs):
    original_aux_logits = kwargs.get("aux_logits", False)
    if isinstance(weights, WeightsEnum):
        if "transform_input" not in kwargs:
            _ovewrite_named_param(kwargs, "transform_input", True)
        _ovewrite_named_param(kwargs, "aux_logits", True)
        _ovewrite_named_param(kwargs, "init_weights", False)
    model = _build(GoogLeNet, weights, **kwargs)
    if isinstance(weights, WeightsEnum):
        if not original_aux_logits:
            model.aux_logits = False
            model.aux1 = None
            model.aux2 = None
        else:
            warnings.warn("auxiliary heads in the pretrained googlenet model are NOT pretrained, "
                          "so make sure to train them")
    return model
