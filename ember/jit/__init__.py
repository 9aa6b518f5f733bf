"""ember.jit (torch.jit): `trace` records the ops of an example run into a graph and returns a
module replaying it; `script` does the same where that is exact and names what it cannot
script; `save`/`load` keep a traced module in a zip of generated code, graph and weights."""
from ._trace import (trace, trace_module, is_tracing, TracerWarning, TracingCheckError,
                     ScriptModule, TracedModule, TopLevelTracedModule, ScriptFunction)
from ._script import script
from ._serialization import save, load


def is_scripting():
    """False: ember code never runs as TorchScript."""
    return False


def annotate(the_type, the_value):
    return the_value


def ignore(drop=False, **kwargs):
    """A function left to Python (every function is, under ember's tracing)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def fork(func, *args, **kwargs):
    """Run `func(*args, **kwargs)` as a task; outside TorchScript that is now, in this thread
    (as PyTorch's eager fork), and the returned futures.Future is already complete."""
    from ..futures import Future
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """The value of a task started by fork."""
    return future.wait()


__all__ = ["trace", "trace_module", "script", "save", "load", "is_tracing", "is_scripting",
           "annotate", "ignore", "unused", "export", "fork", "wait", "TracerWarning",
           "TracingCheckError",
           "ScriptModule", "TracedModule", "TopLevelTracedModule", "ScriptFunction"]
