"""utils.data datasets, samplers and collation, each compared with torch.utils.data."""
import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata
from _torch_oracle import assert_same as _assert_same


def _plain(x):
    """Dicts as lists of (key, value) pairs, so that assert_same can walk them."""
    if isinstance(x, dict):
        return [("key", k, _plain(v)) for k, v in x.items()]
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_plain(v) for v in x)
    return x


def assert_same(e, t, **kwargs):
    _assert_same(_plain(e), _plain(t), **kwargs)


def both(fn):
    """fn(lib, data) for ember and for torch."""
    return fn(ember, edata), fn(torch, tdata)


def same_exception(fn):
    with pytest.raises(Exception) as t:
        fn(torch, tdata)
    with pytest.raises(type(t.value)) as e:
        fn(ember, edata)
    assert str(e.value) == str(t.value)


# ---- datasets -------------------------------------------------------------------------------

def test_tensor_dataset():
    def fn(lib, data):
        ds = data.TensorDataset(lib.arange(10.).reshape(5, 2), lib.arange(5))
        return len(ds), ds[3], ds[1:3]
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.TensorDataset(lib.zeros(3), lib.zeros(4)))


def test_concat_dataset():
    def fn(lib, data):
        ds = data.TensorDataset(lib.arange(3)) + data.TensorDataset(lib.arange(10, 14))
        return len(ds), ds.cumulative_sizes, [ds[i] for i in range(-7, 7)]
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.ConcatDataset([]))
    same_exception(lambda lib, data: data.ConcatDataset([range(3)])[-4])


def test_chain_and_iterable_datasets():
    def fn(lib, data):
        class Stream(data.IterableDataset):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return iter(range(self.n))

            def __len__(self):
                return self.n
        chained = Stream(2) + Stream(3)
        return type(chained).__name__, list(chained), len(chained)
    assert_same(*both(fn))


def test_stack_dataset():
    def fn(lib, data):
        a, b = data.TensorDataset(lib.arange(4)), range(10, 14)
        tup, named = data.StackDataset(a, b), data.StackDataset(x=a, y=b)
        return len(tup), tup[2], named[1], tup.__getitems__([0, 3]), named.__getitems__([1])
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.StackDataset(range(3), range(4)))
    same_exception(lambda lib, data: data.StackDataset())
    same_exception(lambda lib, data: data.StackDataset(range(3), y=range(3)))


def test_subset():
    def fn(lib, data):
        sub = data.Subset(data.TensorDataset(lib.arange(10) * 2), [9, 0, 4])
        return len(sub), sub[0], sub.__getitems__([1, 2])
    assert_same(*both(fn))

    def subclass(lib, data):
        class Doubling(data.Subset):
            def __getitem__(self, i):
                return 2 * super().__getitem__(i)
        Doubling(range(5), [1, 2])
    same_exception(subclass)


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [0.1, 0.9, 0.0]])
def test_random_split_matches_torch(lengths):
    def fn(lib, data):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            splits = data.random_split(range(10), lengths,
                                       generator=lib.Generator().manual_seed(42))
        return [list(s) for s in splits], len(caught)
    assert_same(*both(fn))


def test_random_split_default_generator_and_errors():
    def fn(lib, data):
        lib.manual_seed(7)
        return [s.indices for s in data.random_split(range(9), [4, 5])]
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.random_split(range(10), [3, 3]))
    same_exception(lambda lib, data: data.random_split(range(10), [1.5, -0.5]))


# ---- samplers -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {}, {"replacement": True}, {"replacement": True, "num_samples": 75},
    {"num_samples": 25}, {"num_samples": 7}])
def test_random_sampler_same_order_as_torch(kwargs):
    def fn(lib, data):
        g = lib.Generator().manual_seed(3)
        sampler = data.RandomSampler(range(10), generator=g, **kwargs)
        return list(sampler), list(sampler), len(sampler)
    assert_same(*both(fn))


def test_random_sampler_without_generator_follows_global_seed():
    def fn(lib, data):
        lib.manual_seed(11)
        sampler = data.RandomSampler(range(20))
        return list(sampler), list(sampler)
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.RandomSampler(range(3), num_samples=0))
    same_exception(lambda lib, data: data.RandomSampler(range(3), replacement=1))


