"""DataLoader throughput: one shuffled epoch over 20,000 (3, 32, 32) float32 samples, batch 64.

Each sample goes through a small NumPy transform (a flip of every other image, normalisation).
The timed call iterates one whole epoch, so samples per second = 20,000 / time, and the time
ratio is the inverse of the throughput ratio: a target of 1.11 is ember >= 0.9x torch's
throughput. With workers, the epoch includes starting them, as in a plain training loop.

mnist_transforms_*: 50 batches of 64 from the bundled MNIST training images, each sample a PIL
image through ToTensor() + Normalize((0.1307,), (0.3081,)), as pytorch/examples' MNIST script
loads them. On torch the dataset and transforms are torchvision's when it is installed, else
the same steps as torchvision's code (MNIST.__getitem__, to_tensor, normalize) written here.
"""
import pathlib

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


MNIST_ROOT = pathlib.Path(__file__).resolve().parents[1] / "data" / "mnist"


def _torchvision_like_mnist(torch):
    """torchvision's MNIST with ToTensor + Normalize, or its steps when it is not installed."""
    try:
        from torchvision import datasets, transforms
        return datasets.MNIST(str(MNIST_ROOT), transform=transforms.Compose(
            [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]))
    except ImportError:
        pass
    from PIL import Image
    from ember.vision.datasets import MNIST

    split = MNIST(str(MNIST_ROOT))

    class Steps(torch.utils.data.Dataset):
        def __init__(self):
            self.data = torch.from_numpy(split.data.numpy())
            self.targets = torch.from_numpy(split.targets.numpy())

        def __len__(self):
            return len(self.data)

        def __getitem__(self, index):
            img, target = self.data[index], int(self.targets[index])
            pic = Image.fromarray(img.numpy(), mode="L")
            t = torch.from_numpy(np.array(pic, np.uint8, copy=True))            # to_tensor
            t = t.view(pic.size[1], pic.size[0], len(pic.getbands())).permute((2, 0, 1))
            t = t.contiguous().to(dtype=torch.get_default_dtype()).div(255)
            t = t.clone()                                                       # normalize
            mean = torch.as_tensor((0.1307,), dtype=t.dtype, device=t.device)
            std = torch.as_tensor((0.3081,), dtype=t.dtype, device=t.device)
            if (std == 0).any():
                raise ValueError("std evaluated to zero")
            return t.sub_(mean.view(-1, 1, 1)).div_(std.view(-1, 1, 1)), target
    return Steps()


def _mnist_transforms(lib, num_workers):
    if lib.__name__ == "torch":
        dataset = _torchvision_like_mnist(lib)
    else:
        from ember.vision import datasets, transforms
        dataset = datasets.MNIST(str(MNIST_ROOT), transform=transforms.Compose(
            [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]))
    loader = lib.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True,
                                       num_workers=num_workers)

    def fifty_batches():
        for step, (images, labels) in enumerate(loader):
            if step == 49:
                break
    return fifty_batches


@benchmark(target=1.0)
def bench_mnist_transforms_w0(lib):
    return _mnist_transforms(lib, 0)


@benchmark(target=1.0)
def bench_mnist_transforms_w2(lib):
    return _mnist_transforms(lib, 2)
