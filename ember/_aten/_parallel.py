"""Memory-bound kernels on every core: a small at::parallel_for for NumPy loops.

PyTorch splits each big elementwise loop and layout copy over its intra-op threads. NumPy runs
them on one core, but releases the GIL inside its copy and ufunc loops, so the slices of one
array handled by a few Python threads at once do run in parallel. Each element is still
computed by the same loop, in the same order, so results are bit-for-bit those of one call.
Small arrays stay on the calling thread: handing work over costs tens of microseconds.
"""
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

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
_MIN_ELEMENTS = 1 << 17       # below this, one thread is faster than waking others
_pool = None


def _forget_pool():
    # a forked child (a DataLoader worker) inherits the pool object but not its threads
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


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
    if size < _MIN_ELEMENTS or _WORKERS < 2 or not shape:  # the common small case: no split
        fn((Ellipsis,))
        return
    axis = _split_axis(shape)
    parts = min(_WORKERS, shape[axis])
    if parts < 2:
        fn((Ellipsis,))
        return
    if _pool is None:
        _pool = ThreadPoolExecutor(_WORKERS - 1, "ember-intraop", initializer=quiet_floating_point)
    n = shape[axis]
    bounds = [n * i // parts for i in range(parts + 1)]
    index = [(slice(None),) * axis + (slice(a, b),) for a, b in zip(bounds, bounds[1:])]
    futures = [_pool.submit(fn, i) for i in index[1:]]
    try:
        fn(index[0])
    finally:
        for f in futures:
            f.result()


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
    """torch.set_num_threads: how many threads intra-op loops use from now on."""
    global _WORKERS, _pool
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    if n != _WORKERS:
        old, _pool, _WORKERS = _pool, None, n
        if old is not None:
            old.shutdown(wait=False)
    _limit_blas_threads(n)


def _limit_blas_threads(n):
    """NumPy's BLAS follows set_num_threads, as MKL/OpenMP follow torch's, so that GEMMs and
    ember's own threads never ask for more cores than the user allowed."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        warnings.warn("set_num_threads: NumPy's BLAS keeps its own thread count because "
                      "threadpoolctl is not installed (pip install threadpoolctl)", stacklevel=3)
        return
    threadpool_limits(n, user_api="blas")
