"""Training steps on ember's lazy device against torch eager: the MLP of bench_mlp (784-512-512-10,
batch 128, SGD momentum) and a small one (64-128-10, batch 32) where per-op overhead dominates.
On ember the model, batch and optimizer state live on `device="lazy"`, and each step ends with
`ember._lazy.mark_step()`, which runs the step's cached compiled graph; the torch column is
torch eager on CPU."""
from registry import benchmark


def _lazy_step(lib, sizes, batch):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    lazy = lib.__name__ == "ember"
    device = "lazy" if lazy else "cpu"
    model = nn.Sequential(*layers[:-1]).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(batch, sizes[0]).to(device)
    y = lib.randint(0, sizes[-1], (batch,)).to(device)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if lazy:
            lib._lazy.mark_step()
    return step


@benchmark(target=1.3)
def bench_lazy_mlp_train_step(lib):
    return _lazy_step(lib, (784, 512, 512, 10), 128)


@benchmark(target=3.0)
def bench_lazy_small_mlp_train_step(lib):
    return _lazy_step(lib, (64, 128, 10), 32)
