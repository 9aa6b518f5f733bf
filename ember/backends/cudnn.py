"""torch.backends.cudnn without cuDNN: flags keep PyTorch's defaults and only record writes."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
