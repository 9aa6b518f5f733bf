"""Inference through an ONNX export: ember's export of the model run by an ONNX Runtime session
(the 'ember' column) against the same model in torch eager under no_grad (the 'torch' column).
LeNet-5 on MNIST-sized input (batch 64) and the CIFAR ResNet-18 of bench_resnet (batch 32)."""
import io

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
    """The callable to time: torch eager forward, or ember's export run in ONNX Runtime with
    torch's thread count."""
    model.eval()
    if lib is torch:
        def forward():
            with torch.no_grad():
                model(x)
        return forward
    import onnxruntime
    f = io.BytesIO()
    lib.onnx.export(model, (x,), f, input_names=["x"])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(f.getvalue(), options,
                                           providers=["CPUExecutionProvider"])
    feeds = {"x": x.numpy()}
    return lambda: session.run(None, feeds)


@benchmark(target=0.7)
def bench_onnx_lenet_infer(lib):
    lib.manual_seed(0)
    return onnx_inference(lib, lenet(lib), lib.randn(64, 1, 28, 28))


@benchmark(target=0.9)
def bench_onnx_resnet18_infer(lib):
    lib.manual_seed(0)
    return onnx_inference(lib, resnet18(lib), lib.randn(32, 3, 32, 32))
