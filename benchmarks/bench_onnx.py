"""Inference through ONNX Runtime: `ember.compile(model, backend="onnxrt")` (ember's export of the
captured graph run by an ONNX Runtime session, behind the compile guards; the 'ember' column)
against the same model in torch eager under no_grad (the 'torch' column).
LeNet-5 on MNIST-sized input (batch 64) and the CIFAR ResNet-18 of bench_resnet (batch 32)."""
import torch

from bench_resnet import resnet18
from registry import benchmark


def lenet(lib):
    nn, F = lib.nn, lib.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2, self.fc3 = nn.Linear(256, 120), nn.Linear(120, 84), \
                nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = lib.flatten(x, 1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
    return LeNet()


def onnx_inference(lib, model, x):
    """The callable to time: the eager forward under no_grad; for ember, compiled with the
    "onnxrt" backend (ONNX Runtime uses ember's thread count, which --threads sets)."""
    model.eval()
    run = model if lib is torch else lib.compile(model, backend="onnxrt")

    def forward():
        with lib.no_grad():
            run(x)
    return forward


@benchmark(target=0.7)
def bench_onnx_lenet_infer(lib):
    lib.manual_seed(0)
    return onnx_inference(lib, lenet(lib), lib.randn(64, 1, 28, 28))


@benchmark(target=0.9)
def bench_onnx_resnet18_infer(lib):
    lib.manual_seed(0)
    return onnx_inference(lib, resnet18(lib), lib.randn(32, 3, 32, 32))
