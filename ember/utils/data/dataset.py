"""Datasets: where samples come from.

A map-style `Dataset` answers `dataset[key]` (and usually `len(dataset)`); the DataLoader asks a
sampler for keys. An `IterableDataset` is a stream: the DataLoader just iterates it, and in each
worker process it is the dataset's own job to yield only that worker's share (see
`get_worker_info`). The classes below compose datasets without copying any data.
"""
import bisect
import itertools
import math
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from typing import Generic, Iterable, TypeVar

from ... import default_generator, randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys to samples. Subclasses define `__getitem__`, usually `__len__`, and may
    define `__getitems__(indices)` to fetch a whole batch at once."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples. Subclasses define `__iter__`; with worker processes every worker
    iterates its own copy, so split the stream with `get_worker_info()`."""

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the `index`-th rows of tensors that share their first dimension."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples are tuples (from positional datasets) or dicts (from keyword datasets) of the
    samples at the same index in each dataset."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args or kwargs
        parts = args or tuple(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(dataset) for dataset in parts):
            raise ValueError("Size mismatch between datasets")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {key: _fetch_many(dataset, indices) for key, dataset in parts}
        if named:
            return [{k: column[i] for k, column in columns.items()} for i in range(len(indices))]
        return [tuple(column[i] for column in columns.values()) for i in range(len(indices))]

    def __len__(self):
        return self._length


def _fetch_many(dataset, indices):
    """The samples at `indices`, through `__getitems__` when the dataset has one."""
    if not callable(getattr(dataset, "__getitems__", None)):
        return [dataset[i] for i in indices]
    samples = dataset.__getitems__(indices)
    if len(samples) != len(indices):
        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                         f"got {len(samples)}")
    return samples


class ConcatDataset(Dataset):
    """The datasets one after the other: index i goes to the dataset whose range holds i."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx else 0
        return self.datasets[dataset_idx][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other, chained as they are iterated."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and \
                type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When "
                "subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. A "
                "simple implementation:\n\ndef __getitems__(self, indices):\n    return "
                "[self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=default_generator):
    """Split `dataset` into non-overlapping Subsets of the given lengths, or of fractions of its
    length (floors, then the remainder handed out one by one from the first split)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        for i in range(len(dataset) - sum(subset_lengths)):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=_user_stacklevel())
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
