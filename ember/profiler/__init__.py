"""torch.profiler: time a program's op calls, backward nodes and labelled blocks on the CPU,
print PyTorch's summary table and write Chrome traces (chrome://tracing, Perfetto,
TensorBoard). The recording is `ember.autograd.profiler`'s; `profile` adds PyTorch's step
schedule and trace handlers (`ember/profiler/profiler.py`)."""
from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType
from . import itt
from .profiler import (ProfilerAction, ProfilerActivity, _KinetoProfile, profile, schedule,
                       supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "record_function", "DeviceType"]
