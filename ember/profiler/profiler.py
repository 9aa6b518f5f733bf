"""torch.profiler.profile: the autograd profiler driven by a step schedule.

    with ember.profiler.profile(schedule=ember.profiler.schedule(wait=1, warmup=1, active=2),
                                on_trace_ready=ember.profiler.tensorboard_trace_handler("log"),
                                record_shapes=True) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

Each `step()` asks the schedule what the next step is (NONE, WARMUP, RECORD,
RECORD_AND_SAVE) and moves between them as PyTorch's action table does: a recording starts at
the first RECORD step of a cycle, stops after its RECORD_AND_SAVE step and is handed to
`on_trace_ready`. Steps are labelled "ProfilerStep#N" ranges. Only CPU activity exists here.
"""
import enum
import gzip
import os
import shutil
import socket
import tempfile
import time
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
from functools import partial

from ..autograd import profiler as prof

__all__ = ["ProfilerAction", "ProfilerActivity", "schedule", "supported_activities",
           "tensorboard_trace_handler", "profile", "_KinetoProfile"]

PROFILER_STEP_NAME = "ProfilerStep"


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this build can record: the CPU's."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The step -> action function: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last one RECORD_AND_SAVE), `repeat` times
    (0: forever). `skip_first_wait` drops the first cycle's wait."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 \
            else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=_user_stacklevel())
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An `on_trace_ready` that writes each trace as
    `<dir_name>/<worker_name>.<time_ns>.pt.trace.json[.gz]` (TensorBoard's profiler plugin
    reads that directory); `worker_name` defaults to "<hostname>_<pid>"."""
    def handler_fn(p):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        p.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


_warned = set()


def _warn_once(message):
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, stacklevel=_user_stacklevel())


class _KinetoProfile:
    """Start/stop profiling by hand: `prepare_trace` makes a fresh recording (unless
    `acc_events`), `start_trace` / `stop_trace` bracket what is recorded."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        unsupported = self.activities - supported_activities()
        if unsupported:
            raise RuntimeError(f"ember records CPU activity only; cannot profile "
                               f"{sorted(a.name for a in unsupported)}")
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.use_device = None
        self.profiler = None
        self._metadata = {}

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        if self.profiler is not None and not self.acc_events:
            _warn_once("Warning: Profiler clears events at the end of each cycle. Only events "
                       "from the current cycle will be reported. To keep events across "
                       "cycles, set acc_events=True.")
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(record_shapes=self.record_shapes,
                                         profile_memory=self.profile_memory,
                                         with_stack=self.with_stack, with_flops=self.with_flops,
                                         with_modules=self.with_modules,
                                         acc_events=self.acc_events)
        self.profiler._prepare_trace()

    def start_trace(self):
        self.profiler._start_trace()

    def stop_trace(self):
        if self.profiler is not None:
            self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path):
        """Write the trace as JSON (gzip-compressed if `path` ends in ".gz")."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        if not path.endswith(".gz"):
            self.profiler.export_chrome_trace(path)
            return
        with tempfile.NamedTemporaryFile("w+b", suffix=".json", delete=False) as fp:
            tmp = fp.name
        try:
            self.profiler.export_chrome_trace(tmp)
            with open(tmp, "rb") as fin, gzip.open(path, "wb") as fout:
                shutil.copyfileobj(fin, fout)
        finally:
            os.remove(tmp)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write each event's stack and its self time, folded for flame graphs (needs
        with_stack=True)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError(
            "ember.profiler: export_memory_timeline (deprecated in PyTorch) needs PyTorch's "
            "categorisation of every tensor (parameter, activation, gradient, ...), which "
            "ember does not have; record the allocator's history instead: "
            "ember.memory._record_memory_history() and ember.memory._dump_snapshot(path)")

    def events(self):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting events")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def add_metadata(self, key, value):
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        self._metadata[key] = value


class profile(_KinetoProfile):
    """The profiler context manager; see the module docstring. Without a `schedule` it
    records everything between enter and exit."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None):
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=_user_stacklevel())
            if use_cuda:
                raise RuntimeError("ember has no CUDA device to profile: use_cuda=True")
        if activities is not None and len(list(activities)) == 0:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback)
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self.schedule(self.step_num)
        A = ProfilerAction
        # (previous action, next action) -> what to do, as PyTorch's table; None: stopping
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed by "
                                         "NONE"), self.start_trace, self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed by "
                                         "NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD followed "
                                           "by WARMUP"), self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace, self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready,
                                                     self.prepare_trace, self.start_trace],
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Signal the end of a step: close its "ProfilerStep#N" range and move to the action
        the schedule gives the next step."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), ()):
            action()
