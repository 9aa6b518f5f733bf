"""ember.explain(): watch the dispatcher and the backward engine work.

    with ember.explain() as ex:
        y = (x * 2).tanh().sum()
        y.backward()
    print(ex)

Each op call is one row: the op, the dispatch keys it went through (Autograd above the backend
key, or CompositeImplicitAutograd), the kernel that ran, the autograd node it created and the
time it took. During backward each node the engine runs is a row too (keys "engine"), and the
ops its formula calls are indented under it, as are the ops a composite or a custom kernel
calls. PyTorch has no such view of its own dispatcher.

The recorder is a dispatch mode (`_dispatcher._modes`): it sees each call before the
dispatcher does, works out the keys the dispatcher will choose, and passes the call on.
"""
import time

from . import dispatcher as _dispatcher
from ..autograd import engine
from .._core.autocast_state import _autocast_state
from .._core.grad_mode import _grad_state


_active = []  # the explain contexts now open (ember.compile reports to them)


class explain:
    """Context manager recording every op call and backward node; `records` holds the rows.

    A row is a dict: kind ("op" or "node"), op (op or node name), depth (nesting level), keys
    (dispatch keys, in order), kernel (what computed it), node (the autograd node the call
    created, or ""), time_us (wall time including the nested rows).
    """

    def __init__(self):
        self.records = []
        self._depth = 0
        self.compiles = []        # (name, cache entry) per ember.compile compilation
        self.compiled_calls = []  # the name of each compiled call that ran
        self.graph_breaks = []    # (name, reason) per graph break

    def __enter__(self):
        _active.append(self)
        self._depth = 0
        self._prev_observer = engine._observer
        engine._observer = self._on_node
        _dispatcher._modes.append(self._on_op)
        return self

    def __exit__(self, *exc):
        _active.remove(self)
        _dispatcher._modes.remove(self._on_op)
        engine._observer = self._prev_observer

    # ---- recording ------------------------------------------------------------------------
    def _on_op(self, op, args, level):
        if op._composite is not None:
            keys, kernel = ["CompositeImplicitAutograd"], op._composite
        else:
            key, grad = op._key_and_grad(args)
            keys = ["Autograd", key] if grad and _grad_state.enabled else [key]
            kernel = op._table.get(key)
        if op.autocast is not None and _autocast_state.cpu:
            keys = ["AutocastCPU"] + keys  # it casts the inputs, then the keys below run
        rec = self._row("op", op.short_name, keys, _kernel_name(kernel) if kernel else "fallback")
        out = self._timed(rec, _dispatcher.call_in_modes, op, args, level - 1)
        if "Autograd" in keys:
            first = out[0] if isinstance(out, (tuple, list)) and out else out
            fn = getattr(first, "grad_fn", None)
            if fn is not None:
                rec["node"] = fn.name()
        return out

    def _on_node(self, node, buffer):
        rec = self._row("node", node.name(), ["engine"], _node_kernel(node))
        # an observer installed before this one (a profiler) still sees the node
        return self._timed(rec, self._prev_observer or engine.apply_node, node, buffer)

    def _row(self, kind, name, keys, kernel):
        rec = {"kind": kind, "op": name, "depth": self._depth, "keys": keys, "kernel": kernel,
               "node": "", "time_us": 0.0}
        self.records.append(rec)
        return rec

    def _timed(self, rec, fn, *args):
        self._depth += 1
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            rec["time_us"] = (time.perf_counter() - t0) * 1e6
            self._depth -= 1

    # ---- printing -------------------------------------------------------------------------
    def table(self):
        header = ("op", "dispatch keys", "kernel", "autograd node", "time (us)")
        rows = [("  " * r["depth"] + r["op"], " -> ".join(r["keys"]), r["kernel"],
                 r["node"], f"{r['time_us']:.1f}") for r in self.records]
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        line = "  ".join("{:<%d}" % w for w in widths)
        out = [line.format(*header), line.format(*("-" * w for w in widths))]
        out += [line.format(*r).rstrip() for r in rows]
        return "\n".join(out)

    def graphs(self):
        """What ember.compile did while watched: each compilation's reason, guards, graphs
        (forward, backward), fusion groups and generated code; graph breaks; compiled calls."""
        out = []
        for name, entry in self.compiles:
            out.append(f"== ember.compile {name}: compiled ({entry.reason}) in "
                       f"{entry.compile_time * 1e3:.1f} ms")
            out.append("guards:")
            out += [f"  {g}" for g in entry.guards]
            cap = entry.captured
            out.append("captured forward graph:")
            out += ["  " + line for line in str(cap.forward).splitlines()]
            if cap.backward is not None:
                out.append("captured backward graph:")
                out += ["  " + line for line in str(cap.backward).splitlines()]
            for part in cap.compiled or ():
                if part is None:
                    continue
                out.append(f"fusion groups ({part.name}): " + (
                    "none" if not part.fusion else ""))
                out += [f"  {g!r}" for g in part.fusion]
                out.append(f"generated code ({part.name}):")
                out += ["  " + line for line in part.code.splitlines()]
        for name, reason in self.graph_breaks:
            out.append(f"== ember.compile {name}: graph break, ran eagerly: {reason}")
        if self.compiled_calls:
            out.append(f"compiled calls: {len(self.compiled_calls)}, compilations: "
                       f"{len(self.compiles)} (recompilations: "
                       f"{sum(1 for _, e in self.compiles if e.reason != 'first call')})")
        return "\n".join(out)

    def __str__(self):
        text = self.table()
        if self.compiles or self.graph_breaks:
            text += "\n\n" + self.graphs()
        return text

    def __repr__(self):
        return f"<ember.explain: {len(self.records)} op calls>"


def _kernel_name(fn):
    mod = getattr(fn, "__module__", "") or ""
    return f"{mod.rsplit('.', 1)[-1]}.{getattr(fn, '__qualname__', repr(fn))}"


def _node_kernel(node):
    """What computes a node's gradients, in words a reader can look up."""
    deriv = getattr(node, "_deriv", None)
    if deriv is not None:
        return f"derivative of {deriv.op.short_name}"
    fn = getattr(node, "fn", None)  # CopySlices wraps the in-place op's node
    if fn is not None and getattr(fn, "_deriv", None) is not None:
        return f"derivative of {fn._deriv.op.short_name} on a view"
    forward_cls = getattr(node, "_forward_cls", None)
    if forward_cls is not None:
        return f"{forward_cls.__qualname__}.backward"
    if node.name() == "torch::autograd::AccumulateGrad":
        return "accumulate into .grad"
    return type(node).__qualname__
