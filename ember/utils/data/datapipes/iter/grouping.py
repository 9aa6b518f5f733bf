from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe

__all__ = ["BatcherIterDataPipe", "UnBatcherIterDataPipe"]


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Consecutive items grouped into batches of `batch_size` (`wrapper_class`, a DataChunk by
    default); the last one shorter unless `drop_last` (functional name: ``batch``)."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.wrapper_class = wrapper_class

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        if not hasattr(self.datapipe, "__len__"):
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """The items of each batch, one by one (functional name: ``unbatch``): `unbatch_level`
    levels of nesting are undone, -1 for all of them."""

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe = datapipe
        self.unbatch_level = unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, unbatch_level=self.unbatch_level)

    def _dive(self, element, unbatch_level):
        if unbatch_level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if unbatch_level == -1:
            if isinstance(element, (list, DataChunk)):
                for item in element:
                    yield from self._dive(item, unbatch_level=-1)
            else:
                yield element
        elif unbatch_level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, unbatch_level=unbatch_level - 1)
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the "
                             "DataPipe")
