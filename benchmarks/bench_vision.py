"""ResNet-50 inference (batch 8, 3x224x224, eval mode, no_grad): ember.vision.models.resnet50
against the same network written from torch.nn (torchvision's layout: Bottleneck blocks with
the stride on the 3x3 convolution)."""
from registry import benchmark


def _torch_resnet50(nn):
    """torchvision's resnet50, spelled out with torch.nn."""

    class Bottleneck(nn.Module):
        def __init__(self, c_in, planes, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or c_in != planes * 4:
                self.downsample = nn.Sequential(nn.Conv2d(c_in, planes * 4, 1, stride,
                                                          bias=False),
                                                nn.BatchNorm2d(planes * 4))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(out + identity)

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            c_in, stages = 64, []
            for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                layers = [Bottleneck(c_in, planes, stride)]
                layers += [Bottleneck(planes * 4, planes, 1) for _ in range(blocks - 1)]
                stages.append(nn.Sequential(*layers))
                c_in = planes * 4
            self.layer1, self.layer2, self.layer3, self.layer4 = stages
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(2048, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))
    return ResNet50()


@benchmark(target=2.0)
def bench_resnet50_inference(lib):
    lib.manual_seed(0)
    if lib.__name__ == "ember":
        from ember.vision.models import resnet50
        model = resnet50()
    else:
        model = _torch_resnet50(lib.nn)
    model.eval()
    x = lib.randn(8, 3, 224, 224)

    def step():
        with lib.no_grad():
            model(x)
    return step
