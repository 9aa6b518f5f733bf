"""Intra-op threads: a small at::parallel_for for NumPy loops and matrix products.

PyTorch splits each big elementwise loop, layout copy and matrix product over its intra-op
threads. NumPy runs them on one core, but releases the GIL inside its copy, ufunc and matmul
loops, so the slices of one array handled by a few Python threads at once do run in parallel.
Each element of a loop is still computed by the same code, in the same order, so results are
bit-for-bit those of one call; a product's row blocks may round differently (OpenBLAS blocks by
the rows it is given, as when its own threads split a product). Small arrays stay on the
calling thread: handing work over costs tens of microseconds.

Note [One thread pool: NumPy's BLAS runs single-threaded]
PyTorch's GEMMs run on the same OpenMP threads as its other kernels, so `set_num_threads`
bounds everything. NumPy's OpenBLAS has a pool of its own, whose threads spin-wait at several
barriers inside every product. On this project's 2-core machine with other processes running,
measured alone: (64, 9216) @ (9216, 128) took 13 ms on one BLAS thread and 897 ms on two; the
MNIST example's train step 0.59 s with ember's pool at 1 or 2 threads and BLAS at 1, 1.4-2.8 s
with BLAS at 2. So ember holds OpenBLAS at one thread (from import, through threadpoolctl) and
splits big products itself: `matmul` hands row blocks of the result to the intra-op threads,
each one single-threaded BLAS call, with one blocking wait at the end -- `set_num_threads`
then governs all of ember's threads, and no work item starts BLAS threads of its own.
"""
import os
import threading

import numpy as np

from .._core import caching_allocator


def quiet_floating_point():
    """Silence NumPy's overflow / divide / invalid / underflow warnings on this thread.

    PyTorch's kernels never warn about inf or NaN results; NumPy's ufuncs do. Wrapping every
    kernel in `np.errstate` would cost about 1.5 us per op, so the state is set once, when ember
    is imported (for the importing thread) and when an intra-op thread starts. NumPy keeps this
    state per thread, so it also applies to the user's own NumPy code on the importing thread.
    """
    np.seterr(all="ignore")


def _default_workers():
    """OMP_NUM_THREADS when set (as PyTorch reads it), else the cores, at most 4."""
    try:
        n = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        n = 0
    return n if n > 0 else min(os.cpu_count() or 1, 4)


_WORKERS = _default_workers()
# below this, one thread is faster than waking others: handing a loop to the pool and waiting
# for it costs about 80 us here (two cross-thread wake-ups on a shared VM), and a kernel of
# many small NumPy calls per block hands the GIL back and forth besides. 2**20 measured best
# of 2**17..2**22 for the MNIST, ResNet-18 train and eval steps at two threads (1.35 -> 1.32,
# 1.57 -> 1.43, 1.45 -> 1.41 against torch, one process, alternating)
MIN_ELEMENTS = 1 << 20
_pool = None


def _forget_pool():
    # a forked child (a DataLoader worker) inherits the pool object but not its threads
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


class _Worker:
    """One intra-op thread. It sleeps on a lock of its own, so handing it a task is one lock
    release and taking the result one acquire: a bare lock round trip between two threads is
    about 50 us on this project's VMs and a whole parallel_for hand-off 75-85, where
    concurrent.futures' submit and result (a queue and a Future, each behind a condition
    variable) took 110-120."""

    def __init__(self):
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.task = self.error = None
        threading.Thread(target=self._loop, name="ember-intraop", daemon=True).start()

    def _loop(self):
        quiet_floating_point()
        while True:
            self.go.acquire()
            fn, index = self.task
            self.task = None
            if fn is None:  # shut down
                return
            try:
                fn(index)
            except BaseException as e:  # handed to the caller, which raises it
                self.error = e
            self.done.release()

    def start(self, fn, index):
        self.task = (fn, index)
        self.go.release()

    def join(self):
        """Wait for the task; the exception it raised, if any."""
        self.done.acquire()
        error, self.error = self.error, None
        return error


class _Team:
    """The intra-op threads of one set_num_threads setting. One parallel region runs at a
    time: a loop that starts while another runs (from another thread, or nested inside a
    part) runs on its own thread alone."""

    def __init__(self, n):
        self.busy = threading.Lock()
        self.workers = [_Worker() for _ in range(n)]

    def shutdown(self):
        """End the threads, unless a loop is using them (then they stay, idle)."""
        if self.busy.acquire(blocking=False):
            for w in self.workers:
                w.start(None, None)


