"""torch.autograd.profiler: time every op call, backward node and `record_function` block.

    with ember.autograd.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with ember.autograd.profiler.record_function("forward"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

The recorder sits where `ember.explain()` does: a dispatch mode sees each op call before the
dispatcher (named as PyTorch names it, "aten::addmm"), and the engine's observer sees each
backward node ("autograd::engine::evaluate_function: AddmmBackward0" around the node's own
"AddmmBackward0", with the ops its formula calls inside). `record_function` opens a range of its
own. Ranges nest as the calls do, so each event knows its parent and children, and "self" time
is its own minus its children's. `ember.profiler.profile` (schedules, trace handlers) drives it.

Memory (`profile_memory=True`) is read from the caching allocator's statistics, as PyTorch's
profiler reads its allocators' reports: at every range boundary the recorder reads the CPU
allocator's "allocated_bytes" (`ember.memory.memory_allocated()`), and the change since the
last reading -- blocks allocated minus blocks freed, each rounded up to 512 bytes -- belongs to
the innermost open range or, with none open, becomes a top-level "[memory]" event (a tensor
freed between ops). A range's "CPU Mem" is its own changes plus its children's, so the column
adds up to what `memory_allocated()` moved, and the trace's "[memory]" instant events carry the
allocator's "Total Allocated" and "Total Reserved" after each change.
"""
import math
import functools
import os
import sys
import threading
import time

from .._core.caching_allocator import cpu_allocator as _allocator
from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from . import engine
from .profiler_util import EventList, FunctionEvent

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx"]

_active = []  # the recorders running now; record_function opens its range in each of them
_EMBER_DIR = __file__.rsplit("/autograd/", 1)[0]


_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
               "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
               "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
               "bool": "bool", "complex64": "c10::complex<float>",
               "complex128": "c10::complex<double>"}


def _shapes_and_types(args):
    """PyTorch's "Input Dims" and "Input type": a tensor's shape and element type; [] and
    "Scalar", "TensorList", ... for the other arguments."""
    shapes, types = [], []
    for a in args:
        if isinstance(a, Tensor):
            shapes.append(list(a.shape))
            types.append(_TYPE_NAMES.get(a.dtype.name, a.dtype.name))
        else:
            shapes.append([])
            if isinstance(a, (list, tuple)):
                types.append("TensorList" if a and isinstance(a[0], Tensor) else "ScalarList")
            else:
                types.append("" if a is None else "Scalar")
    return shapes, types


def _matmul_flops(a, b):
    """2 * M * K * N per matrix of a (..., M, K) @ b (..., K, N) product, batches broadcast."""
    if a.dim() < 2 or b.dim() < 2:
        return 0
    batch = 1
    for n in (a.shape[:-2] if a.dim() >= b.dim() else b.shape[:-2]):
        batch *= n
    return product_flops(batch, a.shape[-2], a.shape[-1], b.shape[-1])


def product_flops(batch, m, k, n):
    """PyTorch's count for a batch of (m, k) @ (k, n) products: 2 flops per multiply-add
    (utils.flop_counter's mm/bmm formulas are this too)."""
    return batch * m * n * 2 * k


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """PyTorch's count for a convolution: each output point (each input point, transposed)
    meets the whole filter, for every batch element and every (input channel of its group,
    output channel) pair, 2 flops per multiply-add (shared with utils.flop_counter)."""
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return math.prod(conv_shape) * math.prod(filter_size) * x_shape[0] * c_out * c_in * 2


def _conv2d_flops(input, weight, stride, padding, dilation, groups):
    n, c_in, h, w = input.shape
    c_out, _, kh, kw = weight.shape
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[-1] - dilation[-1] * (kw - 1) - 1) // stride[-1] + 1
    return conv_flop_count(input.shape, weight.shape, (n, c_out, oh, ow))


def _numel_of_first(args):
    return args[0].numel() if isinstance(args[0], Tensor) else 0


