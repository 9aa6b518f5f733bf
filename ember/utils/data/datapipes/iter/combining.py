from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["ConcaterIterDataPipe", "ZipperIterDataPipe"]


def _check_datapipes(datapipes):
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `IterDataPipe`")


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    """The items of each DataPipe in turn (functional name: ``concat``)."""

    def __init__(self, *datapipes):
        _check_datapipes(datapipes)
        self.datapipes = datapipes

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        if all(hasattr(dp, "__len__") for dp in self.datapipes):
            return sum(len(dp) for dp in self.datapipes)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    """Tuples of one item from each DataPipe, until the shortest ends (functional name:
    ``zip``)."""

    def __init__(self, *datapipes):
        _check_datapipes(datapipes)
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*self.datapipes)

    def __len__(self):
        if all(hasattr(dp, "__len__") for dp in self.datapipes):
            return min(len(dp) for dp in self.datapipes)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
