"""Functions that ember.multiprocessing.spawn (and torch.multiprocessing.spawn, as the oracle)
run in child processes, for tests/test_multiprocessing_spawn.py; and, run as a script, the
launch styles of an ember.distributed program that no mpiexec started:

    python spawn_programs.py spawn OUT_DIR PORT      mp.spawn + MASTER_ADDR/MASTER_PORT
    python spawn_programs.py tcp OUT_DIR PORT        mp.spawn + init_method="tcp://..."
    python spawn_programs.py file OUT_DIR PORT       mp.spawn + init_method="file://..."
    python spawn_programs.py store OUT_DIR PORT      mp.spawn + store=TCPStore(...)
    RANK=r WORLD_SIZE=2 MASTER_ADDR=... MASTER_PORT=... python spawn_programs.py env OUT_DIR
                                                     (torchrun's environment, one process each)
    python spawn_programs.py fail MODE PORT          rank 1 fails while rank 0 waits
    RANK=r ... python spawn_programs.py fail-env MODE   the same, one process per rank

Each DDP rank trains ddp_setup's "plain" scenario, checks every collective against NumPy
(collective_checks) and saves its final parameters for the test to compare with
single-process training on the combined batch. Module level imports stay light: the error
path functions run in children that never import ember.
"""
import os
import signal
import sys
import time
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- error paths (no ember needed) --------------------------------------------------------

def ok(i, out_dir):
    with open(os.path.join(out_dir, f"ok{i}"), "w") as f:
        f.write(str(os.getpid()))


def raise_in_one(i, bad):
    if i == bad:
        raise ValueError(f"process {i} is broken")
    time.sleep(60)      # the parent must terminate us


def exit_with(i, bad, code):
    if i == bad:
        sys.exit(code)
    time.sleep(60)


def kill_self(i, bad, signum):
    if i == bad:
        os.kill(os.getpid(), signum)
    time.sleep(60)


def sleep_then_ok(i, seconds):
    time.sleep(seconds)


# ---- ember.distributed without mpiexec ---------------------------------------------------

def _init(rank, world, how, port, out_dir):
    import ember.distributed as dist
    timeout = timedelta(seconds=120)
    if how in ("spawn", "env"):
        if how == "spawn":
            os.environ["MASTER_ADDR"] = "localhost"
            os.environ["MASTER_PORT"] = str(port)
            dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timeout)
        else:
            dist.init_process_group("gloo", timeout=timeout)    # all from the environment
    elif how == "tcp":
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world, timeout=timeout)
    elif how == "file":
        dist.init_process_group("gloo", init_method=f"file://{out_dir}/rendezvous", rank=rank,
                                world_size=world, timeout=timeout)
    elif how == "store":
        store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=timeout)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world,
                                timeout=timeout)
    else:
        raise ValueError(how)


def collective_checks(rank, world):
    """The collectives give NumPy's answers in a world that mpiexec did not start."""
    import numpy as np
    import ember
    import ember.distributed as dist
    t = ember.arange(4, dtype=ember.float64) + rank
    dist.all_reduce(t)
    want = sum(np.arange(4.0) + r for r in range(world))
    assert np.array_equal(t.numpy(), want), t
    b = ember.full((3,), float(rank))
    dist.broadcast(b, src=world - 1)
    assert b.tolist() == [world - 1.0] * 3, b
    parts = [ember.zeros(2, dtype=ember.int64) for _ in range(world)]
    dist.all_gather(parts, ember.tensor([rank, 10 * rank]))
    assert [p.tolist() for p in parts] == [[r, 10 * r] for r in range(world)], parts
    out = ember.zeros(2)
    dist.reduce_scatter(out, [ember.full((2,), float(rank + j)) for j in range(world)])
    assert out.tolist() == [float(sum(r + rank for r in range(world)))] * 2, out
    objects = [None] * world
    dist.all_gather_object(objects, {"rank": rank})
    assert objects == [{"rank": r} for r in range(world)], objects
    if rank == 0:
        dist.send(ember.tensor([7.0, 8.0]), dst=1)
    elif rank == 1:
        got = ember.zeros(2)
        dist.recv(got, src=0)
        assert got.tolist() == [7.0, 8.0], got
    dist.barrier()


def ddp_main(rank, world, how, port, out_dir):
    sys.path.insert(0, HERE)
    import numpy as np
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel as DDP
    from ddp_setup import STEPS, make_model, make_optimizer, global_batch, rank_slice, loss_fn
    _init(rank, world, how, port, out_dir)
    assert (dist.get_rank(), dist.get_world_size()) == (rank, world)
    collective_checks(rank, world)
    model = DDP(make_model(seed=rank), bucket_cap_mb=0.0005)   # rank 0's weights win
    opt = make_optimizer(model)
    for step in range(STEPS):
        opt.zero_grad()
        x, y = global_batch(step, world)
        loss_fn(model(rank_slice(x, rank)), rank_slice(y, rank)).backward()
        opt.step()
    np.savez(os.path.join(out_dir, f"{how}_rank{rank}.npz"),
             **{k: v.detach().numpy() for k, v in model.module.state_dict().items()})
    dist.destroy_process_group()
    print(f"rank {rank} ok", flush=True)


def fail_main(rank, mode, port):
    """Rank 1 raises / is killed / hangs after init; rank 0 waits in an all_reduce. With
    port=None, the rendezvous comes from the environment (one process per rank)."""
    import ember
    import ember.distributed as dist
    if port is not None:
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = str(port)
    # the store waits long (the machine may be slow to start a rank); the group's
    # collectives wait 4 s, so that a stuck rank costs 4 s
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), 2,
                          rank == 0, timeout=timedelta(seconds=120))
    dist.init_process_group("gloo", store=store, rank=rank, world_size=2,
                            timeout=timedelta(seconds=4))
    dist.barrier()
    if rank == 1:
        if mode == "raise":
            raise ValueError("rank one is broken")
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "stuck":
            time.sleep(60)
    dist.all_reduce(ember.ones(4))
    print(f"rank {rank} finished", flush=True)


if __name__ == "__main__":
    import ember.multiprocessing as mp
    how = sys.argv[1]
    if how == "env":
        ddp_main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "env", None,
                 sys.argv[2])
    elif how == "fail-env":
        fail_main(int(os.environ["RANK"]), sys.argv[2], None)
    elif how == "fail":
        mp.spawn(fail_main, args=(sys.argv[2], int(sys.argv[3])), nprocs=2)
    else:
        mp.spawn(ddp_main, args=(2, how, int(sys.argv[3]), sys.argv[2]), nprocs=2, join=True)
