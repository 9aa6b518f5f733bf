"""The collectives and point-to-point operations on tensors (PyTorch's distributed_c10d.py
functions), each one non-blocking MPI operation wrapped in a Work.

Tensors travel as their NumPy buffers, never pickled: a contiguous CPU tensor is handed to MPI
in place; a non-contiguous one is staged through a contiguous copy that is copied back when the
operation completes. Operations that only move data (broadcast, gather, all_to_all, send, ...)
send raw bytes, so every dtype travels, bfloat16 included. Reductions need MPI to know the
element type: 16-bit floats, which MPI has no type for, are reduced in float32 and rounded
back; bool tensors reduce with the logical operations (SUM and MAX are "or", PRODUCT and MIN
are "and", as in PyTorch). ReduceOp.AVG is a SUM followed by a division.

Uneven sizes: all_gather, gather, scatter, reduce_scatter and all_to_all take each rank's
share from the sizes of the tensors in the lists (the "v" variants of the MPI collectives),
so ranks may contribute different numbers of elements, as NCCL allows.
"""
import enum
import time

import numpy as np

import ember
from . import _mpi
from .process_group import resolve, GroupMember, warn_not_in_group
from .work import Work, wait_requests

__all__ = ["ReduceOp", "all_reduce", "broadcast", "reduce", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather",
           "scatter", "all_to_all", "all_to_all_single", "barrier", "send", "recv", "isend",
           "irecv", "P2POp", "batch_isend_irecv", "monitored_barrier"]


class ReduceOp:
    """How a reduction combines the ranks' values: ReduceOp.SUM, PRODUCT, MIN, MAX, AVG, and
    the bitwise BAND, BOR, BXOR (integer and bool tensors)."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


_R = ReduceOp.RedOpType
_BITWISE = (_R.BAND, _R.BOR, _R.BXOR)


def _mpi_op(op, dtype, op_name):
    """The MPI reduction for ReduceOp `op` on tensors of `dtype`."""
    MPI = _mpi.MPI()
    try:
        op = _R(op)
    except ValueError:
        raise ValueError(f"{op_name}: unknown reduce op {op!r}") from None
    if op in (_R.PREMUL_SUM, _R.UNUSED):
        raise ValueError(f"{op_name}: ReduceOp.{op.name} is not supported by the MPI backend")
    if dtype == ember.bool:
        return {_R.SUM: MPI.LOR, _R.AVG: MPI.LOR, _R.MAX: MPI.LOR, _R.BOR: MPI.LOR,
                _R.PRODUCT: MPI.LAND, _R.MIN: MPI.LAND, _R.BAND: MPI.LAND,
                _R.BXOR: MPI.LXOR}[op]
    if dtype.is_complex and op in (_R.MIN, _R.MAX, *_BITWISE):
        raise ValueError(f"{op_name} does not support ReduceOp.{op.name} on complex tensors")
    if op in _BITWISE and dtype.is_floating_point:
        raise RuntimeError(f"{op_name}: cannot use ReduceOp.{op.name} with non-integral "
                           f"dtype {dtype}")
    return {_R.SUM: MPI.SUM, _R.AVG: MPI.SUM, _R.PRODUCT: MPI.PROD, _R.MIN: MPI.MIN,
            _R.MAX: MPI.MAX, _R.BAND: MPI.BAND, _R.BOR: MPI.BOR, _R.BXOR: MPI.BXOR}[op]


class _Staged:
    """A tensor's elements as one flat, contiguous NumPy array that MPI reads or writes.

    A contiguous tensor is its own stage. A non-contiguous one (or, for a reduction, a 16-bit
    float one) is staged through a contiguous (float32) copy, and `write_back` copies the
    result into the tensor once the operation has completed.
    """

    def __init__(self, tensor, reduction=False):
        self.tensor = tensor.detach()
        stage = self.tensor
        if reduction and stage.dtype in (ember.float16, ember.bfloat16):
            stage = stage.float()
        elif not stage.is_contiguous():
            stage = stage.contiguous()
        self.stage = stage
        self.array = stage.detach()._np.reshape(-1)  # (bfloat16 too: numpy() refuses it)

    def raw(self):
        """The buffer as bytes, for operations that only move data."""
        return self.array.view(np.uint8)

    def typed(self):
        """[buffer, MPI datatype], for reductions."""
        return [self.array, _mpi.MPI().Datatype.fromcode(self.array.dtype.char)]

    def write_back(self):
        if self.stage is not self.tensor:
            self.tensor.copy_(self.stage)


def _check_single_tensor(param, name):
    if not isinstance(param, ember.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor but got {type(param)} instead.")


def _check_tensor_list(param, name):
    if not isinstance(param, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor] but got {type(param)} instead.")
    if not all(isinstance(p, ember.Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor] but got {type(param)} with elements of type "
                        f"{[type(p) for p in param]}.")


def _check_same_dtype(*tensors):
    dtypes = {t.dtype for group in tensors for t in
              (group if isinstance(group, (list, tuple)) else [group])}
    if len(dtypes) > 1:
        found = " and ".join(str(d) for d in dtypes)
        raise ValueError(f"Invalid usage of tensors with different dtypes. Found {found}")


def _member(group, op_name):
    """The group's ProcessGroup, or None (with PyTorch's warning) if this rank is not in it."""
    pg = resolve(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        warn_not_in_group(op_name)
        return None
    return pg


def _group_rank(pg, rank, group_rank, kind, op_name, default=None):
    """The group rank meant by a global `rank` or a `group_rank` (only one may be given)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"{op_name}: can't specify both {kind} and group_{kind}")
    else:
        if rank is None:
            if default is None:
                raise ValueError(f"{op_name}: must specify {kind} or group_{kind}")
            rank = default
        if pg is GroupMember.WORLD:
            group_rank = rank
        elif rank in pg._rank_in_group:
            group_rank = pg._rank_in_group[rank]
        else:
            raise ValueError(f"Global rank {rank} is not part of group {pg}")
    if not 0 <= group_rank < pg.size():
        raise RuntimeError(f"{op_name}: invalid {kind} rank {group_rank} (the group has "
                           f"{pg.size()} ranks)")
    return group_rank


