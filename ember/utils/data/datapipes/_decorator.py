"""`functional_datapipe(name)`: registers a DataPipe class as the method `name` of every
DataPipe of its kind, so `source.name(*args)` builds `cls(source, *args)`."""
from .datapipe import IterDataPipe, MapDataPipe

__all__ = ["functional_datapipe"]


class functional_datapipe:
    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if not isinstance(cls, type):
            raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
        if issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls
