"""The commonest PyTorch DDP program (mp.spawn, MASTER_ADDR/MASTER_PORT, rank and world_size
passed to init_process_group): run by PyTorch and by `python -m ember` (torch alias), it must
print the same lines.

    python torch_spawn_program.py PORT            (python -m ember torch_spawn_program.py PORT)
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    print(f"rank {rank} runs on {torch.__name__}", file=sys.stderr, flush=True)   # not compared
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2)).double())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 6, generator=g).double(), torch.randn(16, 2, generator=g).double()
    for step in range(5):
        opt.zero_grad()
        xs, ys = x[rank * 8:(rank + 1) * 8], y[rank * 8:(rank + 1) * 8]
        loss = ((model(xs) - ys) ** 2).mean()
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        if rank == 0:
            print(f"step {step} mean loss {total.item() / world_size:.10f}", flush=True)
    if rank == 0:
        print("weight sum", f"{model.module[0].weight.sum().item():.10f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 2
    mp.spawn(main, args=(world_size, int(sys.argv[1])), nprocs=world_size, join=True)
