"""The map-style DataPipe stages, by their short names."""
import copy
import warnings

from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["Mapper", "SequenceWrapper"]


class SequenceWrapper(MapDataPipe):
    """A map-style DataPipe over a sequence (anything with `__getitem__` and `__len__`), read
    from a deep copy unless `deepcopy=False`."""

    def __init__(self, sequence, deepcopy=True):
        if deepcopy:
            try:
                sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn("The input sequence can not be deepcopied, please be aware of "
                              "in-place modification would affect source data", stacklevel=2)
        self.sequence = sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)


def _identity(data):
    return data


@functional_datapipe("map")
class Mapper(MapDataPipe):
    """`fn` applied to each item on access (functional name: ``map``)."""

    def __init__(self, datapipe, fn=None):
        super().__init__()
        self.datapipe = datapipe
        self.fn = fn if fn is not None else _identity

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)
