"""ember.multiprocessing: Python's multiprocessing, with tensors that cross processes uncopied.

Like torch.multiprocessing, this is the standard module (`import ember.multiprocessing as mp` is a
drop-in for `import multiprocessing as mp`) plus reductions registered with its pickler: a tensor
put on a queue or passed to a spawned process is moved into shared memory (shared_memory.py) and
the receiver maps the same pages (reductions.py). `SocketQueue` (queue.py) is the fast path the
DataLoader uses for results. `spawn` / `start_processes` (spawn.py) run fn(i, *args) in N
processes and raise the first failure in the parent.

Only the 'file_descriptor' strategy exists: its memory files are anonymous, so the name-based
'file_system' strategy, whose point is to avoid holding descriptors, has no counterpart.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .queue import SocketQueue
from .reductions import init_reductions
from .spawn import (spawn, start_processes, ProcessContext, SpawnContext,
                    ProcessRaisedException, ProcessExitedException)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "SocketQueue"] + multiprocessing.__all__

_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor"}


def set_sharing_strategy(new_strategy):
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_all_sharing_strategies}")


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return _all_sharing_strategies


init_reductions()
