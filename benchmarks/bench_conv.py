"""Convolution forward + backward at the shapes of two real networks: the pytorch/examples
MNIST net (batch 64, 1x28x28 -> 32 -> 64 channels, 3x3, no padding) and ResNet-18 on CIFAR-10
(batch 32, 64 to 512 channels, 32x32 down to 4x4, 3x3 with padding 1).

numpy's OpenBLAS may pick AVX2 kernels on a CPU with AVX-512 (it reports its choice as
"Haswell" in the runner's header); `OPENBLAS_CORETYPE=SkylakeX python benchmarks/run.py` makes
it use the AVX-512 ones, as PyTorch's oneDNN does."""
from registry import benchmark


def _conv_step(lib, batch, layers):
    """fwd+bwd of (in_channels, out_channels, size, stride, padding, input_requires_grad)
    convolutions with 3x3 kernels."""
    F = lib.nn.functional
    lib.manual_seed(0)
    cases = []
    for c_in, c_out, size, stride, padding, input_grad in layers:
        x = lib.randn(batch, c_in, size, size, requires_grad=input_grad)
        w = (lib.randn(c_out, c_in, 3, 3) * 0.1).requires_grad_()
        cases.append((x, w, stride, padding))

    def step():
        for x, w, stride, padding in cases:
            y = F.conv2d(x, w, stride=stride, padding=padding)
            y.backward(lib.ones_like(y))
    return step


@benchmark(target=2.0)
def bench_conv2d_mnist(lib):
    """conv1 (1 -> 32 on 28x28) and conv2 (32 -> 64 on 26x26) of the MNIST example, batch 64."""
    return _conv_step(lib, 64, [(1, 32, 28, 1, 0, False), (32, 64, 26, 1, 0, True)])


def _resnet_stage(lib, channels, size):
    """A ResNet-18 stage's convolutions at batch 32: the downsampling one (c/2 -> c, stride 2)
    where the stage has one, and two c -> c ones."""
    layers = [(channels, channels, size, 1, 1, True)] * 2
    if channels > 64:
        layers.insert(0, (channels // 2, channels, size * 2, 2, 1, True))
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
