"""Whether mixed precision can run on a GPU: never, with no CUDA device (and no torch_xla)."""
from importlib.util import find_spec

__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available():
    from ... import cuda
    return not (cuda.is_available() or find_spec("torch_xla"))