def _issue(pg, op_name, requests, on_complete, outputs, async_op):
    """The Work of an issued operation; with async_op=False, waited for (and None)."""
    work = Work(pg, op_name, requests, on_complete, outputs)
    if async_op:
        return work
    work.wait()
    return None


def _raw_counts(tensors, itemsize):
    counts = [t.numel() * itemsize for t in tensors]
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    return counts, displs


def _flat_stage(tensors, dtype):
    """One contiguous tensor holding `tensors` one after another (a send buffer for the "v"
    collectives)."""
    if not tensors:
        return ember.empty(0, dtype=dtype)
    return ember.cat([t.detach().reshape(-1) for t in tensors])


def _unpack_into(flat, tensors):
    """Copy consecutive pieces of `flat` into `tensors` (a receive buffer's contents)."""
    offset = 0
    for t in tensors:
        n = t.numel()
        t.detach().copy_(flat[offset:offset + n].view(t.shape))
        offset += n


# ---- reductions ---------------------------------------------------------------------------

def _average(stage, n):
    if stage.dtype.is_floating_point or stage.dtype.is_complex:
        stage.div_(n)
    elif stage.dtype != ember.bool:
        stage.div_(n, rounding_mode="floor")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` across the group in place: every rank ends with the result."""
    _check_single_tensor(tensor, "tensor")
    pg = _member(group, "all_reduce")
    if pg is None:
        return None
    buf = _Staged(tensor, reduction=True)
    mpi_op = _mpi_op(op, tensor.dtype, "all_reduce")
    MPI = _mpi.MPI()
    req = pg._comm_for("all_reduce").Iallreduce(MPI.IN_PLACE, buf.typed(), mpi_op)

    def done():
        if op == ReduceOp.AVG:
            _average(buf.stage, pg.size())
        buf.write_back()
    return _issue(pg, "all_reduce", [req], done, [tensor], async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` across the group into rank `dst`'s tensor (others keep theirs)."""
    _check_single_tensor(tensor, "tensor")
    pg = _member(group, "reduce")
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst, "dst", "reduce")
    buf = _Staged(tensor, reduction=True)
    mpi_op = _mpi_op(op, tensor.dtype, "reduce")
    MPI = _mpi.MPI()
    comm = pg._comm_for("reduce")
    mine = pg.rank() == root
    if mine:
        req = comm.Ireduce(MPI.IN_PLACE, buf.typed(), mpi_op, root)
    else:
        req = comm.Ireduce(buf.typed(), None, mpi_op, root)

    def done():
        if mine:
            if op == ReduceOp.AVG:
                _average(buf.stage, pg.size())
            buf.write_back()
    return _issue(pg, "reduce", [req], done, [tensor], async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce the lists across ranks; rank i receives the reduced `input_list[i]`."""
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    _check_same_dtype(output, input_list)
    pg = _member(group, "reduce_scatter")
    if pg is None:
        return None
    n, me = pg.size(), pg.rank()
    if len(input_list) != n:
        raise RuntimeError(f"reduce_scatter: input_list has {len(input_list)} tensors, "
                           f"expected one per rank ({n})")
    if output.numel() != input_list[me].numel():
        raise RuntimeError(f"reduce_scatter: output has {output.numel()} elements but "
                           f"input_list[{me}] has {input_list[me].numel()}")
    send = _Staged(_flat_stage(input_list, output.dtype), reduction=True)
    out = _Staged(output, reduction=True)
    counts = [t.numel() for t in input_list]
    mpi_op = _mpi_op(op, output.dtype, "reduce_scatter")
    req = pg._comm_for("reduce_scatter").Ireduce_scatter(send.typed(), out.typed(), counts,
                                                         mpi_op)

    def done():
        if op == ReduceOp.AVG:
            _average(out.stage, n)
        out.write_back()
    return _issue(pg, "reduce_scatter", [req], done, [output], async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """`input` is world_size equal blocks (along dim 0, or flat); rank i receives the
    reduction of block i."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _check_same_dtype(output, input)
    pg = _member(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    n = pg.size()
    if input.numel() != output.numel() * n:
        raise RuntimeError(f"reduce_scatter_tensor: input has {input.numel()} elements; "
                           f"expected output.numel() * world_size = {output.numel()} * {n}")
    send = _Staged(input, reduction=True)
    out = _Staged(output, reduction=True)
    mpi_op = _mpi_op(op, output.dtype, "reduce_scatter_tensor")
    req = pg._comm_for("reduce_scatter_tensor").Ireduce_scatter_block(send.typed(),
                                                                      out.typed(), mpi_op)

    def done():
        if op == ReduceOp.AVG:
            _average(out.stage, n)
        out.write_back()
    return _issue(pg, "reduce_scatter_tensor", [req], done, [output], async_op)


# ---- data movement ------------------------------------------------------------------------

def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank `src`'s tensor into every rank's `tensor`."""
    _check_single_tensor(tensor, "tensor")
    pg = _member(group, "broadcast")
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "src", "broadcast")
    buf = _Staged(tensor)
    req = pg._comm_for("broadcast").Ibcast(buf.raw(), root)
    done = buf.write_back if pg.rank() != root else None
    return _issue(pg, "broadcast", [req], done, [tensor], async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank receives every rank's `tensor`: `tensor_list[i]` gets rank i's. The tensors
    in the list may differ in size; rank i's `tensor` must match `tensor_list[i]`."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    _check_same_dtype(tensor_list, tensor)
    pg = _member(group, "all_gather")
    if pg is None:
        return None
    n, me = pg.size(), pg.rank()
    if len(tensor_list) != n:
        raise RuntimeError(f"all_gather: invalid output tensor list (expected length {n}, got "
                           f"{len(tensor_list)})")
    if tensor_list[me].numel() != tensor.numel():
        raise RuntimeError(f"all_gather: invalid tensor size at index {me} (expected "
                           f"{tuple(tensor.shape)}, got {tuple(tensor_list[me].shape)})")
    send = _Staged(tensor)
    flat = ember.empty(sum(t.numel() for t in tensor_list), dtype=tensor.dtype)
    counts, displs = _raw_counts(tensor_list, tensor.element_size())
    recv = _Staged(flat)
    req = pg._comm_for("all_gather").Iallgatherv(send.raw(),
                                                 [recv.raw(), counts, displs, _mpi.MPI().BYTE])
    return _issue(pg, "all_gather", [req], lambda: _unpack_into(flat, tensor_list),
                  tensor_list, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Rank i's `input_tensor` lands in block i of `output_tensor` (concatenated along dim 0,
    or stacked: output shape (world_size * n, ...) or (world_size, n, ...))."""
    _check_single_tensor(output_tensor, "output_tensor")
    _check_single_tensor(input_tensor, "input_tensor")
    _check_same_dtype(output_tensor, input_tensor)
    pg = _member(group, "all_gather_into_tensor")
    if pg is None:
        return None
    n = pg.size()
    if output_tensor.numel() != input_tensor.numel() * n:
        raise RuntimeError(f"all_gather_into_tensor: output tensor has "
                           f"{tuple(output_tensor.shape)}; expected world_size ({n}) times "
                           f"the input's {tuple(input_tensor.shape)} elements")
    send = _Staged(input_tensor)
    recv = _Staged(output_tensor)
    req = pg._comm_for("all_gather_into_tensor").Iallgather(send.raw(), recv.raw())
    return _issue(pg, "all_gather_into_tensor", [req], recv.write_back, [output_tensor],
                  async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank `dst` receives every rank's `tensor` in `gather_list` (sizes may differ)."""
    _check_single_tensor(tensor, "tensor")
    pg = _member(group, "gather")
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst, "dst", "gather", default=0)
    n, me = pg.size(), pg.rank()
    comm = pg._comm_for("gather")
    send = _Staged(tensor)
    MPI = _mpi.MPI()
    if me == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, "gather_list")
        _check_same_dtype(gather_list, tensor)
        if len(gather_list) != n:
            raise RuntimeError(f"gather: gather_list has {len(gather_list)} tensors, "
                               f"expected one per rank ({n})")
        flat = ember.empty(sum(t.numel() for t in gather_list), dtype=tensor.dtype)
        counts, displs = _raw_counts(gather_list, tensor.element_size())
        recv = _Staged(flat)
        req = comm.Igatherv(send.raw(), [recv.raw(), counts, displs, MPI.BYTE], root)
        return _issue(pg, "gather", [req], lambda: _unpack_into(flat, gather_list),
                      gather_list, async_op)
    if gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    req = comm.Igatherv(send.raw(), None, root)
    return _issue(pg, "gather", [req], None, [], async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank `src` sends `scatter_list[i]` to rank i, which receives it in `tensor`."""
    _check_single_tensor(tensor, "tensor")
    pg = _member(group, "scatter")
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "src", "scatter", default=0)
    n, me = pg.size(), pg.rank()
    comm = pg._comm_for("scatter")
    recv = _Staged(tensor)
    MPI = _mpi.MPI()
    if me == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, "scatter_list")
        _check_same_dtype(scatter_list, tensor)
        if len(scatter_list) != n:
            raise RuntimeError(f"scatter: scatter_list has {len(scatter_list)} tensors, "
                               f"expected one per rank ({n})")
        if scatter_list[me].numel() != tensor.numel():
            raise RuntimeError(f"scatter: scatter_list[{me}] has "
                               f"{scatter_list[me].numel()} elements but the output tensor "
                               f"has {tensor.numel()}")
        send = _Staged(_flat_stage(scatter_list, tensor.dtype))
        counts, displs = _raw_counts(scatter_list, tensor.element_size())
        req = comm.Iscatterv([send.raw(), counts, displs, MPI.BYTE], recv.raw(), root)
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        req = comm.Iscatterv(None, recv.raw(), root)
    return _issue(pg, "scatter", [req], recv.write_back, [tensor], async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank i sends `input_tensor_list[j]` to rank j, which receives it in
    `output_tensor_list[i]` (sizes may differ)."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _check_same_dtype(output_tensor_list, input_tensor_list)
    pg = _member(group, "all_to_all")
    if pg is None:
        return None
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise RuntimeError(f"all_to_all: the tensor lists must have one tensor per rank ({n}), "
                           f"got {len(output_tensor_list)} outputs and "
                           f"{len(input_tensor_list)} inputs")
    dtype = input_tensor_list[0].dtype
    send = _Staged(_flat_stage(input_tensor_list, dtype))
    flat = ember.empty(sum(t.numel() for t in output_tensor_list), dtype=dtype)
    recv = _Staged(flat)
    size = input_tensor_list[0].element_size()
    scounts, sdispls = _raw_counts(input_tensor_list, size)
    rcounts, rdispls = _raw_counts(output_tensor_list, size)
    MPI = _mpi.MPI()
    req = pg._comm_for("all_to_all").Ialltoallv([send.raw(), scounts, sdispls, MPI.BYTE],
                                                [recv.raw(), rcounts, rdispls, MPI.BYTE])
    return _issue(pg, "all_to_all", [req], lambda: _unpack_into(flat, output_tensor_list),
                  output_tensor_list, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """all_to_all on one tensor split along dim 0: equal blocks, or rows given by the split
    sizes (rank i's input rows input_split_sizes[j] go to rank j)."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _check_same_dtype(output, input)
    pg = _member(group, "all_to_all_single")
    if pg is None:
        return None
    n = pg.size()
    size = input.element_size()

    def split(t, sizes, what):
        rows = t.shape[0] if t.dim() > 0 else 1
        row = t.numel() // rows if rows else 0
        if sizes is None or len(sizes) == 0:
            if rows % n:
                raise RuntimeError(f"all_to_all_single: {what} dim 0 ({rows}) is not "
                                   f"divisible by the world size ({n})")
            sizes = [rows // n] * n
        if len(sizes) != n or sum(sizes) != rows:
            raise RuntimeError(f"all_to_all_single: {what} split sizes {list(sizes)} must "
                               f"have {n} entries summing to dim 0 ({rows})")
        counts = [s * row * size for s in sizes]
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
        return counts, displs
    scounts, sdispls = split(input, input_split_sizes, "input")
    rcounts, rdispls = split(output, output_split_sizes, "output")
    send = _Staged(input)
    recv = _Staged(output)
    MPI = _mpi.MPI()
    req = pg._comm_for("all_to_all_single").Ialltoallv(
        [send.raw(), scounts, sdispls, MPI.BYTE], [recv.raw(), rcounts, rdispls, MPI.BYTE])
    return _issue(pg, "all_to_all_single", [req], recv.write_back, [output], async_op)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group has reached the barrier."""
    pg = _member(group, "barrier")
    if pg is None:
        return None
    req = pg._comm_for("barrier").Ibarrier()
    work = Work(pg, "barrier", [req])
    if async_op:
        return work
    work.wait(timeout)
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that failed to reach it: rank 0 waits for a message
    from each other rank until the timeout, then reports the missing ones (the first, or all
    of them with `wait_all_ranks`) in a RuntimeError; otherwise it releases them all."""
    pg = _member(group, "monitored_barrier")
    if pg is None:
        return None
    limit = timeout if timeout is not None else pg._timeout
    seconds = limit.total_seconds() if hasattr(limit, "total_seconds") else float(limit)
    deadline = time.monotonic() + seconds
    pg._comm_for("monitored_barrier")
    comm = pg._monitor
    token = np.zeros(1, np.uint8)
    if pg.rank() != 0:
        comm.Isend(token, 0, 0).Wait()
        ack = comm.Irecv(np.zeros(1, np.uint8), 0, 1)
        wait_requests([ack], deadline, lambda _: (
            f"[rank {pg._global_rank}] monitored_barrier: rank {pg._ranks[0]} did not "
            f"release the barrier within {limit}"))
        return None
    pending = {r: comm.Irecv(np.zeros(1, np.uint8), r, 0) for r in range(1, pg.size())}
    missing = []
    while pending:
        for r in [r for r, req in pending.items() if req.Test()]:
            del pending[r]
        if not pending:
            break
        if time.monotonic() > deadline:
            missing = sorted(pending)
            if not wait_all_ranks:
                missing = missing[:1]
            for req in pending.values():
                req.Cancel()
            break
        time.sleep(1e-4)
    if missing:
        ms = int(seconds * 1000)
        names = ", ".join(str(pg._ranks[r]) for r in missing)
        who = f"Rank {names}" if len(missing) == 1 else f"Ranks {names}"
        raise RuntimeError(f"{who} failed to pass monitoredBarrier in {ms} ms")
    for r in range(1, pg.size()):
        comm.Isend(token, r, 1).Wait()
    return None


# ---- point to point -----------------------------------------------------------------------

def _peer(pg, rank, group_rank, kind, op_name):
    peer = _group_rank(pg, rank, group_rank, kind, op_name)
    if peer == pg.rank():
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the "
                         "rank of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending `tensor` to rank `dst`; returns a Work (do not modify `tensor` until it
    has completed)."""
    _check_single_tensor(tensor, "tensor")
    pg = _member(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "destination", "isend")
    buf = _Staged(tensor)
    req = pg._comm_for("isend").Isend(buf.raw(), peer, tag)
    return Work(pg, "send", [req], None, [tensor])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into `tensor` from rank `src` (any rank if None); returns a Work."""
    _check_single_tensor(tensor, "tensor")
    pg = _member(group, "irecv")
    if pg is None:
        return None
    MPI = _mpi.MPI()
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = _peer(pg, src, group_src, "source", "irecv")
    buf = _Staged(tensor)
    req = pg._comm_for("irecv").Irecv(buf.raw(), peer, tag)
    return Work(pg, "recv", [req], buf.write_back, [tensor], peer=peer)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst`; returns once the buffer may be reused."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (any rank if None); returns the sender's rank,
    or -1 if this rank is not in the group."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    return work._source_rank()


class P2POp:
    """One point-to-point operation for batch_isend_irecv: `op` is isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed"
                             ".isend`` or ``torch.distributed.irecv``.")
        _check_single_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group
        self.tag, self.group_peer = tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Start every operation of the list; returns their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works
