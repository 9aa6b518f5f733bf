from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ._columns import call_on_columns, source_length

__all__ = ["CollatorIterDataPipe", "MapperIterDataPipe"]


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    """`fn` applied to each item (functional name: ``map``). With `input_col`, `fn` gets those
    fields of the item, and its result replaces them (or goes to `output_col`; -1 appends)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        super().__init__()
        self.datapipe = datapipe
        self.fn = fn
        self.input_col = input_col
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.output_col = output_col

    def _apply_fn(self, data):
        res = call_on_columns(self.fn, data, self.input_col)
        if self.input_col is None:
            return res
        as_tuple = isinstance(data, tuple)
        if as_tuple:
            data = list(data)
        if self.output_col is None:
            if isinstance(self.input_col, (list, tuple)):
                data[self.input_col[0]] = res
                for idx in sorted(self.input_col[1:], reverse=True):
                    del data[idx]
            else:
                data[self.input_col] = res
        elif self.output_col == -1:
            data.append(res)
        else:
            data[self.output_col] = res
        return tuple(data) if as_tuple else data

    def __iter__(self):
        for data in self.datapipe:
            yield self._apply_fn(data)

    def __len__(self):
        return source_length(self, self.datapipe)


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """Each batch merged by `collate_fn`, `default_collate` unless given (functional name:
    ``collate``)."""

    def __init__(self, datapipe, conversion=None, collate_fn=None):
        from ..._utils.collate import default_collate
        if conversion is not None:
            raise NotImplementedError("Collator's DataFrame `conversion` is not supported")
        super().__init__(datapipe, fn=collate_fn if collate_fn is not None else default_collate)
