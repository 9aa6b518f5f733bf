"""torch.accelerator, the device-generic query newer examples start with (`device =
torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"`):
ember has no accelerator, only the CPU."""


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
