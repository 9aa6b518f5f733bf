"""What the `__torch_function__` check costs plain tensors, in instructions (load-independent):

    PYTHONHASHSEED=0 OMP_NUM_THREADS=1 valgrind --tool=callgrind \\
        --toggle-collect=functools_reduce python benchmarks/bench_torch_function.py add 2000

counts only the loop (run inside functools.reduce); compare the "Collected" line on two
checkouts. `add`: `a + b` and `ember.add(a, b)` of two (16,) tensors; `chain`: Linear 16->8,
relu, (y * y).sum(), backward.
"""
import functools
import os
import sys



def main(which, n):
    """(run as a script only: benchmarks/run.py imports every bench_*.py file)"""
    import ember as torch
    torch.set_num_threads(1)
    a, b = torch.ones(16), torch.ones(16)
    lin = torch.nn.Linear(16, 8)
    x = torch.randn(4, 16)

    def add():
        a + b
        torch.add(a, b)

    def chain():
        y = torch.nn.functional.relu(lin(x))
        loss = (y * y).sum()
        loss.backward()

    for _ in range(3):   # warm up both, so both runs load the same code
        add()
        chain()
    fn = add if which == "add" else chain
    functools.reduce(lambda acc, _: fn(), range(n), None)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main(sys.argv[1], int(sys.argv[2]))
