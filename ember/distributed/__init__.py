"""torch.distributed over MPI: process groups, collectives on tensors and objects, async work
handles, and a torchrun-style launcher (`python -m ember.distributed.run`).

    import ember.distributed as dist
    dist.init_process_group("gloo")          # or "mpi": the same MPI engine
    t = ember.ones(3) * dist.get_rank()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

The engine is MPI through mpi4py (`pip install 'ember[distributed]'` installs mpi4py and the
mpich wheel, which brings mpiexec); it is imported on first use, so `import ember` never
starts MPI. The ranks are the processes mpiexec started: run a script with
`python -m ember.distributed.run --nproc-per-node 2 train.py` (torchrun's interface) or
`mpiexec -n 2 python train.py`. PyTorch's "gloo" backend name maps to the MPI engine on CPU.

Processes started without mpiexec (mp.spawn, torchrun-style MASTER_ADDR/MASTER_PORT/RANK/
WORLD_SIZE, init_method="tcp://..." or "file://...", or store=) meet through a store
(store.py, rendezvous.py) and are joined into one MPI world by ember's own process manager
(_pmi.py).

Files: process_group.py (init, groups, ranks), collectives.py (tensor collectives and
point-to-point), objects.py (object collectives), work.py (Work handles and the timeout that
keeps waits from hanging), failure.py (how a failing rank ends the job), run.py (launcher),
algorithms/join.py (uneven inputs).
"""
from .process_group import (Backend, ProcessGroup, GroupMember, group, default_pg_timeout,
                            init_process_group, destroy_process_group, new_group,
                            is_initialized, is_available, is_mpi_available, is_gloo_available,
                            is_nccl_available, is_torchelastic_launched, get_rank,
                            get_world_size, get_backend, get_process_group_ranks,
                            get_global_rank, get_group_rank, get_node_local_rank)
from .collectives import (ReduceOp, all_reduce, broadcast, reduce, all_gather,
                          all_gather_into_tensor, reduce_scatter, reduce_scatter_tensor, gather,
                          scatter, all_to_all, all_to_all_single, barrier, monitored_barrier,
                          send, recv, isend, irecv, P2POp, batch_isend_irecv)
from .objects import (broadcast_object_list, all_gather_object, gather_object,
                      scatter_object_list, send_object_list, recv_object_list)
from .work import Work, DistError, DistBackendError, DistStoreError, DistNetworkError
from .store import Store, TCPStore, FileStore, HashStore, PrefixStore
from .rendezvous import rendezvous, register_rendezvous_handler
from . import algorithms

reduce_op = ReduceOp
