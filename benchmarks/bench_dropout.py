"""Dropout forward in training mode, whose time is mostly the Bernoulli mask drawn from the
mt19937 stream (bit for bit the mask torch draws from the same seed): the MNIST example's
dropout after max-pooling, flattened to (64, 9216), and a transformer block's (16, 64, 1024)
feed-forward activations."""
from registry import benchmark


def _dropout_step(lib, shape, p):
    lib.manual_seed(0)
    x = lib.randn(*shape)
    F = lib.nn.functional

    def step():
        F.dropout(x, p, training=True)
    return step


@benchmark(target=2.0)
def bench_dropout_mnist(lib):
    """F.dropout(p=0.25) of (64, 9216)."""
    return _dropout_step(lib, (64, 9216), 0.25)


@benchmark(target=2.0)
def bench_dropout_transformer(lib):
    """F.dropout(p=0.1) of (16, 64, 1024)."""
    return _dropout_step(lib, (16, 64, 1024), 0.1)
