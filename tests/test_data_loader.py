"""DataLoader compared with torch's: the same batches, order, lengths, seeds and errors."""
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata
from test_data_dataset import assert_same, both, same_exception
from test_data_workers import Probe, Squares, Stream, guard  # noqa: F401  (guard is autouse)


def make_map_dataset(lib, data, n=11):
    return data.TensorDataset(lib.arange(2. * n).reshape(n, 2), lib.arange(n) % 3)


def batches(lib, data, n=11, **kwargs):
    return list(data.DataLoader(make_map_dataset(lib, data, n), **kwargs))


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
    {"batch_size": 3, "shuffle": True}, {"batch_size": None, "shuffle": True},
])
def test_single_process_batches_match_torch(kwargs):
    def fn(lib, data):
        kw = dict(kwargs)
        if kw.get("shuffle"):
            kw["generator"] = lib.Generator().manual_seed(9)
        loader = data.DataLoader(make_map_dataset(lib, data), **kw)
        return list(loader), list(loader), len(loader)
    assert_same(*both(fn))


def test_tensor_dataset_batches_gathered_at_once_are_torchs():
    """A plain TensorDataset with default_collate is batched by one gather per tensor (Note in
    _utils/fetch.py): the same values, dtypes and strides as torch's stacked samples."""
    def fn(lib, data):
        images = lib.arange(11 * 12, dtype=lib.uint8).reshape(11, 3, 4)
        ds = data.TensorDataset(images, lib.arange(11) % 3, lib.linspace(0, 1, 11))
        loader = data.DataLoader(ds, batch_size=4, shuffle=True,
                                 generator=lib.Generator().manual_seed(3))
        return list(loader)
    e, t = both(fn)
    assert_same(e, t, strides=True)
    assert all(isinstance(batch, list) for batch in e)
    ds = edata.TensorDataset(ember.zeros(4, 2), ember.arange(4))
    assert iter(edata.DataLoader(ds, batch_size=2))._dataset_fetcher.rows_at_once


class Doubled(tdata.TensorDataset):
    def __getitem__(self, index):
        return tuple(2 * t[index] for t in self.tensors)


class EmberDoubled(edata.TensorDataset):
    def __getitem__(self, index):
        return tuple(2 * t[index] for t in self.tensors)


@pytest.mark.parametrize("case", ["negative keys", "numpy keys", "grad", "transposed",
                                  "collate_fn", "subclass"])
def test_tensor_dataset_batches_sample_by_sample_where_torchs_could_differ(case):
    def fn(lib, data):
        x = lib.arange(12.).reshape(6, 2)
        kw = {"batch_sampler": [[4, 1], [0, 5, 2]]}
        if case == "negative keys":
            kw["batch_sampler"] = [[-1, 0], [-6, 2]]
        elif case == "numpy keys":
            kw["batch_sampler"] = [list(np.array([3, 1])), [np.int64(2)]]
        elif case == "grad":
            x.requires_grad_()
        elif case == "transposed":
            x = lib.arange(12.).reshape(2, 6).t()
        elif case == "collate_fn":
            kw["collate_fn"] = lambda samples: samples
        kind = data.TensorDataset
        if case == "subclass":
            kind = Doubled if lib is torch else EmberDoubled
        batches = list(data.DataLoader(kind(x, lib.arange(6)), **kw))
        grad_fns = [type(b[0].grad_fn).__name__ for b in batches if case == "grad"]
        return batches, grad_fns
    e, t = both(fn)
    assert_same(e, t, strides=True)


def test_tensor_dataset_key_out_of_range_raises_torchs_error_type():
    # the type only: ember's x[3] words its IndexError as torch's x.select(0, 3) does
    def fn(lib, data):
        return list(data.DataLoader(data.TensorDataset(lib.zeros(3, 2)), batch_sampler=[[0, 3]]))
    with pytest.raises(IndexError):
        fn(torch, tdata)
    with pytest.raises(IndexError, match="index 3"):
        fn(ember, edata)


def test_sampler_and_batch_sampler_arguments():
    def fn(lib, data):
        ds = make_map_dataset(lib, data)
        g = lib.Generator().manual_seed(1)
        by_sampler = data.DataLoader(ds, batch_size=2, sampler=data.RandomSampler(ds, generator=g))
        by_batches = data.DataLoader(ds, batch_sampler=[[3, 1], [0], [10, 2, 5]])
        return list(by_sampler), list(by_batches), len(by_batches), by_batches.batch_size
    assert_same(*both(fn))


