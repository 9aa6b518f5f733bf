"""Mixed precision and profiling overheads: an MLP training step under CPU autocast (bfloat16)
with a GradScaler, and the same step inside the profiler (shapes and memory recorded)."""
from registry import benchmark


def _mlp_step(lib, wrap):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(256, 512), lib.nn.ReLU(), lib.nn.Linear(512, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x, target = lib.randn(64, 256), lib.randint(0, 10, (64,))
    return wrap(lib, model, opt, x, target)


def _autocast(lib, model, opt, x, target):
    scaler = lib.amp.GradScaler("cpu")

    def step():
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            loss = lib.nn.functional.cross_entropy(model(x), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step


def _profiled(lib, model, opt, x, target):
    def step():
        with lib.profiler.profile(record_shapes=True, profile_memory=True) as prof:
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(x), target).backward()
            opt.step()
        prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    return step


@benchmark(target=3.0)
def bench_mlp_autocast_step(lib):
    """(64, 256) -> 512 -> 10 MLP training step under autocast("cpu", bfloat16) + GradScaler."""
    return _mlp_step(lib, _autocast)


@benchmark(target=3.0)
def bench_mlp_profiled_step(lib):
    """The same MLP step (fp32) inside profile(record_shapes=True, profile_memory=True), with
    the key_averages table printed to a string."""
    return _mlp_step(lib, _profiled)
