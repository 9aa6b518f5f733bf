"""Training steps under ember.compile against torch eager: the MLP of bench_mlp, a LeNet-5
(batch 64 of 1x28x28), and ResNet-18 / the Transformer encoder of bench_resnet /
bench_transformer. The torch column is torch eager (no torch.compile); the ember column is the
model wrapped in ember.compile (optimizer step eager in both), and in the *_opt_* rows the
model and the optimizer step (`ember.compile(opt.step)`). Each setup prints the first call's
time -- capture plus compile plus one step -- to stderr.

    python benchmarks/bench_compile.py [names...] [--rounds R] [--number N]

runs torch eager, ember eager and ember compiled in turn (one thread each, or --threads T),
R rounds of N steps, and prints the medians of the wall time and of the process's CPU time
(on a loaded machine the wall time is mostly waiting for a core; the CPU time is the work
done); run.py runs the same setups through its own loop."""
import sys
import time

from _common import training_step
from registry import benchmark


def _compiled_step(lib, model, opt, loss_fn, x, y, name, optimizer=False):
    """The training step with the model compiled (ember only), and with `optimizer` its
    `opt.step` too (ember.compile(opt.step)); torch stays eager."""
    compiled = lib.compile(model) if lib.__name__ == "ember" else model
    if optimizer and compiled is not model:
        opt = _CompiledStep(opt, lib.compile(opt.step))
        name += " + compiled opt.step"
    step = training_step(compiled, opt, loss_fn, x, y)
    if compiled is not model:
        t0 = time.perf_counter()
        step()
        print(f"  [{name}] first call (capture + compile + step): "
              f"{(time.perf_counter() - t0) * 1e3:.1f} ms", file=sys.stderr)
        if optimizer:  # the first step creates the state eagerly; the second compiles
            t0 = time.perf_counter()
            step()
            print(f"  [{name}] second call (optimizer step compiled: "
                  f"{opt.step.history[0].compile_time * 1e3:.1f} ms): "
                  f"{(time.perf_counter() - t0) * 1e3:.1f} ms", file=sys.stderr)
    return step


class _CompiledStep:
    """An optimizer whose step() is the compiled one."""

    def __init__(self, opt, step):
        self.zero_grad, self.step = opt.zero_grad, step


def lenet(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120),
                         nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


@benchmark(target=0.8)
def bench_compiled_mlp_train_step(lib, optimizer=False):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(128, 784), lib.randint(0, 10, (128,))
    return _compiled_step(lib, model, opt, F.cross_entropy, x, y, "mlp", optimizer)


@benchmark(target=1.0)
def bench_compiled_lenet_train_step(lib, optimizer=False):
    lib.manual_seed(0)
    model = lenet(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(64, 1, 28, 28), lib.randint(0, 10, (64,))
    return _compiled_step(lib, model, opt, lib.nn.functional.cross_entropy, x, y, "lenet",
                          optimizer)


@benchmark(target=0.8)
def bench_compiled_mlp_opt_train_step(lib):
    """The MLP step with the ember side compiling the model AND the optimizer step
    (ember.compile(opt.step)); torch stays eager."""
    return bench_compiled_mlp_train_step(lib, optimizer=True)


@benchmark(target=1.0)
def bench_compiled_lenet_opt_train_step(lib):
    """The LeNet step with the ember side compiling the model AND the optimizer step
    (ember.compile(opt.step)); torch stays eager."""
    return bench_compiled_lenet_train_step(lib, optimizer=True)


@benchmark(target=2.5)
def bench_compiled_resnet18_train_step(lib):
    from bench_resnet import resnet18
    lib.manual_seed(0)
    model = resnet18(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x, y = lib.randn(32, 3, 32, 32), lib.randint(0, 10, (32,))
    return _compiled_step(lib, model, opt, lib.nn.functional.cross_entropy, x, y, "resnet18")


@benchmark(target=2.0)
def bench_compiled_transformer_layer_train_step(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.1,
                                       batch_first=True)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-4)
    x, target = lib.randn(16, 64, 256), lib.randn(16, 64, 256)
    return _compiled_step(lib, model, opt, F.mse_loss, x, target, "transformer layer")


def _alternate(names, rounds, number, threads=1):
    """torch eager, ember eager and ember compiled timed in turn, `rounds` times; medians of
    wall and CPU time."""
    import statistics
    import torch
    import ember
    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    for name in names:
        fn = globals()["bench_compiled_" + name]
        steps = {"torch": fn(torch), "compiled": fn(ember)}
        eager = ember.compile
        ember.compile = lambda m, **kw: m       # the same setup without compiling
        try:
            steps["eager"] = fn(ember)
        finally:
            ember.compile = eager
        times = {k: [] for k in steps}
        cpu = {k: [] for k in steps}
        for s in steps.values():
            s()
            s()
        for _ in range(rounds):
            for k, s in steps.items():
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(number):
                    s()
                times[k].append((time.perf_counter() - t0) / number)
                cpu[k].append((time.process_time() - c0) / number)
        for label, data in (("wall", times), ("cpu ", cpu)):
            med = {k: statistics.median(v) for k, v in data.items()}
            print(f"{name:<22} {label} torch {med['torch'] * 1e3:8.2f} ms   ember eager "
                  f"{med['eager'] * 1e3:8.2f} ms ({med['eager'] / med['torch']:.2f}x)   "
                  f"compiled {med['compiled'] * 1e3:8.2f} ms "
                  f"({med['compiled'] / med['torch']:.2f}x)", flush=True)


if __name__ == "__main__":
    import argparse
    import os
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))
    p = argparse.ArgumentParser(description="compiled training steps, alternated, medians")
    p.add_argument("names", nargs="*", default=["mlp_train_step", "mlp_opt_train_step",
                                                "lenet_train_step", "lenet_opt_train_step",
                                                "transformer_layer_train_step",
                                                "resnet18_train_step"])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    _alternate(a.names, a.rounds, a.number, a.threads)
