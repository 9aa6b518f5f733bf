"""A rank that fails while the other waits in a collective; run under mpiexec or the launcher
with the failure mode as argument. The job must end, non-zero, naming rank 1."""
import os
import signal
import sys
import time
from datetime import timedelta

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group("gloo", timeout=timedelta(seconds=3))
rank = dist.get_rank()
print(f"rank {rank} started", flush=True)
if rank == 1:
    if mode == "raise":
        raise ValueError("rank one is broken")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "exit":
        sys.exit(0)
    if mode in ("stuck", "monitored"):
        time.sleep(60)
if mode == "monitored":
    dist.monitored_barrier(timeout=timedelta(seconds=2))
dist.all_reduce(ember.ones(4))
print(f"rank {rank} finished", flush=True)
