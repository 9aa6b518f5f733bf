"""An ordinary PyTorch DDP program (torchrun style): run by torchrun on PyTorch and by
`python -m ember.distributed.run -m ember` on ember, it must print the same lines."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
local_rank = int(os.environ["LOCAL_RANK"])
torch.manual_seed(0)
data = TensorDataset(torch.randn(96, 8), torch.randint(0, 3, (96,)))
sampler = DistributedSampler(data, shuffle=True, seed=1)
loader = DataLoader(data, batch_size=8, sampler=sampler)
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
model = DDP(model)          # BatchNorm's buffers are broadcast from rank 0 before each forward
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        if rank == 0 and step % 2 == 0:
            print(f"epoch {epoch} step {step} mean loss {total.item() / world:.4f}")
gathered = [None] * world
dist.all_gather_object(gathered, {"rank": rank, "local_rank": local_rank})
if rank == 0:
    print(gathered)
    print("weight sum", f"{model.module[0].weight.sum().item():.4f}")
dist.destroy_process_group()