def _split_axis(shape):
    """The axis to cut: the first one long enough to give every thread an even share."""
    for axis, n in enumerate(shape):
        if n >= 4 * _WORKERS:
            return axis
    return max(range(len(shape)), key=shape.__getitem__)


def parallel_for(fn, shape, size):
    """Call fn(index) for index tuples that together cover `shape` (slices along one axis),
    on up to _WORKERS threads when `size` elements are worth it; the calling thread takes
    the first part and waits for the rest."""
    global _pool
    if size < MIN_ELEMENTS or _WORKERS < 2 or not shape:  # the common small case: no split
        fn((Ellipsis,))
        return
    axis = _split_axis(shape)
    parts = min(_WORKERS, shape[axis])
    if parts < 2:
        fn((Ellipsis,))
        return
    team = _pool
    if team is None or len(team.workers) < parts - 1:
        if team is not None:
            team.shutdown()
        team = _pool = _Team(_WORKERS - 1)
    if not team.busy.acquire(blocking=False):
        fn((Ellipsis,))
        return
    try:
        n = shape[axis]
        bounds = [n * i // parts for i in range(parts + 1)]
        index = [(slice(None),) * axis + (slice(a, b),) for a, b in zip(bounds, bounds[1:])]
        helpers = team.workers[:parts - 1]
        for w, i in zip(helpers, index[1:]):
            w.start(fn, i)
        try:
            fn(index[0])
        finally:
            errors = [w.join() for w in helpers]
        for e in errors:
            if e is not None:
                raise e
    finally:
        team.busy.release()


_MIN_PRODUCT = 1 << 21         # multiply-adds below which one BLAS call beats a split


def matmul(a, b, out):
    """np.matmul(a, b, out=out) for a and b of at least 2 dims; a big product shared over the
    intra-op threads, each block one BLAS call writing its own rows -- or, for a result wider
    than tall, its own columns -- of `out`. Every thread reads the whole of the operand it
    does not cut, so the cut goes through the larger one: a convolution's (64, 288) @
    (288, 36864) cut by rows has both threads stream the 42 MB right operand and runs no
    faster on two threads than on one; cut by columns, each reads half of it."""
    m, n = a.shape[-2], b.shape[-1]
    small = max(m, n) < 2 * _WORKERS or out.size * a.shape[-1] < _MIN_PRODUCT
    if small or _WORKERS < 2 or not _blas_single:
        return np.matmul(a, b, out=out)
    if n > m:
        def columns(index):
            block = (Ellipsis, slice(None), index[0])
            np.matmul(a, b[block], out=out[block])
        parallel_for(columns, (n,), MIN_ELEMENTS)  # big enough: checked above
        return out

    def rows(index):
        block = (Ellipsis, index[0], slice(None))
        np.matmul(a[block], b, out=out[block])
    parallel_for(rows, (m,), MIN_ELEMENTS)
    return out


def contiguous(a, dtype=None):
    """np.ascontiguousarray(a, dtype), the copy split over threads."""
    if a.flags.c_contiguous and (dtype is None or a.dtype == dtype):
        return a
    out = caching_allocator.empty(a.shape, a.dtype if dtype is None else dtype)
    parallel_for(lambda i: np.copyto(out[i], a[i], casting="unsafe"), a.shape, a.size)
    return out


def get_num_threads():
    """torch.get_num_threads: the threads an intra-op loop may use."""
    return _WORKERS


_interop_threads = os.cpu_count() or 1  # recorded only: ember runs no inter-op pool


def get_num_interop_threads():
    return _interop_threads


def set_num_interop_threads(n):
    """torch.set_num_interop_threads: recorded (ember has no inter-op thread pool)."""
    global _interop_threads
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _interop_threads = n


def init_num_threads():
    """torch.init_num_threads: the intra-op pool starts on first use, so nothing to do."""


def set_num_threads(n):
    """torch.set_num_threads: how many threads intra-op loops and products use from now on
    (NumPy's BLAS stays at one thread: see the Note at the top)."""
    global _WORKERS, _pool
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    if n != _WORKERS:
        old, _pool, _WORKERS = _pool, None, n
        if old is not None:
            old.shutdown()
    _single_threaded_blas()


def _single_threaded_blas():
    """Hold NumPy's BLAS at one thread (Note at the top). Without threadpoolctl it keeps its
    own threads (OPENBLAS_NUM_THREADS=1 in the environment also holds it), and products are
    not split, so that the two pools never multiply."""
    global _blas_single
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(1, user_api="blas")
    _blas_single = True


_blas_single = False
_single_threaded_blas()
