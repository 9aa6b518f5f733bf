"""ember.jit (torch.jit): `trace` records the ops of an example run into a graph and returns a
module replaying it; `script` does the same where that is exact and names what it cannot
script; `save`/`load` keep a traced module in a zip of generated code, graph and weights."""
import typing

from ._trace import (trace, trace_module, is_tracing, TracerWarning, TracingCheckError,
                     ScriptModule, TracedModule, TopLevelTracedModule, ScriptFunction)
from ._script import script, Error
from ._serialization import save, load


Final = typing.Final  # a constant module attribute (ember's modules run as Python)


def script_method(fn):
    """Mark a method of a ScriptModule subclass to be compiled: ember's script modules run
    their methods as Python, so the method is returned as it is."""
    return fn


def _is_script_module(mod):
    """Whether `mod` came out of jit.script / jit.trace (PyTorch's RecursiveScriptModule and
    ScriptModule; ScriptFunction is a ScriptModule here)."""
    from ._script import _PythonScriptModule
    return isinstance(mod, (ScriptModule, _PythonScriptModule))


def _expect_script_module(mod, fn):
    if not _is_script_module(mod):
        raise RuntimeError(f"{fn} expects a ScriptModule as input. Please use torch.jit.script "
                           "or torch.jit.trace to script your 'nn.Module'.")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """A scripted module in eval mode, frozen: ember's scripted modules replay a recorded graph
    or run Python, so there is nothing to inline or fold and the module itself is returned."""
    _expect_script_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    """PyTorch's graph passes for frozen modules (none apply to ember's graphs)."""
    _expect_script_module(mod, "run_frozen_optimizations")


def optimize_for_inference(mod, other_methods=None):
    """freeze(mod.eval()), as PyTorch's does before its inference passes."""
    _expect_script_module(mod, "optimize_for_inference")
    return freeze(mod.eval() if mod.training else mod)


def script_if_tracing(fn):
    """`fn` itself: scripted only while tracing in PyTorch, where ember runs it as Python."""
    return fn


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


_fork, _wait = fork, wait   # the names PyTorch's TorchScript sources use


__all__ = ["trace", "trace_module", "script", "script_method", "save", "load", "is_tracing",
           "is_scripting",
           "annotate", "ignore", "freeze", "optimize_for_inference", "run_frozen_optimizations",
           "script_if_tracing", "Final", "unused", "export", "fork", "wait", "TracerWarning",
           "TracingCheckError", "Error",
           "ScriptModule", "TracedModule", "TopLevelTracedModule", "ScriptFunction"]
