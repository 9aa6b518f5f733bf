"""ember.memory: the caching allocator's statistics, history and snapshots for the CPU device.

PyTorch offers these for CUDA as torch.cuda.memory (and torch.accelerator); ember's CPU tensors
come from the same kind of caching allocator (ember/_core/caching_allocator.py), so the same
calls answer for the CPU: `memory_allocated()`, `max_memory_allocated()`, `memory_stats()` with
torch.cuda.memory_stats' keys, `memory_summary()`, and `_record_memory_history()` /
`_snapshot()` / `_dump_snapshot()` in PyTorch's snapshot format (viewable with PyTorch's
memory viewer, torch.cuda._memory_viz, or `python -m ember.memory.viz`).
"""
import collections
import pickle
import sys

from .._core import caching_allocator as _ca
from .._core.caching_allocator import OutOfMemoryError

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "memory_stats", "memory_stats_as_nested_dict", "memory_summary",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache",
           "set_per_process_memory_fraction", "get_per_process_memory_fraction", "mem_get_info",
           "caching_allocator_enable", "memory_snapshot", "OutOfMemoryError"]


def _allocator(device=None):
    """The allocator of `device`: None, "cpu", a cpu device or 0 name the CPU."""
    if device is None or device == 0:
        return _ca.cpu_allocator
    from .._core.device import device as _device
    d = device if not isinstance(device, (str, int)) or isinstance(device, bool) else \
        _device(device) if isinstance(device, str) else None
    if d is not None and getattr(d, "type", None) == "cpu":
        return _ca.cpu_allocator
    raise ValueError(f"ember.memory: expected the cpu device (ember has no other device with "
                     f"a caching allocator), got {device!r}")


def memory_stats_as_nested_dict(device=None):
    return _allocator(device).memory_stats()


def memory_stats(device=None):
    """The statistics flattened to "allocated_bytes.all.current"-style keys, sorted, as
    torch.cuda.memory_stats returns them."""
    flat = []
    todo = [("", memory_stats_as_nested_dict(device))]
    while todo:
        prefix, obj = todo.pop()
        for key, value in obj.items():
            key = "_".join(map(str, key)) if isinstance(key, tuple) else str(key)
            if isinstance(value, dict):
                todo.append((prefix + key + ".", value))
            else:
                flat.append((prefix + key, value))
    flat.sort()
    return collections.OrderedDict(flat)


def _stat(device, name, field):
    allocator = _allocator(device)  # current() and peak() free the queued blocks first
    return allocator.current(name) if field == "current" else allocator.peak(name)


def memory_allocated(device=None):
    """Bytes of the blocks that tensors hold now (each rounded up to 512 bytes)."""
    return _stat(device, "allocated_bytes", "current")


def max_memory_allocated(device=None):
    return _stat(device, "allocated_bytes", "peak")


def memory_reserved(device=None):
    """Bytes of the segments the allocator holds (allocated blocks and cached free ones)."""
    return _stat(device, "reserved_bytes", "current")


def max_memory_reserved(device=None):
    return _stat(device, "reserved_bytes", "peak")


def reset_peak_memory_stats(device=None):
    _allocator(device).reset_peak_stats()  # after freeing the queued blocks


def reset_accumulated_memory_stats(device=None):
    _allocator(device).reset_accumulated_stats()  # after freeing the queued blocks


def empty_cache():
    """Return every wholly free segment to the system."""
    _ca.cpu_allocator.empty_cache()


def set_per_process_memory_fraction(fraction, device=None):
    """Limit reserved memory to `fraction` of the machine's memory; beyond it, allocation
    releases cached segments, retries, and then raises OutOfMemoryError."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _allocator(device).set_memory_fraction(fraction)


def get_per_process_memory_fraction(device=None):
    return _allocator(device).fraction


def mem_get_info(device=None):
    """(free, total) bytes of the device: for the CPU, the machine's memory not reserved."""
    allocator = _allocator(device)
    total = allocator.raw.total_memory()
    limit = allocator.limit if allocator.limit is not None else total
    return max(limit - memory_reserved(device), 0), total


def caching_allocator_enable(value=True):
    """Switch the caching allocator on or off for new tensors (EMBER_CPU_ALLOCATOR=native
    starts with it off); tensors that hold blocks keep them until they die."""
    _ca.enabled = bool(value)


