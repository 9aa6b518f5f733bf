"""Checks ported from PyTorch's test/test_dataloader.py (default_collate of dicts, namedtuples,
NumPy arrays and scalars, default_convert, drop_last, samplers and batch_sampler, argument
errors, worker_init_fn / worker seeds / persistent workers, pin_memory on a CPU-only machine),
run against torch and ember."""
import collections
import warnings

import numpy as np
import pytest

from _ported import outcomes as _errs, same

Point = collections.namedtuple("Point", "x y")


def _data(L):
    return L.utils.data


class Squares:
    """A map-style dataset written against whichever library runs the check."""
    def __init__(self, L, n=10):
        self.L, self.n = L, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return self.L.tensor([float(i), float(i * i)]), i


def _collate_structures(L):
    c = _data(L).default_collate
    t = [L.tensor([1, 2]), L.tensor([3, 4])]
    return [c(t), c([{"a": t[0], "b": 1.5, "s": "x"}, {"a": t[1], "b": 2.5, "s": "y"}]),
            c([Point(1, t[0]), Point(2, t[1])]), type(c([Point(1, 2), Point(3, 4)])).__name__,
            c([(1, "a", b"b"), (2, "c", b"d")]), c([[1, 2], [3, 4]]), c([True, False]),
            c([np.array([1.0, 2.0]), np.array([3.0, 4.0])]), c([np.float32(1.5), np.float32(2.5)]),
            c([np.int64(3), np.int64(4)]), c([np.array(5), np.array(6)]), c([1, 2]), c([1.0, 2.0]),
            c([None, None]) if False else None, type(c([collections.OrderedDict(a=1)])).__name__,
            c([collections.defaultdict(int, a=L.ones(1))]), c([np.array(["a"]), np.array(["b"])])
            if False else None]


def _collate_errors(L):
    c = _data(L).default_collate
    return _errs(L, [lambda: c([[1, 2], [3]]), lambda: c([object(), object()]),
                     lambda: c([L.ones(2), L.ones(3)]), lambda: c([np.array(["a"]), np.array(["b"])]),
                     lambda: c([{"a": 1}, {"b": 2}]), lambda: c([None, None])])


def _collate_numpy_dtypes(L):
    c = _data(L).default_collate
    out = []
    for dt in [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8,
               np.bool_, np.complex64]:
        out.append(c([np.zeros(2, dtype=dt), np.ones(2, dtype=dt)]))
        out.append(c([dt(1), dt(0)]))
    return out


def _default_convert(L):
    cv = _data(L).default_convert
    return [cv(np.array([1, 2])), cv(np.float64(1.5)), cv({"a": np.zeros(2), "b": [np.int32(1), "s"]}),
            cv(Point(np.ones(1), 2)), type(cv(Point(np.ones(1), 2))).__name__, cv((np.ones(1), 3)),
            cv("text"), cv(L.ones(2)), cv(np.array(["a", "b"])).tolist(), cv([np.array(1.0)])]


def _loader_batches(L, **kw):
    L.manual_seed(0)
    return [b for b in _data(L).DataLoader(Squares(L), **kw)]


def _batching(L):
    d = _data(L)
    out = [_loader_batches(L, batch_size=3), _loader_batches(L, batch_size=3, drop_last=True),
           _loader_batches(L, batch_size=None), len(d.DataLoader(Squares(L), batch_size=3)),
           len(d.DataLoader(Squares(L), batch_size=3, drop_last=True)),
           len(d.DataLoader(Squares(L), batch_size=None)),
           _loader_batches(L, batch_size=4, collate_fn=lambda b: [x[1] for x in b]),
           _loader_batches(L, batch_size=None, collate_fn=lambda x: x[1] * 10)]
    return out


def _shuffle_and_samplers(L):
    d = _data(L)
    g = L.Generator().manual_seed(7)
    out = [_loader_batches(L, batch_size=4, shuffle=True),
           [b[1] for b in d.DataLoader(Squares(L), batch_size=4, shuffle=True, generator=g)]]
    L.manual_seed(3)
    out.append(list(d.RandomSampler(range(10))))
    out.append(list(d.RandomSampler(range(5), replacement=True, num_samples=8)))
    out.append(list(d.RandomSampler(range(4), num_samples=10)))
    out.append(list(d.SequentialSampler(range(5))))
    out.append(list(d.SubsetRandomSampler([9, 4, 2, 7], generator=L.Generator().manual_seed(1))))
    out.append(list(d.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0], 6, generator=L.Generator().manual_seed(2))))
    out.append(list(d.WeightedRandomSampler([0.1, 0.9, 0.4], 3, replacement=False,
                                            generator=L.Generator().manual_seed(2))))
    out.append(list(d.BatchSampler(d.SequentialSampler(range(10)), batch_size=3, drop_last=False)))
    out.append(list(d.BatchSampler(range(10), batch_size=3, drop_last=True)))
    out.append(len(d.BatchSampler(range(10), batch_size=3, drop_last=False)))
    bs = d.BatchSampler(d.SequentialSampler(range(10)), batch_size=4, drop_last=False)
    out.append([b[1] for b in d.DataLoader(Squares(L), batch_sampler=bs)])
    out.append(len(d.DataLoader(Squares(L), batch_sampler=bs)))
    out.append([b[1] for b in d.DataLoader(Squares(L), sampler=[3, 1, 2], batch_size=2)])
    return out


