"""The data of the SyncBatchNorm scenario, shared by syncbn.py (the ranks) and the test
that compares the ranks' results with torch's BatchNorm on the whole batch."""
import numpy as np

SHAPES = {"1d": (6,), "3d": (4, 7), "2d": (3, 4, 5)}     # per-sample shapes, channels first


def sizes(world):
    """The ranks' batch sizes: uneven on purpose."""
    return [3 + r for r in range(world)]


def global_data(key, step, world):
    """The whole batch of `step` (inputs) and the weights of its loss sum(y * w)."""
    g = np.random.default_rng(100 * step + len(key))
    shape = (sum(sizes(world)),) + SHAPES[key]
    return g.standard_normal(shape) * 2 + 1, g.standard_normal(shape)
