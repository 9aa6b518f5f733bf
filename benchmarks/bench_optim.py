"""One optimizer step over ResNet-18's parameters (62 tensors, 11.7M floats), gradients fixed."""
from registry import benchmark


def resnet18_shapes():
    """The parameter shapes of torchvision's resnet18 (conv weights, batch-norm affine, fc)."""
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for block in range(2):
            shapes += [(cout, cin, 3, 3), (cout,), (cout,), (cout, cout, 3, 3), (cout,), (cout,)]
            if block == 0 and (stride != 1 or cin != cout):
                shapes += [(cout, cin, 1, 1), (cout,), (cout,)]  # the downsample branch
            cin = cout
    return shapes + [(1000, 512), (1000,)]


def resnet18_params(lib):
    lib.manual_seed(0)
    params = [lib.randn(s).requires_grad_() for s in resnet18_shapes()]
    for p in params:
        p.grad = lib.randn(p.shape)
    return params


@benchmark(target=1.5)
def bench_sgd_resnet18(lib):
    opt = lib.optim.SGD(resnet18_params(lib), lr=0.01, momentum=0.9)
    return opt.step


@benchmark(target=1.5)
def bench_adamw_resnet18(lib):
    opt = lib.optim.AdamW(resnet18_params(lib), lr=1e-3)
    return opt.step
