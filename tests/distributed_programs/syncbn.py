"""SyncBatchNorm under mpiexec: each rank normalises its slice of a global batch (ranks get
different batch sizes) and saves outputs, input gradients, weight gradients and running
statistics to OUT_DIR/syncbn_<shape>_rank<r>.npz; the test compares them with torch's
BatchNorm on the whole batch. Also trains a small convnet with convert_sync_batchnorm + DDP
and checks it against single-process BatchNorm training on the combined batch.

    mpiexec -n 2 python syncbn.py OUT_DIR
"""
import os
import sys

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel as DDP

from syncbn_setup import SHAPES, sizes, global_data

out_dir = sys.argv[1]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()

for key, sample in SHAPES.items():
    bn = nn.SyncBatchNorm(sample[0], momentum=0.3).double()
    with ember.no_grad():
        bn.weight.copy_(ember.linspace(0.5, 1.5, sample[0]))
        bn.bias.copy_(ember.linspace(-1, 1, sample[0]))
    lo = sum(sizes(world)[:rank])
    hi = lo + sizes(world)[rank]
    saved = {}
    for step in range(3):
        x_all, w_all = global_data(key, step, world)
        x = ember.tensor(x_all[lo:hi], requires_grad=True)
        y = bn(x)
        (y * ember.tensor(w_all[lo:hi])).sum().backward()
        saved[f"y{step}"] = y.detach().numpy()
        saved[f"dx{step}"] = x.grad.numpy()
        saved[f"dw{step}"] = bn.weight.grad.numpy().copy()
        saved[f"db{step}"] = bn.bias.grad.numpy().copy()
        bn.zero_grad()
    saved["running_mean"] = bn.running_mean.numpy()
    saved["running_var"] = bn.running_var.numpy()
    saved["num_batches_tracked"] = bn.num_batches_tracked.numpy()
    np.savez(os.path.join(out_dir, f"syncbn_{key}_rank{rank}.npz"), **saved)

# eval mode uses the running statistics, no communication
bn.eval()
x = ember.randn(2, *sample, dtype=ember.float64)
assert ember.allclose(bn(x), nn.functional.batch_norm(x, bn.running_mean, bn.running_var,
                                                      bn.weight, bn.bias))


# convert_sync_batchnorm + DDP: a convnet trains like BatchNorm on the combined batch
def convnet(sync):
    ember.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                        nn.Linear(4 * 4 * 4, 3))
    return nn.SyncBatchNorm.convert_sync_batchnorm(net) if sync else net


model = DDP(convnet(True))
assert isinstance(model.module[1], nn.SyncBatchNorm) and isinstance(model.module[4],
                                                                     nn.SyncBatchNorm)
reference = convnet(False)
opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
ref_opt = ember.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
gen = ember.Generator()
gen.manual_seed(7)
for step in range(3):
    x = ember.randn(4 * world, 2, 6, 6, generator=gen)
    y = ember.randint(0, 3, (4 * world,), generator=gen)
    opt.zero_grad()
    mine = slice(4 * rank, 4 * rank + 4)
    nn.functional.cross_entropy(model(x[mine]), y[mine]).backward()
    opt.step()
    ref_opt.zero_grad()
    nn.functional.cross_entropy(reference(x), y).backward()
    ref_opt.step()
for (name, got), want in zip(model.module.state_dict().items(), reference.state_dict().values()):
    if got.dtype.is_floating_point:
        rel = float((got - want).abs().max() / want.abs().max())
        assert rel < 1e-5, (name, rel)
    else:
        assert ember.equal(got, want), name
print(f"rank {rank} ok", flush=True)
