"""torch.distributed.algorithms: the generic join context manager for uneven inputs."""
from .join import Join, Joinable, JoinHook