def _format_size(size, reference):
    prefixes = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if reference < 768 * 1024:
            break
        prefix, size, reference = new_prefix, size // 1024, reference / 1024
    return f"{size:6d} {prefix}"


def _format_count(count, reference):
    prefixes = [" ", "K", "M"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if reference < 750 * 1000:
            break
        prefix, count, reference = new_prefix, count // 1000, reference / 1000
    return f"{count:7d} {prefix} "


def memory_summary(device=None, abbreviated=False):
    """The statistics as torch.cuda.memory_summary's table."""
    stats = memory_stats(device)
    rule = "=" * 75
    lines = [rule, f" {'':16} ember CPU memory summary, device ID {0:<20d} ", "-" * 75,
             f"  {'':9} CPU OOMs: {stats['num_ooms']:<13d} | {'':6} segment alloc retries: "
             f"{stats['num_alloc_retries']:<5d}  ",
             rule, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    metrics = [("allocated_bytes", "Allocated memory", _format_size),
               ("active_bytes", "Active memory", _format_size),
               ("requested_bytes", "Requested memory", _format_size),
               ("reserved_bytes", "CPU reserved memory", _format_size),
               ("inactive_split_bytes", "Non-releasable memory", _format_size),
               ("allocation", "Allocations", _format_count),
               ("active", "Active allocs", _format_count),
               ("segment", "CPU reserved segments", _format_count),
               ("inactive_split", "Non-releasable allocs", _format_count)]
    for key, name, fmt in metrics:
        lines.append("-" * 75)
        rows = [("all", name)]
        if not abbreviated:
            rows += [("large_pool", "      from large pool"),
                     ("small_pool", "      from small pool")]
        reference = None
        for sub, label in rows:
            values = [stats[f"{key}.{sub}.{f}"] for f in ("current", "peak", "allocated", "freed")]
            reference = reference or values
            cells = " | ".join(fmt(v, r) for v, r in zip(values, reference))
            lines.append(f" {label:<21} | {cells} ")
    for key, name in (("oversize_allocations", "Oversize allocations"),
                      ("oversize_segments", "Oversize CPU segments")):
        lines.append("-" * 75)
        values = [stats[f"{key}.{f}"] for f in ("current", "peak", "allocated", "freed")]
        lines.append(f" {name:<21} | " + " | ".join(_format_count(v, v) for v in values) + " ")
    lines.append(rule)
    return "|" + "|\n|".join(lines) + "|\n"


# ---- history and snapshots ------------------------------------------------------------------
def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize,
                           device=None, clear_history=False, compile_context=False,
                           global_record_annotations=False, skip_actions=None):
    """Record a stack trace with every allocation (enabled="state") and also a trace of every
    alloc / free / segment event (enabled="all"); None stops recording."""
    if enabled not in (None, "state", "all"):
        raise ValueError(f"_record_memory_history: enabled must be None, 'state' or 'all', "
                         f"got {enabled!r}")
    if context not in (None, "state", "alloc", "all"):
        raise ValueError(f"_record_memory_history: context must be None, 'state', 'alloc' or "
                         f"'all', got {context!r}")
    if stacks not in ("python", "all"):
        raise ValueError(f"_record_memory_history: stacks must be 'python' or 'all', "
                         f"got {stacks!r}")
    allocator = _allocator(device)
    with allocator.lock:
        allocator._drain()
        old = allocator.recording
        if enabled is None:
            allocator.recording = None
            return
        history = _ca.History(context, stacks, max_entries, enabled == "all", skip_actions)
        if old is not None and not clear_history:
            history.trace, history.next = old.trace, old.next
        allocator.recording = history
        allocator.release_held()


def _snapshot(device=None, augment_with_fx_traces=False):
    """The allocator's segments with their blocks (state, size, the stack that allocated them)
    and the recorded trace, as torch.cuda.memory._snapshot() returns them."""
    return _allocator(device).snapshot()


def memory_snapshot(mempool_id=None, include_traces=True):
    """The segments of torch.cuda.memory_snapshot()."""
    return _ca.cpu_allocator.snapshot()["segments"]


def _dump_snapshot(filename="dump_snapshot.pickle", augment_with_fx_traces=False):
    """Pickle `_snapshot()` to `filename`: PyTorch's viewer (pytorch.org/memory_viz) and
    `python -m ember.memory.viz` read it."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)
