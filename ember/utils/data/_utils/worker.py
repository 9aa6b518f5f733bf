"""The worker process: its loop, its seeds, and `get_worker_info()`.

A worker takes `(task index, sampler indices)` from its own index queue, fetches and collates
that batch, and puts `(task index, batch)` on the one result queue shared by all workers. Its
protocol with the main process (how it learns to stop, and how it notices that the main process
is gone) is Note [DataLoader shutdown] in ../dataloader.py.
"""
import os
import queue
import random
from dataclasses import dataclass

import numpy as np

from . import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, signal_handling


class ManagerWatchdog:
    """Tells a worker whether the process that started it is still alive (Linux reparents an
    orphan, so the parent pid changes when the parent dies)."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What `get_worker_info()` returns in a worker: its id, the number of workers, its seed and
    its own copy of the dataset."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """This worker's WorkerInfo in a DataLoader worker process, None in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of each epoch after the first (and echoed back)."""
    seed: int = None


_MASK32 = 0xFFFFFFFF


def _generate_state(base_seed, worker_id):
    """Four 32-bit words to seed NumPy's global generator in worker `worker_id`: NumPy's
    SeedSequence hashing (entropy mixed into a pool of four words, then drawn out) applied to
    (worker_id, base_seed), exactly as PyTorch computes it. A hash, rather than base_seed +
    worker_id as for `random` and ember, keeps NumPy's stream unrelated to those two."""
    hash_multiplier = 0x43B0D7E5

    def hashmix(value):
        nonlocal hash_multiplier
        value = (value ^ hash_multiplier) & _MASK32
        hash_multiplier = (hash_multiplier * 0x931E8875) & _MASK32
        value = (value * hash_multiplier) & _MASK32
        return (value ^ (value >> 16)) & _MASK32

    def mix(x, y):
        result = ((0xCA01F9DD * x) - (0x4973F715 * y)) & _MASK32
        return (result ^ (result >> 16)) & _MASK32

    entropy = [worker_id, base_seed & _MASK32, base_seed >> 32, 0]
    pool = [hashmix(word) for word in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hashmix(pool[i_src]))
    state, multiplier = [], 0x8B51F9DD
    for word in pool:
        word = (word ^ multiplier) & _MASK32
        multiplier = (multiplier * 0x58F38DED) & _MASK32
        word = (word * multiplier) & _MASK32
        state.append((word ^ (word >> 16)) & _MASK32)
    return state


def _seed_worker(base_seed, worker_id):
    """Seed Python's `random`, ember's default generator and NumPy's global generator: different
    in every worker, the same in every run with the same base seed."""
    import ember
    seed = base_seed + worker_id
    random.seed(seed)
    ember.manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _put_result(data_queue, idx, data, worker_id):
    """Put one result; False if the main process has gone (so the worker should exit)."""
    try:
        data_queue.put((idx, data))
    except (BrokenPipeError, ConnectionError):
        return False
    except Exception:  # the batch could not be pickled or moved to shared memory: report it
        data_queue.put((idx, ExceptionWrapper(
            where=f"while sending a batch from DataLoader worker process {worker_id}")))
    return True


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_flag, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 shared_seed=None):
    from ..dataloader import _DatasetKind
    from ..datapipes.datapipe import IterDataPipe
    from ..graph_settings import apply_random_seed
    from ember import Generator
    global _worker_info
    try:
        signal_handling._set_worker_signal_handlers()
        data_queue.close_consumer_end()
        seed = _seed_worker(base_seed, worker_id)
        if isinstance(dataset, IterDataPipe):  # random stages seeded as in the main process
            apply_random_seed(dataset, Generator().manual_seed(shared_seed))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:  # reported in place of the first batch
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        # An exhausted IterableDataset sets iteration_end: from then on, as after done_flag,
        # the worker only drains its index queue until the final None.
        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):  # persistent workers: a new epoch begins
                if not _put_result(data_queue, r, None, worker_id):
                    break
                iteration_end = False
                if isinstance(dataset, IterDataPipe):
                    apply_random_seed(dataset, Generator().manual_seed(r.seed))
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                      collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_flag.value or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind != _DatasetKind.Iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            if not _put_result(data_queue, idx, data, worker_id):
                break
            del data, idx, index, r  # hold no batch while waiting for the next task
    except KeyboardInterrupt:
        pass  # the main process got it too and will shut the workers down
