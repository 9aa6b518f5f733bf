"""torch._lazy.metrics: counters of what the lazy device did, under PyTorch's names.

    lazy::<op>         an op recorded into the pending graph
    aten::<op>         an op run eagerly on the device data (its output shape depends on values)
    MarkStep           mark_step() calls
    UncachedCompile    pending graphs compiled (a structure not seen before)
    CachedCompile      pending graphs that reused a compiled graph from the cache
    SyncedTensorsWithIR  lazy tensors that received their values from a graph run
"""
_counters = {}


def _count(name, n=1):
    _counters[name] = _counters.get(name, 0) + n


def reset():
    """Resets all metric counters."""
    _counters.clear()


def counter_names():
    """The names of the counters that have counted something since the last reset."""
    return sorted(_counters)


def counter_value(name):
    """The value of counter `name`, or None if it has not counted since the last reset."""
    return _counters.get(name)


def metrics_report():
    """Every counter, in PyTorch's report layout."""
    return "".join(f"Counter: {name}\n  Value: {_counters[name]}\n" for name in sorted(_counters))
