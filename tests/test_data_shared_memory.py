"""ember.multiprocessing: storages moved into shared memory and sent between processes."""
import numpy as np
import pytest
import torch

import ember
import ember.multiprocessing as mp
from ember.multiprocessing.shared_memory import _sole_user
from test_data_workers import guard, send_back  # noqa: F401  (guard is autouse)


def test_share_memory_moves_the_storage_and_every_view_follows():
    for lib in (ember, torch):
        x = lib.arange(12.).reshape(3, 4)
        row, col, alias = x[1], x[:, 2], x.detach()
        assert not x.is_shared()
        assert x.share_memory_() is x and x.is_shared() and row.is_shared()
        x.add_(1)
        assert row.tolist() == [5., 6., 7., 8.] and col.tolist() == [3., 7., 11.]
        assert alias[0, 0].item() == 1.0
        assert x.storage_offset() == 0 and col.storage_offset() == 2 and col.stride() == (4,)


def test_a_second_storage_over_the_same_bytes_follows_too():
    p = ember.nn.Parameter(ember.ones(3))
    data = p.data  # its own storage object (own version counter) over the same bytes
    p.share_memory_()
    data.mul_(5)
    assert p.tolist() == [5., 5., 5.] and data.is_shared()


def sole_user(tensor):
    tensor.untyped_storage()
    return _sole_user(tensor)


def test_fresh_tensors_take_the_fast_path_and_shared_ones_do_not():
    assert sole_user(ember.zeros(3)) and sole_user(ember.from_numpy(np.zeros(3)))
    x = ember.zeros(4)
    view = x[1:]
    assert not sole_user(x) and not sole_user(view)
    held = ember.zeros(3)
    numpy_view = held.numpy()  # a NumPy view the caller keeps: not provably alone
    assert not sole_user(held)
    del numpy_view


def test_shared_storage_basics_match_torch():
    for lib in (ember, torch):
        assert lib.UntypedStorage._new_shared(16).is_shared()
        assert lib.empty(0).share_memory_().is_shared()
        with pytest.raises(RuntimeError, match="only available on CPU"):
            lib.zeros(2, device="meta").share_memory_()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensors_cross_a_multiprocessing_queue_without_copies(method):
    ctx = mp.get_context(method)
    queue, received = ctx.Queue(), ctx.Event()
    shared = ember.ones(4).share_memory_()  # as with torch: a forked child would copy on write
    parameter = ember.nn.Parameter(ember.zeros(2))
    child = ctx.Process(target=send_back, args=(queue, received, shared, parameter))
    child.start()
    view, param_back, fresh = queue.get(timeout=30)
    received.set()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert shared.tolist() == [2.0] * 4
    assert view.untyped_storage() is shared.untyped_storage()  # back to the very same storage
    assert type(param_back) is ember.nn.Parameter and param_back.requires_grad
    assert fresh.tolist() == [10, 11, 12] and fresh.is_shared()


def test_socket_queue_carries_storages_by_descriptor():
    queue = mp.SocketQueue()
    x = ember.arange(6.).reshape(2, 3)
    many = [ember.full((2,), float(i)) for i in range(300)]  # more than one datagram's descriptors
    queue.put((x, x.t(), x[1], many, "s" * 100_000))  # and a pickle too big for one datagram
    y, yt, row, many_back, text = queue.get(timeout=10)
    assert y.untyped_storage() is x.untyped_storage()  # this process already maps it
    assert yt.stride() == (1, 3) and row.storage_offset() == 3
    assert [t.tolist() for t in many_back] == [[float(i)] * 2 for i in range(300)]
    assert len(text) == 100_000
    queue.close()


def test_what_cannot_cross():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        mp.SocketQueue().put(x * 2)
    with pytest.raises(RuntimeError, match="Cannot pickle meta storage"):
        mp.SocketQueue().put(ember.zeros(2, device="meta").untyped_storage())
    queue = mp.SocketQueue()
    queue.put(ember.zeros(2, 3, device="meta"))
    meta = queue.get(timeout=10)
    assert meta.is_meta and meta.shape == (2, 3)


def test_sharing_strategies():
    assert mp.get_all_sharing_strategies() == {"file_descriptor"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError, match="invalid sharing strategy 'file_system'"):
        mp.set_sharing_strategy("file_system")
