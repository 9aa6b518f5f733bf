"""Convolution forward + backward at the shapes of two real networks: the pytorch/examples
MNIST net (batch 64, 1x28x28 -> 32 -> 64 channels, 3x3) and ResNet-18 on CIFAR-10 (batch 32,
64 to 512 channels, 32x32 down to 4x4)."""
from registry import benchmark


def _conv_step(lib, batch, layers):
    """fwd+bwd of a list of (in_channels, out_channels, size, stride, input_requires_grad)."""
    F = lib.nn.functional
    lib.manual_seed(0)
    cases = []
    for c_in, c_out, size, stride, input_grad in layers:
        x = lib.randn(batch, c_in, size, size, requires_grad=input_grad)
        w = (lib.randn(c_out, c_in, 3, 3) * 0.1).requires_grad_()
        cases.append((x, w, stride))

    def step():
        for x, w, stride in cases:
            y = F.conv2d(x, w, stride=stride, padding=1 if len(cases) > 2 else 0)
            y.backward(lib.ones_like(y))
    return step


@benchmark(target=2.0)
def bench_conv2d_mnist(lib):
    """conv1 (1 -> 32 on 28x28) and conv2 (32 -> 64 on 26x26) of the MNIST example, batch 64."""
    return _conv_step(lib, 64, [(1, 32, 28, 1, False), (32, 64, 26, 1, True)])


def _resnet_stage(lib, channels, size):
    """A ResNet-18 stage's 3x3 convolution (c -> c, stride 1), its downsampling one
    (c/2 -> c, stride 2) where there is one, batch 32."""
    layers = [(channels, channels, size, 1, True)]
    if channels > 64:
        layers.append((channels // 2, channels, size * 2, 2, True))
    layers.append((channels, channels, size, 1, True))
    return _conv_step(lib, 32, layers)


@benchmark(target=2.0)
def bench_conv2d_resnet_64(lib):
    return _resnet_stage(lib, 64, 32)


@benchmark(target=2.0)
def bench_conv2d_resnet_128(lib):
    return _resnet_stage(lib, 128, 16)


@benchmark(target=2.0)
def bench_conv2d_resnet_256(lib):
    return _resnet_stage(lib, 256, 8)


@benchmark(target=2.0)
def bench_conv2d_resnet_512(lib):
    return _resnet_stage(lib, 512, 4)
