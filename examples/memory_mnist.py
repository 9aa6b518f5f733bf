"""Where the memory of a training step goes: two steps of the MNIST convnet (examples/mnist.py)
recorded by ember's caching allocator, written as an HTML page and a PNG, and the peak memory
of each phase (forward, backward, optimizer step).

    python examples/memory_mnist.py [--out DIR] [--batch-size 64]

Writes DIR/memory_mnist.pickle (PyTorch's snapshot format: pytorch.org/memory_viz opens it
too), DIR/memory_mnist.html (`python -m ember.memory.viz`) and DIR/memory_mnist.png.
"""
import argparse
import os
import pickle
import sys

import ember as torch
from ember.memory import viz

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnist import Net  # noqa: E402

F = torch.nn.functional


def phase_peaks(model, optimizer, x, y):
    """One training step; the peak allocated bytes of each of its phases, and how many
    segments it requested from the system."""
    peaks = {}
    segments = torch.memory.memory_stats()["segment.all.allocated"]
    torch.memory.reset_peak_memory_stats()
    loss = F.nll_loss(model(x), y)
    peaks["forward"] = torch.memory.max_memory_allocated()
    torch.memory.reset_peak_memory_stats()
    optimizer.zero_grad()
    loss.backward()
    del loss
    peaks["backward"] = torch.memory.max_memory_allocated()
    torch.memory.reset_peak_memory_stats()
    optimizer.step()
    peaks["optimizer step"] = torch.memory.max_memory_allocated()
    return peaks, torch.memory.memory_stats()["segment.all.allocated"] - segments


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="memory_mnist", help="directory for the outputs")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    x = torch.randn(args.batch_size, 1, 28, 28)
    y = torch.randint(0, 10, (args.batch_size,))
    model.train()

    before = torch.memory.memory_allocated()
    torch.memory._record_memory_history(max_entries=100000)
    peaks = [phase_peaks(model, optimizer, x, y) for _ in range(2)]
    path = os.path.join(args.out, "memory_mnist.pickle")
    torch.memory._dump_snapshot(path)
    torch.memory._record_memory_history(enabled=None)

    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    title = f"two training steps of the MNIST convnet, batch {args.batch_size}"
    with open(os.path.join(args.out, "memory_mnist.html"), "w") as f:
        f.write(viz.to_html(snapshot, title))
    viz.to_png(snapshot, os.path.join(args.out, "memory_mnist.png"), title)

    mib = 1 << 20
    print(f"parameters and data before the steps: {before / mib:.2f} MiB allocated")
    for step, (p, new_segments) in enumerate(peaks, 1):
        print(f"step {step}: " + ", ".join(f"{k} peak {v / mib:.2f} MiB" for k, v in p.items())
              + f"; {new_segments} new segments")
    stats = torch.memory.memory_stats()
    print(f"reserved {stats['reserved_bytes.all.current'] / mib:.1f} MiB in "
          f"{stats['segment.all.current']} segments")
    print(f"wrote {path}, memory_mnist.html and memory_mnist.png in {args.out}")


if __name__ == "__main__":
    main()
