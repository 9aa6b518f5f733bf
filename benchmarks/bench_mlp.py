"""A full training step of an MNIST-sized MLP."""
from _common import training_step
from registry import benchmark


@benchmark(target=1.3)
def bench_mlp_train_step(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(128, 784)
    y = lib.randint(0, 10, (128,))
    return training_step(model, opt, F.cross_entropy, x, y)
