"""DistributedDataParallel scenarios, run by each rank under mpiexec. Final parameters are
saved to OUT_DIR/<scenario>_rank<r>.npz for the test to compare with single-process
training (ddp_setup.reference); the checks that need no reference are asserted here.

    mpiexec -n 2 python ddp.py OUT_DIR
"""
import os
import sys

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present
from ember.nn.parallel import DistributedDataParallel as DDP

from ddp_setup import (STEPS, make_model, make_optimizer, global_batch, rank_slice, loss_fn,
                       branch_used, rank_batches)

out_dir = sys.argv[1]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()


def save(name, model):
    np.savez(os.path.join(out_dir, f"{name}_rank{rank}.npz"),
             **{k: v.detach().numpy() for k, v in model.module.state_dict().items()})


def train(name, **ddp_kwargs):
    # each rank initialises differently: DDP must broadcast rank 0's parameters
    model = DDP(make_model(seed=rank, extras=name == "unused"), bucket_cap_mb=0.0005,
                **ddp_kwargs)
    opt = make_optimizer(model)
    for step in range(STEPS):
        opt.zero_grad()
        if name == "no_sync":
            x, y = global_batch(step, world, 0)
            with model.no_sync():
                loss_fn(model(rank_slice(x, rank)), rank_slice(y, rank)).backward()
            x, y = global_batch(step, world, 1)
            loss_fn(model(rank_slice(x, rank)), rank_slice(y, rank)).backward()
        elif name == "unused":
            x, y = global_batch(step, world)
            out = model(rank_slice(x, rank), branch_used(step, rank))
            loss_fn(out, rank_slice(y, rank)).backward()
        else:
            x, y = global_batch(step, world)
            loss_fn(model(rank_slice(x, rank)), rank_slice(y, rank)).backward()
        opt.step()
    save(name, model)
    return model


plain = train("plain")
assert len(plain.reducer.buckets) > 2, len(plain.reducer.buckets)
summary = plain.explain().summary()
assert summary["buckets_launched_before_backward_end"] >= 1, str(plain.explain())
assert "all_reduce launched" in str(plain.explain())
logging = plain._get_ddp_logging_data()
assert logging["avg_backward_comm_time"] > 0 and logging["num_buckets"] > 2, logging

train("no_sync")

unused = train("unused", find_unused_parameters=True)
assert unused.module.never.weight.grad is None          # no rank used it: grad stays None

view = train("bucket_view", gradient_as_bucket_view=True, static_graph=True)
for p in view.module.parameters():
    if p.grad is not None:
        flats = [b.flat for b in view.reducer.buckets]
        assert any(f.data_ptr() <= p.grad.data_ptr() < f.data_ptr() + f.numel() * 4
                   for f in flats), "gradient_as_bucket_view: .grad is not a bucket view"

# uneven inputs: rank r has 2 + r batches
model = DDP(make_model(seed=rank), bucket_cap_mb=0.0005)
opt = make_optimizer(model)
with model.join():
    for step in range(rank_batches(rank)):
        opt.zero_grad()
        x, y = global_batch(step, world)
        loss_fn(model(rank_slice(x, rank)), rank_slice(y, rank)).backward()
        opt.step()
save("join", model)

# buffers: with broadcast_buffers, a forward makes every rank's buffers rank 0's
for broadcast in (True, False):
    ember.manual_seed(0)
    bn = DDP(nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6)), broadcast_buffers=broadcast)
    for step in range(2):
        bn(ember.randn(5, 4) + rank).sum().backward()
    bn.eval()
    with ember.no_grad():
        bn(ember.randn(3, 4))
    stats = [None] * world
    dist.all_gather_object(stats, bn.module[1].running_mean.numpy().copy())
    same = all(np.array_equal(stats[0], s) for s in stats)
    assert same == broadcast, (broadcast, stats)

# the state dict: "module." prefix; loads into the plain model once stripped
state = plain.state_dict()
assert all(k.startswith("module.") for k in state), list(state)
consume_prefix_in_state_dict_if_present(state, "module.")
bare = make_model(seed=123)
bare.load_state_dict(state)
x = ember.randn(3, 10)
assert ember.equal(bare(x), plain.module(x))

# a parameter that gets no gradient, without find_unused_parameters: the next forward fails
model = DDP(make_model(seed=0, extras=True))
x, y = global_batch(0, world)
loss_fn(model(rank_slice(x, rank)), rank_slice(y, rank)).backward()
try:
    model(rank_slice(x, rank))
except RuntimeError as e:
    message = str(e)
    assert "Expected to have finished reduction in the prior iteration" in message
    assert "branch.weight" in message and "never.weight" in message, message
else:
    raise AssertionError("no error for unused parameters without find_unused_parameters")

print(f"rank {rank} ok", flush=True)
