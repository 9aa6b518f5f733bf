"""nn.utils in a training step: clipping the gradients of ResNet-18's parameters (62 tensors,
11.7M floats) to a joint norm, as most training loops do before optimizer.step()."""
from bench_optim import resnet18_params
from registry import benchmark


@benchmark(target=1.5)
def bench_clip_grad_norm_resnet18(lib):
    params = resnet18_params(lib)
    return lambda: lib.nn.utils.clip_grad_norm_(params, 1.0)


@benchmark(target=1.5)
def bench_clip_grad_value_resnet18(lib):
    params = resnet18_params(lib)
    return lambda: lib.nn.utils.clip_grad_value_(params, 0.5)