# PyTorch's flop formulas (with_flops): matrix products count 2 * M * K * N, conv2d 2 flops per
# multiply-add of its output, mul and add one per element of their first input. ember's fused
# linear, matmul and convolution ops count what the ops PyTorch decomposes them into count
# (addmm/mm/bmm, conv2d: 2-d and not transposed), so a program's total is PyTorch's.
_FLOPS = {
    "mm": lambda a: _matmul_flops(a[0], a[1]),
    "bmm": lambda a: _matmul_flops(a[0], a[1]),
    "addmm": lambda a: _matmul_flops(a[1], a[2]),
    "baddbmm": lambda a: _matmul_flops(a[1], a[2]),
    "matmul": lambda a: _matmul_flops(a[0] if a[0].dim() > 1 else a[0].unsqueeze(0), a[1]),
    "linear": lambda a: _matmul_flops(a[0].reshape(-1, a[0].shape[-1]), a[1].mT),
    "mul": _numel_of_first,
    "add": _numel_of_first,
    "convolution": lambda a: (_conv2d_flops(a[0], a[1], a[3], a[4], a[5], a[8])
                              if a[1].dim() == 4 and not a[6] else 0),
    "_convolution_with_columns": lambda a: (_conv2d_flops(*a[:2], *a[3:7])
                                            if a[1].dim() == 4 else 0),
}


def _flops(op, args):
    formula = _FLOPS.get(op.schema.name)
    if formula is None or op.schema.namespace != "aten":
        return 0
    try:
        return formula(args)
    except (AttributeError, IndexError, ValueError, TypeError):  # arguments the op rejects
        return 0


def _python_stack():
    """The caller's frames outside ember, innermost first, as "file(line): function"."""
    stack = []
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if not _is_ember(code.co_filename):
            stack.append(f"{code.co_filename}({frame.f_lineno}): {code.co_name}")
        frame = frame.f_back
    return stack


_short_paths = {}


def _is_ember(filename):
    """ember's own source, or code it generated ("<ember generated bindings>")."""
    return filename.startswith(_EMBER_DIR) or filename.startswith("<ember")



def _short_path(filename):
    """`filename` relative to the sys.path entry it is under ("torch/nn/module.py"), as
    PyTorch's Python tracer names frames; cached per file."""
    short = _short_paths.get(filename)
    if short is None:
        roots = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
        under = [r for r in roots if filename.startswith(r + os.sep)]
        short = filename[len(max(under, key=len)) + 1:] if under else filename
        _short_paths[filename] = short
    return short


