"""A whole ResNet-18 training step on CIFAR-10-sized input (batch 32, 3x32x32): the CIFAR
variant (3x3 stem, no max pool), built from nn layers, with SGD + momentum."""
from _common import training_step
from registry import benchmark


def resnet18(lib, num_classes=10):
    nn, F = lib.nn, lib.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.shortcut = nn.Sequential()
            if stride != 1 or c_in != c_out:
                self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                              nn.BatchNorm2d(c_out))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            blocks, c_in = [], 64
            for c_out, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                blocks += [BasicBlock(c_in, c_out, stride), BasicBlock(c_out, c_out, 1)]
                c_in = c_out
            self.layers = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.pool(self.layers(out))
            return self.fc(out.flatten(1))
    return ResNet18()


@benchmark(target=2.5)
def bench_resnet18_train_step(lib):
    lib.manual_seed(0)
    model = resnet18(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x = lib.randn(32, 3, 32, 32)
    y = lib.randint(0, 10, (32,))

    return training_step(model, opt, lib.nn.functional.cross_entropy, x, y)


@benchmark(target=1.3)
def bench_resnet18_train_step_channels_last(lib):
    """The same step with model and input in channels_last."""
    lib.manual_seed(0)
    model = resnet18(lib).to(memory_format=lib.channels_last)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x = lib.randn(32, 3, 32, 32).contiguous(memory_format=lib.channels_last)
    y = lib.randint(0, 10, (32,))

    return training_step(model, opt, lib.nn.functional.cross_entropy, x, y)



@benchmark(target=1.3)
def bench_resnet18_eval_forward(lib):
    """ResNet-18 (the CIFAR variant above) in eval mode: one forward of a (32, 3, 32, 32) batch
    under no_grad."""
    lib.manual_seed(0)
    model = resnet18(lib).eval()
    x = lib.randn(32, 3, 32, 32)

    def step():
        with lib.no_grad():
            model(x)
    return step
