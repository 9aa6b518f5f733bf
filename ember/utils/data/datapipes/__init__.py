"""DataPipes (see datapipe.py): `iter` holds the iterable-style stages, `map` the map-style ones."""
from . import iter, map  # noqa: F401  (importing them registers their functional forms)
from ._decorator import functional_datapipe
from .datapipe import DataChunk, IterDataPipe, MapDataPipe

__all__ = ["DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe", "iter", "map"]
