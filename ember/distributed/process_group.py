"""Process groups: who takes part in a collective (PyTorch's c10d ProcessGroup and the
bookkeeping of distributed_c10d.py), over MPI communicators.

`init_process_group` creates the default group, WORLD, from MPI_COMM_WORLD. Two ways in:
- the processes were started by mpiexec (or `python -m ember.distributed.run`): MPI has
  already agreed on ranks and world size, and what torchrun's environment says (RANK,
  WORLD_SIZE, init_method's `?rank=&world_size=`) is checked against MPI's answer;
- they were started some other way (mp.spawn, by hand with torchrun's variables): they meet
  as PyTorch's do, through a store from `store=` or the init_method (env:// by default, with
  MASTER_ADDR/MASTER_PORT; tcp://, file://), and _pmi.py then joins them into one MPI world
  before MPI is initialised (Note [An MPI world without mpiexec]).

`new_group(ranks)` makes a sub-communicator (MPI_Comm_create); a rank outside the group gets
GroupMember.NON_GROUP_MEMBER, as in PyTorch. Collectives take *global* ranks for src/dst and
translate them to ranks within the group.

Backends: "mpi" is the engine. "gloo", PyTorch's CPU backend, is accepted as a name for the
same MPI engine, so that programs written for CPU PyTorch run unchanged. "nccl" needs GPUs,
which ember does not drive yet.
"""
import os
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from datetime import timedelta
from urllib.parse import urlparse, parse_qs

from . import _mpi, failure
from .work import DistBackendError

__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "default_pg_timeout",
           "init_process_group", "destroy_process_group", "new_group", "is_initialized",
           "is_available", "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
           "get_process_group_ranks", "get_global_rank", "get_group_rank",
           "get_node_local_rank"]

default_pg_timeout = timedelta(minutes=30)

# The environment variables that MPI launchers set for the global rank, world size and local
# rank: MPICH/Hydra (PMI_*, MPI_LOCALRANKID), Open MPI (OMPI_COMM_WORLD_*), PMIx, Slurm.
# torchrun's RANK, WORLD_SIZE and LOCAL_RANK come first where a launcher set them.
MPI_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
MPI_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
MPI_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")


def launcher_env(names):
    """The first of the environment variables `names` that is set, as an int, or None."""
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return int(value)
    return None


class Backend(str):
    """A backend name: Backend("GLOO") == Backend.GLOO == "gloo"."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A set of ranks that communicate: one MPI communicator, the global ranks it holds (in
    group-rank order), the process group's timeout, and a count of operations issued."""

    def __init__(self, comm, ranks, backend, timeout, group_name, global_rank):
        self._comm = comm
        self._ranks = list(ranks)
        self._rank_in_group = {r: i for i, r in enumerate(self._ranks)}
        self._backend = backend
        self._timeout = timeout
        self.group_name = group_name
        self._global_rank = global_rank
        self._seq = 0
        self._broken = None
        self._destroyed = False
        self._monitor = comm.Dup()   # monitored_barrier's own communicator

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return self._backend

    @property
    def group_desc(self):
        return "default_pg" if self.group_name == "0" else "undefined"

    def __repr__(self):
        return (f"<ember.distributed.ProcessGroup {self.group_name!r} ({self._backend}) "
                f"ranks={self._ranks}>")

    def _next_seq(self):
        self._seq += 1
        return self._seq

    def _comm_for(self, op_name):
        """The communicator to issue `op_name` on, once the group is known to be usable."""
        if self._destroyed:
            raise ValueError("Invalid process group specified or has been destroyed.")
        if self._broken is not None:
            raise DistBackendError(f"ember.distributed: cannot run {op_name}: process group "
                                   f"{self.group_name!r} is broken by an earlier failure: "
                                   f"{self._broken}")
        return self._comm



class GroupMember:
    """WORLD: the default group (None before init_process_group). NON_GROUP_MEMBER: what
    new_group returns on ranks that are not in the new group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember  # dist.group.WORLD

_groups = []          # every live ProcessGroup, WORLD first
_group_count = 0


def is_available():
    """True if the MPI engine (mpi4py) is installed."""
    return _mpi.is_available()


def is_mpi_available():
    return _mpi.is_available()


def is_gloo_available():
    """"gloo" is served by the MPI engine."""
    return _mpi.is_available()


def is_nccl_available():
    return False


def is_torchelastic_launched():
    """True inside a process started by torchrun or `python -m ember.distributed.run`."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    return GroupMember.WORLD is not None


