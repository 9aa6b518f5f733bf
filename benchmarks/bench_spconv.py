"""SubMConv3d 16->32, kernel 3, on a 64^3 grid at 1 % occupancy, batch 2, forward+backward:
ember.spconv against dense conv3d on the densified input, in ember and in torch.

Through run.py (`python benchmarks/run.py spconv_subm3d`) the ratio is ember's sparse layer
over torch's dense conv3d (target: at most 1/3). Run as a script for the whole comparison --
sparse vs ember dense vs torch dense, timed alternately in one process, medians -- and the
rulebook's build time on its own:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_spconv.py
"""
import time

import numpy as np

from registry import benchmark

GRID, BATCH, OCCUPANCY, C_IN, C_OUT = 64, 2, 0.01, 16, 32


def _sites(seed=0):
    """1 % of the 2 x 64^3 sites, uniformly at random, and their features."""
    rng = np.random.default_rng(seed)
    total = BATCH * GRID ** 3
    flat = np.sort(rng.choice(total, int(total * OCCUPANCY), replace=False))
    idx = np.stack(np.unravel_index(flat, (BATCH, GRID, GRID, GRID)), axis=1).astype(np.int32)
    return idx, rng.standard_normal((len(idx), C_IN)).astype(np.float32)


def sparse_step(ember, with_rulebook=False):
    """One SubMConv3d forward+backward; the rulebook is built once beforehand and found by
    indice_key (as for every layer after the first), unless with_rulebook."""
    import ember.spconv as spconv
    idx, feats = _sites()
    features = ember.tensor(feats, requires_grad=True)
    indices = ember.tensor(idx)
    conv = spconv.SubMConv3d(C_IN, C_OUT, 3, indice_key="subm")
    cached = conv(spconv.SparseConvTensor(features, indices, [GRID] * 3, BATCH)).indice_dict
    grad = ember.ones(len(idx), C_OUT)

    def step():
        x = spconv.SparseConvTensor(features, indices, [GRID] * 3, BATCH,
                                    indice_dict=None if with_rulebook else cached)
        conv(x).features.backward(grad)
    return step


def rulebook_step(ember):
    from ember.spconv.rulebook import get_indice_pairs
    indices = ember.tensor(_sites()[0])
    return lambda: get_indice_pairs(indices, BATCH, [GRID] * 3, ksize=3, subm=True)


def dense_step(lib):
    """conv3d (padding 1) forward+backward on the densified input, in torch or ember."""
    idx, feats = _sites()
    dense = np.zeros((BATCH, GRID, GRID, GRID, C_IN), np.float32)
    dense[tuple(idx.T)] = feats
    x = lib.tensor(np.ascontiguousarray(dense.transpose(0, 4, 1, 2, 3)), requires_grad=True)
    w = lib.randn(C_OUT, C_IN, 3, 3, 3, requires_grad=True)
    b = lib.zeros(C_OUT, requires_grad=True)
    grad = lib.ones(BATCH, C_OUT, GRID, GRID, GRID)

    def step():
        lib.nn.functional.conv3d(x, w, b, padding=1).backward(grad)
    return step


@benchmark(target=0.33)
def bench_spconv_subm3d(lib):
    """ember: the sparse layer (rulebook cached); torch: dense conv3d on the densified input."""
    return sparse_step(lib) if lib.__name__ == "ember" else dense_step(lib)


def _median_time(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    import ember
    import torch
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    steps = {"ember sparse SubMConv3d": sparse_step(ember),
             "ember sparse, rulebook rebuilt": sparse_step(ember, with_rulebook=True),
             "rulebook build alone": rulebook_step(ember),
             "torch dense conv3d": dense_step(torch),
             "ember dense conv3d": dense_step(ember)}
    times = {name: [] for name in steps}
    for _ in range(3):  # alternate, so load on the machine hits every contender alike
        for name, fn in steps.items():
            runs = 3 if "dense" in name else 15
            times[name].append(_median_time(fn, runs))
    med = {name: float(np.median(t)) for name, t in times.items()}
    n_sites = len(_sites()[0])
    print(f"SubMConv3d {C_IN}->{C_OUT}, k3, {GRID}^3 grid, batch {BATCH}, {n_sites} active "
          f"sites ({OCCUPANCY:.0%}), forward+backward, one thread, medians")
    for name, t in med.items():
        print(f"  {name:32s} {t * 1e3:10.2f} ms")
    sparse = med["ember sparse SubMConv3d"]
    print(f"  ember dense / ember sparse: {med['ember dense conv3d'] / sparse:.1f}x "
          f"(target >= 10x)")
    print(f"  torch dense / ember sparse: {med['torch dense conv3d'] / sparse:.1f}x "
          f"(target >= 3x)")
    rebuilt = med["ember sparse, rulebook rebuilt"]
    print(f"  with the rulebook rebuilt: {med['ember dense conv3d'] / rebuilt:.1f}x "
          f"/ {med['torch dense conv3d'] / rebuilt:.1f}x")


if __name__ == "__main__":
    main()
