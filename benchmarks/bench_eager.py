"""Per-op overhead of the eager tensor and autograd machinery."""
from registry import benchmark


@benchmark(target=1.5)  # issue 19: add <= 1.5x torch
def bench_add_16(lib):
    a = lib.randn(16)
    b = lib.randn(16)
    return lambda: a + b


@benchmark(target=2)  # issue 19: the chain <= 2x torch
def bench_chain_fwd_bwd(lib):
    x = lib.randn(64, requires_grad=True)

    def step():
        y = ((x * 2 + 1).tanh() * x).sum()
        y.backward()
    return step
