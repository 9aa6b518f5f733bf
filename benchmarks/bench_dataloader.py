"""DataLoader throughput: one shuffled epoch over 20,000 (3, 32, 32) float32 samples, batch 64.

Each sample goes through a small NumPy transform (a flip of every other image, normalisation).
The timed call iterates one whole epoch, so samples per second = 20,000 / time, and the time
ratio is the inverse of the throughput ratio: a target of 1.11 is ember >= 0.9x torch's
throughput. With workers, the epoch includes starting them, as in a plain training loop.
"""
import numpy as np

from registry import benchmark

N, BATCH = 20_000, 64


def _loader(lib, num_workers):
    data = lib.utils.data

    class Images(data.Dataset):
        def __init__(self):
            rng = np.random.default_rng(0)
            self.images = rng.random((N, 3, 32, 32), dtype=np.float32)
            self.labels = rng.integers(0, 10, N)
            self.mean = np.float32([0.49, 0.48, 0.45]).reshape(3, 1, 1)
            self.std = np.float32([0.25, 0.24, 0.26]).reshape(3, 1, 1)

        def __len__(self):
            return N

        def __getitem__(self, i):
            image = self.images[i]
            if i % 2:
                image = image[:, :, ::-1]
            return lib.from_numpy((image - self.mean) / self.std), int(self.labels[i])

    loader = data.DataLoader(Images(), batch_size=BATCH, shuffle=True, num_workers=num_workers)

    def epoch():
        for images, labels in loader:
            pass
    return epoch


@benchmark(target=1.11)
def bench_dataloader_w0(lib):
    return _loader(lib, 0)


@benchmark(target=1.11)
def bench_dataloader_w2(lib):
    return _loader(lib, 2)
