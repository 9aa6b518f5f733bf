"""Benchmark registry.

A benchmark is a function `bench_xxx(lib)` that builds its inputs with `lib`
(torch or ember) and returns a zero-argument callable to time.  Register it with
`@benchmark(target=...)`, where target is the ember/torch time ratio we aim for.
Any `benchmarks/bench_*.py` file is imported by run.py, so adding a benchmark is
adding a file.
"""

BENCHMARKS = {}  # name -> (function, target ratio)


def benchmark(target):
    def register(fn):
        BENCHMARKS[fn.__name__.removeprefix("bench_")] = (fn, target)
        return fn
    return register
