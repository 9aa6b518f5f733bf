from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ._columns import call_on_columns

__all__ = ["FilterIterDataPipe"]


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    """The items for which `filter_fn` (given the `input_col` fields, if set) returns True
    (functional name: ``filter``)."""

    def __init__(self, datapipe, filter_fn, input_col=None):
        super().__init__()
        self.datapipe = datapipe
        self.filter_fn = filter_fn
        self.input_col = input_col

    def __iter__(self):
        for data in self.datapipe:
            condition = call_on_columns(self.filter_fn, data, self.input_col)
            if not isinstance(condition, bool):
                raise ValueError("Boolean output is required for `filter_fn` of "
                                 "FilterIterDataPipe, got", type(condition))
            if condition:
                yield data
