"""torch.utils.data: datasets, samplers and the DataLoader."""
from .dataloader import _DatasetKind, DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, random_split,
                      StackDataset, Subset, TensorDataset)
from .datapipes import DataChunk, IterDataPipe, MapDataPipe, functional_datapipe
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataChunk", "DataLoader", "Dataset",
           "DistributedSampler", "IterDataPipe", "IterableDataset", "MapDataPipe", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "_DatasetKind", "default_collate", "default_convert",
           "functional_datapipe",
           "get_worker_info", "random_split"]