def _engine_name(backend):
    if backend is None:
        return Backend.GLOO
    name = Backend(backend)
    if ":" in name:     # "cpu:gloo,cuda:nccl": a backend per device; ember runs the CPU one
        per_device = dict(part.split(":", 1) for part in name.split(","))
        name = Backend(per_device.get("cpu", next(iter(per_device.values()))))
    if name in (Backend.MPI, Backend.GLOO):
        return name
    if name == Backend.NCCL:
        raise RuntimeError("ember.distributed has no NCCL backend: ember runs on CPU; use "
                           "backend='gloo' or 'mpi' (both run over MPI)")
    raise ValueError(f"Invalid backend: '{backend}' (ember.distributed supports 'mpi', and "
                     "'gloo' as a name for the same MPI engine)")


def _expected_rank_and_size(init_method, world_size, rank):
    """What the caller and the launcher's environment say the rank and world size are."""
    if init_method is not None and init_method != "env://":
        url = urlparse(init_method)
        if url.scheme not in ("env", "tcp", "file"):
            raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
        query = parse_qs(url.query)
        if "rank" in query and rank == -1:
            rank = int(query["rank"][0])
        if "world_size" in query and world_size == -1:
            world_size = int(query["world_size"][0])
    if world_size == -1:
        world_size = launcher_env(("WORLD_SIZE",))
    if rank == -1:
        rank = launcher_env(("RANK",))
    return (None if rank is None or rank < 0 else rank,
            None if world_size is None or world_size < 0 else world_size)


def _launched_by_mpi():
    """True in a process that an MPI launcher (mpiexec, srun, ...) started."""
    return (launcher_env(MPI_RANK_VARS) is not None or
            any(os.environ.get(v) for v in ("PMI_FD", "PMI_PORT", "PMIX_NAMESPACE")))


