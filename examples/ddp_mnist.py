"""Data-parallel MNIST training over MPI: DistributedDataParallel, SyncBatchNorm and
DistributedSampler, launched like torchrun.

    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_mnist.py --check

starts 2 ranks through mpiexec. Each rank reads its own share of every batch
(DistributedSampler), DDP averages the gradients while backward runs, and SyncBatchNorm
normalises over both ranks' samples, so the 2 ranks train exactly like one process on the
combined batch. `--check` proves it: rank 0 then repeats the training in one process on the
combined batches and prints how far the final weights are from the DDP run's.

The same script runs on real PyTorch:  torchrun --nproc-per-node 2 examples/ddp_mnist.py --torch
(there the BatchNorm layers stay per rank: PyTorch's SyncBatchNorm needs GPUs, ember's runs on
the CPU; and --check, which relies on SyncBatchNorm, is ember's only).
"""
import argparse
import os
import sys
import time

if "--torch" in sys.argv:
    import torch
else:
    import ember as torch

from ember.vision import datasets

dist = torch.distributed
nn = torch.nn
F = torch.nn.functional
DDP = torch.nn.parallel.DistributedDataParallel
DistributedSampler = torch.utils.data.DistributedSampler

MNIST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                     "mnist")


class Net(nn.Module):
    """Two convolutions with batch norm, max-pooling and a linear classifier (no dropout: the
    check compares exact training runs)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 5), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 5), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        return F.log_softmax(self.classifier(torch.flatten(self.features(x), 1)), dim=1)


def mnist_train_set():
    split = datasets.MNIST(MNIST, train=True)
    images = torch.from_numpy(split.data.numpy()).float().div_(255).sub_(0.1307).div_(0.3081)
    return torch.utils.data.TensorDataset(images.unsqueeze(1),
                                          torch.from_numpy(split.targets.numpy()))


def loader(dataset, args, rank, world_size, epoch):
    """Rank `rank`'s batches of one epoch: its share of a permutation shared by all ranks."""
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True,
                                 seed=args.seed)
    sampler.set_epoch(epoch)
    return torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)


def make_model(args):
    torch.manual_seed(args.seed)
    return Net()


def train_ddp(args, dataset):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    model = make_model(args)
    if not args.torch:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        for step, (data, target) in enumerate(loader(dataset, args, rank, world_size, epoch)):
            if step == args.max_steps:
                break
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            if rank == 0 and step % args.log_interval == 0:
                print(f"epoch {epoch} step {step:4d}  loss {loss.item():.4f} (rank 0's share)",
                      flush=True)
    if rank == 0:
        print(f"{world_size} ranks trained in {time.perf_counter() - start:.1f} s")
        if not args.torch:
            print(model.explain())
    return model.module


def train_single(args, dataset, world_size):
    """One process on the combined batches: step k's batch is every rank's k-th batch."""
    model = make_model(args)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        model.train()
        shares = [loader(dataset, args, r, world_size, epoch) for r in range(world_size)]
        for step, batches in enumerate(zip(*shares)):
            if step == args.max_steps:
                break
            data = torch.cat([d for d, _ in batches])
            target = torch.cat([t for _, t in batches])
            optimizer.zero_grad()
            F.nll_loss(model(data), target).backward()
            optimizer.step()
    return model


def max_relative_difference(a, b):
    worst = 0.0
    for key, value in a.items():
        if value.is_floating_point():
            scale = b[key].abs().max().item() or 1.0
            worst = max(worst, (value - b[key]).abs().max().item() / scale)
    return worst


def main():
    parser = argparse.ArgumentParser(description="DDP + SyncBatchNorm on MNIST")
    parser.add_argument("--batch-size", type=int, default=32, help="per rank (default: 32)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=None,
                        help="stop each epoch after N steps")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=20)
    parser.add_argument("--save", metavar="PATH", help="rank 0 saves the trained weights here")
    parser.add_argument("--check", action="store_true",
                        help="rank 0 also trains one process on the combined batches and "
                             "compares the final weights")
    parser.add_argument("--torch", action="store_true", help="run on real PyTorch (torchrun)")
    args = parser.parse_args()
    if args.torch and args.check:
        parser.error("--check needs SyncBatchNorm on the CPU, which only ember has")

    dist.init_process_group("gloo")
    dataset = mnist_train_set()
    model = train_ddp(args, dataset)
    if dist.get_rank() == 0:
        if args.save:
            torch.save(model.state_dict(), args.save)
        if args.check:
            reference = train_single(args, dataset, dist.get_world_size())
            diff = max_relative_difference(model.state_dict(), reference.state_dict())
            print(f"final weights vs one process on the combined batch: "
                  f"max relative difference {diff:.2e}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
