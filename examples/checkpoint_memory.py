"""How much memory activation checkpointing saves: the bytes a 24-block MLP keeps between
forward and backward, without checkpointing and with checkpoint_sequential in 2, 4 and 8
segments, measured with tracemalloc (which sees NumPy's buffers, so every ember tensor).

    python examples/checkpoint_memory.py

(PyTorch allocates through its own allocator, which tracemalloc does not see; ember's own
memory statistics will measure this directly once the caching allocator lands.)
"""
import gc
import time
import tracemalloc

import ember as torch
from ember.utils.checkpoint import checkpoint_sequential


def main():
    torch.manual_seed(0)
    blocks = 24
    net = torch.nn.Sequential(*[m for _ in range(blocks) for m in
                                (torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Dropout(0.1))])
    x = torch.randn(128, 256, requires_grad=True)
    net(x).sum().backward()  # warm up

    def measure(forward):
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        y = forward()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        y.sum().backward()
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        return held, peak, time.perf_counter() - start

    print(f"{blocks} x (Linear 256 + GELU + Dropout), batch 128, float32")
    print(f"{'':>14} {'held after forward':>20} {'peak':>10} {'fwd+bwd s (traced)':>20}")
    rows = [("plain", lambda: net(x))]
    for segments in (2, 4, 8):
        rows.append((f"{segments} segments", lambda s=segments: checkpoint_sequential(
            net, s, x, use_reentrant=False)))
    for name, forward in rows:
        held, peak, seconds = measure(forward)
        print(f"{name:>14} {held / 2**20:>17.2f} MiB {peak / 2**20:>6.2f} MiB {seconds:>20.2f}")


if __name__ == "__main__":
    main()
