"""What a profiler run produces, as PyTorch's torch.autograd.profiler_util: one `FunctionEvent`
per recorded range (an op call, a `record_function` block, a backward node), nested by
`cpu_parent` / `cpu_children`; an `EventList` of them that averages by key (`key_averages`),
prints PyTorch's table (`table`) and writes a Chrome trace (`export_chrome_trace`).

Times are in microseconds. "Self" time and memory are an event's own minus its direct
children's. The table has PyTorch's columns, widths and number formats, so the two tables of one
program can be read side by side.
"""
import enum
import json
import math
import os
import socket
from collections import defaultdict


class DeviceType(enum.Enum):
    CPU = 0
    CUDA = 1


class Interval:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _FormattedTimes:
    """The `*_str` views of the times, as the table prints them."""
    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = property(lambda self: _format_time(0.0))
    device_time_total_str = property(lambda self: _format_time(0.0))
    self_device_time_total_str = property(lambda self: _format_time(0.0))

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    device_time = 0.0
    device_time_total = 0.0
    self_device_time_total = 0.0
    device_memory_usage = 0
    self_device_memory_usage = 0


class FunctionEvent(_FormattedTimes):
    """One recorded range on the CPU: an op (name "aten::addmm"), a user annotation
    (`record_function`), or a backward node ("autograd::engine::evaluate_function: ...")."""

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None,
                 input_shapes=None, stack=None, scope=0, use_device=None, cpu_memory_usage=0,
                 device_memory_usage=0, is_async=False, is_remote=False, sequence_nr=-1,
                 node_id=-1, device_type=DeviceType.CPU, device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None,
                 concrete_inputs=None, kwinputs=None, is_user_annotation=False,
                 is_python_function=False, input_dtypes=None):
        # PyTorch's signature (positions included); the arguments ember's CPU-only
        # profiler never records (device memory, remote/async, flops) keep their defaults below
        self.id = id
        self.name = name
        self.trace_name = name if trace_name is None else trace_name
        self.overload_name = overload_name or ""
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread  # a backward event's: the thread of its forward op
        self.kwinputs = kwinputs if kwinputs is not None else {}
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_dtypes = input_dtypes if input_dtypes is not None else []
        self.concrete_inputs = concrete_inputs if concrete_inputs is not None else []
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.sequence_nr = sequence_nr
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        self.python_id = self.python_parent_id = None
        self.is_async, self.is_remote, self.is_legacy = is_async, is_remote, is_legacy
        self.node_id = node_id
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.device_memory_usage = device_memory_usage
        self.flops = 0 if flops is None else flops
        self.kernels = []

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"seq_nr={self.sequence_nr}>")


class FunctionEventAvg(_FormattedTimes):
    """The sums over the events of one key (and input shapes / stack, if grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = self.is_remote = self.is_legacy = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            for name in ("node_id", "is_async", "is_remote", "cpu_parent", "cpu_children",
                         "overload_name", "input_shapes", "stack", "scope", "device_type",
                         "is_legacy", "use_device", "is_user_annotation"):
                setattr(self, name, getattr(other, name))
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops
        self.count += other.count
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with PyTorch's summaries."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = True

    def _populate_cpu_children(self):
        """Link each synchronous CPU event to the innermost event of its thread whose time
        range encloses it (the recorder links the events it makes as they open; this does it
        for events built by hand). Per thread, events sorted by start (longer first at equal
        starts) nest in a stack."""
        per_thread = defaultdict(list)
        for ev in self:
            if not ev.is_async and ev.device_type == DeviceType.CPU:
                per_thread[(ev.thread, ev.node_id)].append(ev)
        for events in per_thread.values():
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
            open_ = []
            for ev in events:
                while open_ and (ev.time_range.start >= open_[-1].time_range.end
                                 or ev.time_range.end > open_[-1].time_range.end):
                    open_.pop()
                if open_ and ev.cpu_parent is None:
                    open_[-1].append_cpu_child(ev)
                    ev.set_cpu_parent(open_[-1])
                open_.append(ev)

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """PyTorch's profiler table; `sort_by` names an event attribute (`cpu_time_total`,
        `self_cpu_time_total`, `cpu_memory_usage`, `count`, ...), largest first."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            profile_memory=self._profile_memory, with_flops=self._with_flops,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One FunctionEventAvg per event name (and per input shapes and top stack entries
        when grouped by them), in the order each key first appears."""
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [evt.key, str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        averages = EventList(stats.values(), use_device=self._use_device,
                             profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in averages:
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return averages

    def total_average(self):
        total = FunctionEventAvg()
        for evt in self:
            total.key = evt.key
            total += evt
        total.key = "Total"
        return total

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """One line per event with a stack: its frames outermost first, joined by ";" (spaces
        and separators in them as "_"), then the metric in whole units -- the folded-stacks
        input of flamegraph.pl and speedscope."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        attribute = metric.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        safe = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for evt in self:
                value = int(getattr(evt, attribute)) if evt.stack else 0
                if value > 0:
                    frames = ";".join(entry.translate(safe) for entry in reversed(evt.stack))
                    f.write(f"{frames} {value}\n")

    def export_chrome_trace(self, path, base_time_ns=0, metadata=None):
        """Write the events as a Chrome trace-event JSON object (chrome://tracing, Perfetto)."""
        write_chrome_trace(path, self, base_time_ns, metadata or {},
                           getattr(self, "_memory_records", ()))


