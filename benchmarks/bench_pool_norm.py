"""Pooling and batch normalization, forward + backward, at CNN shapes."""
from registry import benchmark


@benchmark(target=2.0)
def bench_max_pool2d(lib):
    """max_pool2d(2) of the MNIST example's (64, 64, 24, 24) activations, and a ResNet stem's
    3x3 / stride 2 / pad 1 pool on (32, 64, 56, 56)."""
    F = lib.nn.functional
    lib.manual_seed(0)
    a = lib.randn(64, 64, 24, 24, requires_grad=True)
    b = lib.randn(32, 64, 56, 56, requires_grad=True)

    def step():
        F.max_pool2d(a, 2).backward(lib.ones(64, 64, 12, 12))
        F.max_pool2d(b, 3, 2, 1).backward(lib.ones(32, 64, 28, 28))
    return step


@benchmark(target=2.0)
def bench_batch_norm(lib):
    """Training-mode batch norm of a ResNet's first stage, (32, 64, 32, 32), with running
    statistics, forward + backward."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(32, 64, 32, 32, requires_grad=True)
    w = lib.ones(64, requires_grad=True)
    b = lib.zeros(64, requires_grad=True)
    mean, var = lib.zeros(64), lib.ones(64)
    g = lib.randn(32, 64, 32, 32)

    def step():
        F.batch_norm(x, mean, var, w, b, training=True).backward(g)
    return step


@benchmark(target=2.0)
def bench_max_pool2d_channels_last(lib):
    """bench_max_pool2d on channels_last activations (and gradients)."""
    F = lib.nn.functional
    lib.manual_seed(0)
    cl = lib.channels_last
    a = lib.randn(64, 64, 24, 24).contiguous(memory_format=cl).requires_grad_()
    b = lib.randn(32, 64, 56, 56).contiguous(memory_format=cl).requires_grad_()
    ga = lib.ones(64, 64, 12, 12).contiguous(memory_format=cl)
    gb = lib.ones(32, 64, 28, 28).contiguous(memory_format=cl)

    def step():
        F.max_pool2d(a, 2).backward(ga)
        F.max_pool2d(b, 3, 2, 1).backward(gb)
    return step


@benchmark(target=2.0)
def bench_batch_norm_channels_last(lib):
    """bench_batch_norm on a channels_last input and gradient."""
    F = lib.nn.functional
    lib.manual_seed(0)
    cl = lib.channels_last
    x = lib.randn(32, 64, 32, 32).contiguous(memory_format=cl).requires_grad_()
    w = lib.ones(64, requires_grad=True)
    b = lib.zeros(64, requires_grad=True)
    mean, var = lib.zeros(64), lib.ones(64)
    g = lib.randn(32, 64, 32, 32).contiguous(memory_format=cl)

    def step():
        F.batch_norm(x, mean, var, w, b, training=True).backward(g)
    return step


@benchmark(target=2.0)
def bench_bn3d_max_pool3d_channels_last_3d(lib):
    """Training batch norm then 2x2x2 max pooling of (8, 32, 16, 32, 32) channels_last_3d
    activations, forward + backward."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(8, 32, 16, 32, 32).contiguous(
        memory_format=lib.channels_last_3d).requires_grad_()
    w = lib.ones(32, requires_grad=True)
    b = lib.zeros(32, requires_grad=True)

    def step():
        F.max_pool3d(F.batch_norm(x, None, None, w, b, training=True), 2).sum().backward()
    return step


@benchmark(target=2.0)
def bench_cross_entropy(lib):
    """Cross-entropy of (256, 1000) logits, forward + backward."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(256, 1000, requires_grad=True)
    y = lib.randint(0, 1000, (256,))

    def step():
        F.cross_entropy(x, y).backward()
    return step


@benchmark(target=2.0)
def bench_embedding(lib):
    """An embedding lookup of (64, 128) tokens in a (30000, 256) table, forward + backward."""
    F = lib.nn.functional
    lib.manual_seed(0)
    w = lib.randn(30000, 256, requires_grad=True)
    idx = lib.randint(0, 30000, (64, 128))
    g = lib.randn(64, 128, 256)

    def step():
        F.embedding(idx, w).backward(g)
    return step
