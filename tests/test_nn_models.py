"""Whole models built in both libraries from the same source: torch's weights copied in, the
same batch, then outputs, loss, every parameter gradient and the running statistics compared --
examples/mnist.py's Net (pytorch/examples' MNIST network) and a ResNet-style stack of basic
blocks, in training mode (batch statistics, dropout with the same seed) and in eval mode."""
import importlib.util
import os
import sys

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _load_example(name, argv):
    """examples/<name>.py as a module, imported with sys.argv = argv (its `--torch` switch
    picks the library at import time)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples", f"{name}.py")
    saved = sys.argv
    sys.argv = argv
    try:
        spec = importlib.util.spec_from_file_location(f"_example_{name}_{len(argv)}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.argv = saved
    return module


def mnist_net(lib):
    """The Net of examples/mnist.py (pytorch/examples' MNIST network), on either library."""
    module = _load_example("mnist", ["mnist.py", "--torch"] if lib is torch else ["mnist.py"])
    return module.Net(), (4, 1, 28, 28)


def resnet_stack(lib):
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.downsample = None
            if stride != 1 or c_in != c_out:
                self.downsample = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                                nn.BatchNorm2d(c_out))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    model = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                          BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 32, 1),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
                          nn.LogSoftmax(dim=1))
    return model, (4, 3, 16, 16)


@pytest.mark.parametrize("build", [mnist_net, resnet_stack], ids=["mnist_net", "resnet_stack"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_model_matches_torch(build, train):
    t_model, shape = build(torch)
    e_model, _ = build(ember)
    state = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in
             t_model.state_dict().items()}
    e_model.load_state_dict(state)
    assert list(e_model.state_dict()) == list(t_model.state_dict())
    assert repr(e_model) == repr(t_model)
    e_model.train(train)
    t_model.train(train)

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    target = np.array([3, 1, 4, 1])
    torch.manual_seed(7)
    t_out = t_model(torch.from_numpy(x))
    t_loss = torch.nn.functional.nll_loss(t_out, torch.from_numpy(target))
    t_loss.backward()
    ember.manual_seed(7)
    e_out = e_model(ember.from_numpy(x))
    e_loss = ember.nn.functional.nll_loss(e_out, ember.from_numpy(target))
    e_loss.backward()

    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(e_loss.item(), t_loss.item(), rtol=1e-5)
    t_params = dict(t_model.named_parameters())
    for name, p in e_model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), rtol=1e-3,
                                   atol=1e-5, err_msg=name)
    t_buffers = dict(t_model.named_buffers())
    for name, b in e_model.named_buffers():  # running statistics after one training step
        np.testing.assert_allclose(b.numpy(), t_buffers[name].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
