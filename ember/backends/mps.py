"""torch.backends.mps: there is no Metal device behind ember."""


def is_available():
    return False


def is_built():
    return False


def is_macos_or_newer(major, minor):
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")