def test_subset_and_weighted_samplers():
    def fn(lib, data):
        g = lib.Generator().manual_seed(5)
        subset = list(data.SubsetRandomSampler([10, 20, 30, 40], generator=g))
        weights = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
        with_repl = list(data.WeightedRandomSampler(weights, 12, generator=g))
        without = list(data.WeightedRandomSampler(weights, 5, replacement=False, generator=g))
        return subset, with_repl, without
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.WeightedRandomSampler([[1.0, 2.0]], 2))
    same_exception(lambda lib, data: data.WeightedRandomSampler([1.0], 0))
    same_exception(lambda lib, data: data.WeightedRandomSampler([1.0], True))


@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler(drop_last):
    def fn(lib, data):
        sampler = data.BatchSampler(data.SequentialSampler(range(10)), 3, drop_last)
        return list(sampler), len(sampler)
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.BatchSampler(range(3), 0, False))
    same_exception(lambda lib, data: data.BatchSampler(range(3), 2, 1))


@pytest.mark.parametrize("shuffle,drop_last", [(True, False), (False, False), (True, True)])
def test_distributed_sampler_without_process_group(shuffle, drop_last):
    def fn(lib, data):
        out = []
        for rank in range(3):
            s = data.DistributedSampler(range(10), num_replicas=3, rank=rank, shuffle=shuffle,
                                        seed=4, drop_last=drop_last)
            first = list(s)
            s.set_epoch(1)
            out.append((first, list(s), len(s)))
        return out
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.DistributedSampler(range(4), num_replicas=2, rank=2))


# ---- collation ------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def test_default_collate_structures():
    def fn(lib, data):
        samples = [
            {"image": lib.full((2, 2), float(i)), "label": i, "w": 0.5 * i, "name": f"s{i}",
             "raw": b"r", "pt": Point(np.float32(i), np.arange(3) + i),
             "pair": (i, [i, -i]), "flag": np.bool_(i % 2)}
            for i in range(3)]
        return data.default_collate(samples)

    e, t = both(fn)
    assert e.keys() == t.keys()
    for key in t:
        assert_same(e[key], t[key], path=key)
    assert type(e["pt"]) is Point


def test_default_collate_numbers_keep_torch_dtypes():
    def fn(lib, data):
        c = data.default_collate
        return [c([1, 2]), c([1.5, 2.0]), c([True, False]), c([np.int32(1), np.int32(2)]),
                c([np.float16(1), np.float16(2)]), c([np.zeros(2, np.uint8)] * 2),
                c([lib.zeros(2, dtype=lib.int16)] * 2), c(["a", "b"])]
    assert_same(*both(fn))


def test_default_collate_errors():
    same_exception(lambda lib, data: data.default_collate([object(), object()]))
    same_exception(lambda lib, data: data.default_collate([[1, 2], [3]]))
    same_exception(lambda lib, data: data.default_collate([np.array(["a"]), np.array(["b"])]))
    same_exception(lambda lib, data: data.default_collate([lib.zeros(2), lib.zeros(3)]))


def test_default_convert():
    def fn(lib, data):
        c = data.default_convert
        return [c(np.arange(3)), c((np.float32(1), "x")), c({"a": np.ones(2)}),
                c(Point(np.int64(1), 2)), c([np.zeros(1), 7]), c(np.array(["s"]))]
    e, t = both(fn)
    assert_same(e[:2], t[:2])
    assert_same(e[2]["a"], t[2]["a"])
    assert type(e[3]) is Point and e[3].y == 2
    assert_same(e[3].x, t[3].x)
    assert_same(e[4], t[4])
    assert isinstance(e[5], np.ndarray)


def test_collate_fn_map_is_extensible():
    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return sum(b.v for b in batch)

    from ember.utils.data._utils.collate import collate, default_collate_fn_map
    fn_map = {**default_collate_fn_map, Box: collate_box}
    assert collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=fn_map)[0] == 4
