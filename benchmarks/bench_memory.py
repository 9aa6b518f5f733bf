"""The caching allocator against NumPy's own memory: the train steps of mlp_train_step,
lenet_train_step and resnet18_train_step again with ember's allocator switched off (the
*_native rows: what EMBER_CPU_ALLOCATOR=native gives); torch runs unchanged in both rows."""
from _common import training_step
from bench_mlp import bench_mlp_train_step
from bench_resnet import bench_resnet18_train_step
from registry import benchmark


@benchmark(target=2.0)
def bench_lenet_train_step(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                          nn.Linear(84, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(64, 1, 28, 28)
    y = lib.randint(0, 10, (64,))
    return training_step(model, opt, F.cross_entropy, x, y)


def _native(lib, step):
    """`step` with ember's caching allocator off (torch has no such switch: unchanged)."""
    memory = getattr(lib, "memory", None)
    if memory is None or not hasattr(memory, "caching_allocator_enable"):
        return step

    def run():
        memory.caching_allocator_enable(False)
        try:
            step()
        finally:
            memory.caching_allocator_enable(True)
    return run


@benchmark(target=1.3)
def bench_mlp_train_step_native(lib):
    return _native(lib, bench_mlp_train_step(lib))


@benchmark(target=2.0)
def bench_lenet_train_step_native(lib):
    return _native(lib, bench_lenet_train_step(lib))


@benchmark(target=2.5)
def bench_resnet18_train_step_native(lib):
    return _native(lib, bench_resnet18_train_step(lib))