def _sampler_errors(L):
    d = _data(L)
    return _errs(L, [
        lambda: d.RandomSampler(range(3), num_samples=0),
        lambda: d.RandomSampler(range(3), replacement=1),
        lambda: d.BatchSampler(range(3), batch_size=0, drop_last=False),
        lambda: d.BatchSampler(range(3), batch_size=2, drop_last=1),
        lambda: d.WeightedRandomSampler([1.0, 2.0], num_samples=-1),
        lambda: d.WeightedRandomSampler([1.0, 2.0], num_samples=3, replacement=False).__iter__().__next__(),
        lambda: d.WeightedRandomSampler([[1.0, 2.0]], num_samples=1),
        lambda: d.WeightedRandomSampler([1.0, 2.0], num_samples=1, replacement="no"),
    ])


def _loader_arg_errors(L):
    d = _data(L)
    ds = Squares(L)
    bs = d.BatchSampler(range(10), 2, False)

    class It(d.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    return _errs(L, [
        lambda: d.DataLoader(ds, batch_sampler=bs, batch_size=3),
        lambda: d.DataLoader(ds, batch_sampler=bs, shuffle=True),
        lambda: d.DataLoader(ds, batch_sampler=bs, drop_last=True),
        lambda: d.DataLoader(ds, sampler=[1, 2], shuffle=True),
        lambda: d.DataLoader(ds, batch_size=None, drop_last=True),
        lambda: d.DataLoader(ds, num_workers=-1),
        lambda: d.DataLoader(ds, timeout=-1),
        lambda: d.DataLoader(ds, persistent_workers=True),
        lambda: d.DataLoader(ds, prefetch_factor=2),
        lambda: d.DataLoader(ds, num_workers=1, prefetch_factor=-1),
        lambda: d.DataLoader(It(), shuffle=True),
        lambda: d.DataLoader(It(), sampler=[1]),
        lambda: d.DataLoader(It(), batch_sampler=bs),
        lambda: d.DataLoader(ds, multiprocessing_context="spawn"),
        lambda: d.DataLoader(ds, num_workers=1, multiprocessing_context="bogus"),
        lambda: len(d.DataLoader(It())),
        lambda: [b for b in d.DataLoader(It(), batch_size=2)],
        lambda: d.DataLoader(ds, batch_size=0),
    ])


def _loader_attributes(L):
    d = _data(L)
    dl = d.DataLoader(Squares(L), batch_size=3, shuffle=True)
    dl2 = d.DataLoader(Squares(L))
    out = [type(dl.sampler).__name__, type(dl.batch_sampler).__name__, dl.batch_size, dl.drop_last,
           type(dl2.sampler).__name__, dl2.batch_size, dl.num_workers, dl.prefetch_factor, dl.timeout,
           dl.collate_fn.__name__, d.DataLoader(Squares(L), batch_size=None).collate_fn.__name__]
    try:
        dl.batch_size = 5
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    return out


def _iterable_dataset(L):
    d = _data(L)

    class Count(d.IterableDataset):
        def __iter__(self):
            return iter(L.tensor([i]) for i in range(7))
    return [list(d.DataLoader(Count(), batch_size=3)), list(d.DataLoader(Count(), batch_size=3, drop_last=True)),
            list(d.DataLoader(Count(), batch_size=None))]


def _datasets(L):
    d = _data(L)
    a = d.TensorDataset(L.arange(6.).view(3, 2), L.tensor([0, 1, 0]))
    b = d.TensorDataset(L.ones(2, 2), L.tensor([5, 5]))
    cat = d.ConcatDataset([a, b])
    L.manual_seed(0)
    parts = d.random_split(range(10), [0.5, 0.3, 0.2], generator=L.Generator().manual_seed(3))
    return [a[1], len(cat), cat[3], cat[-1], cat.cumulative_sizes, d.Subset(a, [2, 0])[0],
            [list(p) for p in parts], _errs(L, [lambda: d.TensorDataset(L.ones(2), L.ones(3)),
                                               lambda: cat[-6], lambda: d.random_split(range(3), [2, 2]),
                                               lambda: d.ConcatDataset([])])]


def _pin_memory_cpu(L):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        batches = list(_data(L).DataLoader(Squares(L, 4), batch_size=2, pin_memory=True))
    return batches, [b[0].is_pinned() for b in batches], sorted({x.category.__name__ for x in w})


def _more_datasets(L):
    d = _data(L)

    class Count(d.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))
    a = d.TensorDataset(L.arange(4.))
    stack = d.StackDataset(a, L.arange(4) * 10)
    stack_kw = d.StackDataset(x=a, y=range(4))
    chain = d.ChainDataset([Count(2), Count(3)])
    added = a + a
    return [stack[1], len(stack), stack_kw[2], list(chain), type(added).__name__, len(added),
            type(Count(2) + Count(1)).__name__, list(Count(2) + Count(1)),
            d.get_worker_info(), _errs(L, [lambda: d.StackDataset(a, range(3)), lambda: d.StackDataset(),
                                           lambda: d.StackDataset(a, y=a), lambda: len(chain)])]


