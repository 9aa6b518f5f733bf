"""torch.masked and the linalg additions of issue 13, forward + backward: masked softmax of
attention scores with padding, masked mean/var over a batch, matrix_exp and eig of a batch."""
import numpy as np

from registry import benchmark


def _padding_mask(lib, batch, length):
    lengths = np.random.default_rng(0).integers(1, length + 1, batch)
    keep = np.arange(length)[None, :] < lengths[:, None]
    return lib.tensor(keep[:, None, None, :])


@benchmark(target=2.0)
def bench_masked_softmax(lib):
    """masked.softmax of (32, 8, 64, 64) attention scores under a padding mask."""
    lib.manual_seed(0)
    x = lib.randn(32, 8, 64, 64, requires_grad=True)
    mask = _padding_mask(lib, 32, 64)

    def step():
        lib.masked.softmax(x, -1, mask=mask).sum().backward()
    return step


@benchmark(target=2.0)
def bench_masked_mean_var(lib):
    """masked.mean and masked.var over the time dim of a (64, 128, 256) padded batch."""
    lib.manual_seed(0)
    x = lib.randn(64, 128, 256, requires_grad=True)
    lengths = np.random.default_rng(0).integers(1, 129, 64)
    mask = lib.tensor((np.arange(128)[None, :] < lengths[:, None])[:, :, None])

    def step():
        (lib.masked.mean(x, 1, mask=mask) + lib.masked.var(x, 1, mask=mask)).sum().backward()
    return step


@benchmark(target=3.0)
def bench_matrix_exp(lib):
    """linalg.matrix_exp of 64 (16, 16) float64 matrices, backwards to them."""
    lib.manual_seed(0)
    A = lib.randn(64, 16, 16, dtype=lib.float64, requires_grad=True)

    def step():
        lib.linalg.matrix_exp(A).sum().backward()
    return step


@benchmark(target=3.0)
def bench_eigvals(lib):
    """linalg.eigvals of 64 (16, 16) float64 matrices, backwards through the real parts."""
    lib.manual_seed(0)
    A = lib.randn(64, 16, 16, dtype=lib.float64, requires_grad=True)

    def step():
        lib.linalg.eigvals(A).real.sum().backward()
    return step
