"""The caching allocator against NumPy's own memory, A/B in one process: the same train step
(MLP, LeNet or ResNet-18, as in run.py's rows) timed with the allocator on and off in
alternation, with the minor page faults each step takes (`getrusage`). Alternating in one
process keeps the machine's drift out of the ratio, which the separate `*_native` rows of
run.py cannot do on a noisy machine.

    python benchmarks/allocator_ab.py resnet18 --threads 2 --rounds 5
"""
import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember  # noqa: E402
from bench_memory import bench_lenet_train_step  # noqa: E402
from bench_mlp import bench_mlp_train_step  # noqa: E402
from bench_resnet import bench_resnet18_train_step  # noqa: E402

MODELS = {"mlp": (bench_mlp_train_step, 200), "lenet": (bench_lenet_train_step, 50),
          "resnet18": (bench_resnet18_train_step, 1)}  # name: (step maker, steps per timing)


def measure(model, rounds):
    """{caching: (median seconds per step, median minor faults per step)} for both settings,
    and under "paired" the median of the rounds' caching/native ratios (each round times both,
    the first of the pair alternating, so the machine's drift falls on both sides of a ratio)."""
    make, steps = MODELS[model]
    step = make(ember)
    for _ in range(3 * steps):  # warm-up: the allocator's segments and held arrays settle
        step()
    times = {True: [], False: []}
    faults = {True: [], False: []}
    try:
        for r in range(rounds):
            for caching in (True, False) if r % 2 == 0 else (False, True):
                ember.memory.caching_allocator_enable(caching)
                step()  # one untimed step in the new setting
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                t0 = time.perf_counter()
                for _ in range(steps):
                    step()
                times[caching].append((time.perf_counter() - t0) / steps)
                faults[caching].append(
                    (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / steps)
    finally:
        ember.memory.caching_allocator_enable(True)
    result = {c: (statistics.median(times[c]), statistics.median(faults[c])) for c in times}
    result["paired"] = statistics.median(c / n for c, n in zip(times[True], times[False]))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=f"any of {', '.join(MODELS)} (default: all)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}: choose from {list(MODELS)}")
    if args.threads:
        ember.set_num_threads(args.threads)
    print(f"{'model':10s} {'caching':>12s} {'faults':>8s} {'native':>12s} {'faults':>8s} "
          f"{'caching/native':>15s} {'paired':>8s}")
    for model in args.models or list(MODELS):
        r = measure(model, args.rounds)
        (tc, fc), (tn, fn) = r[True], r[False]
        print(f"{model:10s} {tc * 1e3:9.2f} ms {fc:8.0f} {tn * 1e3:9.2f} ms {fn:8.0f} "
              f"{tc / tn:14.3f}x {r['paired']:7.3f}x")


if __name__ == "__main__":
    main()
