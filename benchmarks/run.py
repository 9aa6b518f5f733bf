"""Side-by-side benchmarks: the same code timed on torch and on ember.

    python benchmarks/run.py [names...] [--repeat N] [--threads N] [--self-test]

--self-test uses torch in place of ember, to check the runner itself.
"""
import argparse
import importlib
import pathlib
import statistics
import sys
import time

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from registry import BENCHMARKS  # noqa: E402

for path in sorted(HERE.glob("bench_*.py")):
    importlib.import_module(path.stem)


def calibrate(fn, warmup=3, min_time=0.2):
    """Warm `fn` up and return how many calls one timed loop makes (>= min_time seconds)."""
    for _ in range(warmup):
        fn()
    number = 1
    while True:  # grow the inner loop until one run takes >= min_time
        t = time_loop(fn, number)
        if t >= min_time:
            return number
        number = max(number * 2, int(number * min_time / max(t, 1e-9) * 1.1))


def measure_pair(f_torch, f_ember, repeat):
    """(torch's best time per call, ember's best, the median of the rounds' ember/torch
    ratios): the two loops alternate, round after round, so the machine's drift falls on both
    sides of each round's ratio (these machines are noisy) and the median drops outliers."""
    n_torch, n_ember = calibrate(f_torch), calibrate(f_ember)
    torch_times, ember_times = [], []
    for _ in range(repeat):
        torch_times.append(time_loop(f_torch, n_torch) / n_torch)
        ember_times.append(time_loop(f_ember, n_ember) / n_ember)
    ratios = [e / t for t, e in zip(torch_times, ember_times)]
    return min(torch_times), min(ember_times), statistics.median(ratios)


def time_loop(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return time.perf_counter() - start


def fmt_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def blas_info():
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        line = f"{blas['name']} {blas.get('version', '')}"
        if "openblas configuration" in blas:
            line += f" ({blas['openblas configuration'].strip()})"
        return line
    except Exception:
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed rounds, torch and ember alternating: the best times and "
                             "the median of the rounds' ratios are printed")
    parser.add_argument("--threads", type=int, help="intra-op threads for both libraries "
                        "(torch.set_num_threads and ember.set_num_threads; ember holds NumPy's "
                        "BLAS at one thread and splits products itself); default: each "
                        "library's own")
    parser.add_argument("--self-test", action="store_true", help="use torch as ember")
    args = parser.parse_args()

    names = args.names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {list(BENCHMARKS)}")

    ember, ember_error = torch, None
    if not args.self_test:
        try:
            ember = importlib.import_module("ember")
        except Exception as e:
            ember, ember_error = None, f"import ember failed: {type(e).__name__}: {e}"

    if args.threads:
        torch.set_num_threads(args.threads)
        if ember is not None:
            ember.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()}")
    print(f"numpy {np.__version__}, BLAS: {blas_info()}")
    if args.self_test:
        print("self-test: 'ember' column is torch again")
    print(f"{args.repeat} rounds, torch and ember alternating, each loop calibrated to >= 0.2 s;"
          f" best times, and the median of the rounds' ember/torch ratios\n")

    row = "{:<18} {:>12} {:>12} {:>8} {:>8}"
    print(row.format("benchmark", "torch", "ember", "ratio", "target"))
    print("-" * 62)
    for name in names:
        fn, target = BENCHMARKS[name]
        f_torch = fn(torch)
        try:
            if ember_error:
                raise RuntimeError(ember_error)
            f_ember = fn(ember)
            f_ember()  # an ember failure shows here, before any timing
        except Exception as e:
            error = str(e) if ember_error else f"{type(e).__name__}: {e}"
            n = calibrate(f_torch)
            t_torch = min(time_loop(f_torch, n) for _ in range(args.repeat)) / n
            print(f"{name:<18} {fmt_time(t_torch):>12}   ember error: {error}")
            continue
        t_torch, t_ember, ratio = measure_pair(f_torch, f_ember, args.repeat)
        print(row.format(name, fmt_time(t_torch), fmt_time(t_ember), f"{ratio:.2f}x",
                         f"{target:g}x"))


if __name__ == "__main__":
    main()
