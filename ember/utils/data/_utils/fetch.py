"""Fetchers: from what the index sampler yields to a collated batch (in-process or in a worker).

The DataLoader's `_index_sampler` yields a list of keys per batch (auto-collation) or one key at a
time (`batch_size=None`); for an iterable dataset the "keys" are placeholders that only say how
many samples to take from the stream.
"""
from .... import Tensor, index_select, strided, tensor
from ..dataset import TensorDataset
from .collate import _batch_out, default_collate


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        raise NotImplementedError


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """Takes the next len(index) samples from the stream; StopIteration when it has run dry
    (or, with drop_last, when it cannot fill a whole batch)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    """dataset[key] for each key (or one `__getitems__` call for the whole batch)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.rows_at_once = auto_collation and _plain_tensor_dataset(dataset, collate_fn)

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if self.rows_at_once:
            batch = _gather_rows(self.dataset.tensors, possibly_batched_index)
            if batch is not None:
                return batch
        if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
            data = self.dataset.__getitems__(possibly_batched_index)
        else:
            data = [self.dataset[idx] for idx in possibly_batched_index]
        return self.collate_fn(data)


# Note [TensorDataset batches in one gather]
# A TensorDataset's sample i is (t[i] for t in tensors), and default_collate stacks the i-th
# rows of each tensor: the batch is exactly t[indices] per tensor, contiguous, same dtype. The
# fetcher builds it with one index_select per tensor instead of 2 x batch_size selects and a
# stack, which is most of the time a training loop over a TensorDataset spends loading
# (examples/mnist.py). Anything that could tell the two apart keeps the sample-by-sample path:
# a subclass's own __getitem__ or __getitems__, another collate_fn, tensors that require grad
# (their graph would differ), are not plain contiguous CPU tensors (subclasses see every
# call; memory formats), and keys that are not in-range Python ints (the per-sample path
# raises PyTorch's errors for them and wraps negative keys).
def _plain_tensor_dataset(dataset, collate_fn):
    kind = type(dataset)
    return (collate_fn is default_collate and isinstance(dataset, TensorDataset)
            and kind.__getitem__ is TensorDataset.__getitem__
            and getattr(kind, "__getitems__", None) is None)


def _gather_rows(tensors, indices):
    """[t[indices] for t in tensors] as default_collate would stack them, or None when the
    batch must be fetched sample by sample (see the Note above)."""
    if not (tensors and all(type(i) is int for i in indices)):
        return None
    n = tensors[0].shape[0]
    if not indices or min(indices) < 0 or max(indices) >= n:
        return None
    for t in tensors:
        if (type(t) is not Tensor or t.requires_grad or t.layout is not strided
                or t.device.type != "cpu" or not t.is_contiguous() or t.shape[0] != n):
            return None
    keys = tensor(indices)
    return [index_select(t, 0, keys, out=_batch_out(len(indices), t.shape[1:], t.dtype))
            for t in tensors]
