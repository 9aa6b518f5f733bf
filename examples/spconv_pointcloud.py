"""Classify voxelised point clouds with a small sparse 3-D convolutional network.

    python examples/spconv_pointcloud.py [--steps 40]

Each sample is a shape -- sphere, cube surface or cylinder -- sampled as 600 points, randomly
rotated, scaled and shifted, then voxelised into a 16^3 grid: only the voxels that hold a point
are active (about 5 % of the grid), each with 4 features (a constant 1 and the mean position
of its points inside the voxel). The network is written as it would be with spconv
(`import spconv.pytorch as spconv`):

    SubMConv3d 4->16 (k3)   -- outputs at the active voxels only
    SparseConv3d 16->32 (k3, stride 2)  16^3 -> 8^3
    SubMConv3d 32->32 (k3)
    SparseConv3d 32->64 (k3, stride 2)  8^3 -> 4^3
    SparseConv3d 64->64 (k3, stride 2)  4^3 -> 2^3
    ToDense -> flatten -> Linear 512->3

with BatchNorm1d and ReLU on the features between the sparse layers (SparseSequential hands
them the (N, C) feature matrix). Training prints the loss, which goes down within a few
dozen steps, and the accuracy on a held-out batch.
"""
import argparse
import math

import numpy as np

import ember as torch
import ember.spconv as spconv

nn = torch.nn
F = torch.nn.functional
GRID = 16
CLASSES = ("sphere", "cube", "cylinder")


def sample_shape(label, n, rng):
    """n points on the unit sphere, the surface of the cube [-1, 1]^3, or the side and caps of
    the cylinder of radius 1 and height 2."""
    if label == 0:
        p = rng.standard_normal((n, 3))
        return p / np.linalg.norm(p, axis=1, keepdims=True)
    if label == 1:
        p = rng.uniform(-1, 1, (n, 3))
        face = rng.integers(0, 3, n)
        p[np.arange(n), face] = rng.choice([-1.0, 1.0], n)
        return p
    theta = rng.uniform(0, 2 * math.pi, n)
    z = rng.uniform(-1, 1, n)
    on_cap = rng.random(n) < 0.25
    r = np.where(on_cap, np.sqrt(rng.random(n)), 1.0)
    z = np.where(on_cap, rng.choice([-1.0, 1.0], n), z)
    return np.stack([r * np.cos(theta), r * np.sin(theta), z], axis=1)


def random_rotation(rng):
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    return q * np.sign(np.diag(r))


def voxelise(points):
    """Active voxels of a 16^3 grid over [-1.6, 1.6]^3: (z, y, x) coordinates and features
    [1, mean position inside the voxel (3 values in [0, 1))]."""
    scaled = (points + 1.6) / 3.2 * GRID
    cells = np.clip(np.floor(scaled).astype(np.int64), 0, GRID - 1)
    keys = (cells[:, 0] * GRID + cells[:, 1]) * GRID + cells[:, 2]
    unique, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    inside = np.zeros((len(unique), 3))
    np.add.at(inside, inverse, scaled - cells)
    features = np.concatenate([np.ones((len(unique), 1)), inside / counts[:, None]], axis=1)
    coords = np.stack(np.unravel_index(unique, (GRID,) * 3), axis=1)
    return coords, features


def make_batch(batch_size, rng, points=600):
    """A SparseConvTensor of batch_size random shapes, and their labels."""
    labels = rng.integers(0, len(CLASSES), batch_size)
    all_indices, all_features = [], []
    for b, label in enumerate(labels):
        p = sample_shape(label, points, rng) @ random_rotation(rng).T
        p = p * rng.uniform(0.6, 1.0) + rng.uniform(-0.3, 0.3, 3)
        coords, features = voxelise(p + rng.normal(0, 0.01, p.shape))
        all_indices.append(np.concatenate([np.full((len(coords), 1), b), coords], axis=1))
        all_features.append(features)
    indices = torch.from_numpy(np.concatenate(all_indices).astype(np.int32))
    features = torch.from_numpy(np.concatenate(all_features).astype(np.float32))
    x = spconv.SparseConvTensor(features, indices, [GRID] * 3, batch_size)
    return x, torch.from_numpy(labels)


def block(conv, channels):
    return [conv, nn.BatchNorm1d(channels), nn.ReLU()]


class SparseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = spconv.SparseSequential(
            *block(spconv.SubMConv3d(4, 16, 3, indice_key="subm1"), 16),
            *block(spconv.SparseConv3d(16, 32, 3, stride=2, padding=1), 32),
            *block(spconv.SubMConv3d(32, 32, 3, indice_key="subm2"), 32),
            *block(spconv.SparseConv3d(32, 64, 3, stride=2, padding=1), 64),
            *block(spconv.SparseConv3d(64, 64, 3, stride=2, padding=1), 64),
            spconv.ToDense(),
        )
        self.classifier = nn.Linear(64 * 2 * 2 * 2, len(CLASSES))

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = SparseNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    test_x, test_y = make_batch(64, rng)
    print(f"{test_x.features.shape[0] / 64:.0f} active voxels per sample "
          f"({test_x.features.shape[0] / 64 / GRID ** 3:.1%} of the grid)")
    losses = []
    for step in range(1, args.steps + 1):
        x, y = make_batch(args.batch_size, rng)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 5 == 0 or step == 1:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    print(f"mean loss of the first 5 steps {first:.4f}, of the last 5 {last:.4f}; "
          f"held-out accuracy {accuracy:.1%}")
    return first, last, accuracy


if __name__ == "__main__":
    main()