class _Recorder:
    """One recording: every range opened between start() and stop() becomes a FunctionEvent,
    with the innermost open range as its parent."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False,
                 use_device=None, with_flops=False):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.use_device, self.with_flops = with_stack, use_device, with_flops
        self.events = []
        self.memory_records = []  # (ts_us, bytes, total allocated, total reserved, thread)
        self._open = []
        self._ids = 0
        self._in_op = 0  # ops running now (nested ones count too)

    def start(self):
        self.base_time_ns = time.time_ns()
        self._t0 = time.perf_counter_ns()
        if self.profile_memory:
            self._seen = _allocator.current("allocated_bytes")
        self._prev_observer = engine._observer
        engine._observer = self._on_node
        _dispatcher._modes.append(self._on_op)
        _active.append(self)
        if self.with_stack:
            self._start_python_tracer()

    def stop(self):
        if self.with_stack:
            sys.setprofile(self._prev_profile)
        _active.remove(self)
        _dispatcher._modes.remove(self._on_op)
        engine._observer = self._prev_observer
        while self._open:  # ranges still open (a record_function left unclosed) end now
            self.end(self._open[-1])
        if self.profile_memory:
            self._read_memory()

    def _read_memory(self):
        """Give the change in allocated bytes since the last reading to the innermost open
        range (or to a new top-level "[memory]" event)."""
        now = _allocator.current("allocated_bytes")
        change = now - self._seen
        if not change:
            return
        self._seen = now
        ts = (time.perf_counter_ns() - self._t0) / 1e3
        thread = threading.get_native_id()
        self.memory_records.append((ts, change, now, _allocator.current("reserved_bytes"),
                                    thread))
        if self._open:
            self._open[-1].cpu_memory_usage += change
        else:
            self._ids += 1
            self.events.append(FunctionEvent(self._ids, "[memory]", thread, ts, ts,
                                             cpu_memory_usage=change,
                                             use_device=self.use_device))

    # ---- with_stack: the Python calls around the ops, as PyTorch's Python tracer records them
    def _start_python_tracer(self):
        """Open an event for each frame already running outside ember (outermost first), then
        follow calls and returns with sys.setprofile."""
        self._python = []  # (frame, event) of the open Python-function events, innermost last
        running = []
        frame = sys._getframe(1)
        while frame is not None:
            if not _is_ember(frame.f_code.co_filename):
                running.append(frame)
            frame = frame.f_back
        for frame in reversed(running):
            self._begin_python(frame, frame.f_lineno)
        self._prev_profile = sys.getprofile()
        sys.setprofile(self._on_python)

    def _begin_python(self, frame, line, name=None):
        code = frame.f_code
        if name is None:
            name = f"{_short_path(code.co_filename)}({line}): {code.co_name}"
        parent = self._python[-1][1].python_id if self._python else None
        ev = self.begin(name, python_function=True)
        ev.python_id, ev.python_parent_id = ev.id, parent
        self._python.append((frame, ev))

    def _on_python(self, frame, event, arg):
        """sys.setprofile's callback: calls and returns of frames outside ember, and the
        C functions they call (named by their repr, "<built-in method ...>"). Inside an op
        nothing is recorded: a kernel's NumPy calls are what PyTorch's C++ kernels are, and its
        tracer does not see those either."""
        if self._in_op or _is_ember(frame.f_code.co_filename):
            return
        if event == "call":
            self._begin_python(frame, frame.f_code.co_firstlineno)
        elif event == "c_call":
            self._begin_python(frame, 0, name=repr(arg))
        elif self._python and self._python[-1][0] is frame:  # return, c_return, c_exception
            is_c_event = event != "return"
            if is_c_event == self._python[-1][1].name.startswith("<built-in"):
                self.end(self._python.pop()[1])

    def begin(self, name, args=None, scope=0, is_user_annotation=False, python_function=False):
        trace_name = None
        if name.startswith("ProfilerStep#"):  # the table adds up all steps, the trace keeps N
            name, trace_name = "ProfilerStep*", name
        if self.profile_memory:
            self._read_memory()
        shapes = types = None
        if self.record_shapes and args is not None:
            shapes, types = _shapes_and_types(args)
        self._ids += 1
        start = (time.perf_counter_ns() - self._t0) / 1e3
        ev = FunctionEvent(self._ids, name, threading.get_native_id(), start, start,
                           fwd_thread=0, input_shapes=shapes, input_dtypes=types, scope=scope,
                           stack=_python_stack() if self.with_stack and not python_function
                           else None,
                           is_user_annotation=is_user_annotation, trace_name=trace_name,
                           use_device=self.use_device, is_python_function=python_function)
        if self._open:
            ev.set_cpu_parent(self._open[-1])
            self._open[-1].append_cpu_child(ev)
        self._open.append(ev)
        self.events.append(ev)
        return ev

    def end(self, ev):
        """Close `ev` (and any range opened inside it and left open); its memory is its own
        changes plus its children's. A range already closed that way (a Python function that
        called profiler.step(), which ended the step range around it) stays as it was."""
        if not any(r is ev for r in self._open):
            return
        if self.profile_memory:
            self._read_memory()
        ev.time_range.end = (time.perf_counter_ns() - self._t0) / 1e3
        while self._open:
            closed = self._open.pop()
            closed.cpu_memory_usage += sum(c.cpu_memory_usage for c in closed.cpu_children)
            if closed is ev:
                break

    # ---- what the dispatcher and the engine call -----------------------------------------
    def _on_op(self, op, args, level):
        ev = self.begin(f"{op.schema.namespace}::{op.schema.name}", args)
        if self.with_flops:
            ev.flops = _flops(op, args)
        self._in_op += 1
        try:
            out = _dispatcher.call_in_modes(op, args, level - 1)
        finally:
            self._in_op -= 1
            self.end(ev)
        fn = getattr(out[0] if isinstance(out, (tuple, list)) and out else out, "grad_fn", None)
        if fn is not None:
            ev.sequence_nr = getattr(fn, "_seq", -1)
        return out

    def _on_node(self, node, buffer):
        name = node.name()
        outer = self.begin(f"autograd::engine::evaluate_function: {name}")
        inner = self.begin(name, scope=1)  # scope 1: PyTorch's RecordScope.BACKWARD_FUNCTION
        outer.sequence_nr = inner.sequence_nr = getattr(node, "_seq", -1)
        # the forward op's thread: ember runs backward on the thread that recorded the graph
        outer.fwd_thread = inner.fwd_thread = outer.thread
        try:
            if self._prev_observer is not None:
                return self._prev_observer(node, buffer)
            return engine.apply_node(node, buffer)
        finally:
            self.end(inner)
            self.end(outer)


class record_function:
    """Label a block (or, as a decorator, a function) in the running profilers' records:
    `with record_function("forward"): ...` adds a range named "forward" around the ops inside.
    Without a running profiler it does nothing."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._events = []

    def __enter__(self):
        self._events = [(r, r.begin(self.name, is_user_annotation=True)) for r in _active]
        return self

    def __exit__(self, *exc):
        for recorder, ev in self._events:
            if recorder in _active:
                recorder.end(ev)
        self._events = []
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)
        return wrapped


