"""Every collective of ember.distributed against a NumPy reference, run by each rank under
`mpiexec -n N` (N = 2 or 3). Every rank's input is a known function of its rank, so each rank
computes the expected result of every collective itself. Prints "rank R ok: K checks" at the
end; any failed check raises, which aborts the job (failure.py) and fails the test."""
import warnings

import numpy as np

import ember
import ember.distributed as dist
from ember.utils.data import DistributedSampler

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
checks = 0


def data(r, n, dtype=np.float32):
    """Rank r's input: n values in [-3, 3], distinct per rank."""
    return ((np.arange(n) * (r + 2) + 3 * r) % 7 - 3).astype(dtype)


def tensor(array):
    return ember.from_numpy(np.array(array))  # a copy: collectives write in place


def check(got, want, what, rtol=0, atol=0):
    global checks
    got = got.numpy() if isinstance(got, ember.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if rtol or atol:
        ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    else:
        ok = np.array_equal(got, want)
    assert ok, f"rank {rank}: {what}: got {got}, want {want}"
    checks += 1


def raises(exc, fn, what):
    global checks
    try:
        fn()
    except exc:
        checks += 1
        return
    raise AssertionError(f"rank {rank}: {what} did not raise {exc.__name__}")


everyone = [data(r, 5) for r in range(world)]
R = dist.ReduceOp

# ---- all_reduce: ops x dtypes, async handles ---------------------------------------------
numpy_ops = {R.SUM: np.sum, R.PRODUCT: np.prod, R.MIN: np.min, R.MAX: np.max}
for dtype in (np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8):
    for op, fn in numpy_ops.items():
        values = [data(r, 5).astype(dtype) if dtype != np.uint8 else
                  (data(r, 5) + 3).astype(dtype) for r in range(world)]
        t = tensor(values[rank])
        work = dist.all_reduce(t, op=op, async_op=True)
        assert isinstance(work, dist.Work)
        assert work.wait() is True and work.is_completed() and work.is_success()
        assert work.result()[0] is t
        check(t, fn(np.stack(values), axis=0).astype(dtype), f"all_reduce {op.name} {dtype}")
for dtype in (np.float32, np.float64):
    t = tensor(everyone[rank].astype(dtype))
    dist.all_reduce(t, op=R.AVG)
    check(t, np.mean(np.stack(everyone), 0).astype(dtype), f"all_reduce AVG {dtype}",
          rtol=1e-6)
for edtype in (ember.float16, ember.bfloat16):
    t = tensor(everyone[rank]).to(edtype)
    dist.all_reduce(t)
    assert t.dtype == edtype
    check(t.float(), np.sum(np.stack(everyone), 0), f"all_reduce SUM {edtype}", atol=1e-2)
ints = [np.array([r + 1, 2 * r + 3, 12], np.int64) for r in range(world)]
for op, fn in ((R.BAND, np.bitwise_and.reduce), (R.BOR, np.bitwise_or.reduce),
               (R.BXOR, np.bitwise_xor.reduce)):
    t = tensor(ints[rank])
    dist.all_reduce(t, op=op)
    check(t, fn(np.stack(ints), axis=0), f"all_reduce {op.name}")
flags = [np.array([r == 0, False, True]) for r in range(world)]
for op, want in ((R.SUM, np.any(flags, 0)), (R.MAX, np.any(flags, 0)),
                 (R.MIN, np.all(flags, 0)), (R.PRODUCT, np.all(flags, 0))):
    t = tensor(flags[rank])
    dist.all_reduce(t, op=op)
    check(t, want, f"all_reduce bool {op.name}")
c = tensor(everyone[rank].astype(np.complex64) * (1 + 1j))
dist.all_reduce(c)
check(c, np.sum(np.stack(everyone), 0) * (1 + 1j), "all_reduce complex SUM")
raises(ValueError, lambda: dist.all_reduce(tensor(np.ones(2, np.complex64)), op=R.MAX),
       "MAX on complex")
raises(RuntimeError, lambda: dist.all_reduce(tensor(np.ones(2, np.float32)), op=R.BAND),
       "BAND on float")
raises(TypeError, lambda: dist.all_reduce([1, 2]), "all_reduce on a list")
# non-contiguous: a transposed tensor and a strided slice
base = tensor(np.stack([data(rank, 4), data(rank + 5, 4)]))         # (2, 4)
view = base.t()                                                      # (4, 2), not contiguous
dist.all_reduce(view)
want = np.sum([np.stack([data(r, 4), data(r + 5, 4)]) for r in range(world)], 0)
check(base, want, "all_reduce transposed (written back through the view)")
big = tensor(np.zeros(10, np.float32))
strided = big[::2]
strided.copy_(tensor(data(rank, 5)))
dist.all_reduce(strided, op=R.MAX)
want = np.zeros(10, np.float32)
want[::2] = np.max(np.stack(everyone), 0)
check(big, want, "all_reduce on a strided slice")
# several in flight at once, waited in reverse order
works, ts = [], []
for k in range(4):
    ts.append(tensor(data(rank, 3 + k)))
    works.append(dist.all_reduce(ts[-1], async_op=True))
for k in reversed(range(4)):
    works[k].wait()
    check(ts[k], np.sum([data(r, 3 + k) for r in range(world)], 0), f"async all_reduce #{k}")

# ---- broadcast / reduce ------------------------------------------------------------------
src = world - 1
t = tensor(data(rank, 6, np.float64))
dist.broadcast(t, src=src)
check(t, data(src, 6, np.float64), "broadcast")
t = tensor(np.zeros((3, 2), np.int16)).t()
if rank == src:
    t.copy_(tensor(np.arange(6, dtype=np.int16).reshape(2, 3)))
dist.broadcast(t, src=src, async_op=True).wait()
check(t, np.arange(6, dtype=np.int16).reshape(2, 3), "broadcast into non-contiguous")
b = tensor(data(rank, 4)).to(ember.bfloat16)
dist.broadcast(b, src=0)
check(b.float(), tensor(data(0, 4)).to(ember.bfloat16).float(), "broadcast bfloat16")
raises(ValueError, lambda: dist.broadcast(t, src=0, group_src=0), "src and group_src")
t = tensor(everyone[rank])
dist.reduce(t, dst=1, op=R.MAX)
check(t, np.max(np.stack(everyone), 0) if rank == 1 else everyone[rank], "reduce MAX to 1")

# ---- gathers -----------------------------------------------------------------------------
outs = [ember.empty(r + 1) for r in range(world)]
dist.all_gather(outs, tensor(data(rank, rank + 1)))
for r in range(world):
    check(outs[r], data(r, r + 1), f"all_gather uneven [{r}]")
outs = [ember.empty(2, 3, dtype=ember.int64) for _ in range(world)]
w = dist.all_gather(outs, tensor(data(rank, 6, np.int64).reshape(2, 3)), async_op=True)
w.wait()
for r in range(world):
    check(outs[r], data(r, 6, np.int64).reshape(2, 3), f"all_gather 2-D [{r}]")
raises(RuntimeError, lambda: dist.all_gather([ember.empty(5)] * (world + 1),
                                             tensor(data(rank, 5))), "all_gather list length")
raises(ValueError, lambda: dist.all_gather([ember.empty(5, dtype=ember.int64)] * world,
                                           tensor(data(rank, 5))), "all_gather dtypes")
out = ember.empty(world * 3)
dist.all_gather_into_tensor(out, tensor(data(rank, 3)))
check(out, np.concatenate([data(r, 3) for r in range(world)]), "all_gather_into_tensor")
out = ember.empty(world, 3)
dist.all_gather_into_tensor(out, tensor(data(rank, 3)))
check(out, np.stack([data(r, 3) for r in range(world)]), "all_gather_into_tensor stacked")
raises(RuntimeError, lambda: dist.all_gather_into_tensor(ember.empty(world * 3 + 1),
                                                         tensor(data(rank, 3))),
       "all_gather_into_tensor size")
if rank == 0:
    gl = [ember.empty(r + 2) for r in range(world)]
    dist.gather(tensor(data(rank, rank + 2)), gl, dst=0)
    for r in range(world):
        check(gl[r], data(r, r + 2), f"gather uneven [{r}]")
    raises(ValueError, lambda: dist.gather(tensor(data(0, 2)), None, dst=0), "gather_list")
else:
    dist.gather(tensor(data(rank, rank + 2)), dst=0)
t = ember.empty(rank + 1)
if rank == src:
    dist.scatter(t, [tensor(data(r + 10, r + 1)) for r in range(world)], src=src)
else:
    dist.scatter(t, src=src)
check(t, data(rank + 10, rank + 1), "scatter uneven")

# ---- reduce_scatter ----------------------------------------------------------------------
inputs = [tensor(data(rank + i, i + 1)) for i in range(world)]
out = ember.empty(rank + 1)
dist.reduce_scatter(out, inputs)
check(out, np.sum([data(r + rank, rank + 1) for r in range(world)], 0), "reduce_scatter")
out = ember.empty(2)
dist.reduce_scatter_tensor(out, tensor(data(rank, 2 * world)), op=R.MIN)
check(out, np.min(np.stack([data(r, 2 * world) for r in range(world)]), 0)[2 * rank:2 * rank + 2],
      "reduce_scatter_tensor MIN")
out = ember.empty(2)
dist.reduce_scatter_tensor(out, tensor(data(rank, 2 * world)), op=R.AVG)
check(out, np.mean(np.stack([data(r, 2 * world) for r in range(world)]), 0)[2 * rank:2 * rank + 2],
      "reduce_scatter_tensor AVG", rtol=1e-6)

# ---- all_to_all --------------------------------------------------------------------------
# rank r sends (j + 1) values, data(100 * r + j), to rank j
ins = [tensor(data(100 * rank + j, j + 1)) for j in range(world)]
outs = [ember.empty(rank + 1) for _ in range(world)]
dist.all_to_all(outs, ins)
for r in range(world):
    check(outs[r], data(100 * r + rank, rank + 1), f"all_to_all uneven from {r}")
inp = tensor(np.arange(world * 2, dtype=np.float32) + 100 * rank)
out = ember.empty(world * 2)
dist.all_to_all_single(out, inp)
check(out, np.concatenate([np.arange(2 * rank, 2 * rank + 2) + 100 * r
                           for r in range(world)]).astype(np.float32), "all_to_all_single")
in_splits = [j + 1 for j in range(world)]             # rank r sends j + 1 rows to rank j
out_splits = [rank + 1] * world
inp = tensor(np.concatenate([np.full((j + 1, 2), 10 * rank + j) for j in range(world)]))
out = ember.empty(sum(out_splits), 2, dtype=ember.int64)
dist.all_to_all_single(out, inp, out_splits, in_splits)
check(out, np.concatenate([np.full((rank + 1, 2), 10 * r + rank) for r in range(world)]),
      "all_to_all_single with splits")

# ---- point to point ----------------------------------------------------------------------
right, left = (rank + 1) % world, (rank - 1) % world
send = tensor(data(rank, 4))
recv = ember.empty(4)
sw = dist.isend(send, dst=right)
rw = dist.irecv(recv, src=left)
sw.wait()
rw.wait()
check(recv, data(left, 4), "isend/irecv ring")
if rank == 0:
    for _ in range(world - 1):
        t = ember.empty(3)
        sender = dist.recv(t, tag=5)   # its own tag: the ring below also sends to rank 0
        check(t, data(sender, 3), f"recv from any source ({sender})")
else:
    dist.send(tensor(data(rank, 3)), dst=0, tag=5)
raises(ValueError, lambda: dist.send(tensor(data(0, 1)), dst=rank), "send to self")
recv = ember.empty(4)
ops = [dist.P2POp(dist.isend, tensor(data(rank + 7, 4)), right),
       dist.P2POp(dist.irecv, recv, left)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
check(recv, data(left + 7, 4), "batch_isend_irecv")
if rank == 1:                                          # a message longer than the tensor
    dist.send(tensor(data(1, 5)), dst=0, tag=9)
elif rank == 0:
    raises(dist.DistBackendError, lambda: dist.recv(ember.empty(2), src=1, tag=9),
           "recv into a tensor that is too small")

# ---- objects -----------------------------------------------------------------------------
objs = [{"rank": rank, "t": ember.ones(2) * rank}, "text", 3.5] if rank == 1 else [None] * 3
dist.broadcast_object_list(objs, src=1)
assert objs[0]["rank"] == 1 and objs[1:] == ["text", 3.5]
check(objs[0]["t"], np.ones(2, np.float32), "broadcast_object_list tensor inside")
gathered = [None] * world
dist.all_gather_object(gathered, ("r", rank, list(range(rank))))
assert gathered == [("r", r, list(range(r))) for r in range(world)], gathered
checks += 1
got = [None] * world if rank == 0 else None
dist.gather_object({"k": rank}, got, dst=0)
if rank == 0:
    assert got == [{"k": r} for r in range(world)], got
    checks += 1
out = [None]
dist.scatter_object_list(out, [f"for {r}" for r in range(world)] if rank == 0 else None, src=0)
assert out == [f"for {rank}"], out
if rank == 0:
    dist.send_object_list([{"a": 1}, [2, 3]], dst=world - 1)
elif rank == world - 1:
    box = [None, None]
    assert dist.recv_object_list(box, src=0) == 0 and box == [{"a": 1}, [2, 3]], box
    checks += 1

# ---- groups ------------------------------------------------------------------------------
edge = dist.new_group([0, world - 1])
if rank in (0, world - 1):
    assert dist.get_rank(edge) == (0 if rank == 0 else 1)
    assert dist.get_world_size(edge) == 2
    assert dist.get_process_group_ranks(edge) == [0, world - 1]
    t = tensor(everyone[rank])
    dist.all_reduce(t, group=edge)
    check(t, everyone[0] + everyone[world - 1], "all_reduce on a subgroup")
    t = tensor(data(rank, 3))
    dist.broadcast(t, src=world - 1, group=edge)                        # global rank
    check(t, data(world - 1, 3), "broadcast on a subgroup (global src)")
    t = tensor(data(rank, 3))
    dist.broadcast(t, group=edge, group_src=0)
    check(t, data(0, 3), "broadcast on a subgroup (group_src)")
else:
    assert edge is dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(edge) == -1 and dist.get_world_size(edge) == -1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dist.all_reduce(tensor(everyone[rank]), group=edge) is None
    assert "does not belong to the given group" in str(caught[0].message)
    checks += 1
raises(ValueError, lambda: dist.new_group([0, world]), "new_group with a rank out of range")

# ---- sampler, barriers -------------------------------------------------------------------
sampler = DistributedSampler(list(range(10)), shuffle=False)
assert sampler.num_replicas == world and sampler.rank == rank
padded = list(range(10)) + list(range(10))[:(-10) % world]   # padded by repeating the start
assert list(sampler) == padded[rank::world]
checks += 1
dist.barrier(async_op=True).wait()
dist.monitored_barrier()
dist.barrier()
assert dist.get_backend() == "gloo"
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {rank} ok: {checks} checks", flush=True)