def _collate_fn_map(L):
    d = _data(L)
    from_map = getattr(L.utils.data._utils.collate, "collate")
    default_map = getattr(L.utils.data._utils.collate, "default_collate_fn_map")

    def collate_str(batch, *, collate_fn_map=None):
        return "|".join(batch)
    fn_map = dict(default_map)
    fn_map[str] = collate_str
    out = from_map([{"s": "a", "t": L.ones(1)}, {"s": "b", "t": L.zeros(1)}], collate_fn_map=fn_map)
    return out, sorted(getattr(t, "__name__", None) or repr(t) for t in default_map), \
        _errs(L, [lambda: from_map([object()], collate_fn_map=fn_map)])


def _worker_error(L):
    d = _data(L)

    class Bad:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise ValueError("bad item 2")
            return i
    try:
        list(d.DataLoader(Bad(), batch_size=1, num_workers=1))
    except Exception as e:
        msg = str(e)
        return type(e).__name__, msg.splitlines()[0], "bad item 2" in msg, "Traceback" in msg


def _iterable_workers(L):
    """Each worker iterates the whole IterableDataset unless it shards by get_worker_info."""
    d = _data(L)

    class Sharded(d.IterableDataset):
        def __iter__(self):
            info = d.get_worker_info()
            return iter(range(info.id, 6, info.num_workers))
    return sorted(int(x) for x in d.DataLoader(Sharded(), batch_size=None, num_workers=2))


CHECKS = {
    "more_datasets": _more_datasets,
    "collate_fn_map": _collate_fn_map,
    "worker_error": _worker_error,
    "iterable_workers": _iterable_workers,
    "collate_structures": _collate_structures,
    "collate_errors": _collate_errors,
    "collate_numpy_dtypes": _collate_numpy_dtypes,
    "default_convert": _default_convert,
    "batching_drop_last": _batching,
    "shuffle_and_samplers": _shuffle_and_samplers,
    "sampler_errors": _sampler_errors,
    "loader_arg_errors": _loader_arg_errors,
    "loader_attributes": _loader_attributes,
    "iterable_dataset": _iterable_dataset,
    "datasets": _datasets,
    "pin_memory_cpu": _pin_memory_cpu,
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_dataloader(name):
    same(CHECKS[name])


class WorkerInfoDataset:
    def __init__(self, L):
        self.L = L

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = self.L.utils.data.get_worker_info()
        return (i, info.id, info.num_workers, info.seed, self.L.initial_seed(), self.L.rand(1),
                int(np.random.randint(1000)))


def _init_fn(worker_id):
    import numpy
    numpy.random.seed(worker_id + 100)


def _workers(L):
    """worker_init_fn runs in each worker (it seeds NumPy), get_worker_info names the worker,
    the per-worker seed is base_seed + id drawn from the loader's generator (so the workers'
    random streams are torch's), batches come back in order, and persistent workers serve a
    second epoch with a fresh base seed."""
    d = _data(L)
    L.manual_seed(5)
    dl = d.DataLoader(WorkerInfoDataset(L), batch_size=2, num_workers=2, worker_init_fn=_init_fn,
                      persistent_workers=True, generator=L.Generator().manual_seed(11))
    first = list(dl)
    second = list(dl)
    return first, second


def test_dataloader_workers():
    same(_workers)
