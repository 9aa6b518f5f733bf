"""torch.nn.parallel: DataParallel (replicas in one process) and DistributedDataParallel
(one process per replica, over ember.distributed), with the pieces DataParallel is built
from: scatter, replicate, parallel_apply, gather."""
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import scatter, gather, scatter_kwargs
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel",
           "DataParallel", "DistributedDataParallel"]
