"""ember.explain(): watch the dispatcher work.

    with ember.explain() as ex:
        y = (x * 2).relu().sum()
        y.backward()
    print(ex)

Each op call is one row: the op, the dispatch keys it went through (Autograd above the backend
key, or CompositeImplicitAutograd), the kernel that ran, the autograd node it created and the
time it took. Calls made inside another op (a composite's pieces, a backward formula's ops) are
indented under it. PyTorch has no such view of its own dispatcher.
"""
from ._dispatcher import _explain


class explain:
    def __init__(self):
        self.records = []

    def __enter__(self):
        self._prev = (_explain.active, _explain.records, _explain.depth)
        _explain.active, _explain.records, _explain.depth = True, self.records, 0
        return self

    def __exit__(self, *exc):
        _explain.active, _explain.records, _explain.depth = self._prev

    def table(self):
        header = ("op", "dispatch keys", "kernel", "autograd node", "time (us)")
        rows = [("  " * r["depth"] + r["op"], " -> ".join(r["keys"]), r["kernel"],
                 r["node"], f"{r['time_us']:.1f}") for r in self.records]
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        line = "  ".join("{:<%d}" % w for w in widths)
        out = [line.format(*header), line.format(*("-" * w for w in widths))]
        out += [line.format(*r) for r in rows]
        return "\n".join(out)

    def __str__(self):
        return self.table()

    def __repr__(self):
        return f"<ember.explain: {len(self.records)} op calls>"