class _emit_ranges:
    """Make every op emit a range for an external tool (VTune's ITT, Nsight's NVTX). ember is
    built with neither, so entering only keeps PyTorch's checks: not reentrant, and NVTX needs a
    CUDA device (entering synchronizes it, which raises on a CPU build)."""
    _tool = None

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def _start(self):
        pass

    def __enter__(self):
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError(f"{self._tool} annotation context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def __exit__(self, *exc):
        return False


class emit_itt(_emit_ranges):
    """Context manager that makes every autograd operation emit an ITT range (a no-op here)."""
    _tool = "ITT"


class emit_nvtx(_emit_ranges):
    """Context manager that makes every autograd operation emit an NVTX range (needs CUDA)."""
    _tool = "NVTX"

    def _start(self):   # synchronizing the CUDA device first: what a CPU build says
        raise AssertionError("Torch not compiled with CUDA enabled")


class profile:
    """The autograd profiler (PyTorch's legacy API; `ember.profiler.profile` drives it too).

    `function_events` holds the recorded events once the context exits; `key_averages()`,
    `table()`, `total_average()` and `export_chrome_trace(path)` summarise them."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            raise RuntimeError("ember has no CUDA device to profile: use_cuda=True")
        if not use_cpu:
            raise RuntimeError("ember profiles the CPU only: use_cpu=False leaves nothing "
                               "to record")
        self.use_device = use_device
        self.record_shapes = record_shapes or with_flops  # flops are computed from the shapes
        self.profile_memory = profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.acc_events = acc_events
        self.entered = False
        self.function_events = None
        self._recorder = None
        self._events = []
        self._memory_records = []

    def _prepare_trace(self):
        self.entered = True

    def _start_trace(self):
        self.entered = True
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack,
                                   self.use_device, self.with_flops)
        self._recorder.start()

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        recorder = self._recorder
        recorder.stop()
        self._events = (self._events if self.acc_events else []) + recorder.events
        self.base_time_ns = recorder.base_time_ns
        self._memory_records = (self._memory_records if self.acc_events else []) + \
            recorder.memory_records
        self.function_events = EventList(self._events, use_device=self.use_device,
                                         profile_memory=self.profile_memory,
                                         with_flops=self.with_flops)
        self.function_events._memory_records = self._memory_records
        self.entered = False
        return False

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def _check_finish(self):
        """Before the first recording ends there are no events yet (an empty list, as in
        PyTorch)."""
        if self.function_events is None:
            self.function_events = EventList([], use_device=self.use_device,
                                             profile_memory=self.profile_memory)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        self._check_finish()
        self.function_events.export_chrome_trace(
            path, self.base_time_ns, {"record_shapes": int(self.record_shapes),
                                      "profile_memory": int(self.profile_memory)})

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total


def _profiler_enabled():
    """Whether a `torch.autograd.profiler.profile` is recording now."""
    return bool(_active)


# torch.ops.profiler._record_function_enter / _record_function_exit: the ops PyTorch's older
# record_function used; the handle is a 0-dim tensor that carries its range. Plain functions
# under ember.ops.profiler, not dispatched ops: a profiled op's range closes the ranges opened
# inside it, and this one must stay open until _record_function_exit.
def _record_function_enter(name, args=None):
    from .. import zeros
    rf = record_function(name, args)
    rf.__enter__()
    handle = zeros(())
    handle.__dict__["_record_function"] = rf
    return handle


def _record_function_exit(handle):
    rf = handle.__dict__.pop("_record_function", None)
    if rf is not None:
        rf.__exit__(None, None, None)


def _define_profiler_ops():
    from .._dispatch.ops import ops
    ops.profiler._record_function_enter = _record_function_enter
    ops.profiler._record_function_exit = _record_function_exit


_define_profiler_ops()
