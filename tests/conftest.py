"""Suite-wide hygiene: MPICH's shared-memory segments that an aborted MPI job leaves behind.

A rank killed or aborted on purpose (the failure tests) dies before MPICH unlinks the segment its
node's ranks share, and each such segment is a 2 MiB file in /dev/shm, the RAM-backed filesystem.
After each multi-process test, the segments it created that no live process maps any more are
removed, so that repeated runs do not fill /dev/shm.
"""
import os

import pytest

from _mpich_shm import SHM, mapped_segments, mpich_segments

_MPI_MODULES = ("distributed", "multiprocessing_spawn")


@pytest.fixture(autouse=True)
def _remove_leaked_mpich_segments(request):
    if not any(part in request.module.__name__ for part in _MPI_MODULES):
        yield
        return
    before = mpich_segments()
    yield
    leaked = mpich_segments() - before - mapped_segments()
    for name in leaked:
        try:
            os.unlink(os.path.join(SHM, name))
        except FileNotFoundError:
            pass
