"""Fixes found by running PyTorch's test/test_dataloader.py on ember: DataPipes and the
DataLoader's handling of them (shuffle settings, per-epoch seeds, sharding across workers), the
open-files limit error, and nested tensors in DataLoader batches. Each check runs the same code
on ember and on torch and compares."""
import multiprocessing
import os
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


def _pipes(L):
    return L.utils.data.datapipes


def _shuffled_pipeline(L):
    return _pipes(L).iter.IterableWrapper(range(20)).shuffle(buffer_size=5).sharding_filter()


@pytest.mark.parametrize("L", [ember, torch], ids=["ember", "torch"])
def test_functional_forms(L):
    """Each stage's functional form, its result and its length, as PyTorch's."""
    it = _pipes(L).iter
    wrap = it.IterableWrapper
    out = [
        list(wrap(range(10)).map(lambda x: x * 2).filter(lambda x: x % 3 == 0)),
        list(wrap([(1, 2), (3, 4)]).map(lambda a: a * 10, input_col=1)),
        list(wrap([(1, 2), (3, 4)]).map(lambda a, b: a + b, input_col=[0, 1], output_col=-1)),
        [list(b) for b in wrap(range(7)).batch(3)], len(wrap(range(7)).batch(3)),
        len(wrap(range(7)).batch(3, drop_last=True)),
        list(wrap([[0, 1], [2, [3, 4]]]).unbatch(unbatch_level=-1)),
        list(wrap(range(3)).concat(wrap(range(2)))), list(wrap(range(3)).zip(wrap("ab"))),
        [t.tolist() for t in wrap(range(4)).batch(2).collate()],
        len(wrap(range(10)).sharding_filter()), type(wrap(range(3)).map(abs)).__name__,
        [x for x in _pipes(L).map.SequenceWrapper([1, 2, 3]).map(lambda x: x + 1)],
    ]
    ref = [[0, 6, 12, 18], [(1, 20), (3, 40)], [(1, 2, 3), (3, 4, 7)], [[0, 1, 2], [3, 4, 5], [6]],
           3, 2, [0, 1, 2, 3, 4], [0, 1, 2, 0, 1], [(0, "a"), (1, "b")], [[0, 1], [2, 3]], 10,
           "MapperIterDataPipe", [2, 3, 4]]
    assert out == ref


def test_dataloader_shuffles_datapipe_as_torch():
    """shuffle=True turns the pipeline's Shuffler on and the loader's generator seeds it per
    epoch: the same global seed gives PyTorch's exact order, epoch after epoch."""
    def epochs(L):
        loader = L.utils.data.DataLoader(_shuffled_pipeline(L), shuffle=True, batch_size=None)
        L.manual_seed(123)
        return [list(loader), list(loader)]
    ours, theirs = epochs(ember), epochs(torch)
    assert ours == theirs
    assert ours[0] != ours[1] and sorted(ours[0]) == list(range(20))


@pytest.mark.parametrize("L", [ember, torch], ids=["ember", "torch"])
def test_graph_settings(L):
    """Shuffle on/off, sharding and its misuse, and the one-iterator rule."""
    it, gs = _pipes(L).iter, L.utils.data.graph_settings
    off = gs.apply_shuffle_settings(_shuffled_pipeline(L), shuffle=False)
    assert list(off) == list(range(20))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        added = gs.apply_shuffle_settings(it.IterableWrapper(range(3)), shuffle=True)
    assert type(added).__name__ == "ShufflerIterDataPipe"
    assert any("does not contain a `Shuffler`" in str(w.message) for w in caught)
    sharded = gs.apply_sharding(it.IterableWrapper(range(10)).sharding_filter(), 3, 1)
    assert list(sharded) == [1, 4, 7] and len(sharded) == 3
    twice = it.IterableWrapper(range(10)).sharding_filter().sharding_filter()
    with pytest.raises(RuntimeError, match="Sharding twice"):
        gs.apply_sharding(twice, 2, 0)
    source = it.IterableWrapper(range(3)).map(abs)
    first = iter(source)
    next(first)
    second = iter(source)
    assert next(second) == 0
    with pytest.raises(RuntimeError, match="has been invalidated"):
        next(first)


def test_workers_shard_a_datapipe():
    """With workers, each keeps its share of the (equally shuffled) stream: every item once,
    in PyTorch's order."""
    def load(L):
        loader = L.utils.data.DataLoader(_shuffled_pipeline(L), shuffle=True, batch_size=None,
                                         num_workers=2, multiprocessing_context="fork")
        L.manual_seed(7)
        return list(loader)
    ours = load(ember)
    assert ours == load(torch) and sorted(ours) == list(range(20))


def test_nested_tensors_in_batches():
    """default_collate refuses nested tensors with PyTorch's error; a nested tensor pickles
    (as DataLoader workers send it)."""
    import pickle
    results = []
    for L in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nt = L.nested.nested_tensor([L.arange(3.0), L.arange(2.0)])
        with pytest.raises(RuntimeError, match="nested tensors are not currently supported"):
            L.utils.data.default_collate([nt])
        results.append([c.tolist() for c in pickle.loads(pickle.dumps(nt)).unbind()])
    assert results[0] == results[1]


class _Stream(ember.utils.data.IterableDataset):
    def __iter__(self):
        return (ember.zeros(2) for _ in range(200))


def _load_past_open_files_limit(conn):
    import resource
    # Room for a few dozen more descriptors than this (forked) process already has open.
    limit = len(os.listdir("/proc/self/fd")) + 60
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    kept = []
    try:
        for t in ember.utils.data.DataLoader(_Stream(), num_workers=1,
                                             multiprocessing_context="fork"):
            kept.append(t)  # each keeps its shared memory's descriptor open
        conn.send("no error")
    except Exception as e:
        conn.send(f"{type(e).__name__}: {e}")


def test_open_files_limit_error():
    """Batches received past the open-files limit lose their shared memory: the loader says so
    with PyTorch's RuntimeError (ulimit -n / set_sharing_strategy), not a queue error."""
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    child = context.Process(target=_load_past_open_files_limit, args=(theirs,))
    child.start()
    try:
        assert ours.poll(60)
        message = ours.recv()
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()
    assert message.startswith("RuntimeError: Too many open files.") and "ulimit -n" in message \
        and "set_sharing_strategy" in message, message


def test_pin_memory_without_accelerator():
    """pin_memory (and the deprecated pin_memory_device) on a CPU-only machine: PyTorch's two
    warnings, and batches left unpinned."""
    def run(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            it = iter(L.utils.data.DataLoader([1, 2], pin_memory=True, pin_memory_device="cpu"))
        return [str(w.message) for w in caught], it._pin_memory, next(it).is_pinned()
    assert run(ember) == run(torch)


def test_assert_equal_compares_nested_tensors_by_component():
    """The harness's assertEqual unbinds strided nested tensors, as PyTorch's TestCase does (a
    nested tensor has no single shape to compare)."""
    from ember.testing._internal.common_utils import TestCase
    case = TestCase()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ember.nested.nested_tensor([ember.arange(3.0), ember.arange(2.0)])
        b = ember.nested.nested_tensor([ember.arange(3.0), ember.arange(2.0) + 1])
    case.assertEqual(a, a.clone())
    with pytest.raises(AssertionError):
        case.assertEqual(a, b)