def write_chrome_trace(path, events, base_time_ns, metadata, memory_records=()):
    """Chrome's trace-event format as PyTorch's Kineto writes it: process and thread metadata
    ("ph": "M"), one complete event ("ph": "X") per range with its category (cpu_op,
    user_annotation), start and duration in microseconds and the op's input dims and types,
    and a "[memory]" instant event ("ph": "i") per change the allocator's statistics showed."""
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
              "args": {"name": "python"}},
             {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "ts": 0,
              "args": {"labels": "CPU"}}]
    for tid in sorted({e.thread for e in events}):
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                      "args": {"name": f"thread {tid} (python)"}})
    for i, e in enumerate(events):
        if e.name == "[memory]":  # a top-level memory change: one of the instant events below
            continue
        args = {"External id": e.id, "Ev Idx": i}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_dtypes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        if e.is_python_function:
            args = {"Python parent id": e.python_parent_id, "Python id": e.python_id,
                    "Ev Idx": i}
        category = ("python_function" if e.is_python_function else
                    "user_annotation" if e.is_user_annotation else "cpu_op")
        trace.append({"ph": "X", "cat": category,
                      "name": e.trace_name, "pid": pid, "tid": e.thread,
                      "ts": e.time_range.start, "dur": e.time_range.elapsed_us(), "args": args})
    for ts, nbytes, allocated, reserved, thread in memory_records:
        trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                      "pid": pid, "tid": thread, "ts": ts,
                      "args": {"Total Reserved": reserved, "Total Allocated": allocated,
                               "Bytes": nbytes, "Device Id": -1, "Device Type": 0}})
    doc = {"schemaVersion": 1, "deviceProperties": [], "host_name": socket.gethostname(),
           "displayTimeUnit": "ms", "baseTimeNanoseconds": base_time_ns, **metadata,
           "traceEvents": trace, "traceName": str(path)}
    with open(path, "w") as f:
        json.dump(doc, f)


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, profile_memory=False,
                 with_flops=False, top_level_events_only=False, time_unit=None):
    """PyTorch's profiler table: right-aligned columns of width 12 two spaces apart, the name
    column as wide as the longest key + 4 (at most 55), then Input Shapes and Source Location
    when the events have them, and the self CPU time total underneath."""
    if len(events) == 0:
        return ""
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0
                           for e in events)
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")),
                        reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [e.stack for e in events if e.stack]
    src_width = None
    if stacks:
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [(name_width, ">")] + [(12, ">")] * (len(headers) - 1)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append((shapes_width, ">"))
    if stacks:
        headers.append("Source Location")
        widths.append((src_width, "<"))
    flops = [e.flops for e in events if e.flops > 0] if with_flops else []
    if flops:  # "Total FLOPs", "Total KFLOPs", ... scaled to the smallest count
        power = int(max(0, min(math.log10(min(flops)) / 3, 5)))
        headers.append("Total " + ("", "K", "M", "G", "T", "P")[power] + "FLOPs")
        widths.append((12, ">"))
    row_format = "".join("{: " + align + str(w) + "}  " for w, align in widths)
    header_sep = "".join("-" * w + "  " for w, _ in widths)
    line_length = sum(w + 2 for w, _ in widths) - 2

    def fmt_time(us, default):
        units = {"s": 1e6, "ms": 1e3, "us": 1.0}
        return f"{us / units[time_unit]:.3f}{time_unit}" if time_unit in units else default

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(evt.self_cpu_time_total, total),
               fmt_time(evt.self_cpu_time_total, evt.self_cpu_time_total_str),
               _format_time_share(evt.cpu_time_total, total),
               fmt_time(evt.cpu_time_total, evt.cpu_time_total_str),
               fmt_time(evt.cpu_time, evt.cpu_time_str)]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage),
                    _format_memory(evt.self_cpu_memory_usage)]
        row.append(evt.count)
        if has_input_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        if flops:  # before the source location, as PyTorch fills its row (not its header)
            row.append(f"{evt.flops * 10.0 ** (-3 * power):8.3f}" if evt.flops > 0 else "--")
        if stacks:
            row.append(_trim_path(evt.stack[0], src_width) if evt.stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in evt.stack[1:]:
                lines.append(row_format.format(*blank, _trim_path(entry, src_width)))
            lines.append(row_format.format(*blank, ""))
    lines.append(header_sep)
    lines.append(f"Self CPU time total: {fmt_time(total, _format_time(total))}")
    return "\n".join(lines) + "\n"


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path