def test_shuffle_follows_the_global_seed_like_torch():
    def fn(lib, data):
        lib.manual_seed(123)
        loader = data.DataLoader(make_map_dataset(lib, data), batch_size=3, shuffle=True)
        return list(loader), list(loader), lib.rand(2)  # the global stream afterwards too
    assert_same(*both(fn))


def test_index_sampler_and_auto_collation():
    for lib, data in ((ember, edata), (torch, tdata)):
        auto = data.DataLoader(range(5), batch_size=2)
        assert auto._auto_collation and auto._index_sampler is auto.batch_sampler
        single = data.DataLoader(range(5), batch_size=None)
        assert not single._auto_collation and single._index_sampler is single.sampler


def test_collate_fn_and_default_convert():
    def fn(lib, data):
        summed = data.DataLoader(range(7), batch_size=3, collate_fn=sum)
        converted = data.DataLoader([np.arange(2), np.ones(2)], batch_size=None)
        return list(summed), list(converted)
    assert_same(*both(fn))


@pytest.mark.parametrize("bad", [
    lambda lib, data, ds: data.DataLoader(ds, sampler=range(3), shuffle=True),
    lambda lib, data, ds: data.DataLoader(ds, batch_sampler=[[0]], batch_size=2),
    lambda lib, data, ds: data.DataLoader(ds, batch_sampler=[[0]], drop_last=True),
    lambda lib, data, ds: data.DataLoader(ds, batch_sampler=[[0]], shuffle=True),
    lambda lib, data, ds: data.DataLoader(ds, batch_size=None, drop_last=True),
    lambda lib, data, ds: data.DataLoader(ds, num_workers=-1),
    lambda lib, data, ds: data.DataLoader(ds, timeout=-1),
    lambda lib, data, ds: data.DataLoader(ds, prefetch_factor=2),
    lambda lib, data, ds: data.DataLoader(ds, num_workers=1, prefetch_factor=-1),
    lambda lib, data, ds: data.DataLoader(ds, persistent_workers=True),
    lambda lib, data, ds: data.DataLoader(ds, multiprocessing_context="spawn"),
    lambda lib, data, ds: data.DataLoader(ds, num_workers=1, multiprocessing_context="nope"),
    lambda lib, data, ds: data.DataLoader(ds, num_workers=1, multiprocessing_context=3),
    lambda lib, data, ds: setattr(data.DataLoader(ds), "batch_size", 5),
    lambda lib, data, ds: iter(data.DataLoader(ds, timeout=1)),
])
def test_argument_errors_match_torch(bad):
    same_exception(lambda lib, data: bad(lib, data, make_map_dataset(lib, data)))


def iterable_stream(data):
    class Numbers(data.IterableDataset):
        def __init__(self, n, length):
            self.n, self.length = n, length

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.length
    return Numbers


@pytest.mark.parametrize("kwargs", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": None}])
def test_iterable_dataset_single_process(kwargs):
    def fn(lib, data):
        loader = data.DataLoader(iterable_stream(data)(8, 8), **kwargs)
        return list(loader), len(loader)
    assert_same(*both(fn))
    same_exception(lambda lib, data: data.DataLoader(iterable_stream(data)(3, 3), shuffle=True))
    same_exception(lambda lib, data: data.DataLoader(iterable_stream(data)(3, 3), sampler=[0]))


def test_iterable_dataset_longer_than_its_len_warns_like_torch():
    def fn(lib, data):
        loader = data.DataLoader(iterable_stream(data)(5, 2), batch_size=None)
        len(loader)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = list(loader)
        return out, [str(w.message) for w in caught]
    e, t = both(fn)
    assert_same(e[0], t[0])
    assert len(e[1]) == len(t[1]) == 3
    assert e[1][0].split(" was reported")[1] == t[1][0].split(" was reported")[1]


def test_pin_memory_is_accepted_with_torchs_warning():
    for data in (edata, tdata):
        with pytest.warns(UserWarning, match="no accelerator is found"):
            assert len(list(data.DataLoader(range(4), batch_size=2, pin_memory=True))) == 2


def test_too_many_workers_warn_like_torch():
    with pytest.warns(UserWarning, match="This DataLoader will create 64 worker processes"):
        edata.DataLoader(range(4), num_workers=64)


# ---- with worker processes ------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"batch_size": 3, "shuffle": True}, {"batch_size": None}, {"batch_size": 4, "drop_last": True},
    {"batch_size": 2, "prefetch_factor": 1}, {"batch_size": 2, "in_order": False},
])
def test_worker_batches_match_torch(kwargs):
    def fn(lib, data):
        kw = dict(kwargs, num_workers=2)
        if kw.get("shuffle"):
            kw["generator"] = lib.Generator().manual_seed(5)
        loader = data.DataLoader(make_map_dataset(lib, data), **kw)
        return list(loader), len(loader)
    e, t = both(fn)
    if kwargs.get("in_order") is False:  # arrival order is the OS's; the set is the same
        e, t = sorted(e[0], key=lambda b: b[0].tolist()), sorted(t[0], key=lambda b: b[0].tolist())
    assert_same(e, t)