def _rendezvous(init_method, store, world_size, rank, timeout):
    """(store, rank, world_size) from a store argument or the init_method URL."""
    if store is not None:
        if world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if rank < 0:
            raise ValueError("rank must be non-negative if using store")
        return store, rank, world_size
    from .rendezvous import rendezvous
    return next(rendezvous(init_method or "env://", rank, world_size, timeout=timeout))


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Create the default process group.

    `backend` is "mpi" or "gloo" (the same MPI engine); `timeout` (a timedelta, 30 minutes by
    default) bounds every wait, the rendezvous included. Under mpiexec, `world_size` and
    `rank` (or WORLD_SIZE and RANK from the launcher) must agree with MPI's. Otherwise, with
    a world of more than one rank (or a `store`), the ranks meet through the store or the
    init_method and become one MPI world; MPI is initialised once per process, so a later
    init_process_group in the same process must ask for the same world.
    """
    global _group_count
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{timeout!r}")
    name = _engine_name(backend)
    expected_rank, expected_size = _expected_rank_and_size(init_method, world_size, rank)
    if not (_launched_by_mpi() or _mpi.is_initialized()) and (
            (expected_size or 0) > 1 or store is not None):
        # processes started without mpiexec (mp.spawn, by hand): meet through the store,
        # then MPI_Init joins them into one world (Note [An MPI world without mpiexec])
        store, expected_rank, expected_size = _rendezvous(init_method, store, world_size, rank,
                                                          timeout or default_pg_timeout)
        from . import _pmi
        _pmi.join_world(store, expected_rank, expected_size,
                        (timeout or default_pg_timeout).total_seconds())
    MPI = _mpi.MPI()
    world = MPI.COMM_WORLD
    mpi_size, mpi_rank = world.Get_size(), world.Get_rank()
    if expected_size is not None and expected_size != mpi_size:
        if mpi_size == 1:
            raise RuntimeError(
                f"init_process_group: world_size is {expected_size} but MPI started this "
                "process alone. Start the ranks together (`python -m ember.distributed.run "
                f"--nproc-per-node {expected_size} script.py`, `mpiexec -n {expected_size} "
                "python script.py`, or mp.spawn), or give every rank the rendezvous "
                "(MASTER_ADDR/MASTER_PORT, init_method or store) before MPI is first used")
        raise ValueError(f"init_process_group: world_size={expected_size} does not match the "
                         f"{mpi_size} processes MPI started")
    if expected_rank is not None and expected_rank != mpi_rank:
        raise ValueError(f"init_process_group: rank={expected_rank} does not match rank "
                         f"{mpi_rank} that MPI gave this process")
    _group_count = 0
    pg = ProcessGroup(world.Dup(), range(mpi_size), name, timeout or default_pg_timeout,
                      group_name or "0", mpi_rank)
    GroupMember.WORLD = pg
    _groups.append(pg)
    if mpi_size > 1:
        failure.abort_on_uncaught_exception()
        failure.watch_exits(world)


def _default_group():
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return GroupMember.WORLD


def resolve(group):
    """The ProcessGroup for `group` (None means WORLD); NON_GROUP_MEMBER stays as it is."""
    if group is None or group is GroupMember.WORLD:
        return _default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return group
    if not isinstance(group, ProcessGroup):
        raise ValueError(f"Invalid process group specified: {group!r}")
    _default_group()
    if group._destroyed:
        raise ValueError("Invalid process group specified or has been destroyed.")
    return group


def destroy_process_group(group=None):
    """Free `group`'s communicator; with no argument (or WORLD), every group and the default
    one, after which init_process_group may be called again."""
    global _group_count
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group is None or group is GroupMember.WORLD:
        if GroupMember.WORLD is None:
            raise AssertionError("Process group cannot be None")
        for pg in _groups:
            _free(pg)
        _groups.clear()
        GroupMember.WORLD = None
        _group_count = 0
        return
    pg = resolve(group)
    _free(pg)
    _groups.remove(pg)


def _free(pg):
    if not pg._destroyed:
        pg._destroyed = True
        pg._comm.Free()
        pg._monitor.Free()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A group of the given global ranks. Every rank of the default group must call it (with
    use_local_synchronization=True, only the members); non-members get NON_GROUP_MEMBER."""
    global _group_count
    world = _default_group()
    size = world.size()
    if backend is not None:
        _engine_name(backend)
    if ranks is None or len(ranks) == 0:
        ranks = list(range(size))
    else:
        ranks = list(ranks)
        if len(ranks) > size:
            raise ValueError("the new group's world size should be less or equal to the world "
                             "size set by init_process_group")
        for r in ranks:
            if not isinstance(r, int) or r < 0 or r >= size:
                raise ValueError(f"The new group's rank should be within the world_size set "
                                 f"by init_process_group (got rank {r}, world size {size})")
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"new_group: ranks must be distinct, got {ranks}")
        if sort_ranks:
            ranks = sorted(ranks)
    member = world._global_rank in ranks
    if use_local_synchronization and not member:
        return GroupMember.NON_GROUP_MEMBER
    mpi_group = world._comm.Get_group().Incl(ranks)
    if use_local_synchronization:
        comm = world._comm.Create_group(mpi_group)
    else:
        comm = world._comm.Create(mpi_group)
    mpi_group.Free()
    _group_count += 1
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, world._backend, timeout or world._timeout,
                      str(_group_count), world._global_rank)
    _groups.append(pg)
    return pg


def get_backend(group=None):
    pg = resolve(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend)


def get_rank(group=None):
    """This process's rank in `group` (the default group if None); -1 if not a member."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    pg = resolve(group)
    return pg.rank()


def get_world_size(group=None):
    """The number of processes in `group`; -1 if this process is not a member."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_process_group_ranks(group):
    """The global ranks of `group`, in group-rank order."""
    return list(resolve(group)._ranks)


def get_global_rank(group, group_rank):
    pg = resolve(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = resolve(group)
    if global_rank not in pg._rank_in_group:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._rank_in_group[global_rank]


def get_node_local_rank(fallback_rank=None):
    """This process's rank among those on its machine (LOCAL_RANK, or what mpiexec set)."""
    local = launcher_env(("LOCAL_RANK",) + MPI_LOCAL_RANK_VARS)
    if local is not None:
        return local
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def warn_not_in_group(op_name):
    rank = -1 if GroupMember.WORLD is None else GroupMember.WORLD._global_rank
    warnings.warn(f"Running {op_name} on global rank {rank} which does not belong to the "
                  "given group.", stacklevel=_user_stacklevel())
