"""Side-by-side benchmarks: the same code timed on torch and on ember.

    python benchmarks/run.py [names...] [--repeat N] [--threads N] [--self-test]

--self-test uses torch in place of ember, to check the runner itself.
"""
import argparse
import importlib
import pathlib
import sys
import time

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from registry import BENCHMARKS  # noqa: E402

for path in sorted(HERE.glob("bench_*.py")):
    importlib.import_module(path.stem)


def measure(fn, repeat, warmup=3, min_time=0.2):
    """Best time per call in seconds: warm up, calibrate the loop, take the min."""
    for _ in range(warmup):
        fn()
    number = 1
    while True:  # grow the inner loop until one run takes >= min_time
        t = time_loop(fn, number)
        if t >= min_time:
            break
        number = max(number * 2, int(number * min_time / max(t, 1e-9) * 1.1))
    best = min([t] + [time_loop(fn, number) for _ in range(repeat - 1)])
    return best / number


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
    parser.add_argument("--repeat", type=int, default=5, help="timed runs; best is kept")
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
    print(f"best of {args.repeat} runs, each loop calibrated to >= 0.2 s\n")

    row = "{:<18} {:>12} {:>12} {:>8} {:>8}"
    print(row.format("benchmark", "torch", "ember", "ratio", "target"))
    print("-" * 62)
    for name in names:
        fn, target = BENCHMARKS[name]
        t_torch = measure(fn(torch), args.repeat)
        try:
            if ember_error:
                raise RuntimeError(ember_error)
            t_ember = measure(fn(ember), args.repeat)
        except Exception as e:
            error = str(e) if ember_error else f"{type(e).__name__}: {e}"
            print(f"{name:<18} {fmt_time(t_torch):>12}   ember error: {error}")
            continue
        print(row.format(name, fmt_time(t_torch), fmt_time(t_ember),
                         f"{t_ember / t_torch:.2f}x", f"{target:g}x"))


if __name__ == "__main__":
    main()
