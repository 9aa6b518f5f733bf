"""DataLoader: batches from a dataset, in the main process or from worker processes.

A DataLoader combines a dataset with an index sampler: a `BatchSampler` yielding one list of keys
per batch (automatic collation), or the sampler itself with `batch_size=None`. Each iteration
creates an iterator: `_SingleProcessDataLoaderIter` fetches and collates in the main process;
`_MultiProcessingDataLoaderIter` hands each batch's keys to one of `num_workers` processes and
delivers their results in sampler order. Worker processes send batches through shared memory:
a tensor's storage is mapped by the main process, never pickled as bytes.
"""
import ctypes
import errno
import functools
import io
import itertools
import multiprocessing
import os
import queue
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
import weakref
from math import ceil
from multiprocessing import connection
from typing import Generic, TypeVar

from ... import empty, int64
from ...multiprocessing import SocketQueue
from ...multiprocessing.queue import _Pickler
from . import _utils, graph_settings
from ._utils.signal_handling import worker_failure_message
from .datapipes.datapipe import (IterDataPipe, MapDataPipe, _IterDataPipeSerializationWrapper,
                                 _MapDataPipeSerializationWrapper)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

T_co = TypeVar("T_co", covariant=True)

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert
get_worker_info = _utils.worker.get_worker_info


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        fetcher = (_utils.fetch._MapDatasetFetcher if kind == _DatasetKind.Map
                   else _utils.fetch._IterableDatasetFetcher)
        return fetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None for ever (the stream decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


def _get_distributed_settings():
    """(world size, rank) of this process: (1, 0) unless a process group is initialized."""
    from ... import distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def _share_dist_seed(generator):
    """The seed of a DataPipe pipeline's random stages for one epoch, drawn from the loader's
    generator (ember has no process groups to broadcast it over)."""
    return empty((), dtype=int64).random_(generator=generator).item()


def _sharding_worker_init_fn(worker_init_fn, world_size, rank_id, worker_id):
    """A DataPipe worker's first step: keep only its share of the stream (sharded across ranks
    first, then across each rank's workers), then run the user's worker_init_fn."""
    info = _utils.worker.get_worker_info()
    graph_settings.apply_sharding(info.dataset, info.num_workers * world_size,
                                  worker_id * world_size + rank_id)
    if worker_init_fn is not None:
        worker_init_fn(worker_id)


class DataLoader(Generic[T_co]):
    """Iterates over `dataset` in batches.

    Args (as in PyTorch): dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
    num_workers=0, collate_fn=None, pin_memory=False (accepted; there is no accelerator to pin
    for), drop_last=False, timeout=0, worker_init_fn=None, multiprocessing_context=None,
    generator=None, and keyword-only prefetch_factor, persistent_workers=False,
    pin_memory_device="", in_order=True.
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # A DataPipe is held in a wrapper that pickles the whole pipeline as one value.
        if isinstance(dataset, IterDataPipe):
            self.dataset = _IterDataPipeSerializationWrapper(dataset)
        elif isinstance(dataset, MapDataPipe):
            self.dataset = _MapDataPipeSerializationWrapper(dataset)

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if isinstance(dataset, IterDataPipe):
                # shuffle switches the pipeline's own Shuffler stages on or off.
                if shuffle is not None:
                    graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
            elif shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True
        self._IterableDataset_len_called = None  # len(dataset), once len(loader) has asked
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                valid = multiprocessing.get_all_start_methods()
                if context not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {valid!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterators draw from: lists of keys (auto-collation) or single keys."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # A guess from len(dataset); each worker's copy may end with a partial batch.
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else \
                    ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if not self.num_workers:
            return
        suggested = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            os.cpu_count()
        if suggested is None or self.num_workers > suggested:
            detail = ("DataLoader is not able to compute a suggested max number of worker in "
                      "current system." if suggested is None else
                      f"Our suggested max number of worker in current system is {suggested}, "
                      "which is smaller than what this DataLoader is going to create.")
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. {detail} Please be aware that excessive worker creation might "
                          "get DataLoader running slow or even freeze, lower the worker number "
                          "to avoid potential slowness/freeze if necessary.", stacklevel=_user_stacklevel())


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._shared_seed = None
        if isinstance(self._dataset, IterDataPipe):
            self._seed_datapipe(loader)
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                          stacklevel=_user_stacklevel())
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=_user_stacklevel())
        # With no accelerator there is nothing to pin to: batches stay as they are, as in
        # PyTorch on a CPU-only machine.
        self._pin_memory = False
        self._pin_memory_device = None
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # Drawn after iter(sampler) and before its first index, as PyTorch does, so that the
        # same global seed gives the same worker seeds and the same shuffle.
        self._base_seed = empty((), dtype=int64).random_(generator=loader.generator).item()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _seed_datapipe(self, loader):
        """Draw this epoch's seed for the pipeline's random stages (workers get it too, so
        that all copies shuffle alike before each keeps its shard)."""
        from ... import Generator
        self._shared_seed = _share_dist_seed(loader.generator)
        graph_settings.apply_random_seed(self._dataset,
                                         Generator().manual_seed(self._shared_seed))

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if isinstance(self._dataset, IterDataPipe):
            self._seed_datapipe(loader)

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._dataset_kind == _DatasetKind.Iterable and \
                self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=_user_stacklevel())
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            graph_settings.apply_sharding(self._dataset, *_get_distributed_settings())
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


# Note [DataLoader shutdown]
#
# Data flows in two directions (queues in braces):
#
#     main process --{index queue i}--> worker i         (task, keys) | _ResumeIteration | None
#     workers ------{result queue}----> main process     (task, batch | ExceptionWrapper |
#                                                          _IterableDatasetStopIteration)
#
# Each worker has its own index queue (a multiprocessing.Queue); all share one result queue
# (a SocketQueue, ember/multiprocessing/queue.py). Tasks are numbered; results may arrive out of
# order and are handed out in order (or as they come, with in_order=False).
#
# What must hold:
#
# 1. The workers stop when the iterator is exhausted, when its last reference goes (a `break`
#    out of the loop, `del`, an exception whose traceback held it being collected), or, with
#    persistent workers, when the loader goes. `_shutdown_workers` does this in order:
#      a. Set the done flag, so workers skip any task still queued for them. It is one shared
#         byte with no lock: a multiprocessing.Event takes a lock in is_set(), and a worker
#         killed while holding it would leave the main process hanging in set().
#      b. Put None on each index queue: a worker leaves its loop when it reads None.
#      c. Close the result queue. Results in flight are dropped; the kernel closes the memory
#         files they carried, so their shared memory is freed with them. A worker blocked on a
#         full result queue now gets BrokenPipeError and exits (producers hold no consumer end).
#      d. Join each worker for up to MP_STATUS_CHECK_INTERVAL seconds; terminate, then kill, any
#         that is still alive. Close the index queues without joining their feeder threads.
#    It runs as a `weakref.finalize` callback rather than from `__del__`, because of garbage
#    cycles: when the iterator dies in one (say with a traceback that refers to it), everything
#    it holds dies in the same collection, and the collector runs the index queues' own
#    finalizers (which stop their feeder threads) before any `__del__`, so a None put from
#    `__del__` would never be sent. The finalizer's arguments are held by the finalizer itself,
#    alive and intact until it has run.
#
# 2. Nothing waits for ever on a process that has died.
#      - The main process waiting for a result waits on the result queue and on the sentinel of
#        every active worker at once: a worker's death wakes it immediately, and the error names
#        the worker, its pid and its exit code (or signal). `timeout` bounds the whole wait.
#      - A worker waiting for a task wakes every MP_STATUS_CHECK_INTERVAL seconds and exits if
#        its parent has died (ManagerWatchdog); a worker sending a result to a dead parent gets
#        BrokenPipeError and exits.
#      - The main process never blocks on a worker: index queues buffer in a feeder thread, and
#        the result queue has no lock that a worker killed mid-send could hold.
#
# 3. At interpreter exit, shutdown is skipped (the finalizer has atexit=False): by then the
#    library code it needs may be torn down. Workers are daemonic, so multiprocessing's own exit
#    handler terminates them.
#
# 4. KeyboardInterrupt: Ctrl-C reaches the whole process group. Workers catch it and leave
#    quietly; the main process unwinds, the iterator loses its last reference and 1 runs (or, if
#    a traceback keeps the iterator alive until exit, 3 does).
#
# 5. No shared memory is left behind by any of this: segments are anonymous memory files (see
#    ember/multiprocessing/shared_memory.py), freed by the kernel when their last mapping or
#    descriptor is gone, whether the process holding it exited or was killed.
#
# Persistent workers keep running between epochs. A new epoch sends each worker a
# _ResumeIteration and discards results until every worker has echoed it: anything from the
# abandoned previous epoch arrives before the echo, since each worker answers in order.

class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._worker_init_fn = loader.worker_init_fn
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            self._worker_init_fn = functools.partial(
                _sharding_worker_init_fn, self._worker_init_fn, *_get_distributed_settings())
        self._worker_result_queue = self._data_queue = SocketQueue()
        self._workers_done_flag = context.RawValue(ctypes.c_bool, False)
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        self._finalizer = weakref.finalize(
            self, _stop_workers, self._workers, self._index_queues,
            self._worker_result_queue, self._workers_done_flag)
        self._finalizer.atexit = False  # see 3 in the Note
        try:
            for i in range(self._num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()  # see 1d and 2 in the Note
                w = context.Process(
                    target=_utils.worker._worker_loop, daemon=True,
                    args=(self._dataset_kind, self._dataset, index_queue,
                          self._worker_result_queue, self._workers_done_flag,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, self._worker_init_fn, i, self._num_workers,
                          self._shared_seed))
                self._start(w, context)
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _start(self, worker, context):
        """Start a worker; if its arguments cannot be pickled (the 'spawn' and 'forkserver'
        start methods pickle them), say which one."""
        try:
            worker.start()
        except Exception as e:
            if context.get_start_method() == "fork":  # nothing was pickled
                raise
            culprit = _unpicklable(dataset=self._dataset, collate_fn=self._collate_fn,
                                   worker_init_fn=self._worker_init_fn)
            if culprit is None:
                raise
            name, value, reason = culprit
            message = (f"DataLoader cannot start worker processes with the "
                       f"'{context.get_start_method()}' start method: its {name} {value!r} "
                       f"cannot be pickled ({reason}). Define it at module level, or use "
                       f"multiprocessing_context='fork'.")
            try:
                error = type(e)(message)
            except Exception:
                error = RuntimeError(message)
            raise error from e

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to hand out
        # Tasks in [rcvd_idx, send_idx): task -> (worker,) while outstanding, (worker, data)
        # once its result has arrived ahead of its turn.
        self._task_info = {}
        self._tasks_outstanding = 0
        # Whether each worker may still get tasks this epoch (False once its IterableDataset
        # copy is exhausted), and how many of its tasks are not yet handed out.
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for index_queue in self._index_queues:
                index_queue.put(_utils.worker._ResumeIteration(self._shared_seed))
            resumed = 0
            while resumed < self._num_workers:
                idx, data = self._get_data()
                if isinstance(idx, _utils.worker._ResumeIteration):
                    resumed += 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout=_utils.MP_STATUS_CHECK_INTERVAL):
        """(True, result), or (False, None) if nothing came within `timeout` seconds; raises
        RuntimeError at once if an active worker has died."""
        active = [w for w, on in zip(self._workers, self._workers_status) if on]
        ready = connection.wait([self._data_queue] + [w.sentinel for w in active], timeout)
        if self._data_queue in ready:  # a result first, even if its sender has died since
            try:
                return True, self._data_queue.get(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:  # the rest of a many-datagram message never came
                pass
            except OSError as e:
                if e.errno != errno.EMFILE:
                    raise
                # A batch's shared memory arrives as descriptors: at the open-files limit the
                # kernel drops them, and the batch is lost.
                raise RuntimeError("Too many open files. Communication with the workers is no "
                                   "longer possible. Please increase the limit using `ulimit -n` "
                                   "in the shell or change the sharing strategy by calling "
                                   "`torch.multiprocessing.set_sharing_strategy('file_system')` "
                                   "at the beginning of your code") from None
        failed = [i for i, (w, on) in enumerate(zip(self._workers, self._workers_status))
                  if on and not w.is_alive()]
        if failed:
            for i in failed:
                self._mark_worker_as_unavailable(i)
            raise RuntimeError("; ".join(worker_failure_message(i, self._workers[i])
                                         for i in failed))
        return False, None

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # Skip tasks that will never be answered: those of a worker whose IterableDataset
            # copy ran out before it got to them.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            if self._shutdown or self._tasks_outstanding <= 0:
                raise AssertionError("Invalid iterator state: shutdown or no outstanding tasks "
                                     "when fetching next data")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and \
                    isinstance(data, _utils.worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            raise AssertionError("Number of outstanding tasks exceeded maximum allowed tasks")
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker (with room, if unordered)
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx] and (
                    self._in_order or self._workers_num_tasks[worker_queue_idx]
                    < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, _utils.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        """No more tasks for this worker: tell it to exit (it is joined at shutdown, so that an
        error it raises meanwhile is still reported)."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        self._shutdown = True
        self._finalizer()


def _stop_workers(workers, index_queues, result_queue, done_flag):
    """Stop the workers: see 1 in Note [DataLoader shutdown]."""
    try:
        done_flag.value = True
        for index_queue in index_queues:
            index_queue.put(None)  # a worker that has already exited never reads it
    finally:
        result_queue.close()
        for w in workers:
            w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
            if w.is_alive():
                w.terminate()
                w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
            if w.is_alive():
                w.kill()
                w.join()
        for index_queue in index_queues:
            index_queue.cancel_join_thread()
            index_queue.close()


def _unpicklable(**candidates):
    """(name, value, reason) for the first candidate that cannot be pickled, else None."""
    for name, value in candidates.items():
        try:
            _Pickler(io.BytesIO()).dump(value)  # storages pickle by reference: no DupFd made
        except Exception as e:
            return name, value, f"{type(e).__name__}: {e}"
    return None
