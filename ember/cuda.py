"""torch.cuda on a machine without CUDA: ember computes on the CPU only, so the queries answer
"no device", seeding is a no-op (as PyTorch's lazy CUDA seeding is when no GPU exists), and
anything that needs a GPU raises the error PyTorch raises on a CPU-only build."""


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    pass  # PyTorch queues the seed for a CUDA init that never happens


def manual_seed_all(seed):
    pass


def synchronize(device=None):
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    raise AssertionError("Torch not compiled with CUDA enabled")