def test_workers_are_seeded_like_torchs():
    def fn(lib, data):
        loader = data.DataLoader(Probe(8, lib.__name__), batch_size=2, num_workers=2,
                                 generator=lib.Generator().manual_seed(77))
        return [{k: v for k, v in b.items() if k != "pid"} for b in loader]
    e, t = both(fn)
    assert_same(e, t)
    assert e[0]["worker"].tolist() == [0, 0] and e[1]["worker"].tolist() == [1, 1]
    assert e[0]["seed"][0] + 1 == e[1]["seed"][0]
    assert e[0]["random"][0] != e[1]["random"][0] and e[0]["lib"][0, 0] != e[1]["lib"][0, 0]


def test_generate_state_is_torchs():
    from torch.utils.data._utils.worker import _generate_state as torch_state
    from ember.utils.data._utils.worker import _generate_state
    for base_seed in (0, 1, 2**63 - 1, 123456789123):
        for worker_id in range(3):
            assert _generate_state(base_seed, worker_id) == torch_state(base_seed, worker_id)


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_iterable_dataset_sharded_through_worker_info_matches_torch(num_workers):
    def fn(lib, data):
        class Shards(data.IterableDataset):
            def __iter__(self):
                info = data.get_worker_info()
                return iter(range(info.id, 10, info.num_workers))
        return list(data.DataLoader(Shards(), batch_size=2, num_workers=num_workers))
    assert_same(*both(fn))
    loader = edata.DataLoader(Stream(3, 17), batch_size=4, num_workers=num_workers)
    assert sorted(x for b in loader for x in b.tolist()) == list(range(3, 17))


def test_out_of_order_arrival_is_delivered_in_order():
    slow_first = Squares(12, sleep=0.0)
    loader = edata.DataLoader(slow_first, batch_size=2, num_workers=2)
    assert [b[1].tolist() for b in loader] == [[i, i + 1] for i in range(0, 12, 2)]

    class SlowEven(Squares):
        def __getitem__(self, i):
            if i // 2 % 2 == 0:
                import time
                time.sleep(0.05)
            return super().__getitem__(i)
    in_order = [b[1].tolist() for b in edata.DataLoader(SlowEven(12), batch_size=2,
                                                        num_workers=2)]
    assert in_order == [[i, i + 1] for i in range(0, 12, 2)]
    any_order = [b[1].tolist() for b in edata.DataLoader(SlowEven(12), batch_size=2,
                                                         num_workers=2, in_order=False)]
    assert sorted(any_order) == in_order and any_order != in_order


def test_persistent_workers_live_across_epochs():
    loader = edata.DataLoader(Probe(6), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b["pid"].tolist() for b in loader]
    it = iter(loader)
    next(it)  # an epoch abandoned after one batch: its other results must not leak into the next
    second = [b["index"].tolist() for b in loader]
    assert second == [[0, 1], [2, 3], [4, 5]]
    assert {p for b in first for p in b} == {w.pid for w in loader._iterator._workers}
    pids = [w.pid for w in loader._iterator._workers]
    del loader, it
    from test_data_workers import _gone, wait_until
    assert wait_until(lambda: all(_gone(p) for p in pids), 5)


def test_worker_init_fn_and_get_worker_info():
    def fn(lib, data):
        def init(worker_id):
            info = data.get_worker_info()
            info.dataset.offset = 100 * (worker_id + 1)

        class Offset(data.Dataset):
            offset = 0

            def __len__(self):
                return 4

            def __getitem__(self, i):
                return i + self.offset
        outside = data.get_worker_info()
        return list(data.DataLoader(Offset(), batch_size=2, num_workers=2,
                                    worker_init_fn=init)), outside
    assert_same(*both(fn))
