"""`jit.script`, as far as ember can honestly take it.

TorchScript compiles a function's Python source into its own language, keeping control flow
that depends on tensor values. ember has no such compiler: it scripts by tracing
`example_inputs`, which is exact when the forward's Python decisions depend only on things
fixed at scripting time (module attributes, `self.training`, the input shapes), and refuses
everything else with an error naming it. A function scripted without `example_inputs` (the
`@torch.jit.script` decorator on a helper) runs as Python, as PyTorch's script does with
`PYTORCH_JIT=0`: its results are TorchScript's, and what needs a compiled graph (`.graph`,
`.code`, `.save`) raises an error saying so; a Module scripted without them likewise runs its
Python forward, as a `RecursiveScriptModule` sharing its parameters, buffers and (scripted)
submodules. Refused:
- Python reading a tensor's value during the run (`if x.sum() > 0:`, `.item()`): the branch
  would be baked in, so the error names the conversion instead of warning as `trace` does;
- a call with other input shapes or dtypes than the examples: the shapes the recorded ops were
  chosen for no longer hold.
"""
import os
import traceback

from .._core.tensor import Tensor
from .._dispatch.recorder import flatten
from ..nn.modules.module import Module
from ..nn.parameter import is_lazy
from . import _trace


class ScriptError(RuntimeError):
    """What ember.jit.script cannot script, and why."""


def _refuse_data_access(kind, t):
    raise ScriptError(
        f"ember.jit.script cannot script a conversion of a tensor to {kind}: the Python "
        "control flow or value that depends on it would be fixed to this example's value. "
        "Keep tensor values inside tensor ops (ember.where, masking) or use ember.jit.trace "
        "and accept its TracerWarning.")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    if isinstance(obj, _trace.ScriptModule):
        return obj
    if not (isinstance(obj, Module) or callable(obj)):
        raise ScriptError(f"ember.jit.script cannot script an object of type "
                          f"{type(obj).__name__}; it scripts Modules and functions")
    if example_inputs is None and not isinstance(obj, Module):
        return _PythonScriptFunction(obj)
    if example_inputs is None:
        return _python_script_module(obj)
    if isinstance(example_inputs, dict):
        example_inputs = example_inputs.get(getattr(obj, "forward", obj))
    examples = example_inputs[0] if isinstance(example_inputs, list) else example_inputs
    examples = examples if isinstance(examples, tuple) else (examples,)
    previous = _trace._warn_data_access
    _trace._warn_data_access = _refuse_data_access
    try:
        scripted = _trace.trace(obj, examples, check_trace=False)
    finally:
        _trace._warn_data_access = previous
    leaves, _ = flatten(list(examples))
    scripted.__dict__["_signature"] = [(tuple(t.shape), t.dtype) for t in leaves
                                       if isinstance(t, Tensor)]
    scripted.__dict__["_scripted"] = True
    return scripted


class Error(Exception):
    """torch.jit.Error: what a `raise` or `assert` of scripted code (torch._assert included)
    reaches the caller as; errors raised by the ops themselves keep their own type."""


Error.__module__ = "torch.jit"

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _in_ember(summary):
    return os.path.abspath(summary.filename).startswith(_EMBER_DIR + os.sep)


def _raised_by_script_code(e, frames):
    """Whether `e` comes from a raise/assert in the scripted Python rather than from an op:
    an AssertionError, or an exception whose innermost frame lies outside ember."""
    return isinstance(e, AssertionError) or (bool(frames) and not _in_ember(frames[-1]))


def _call_as_script(fn, args, kwargs):
    """fn(*args, **kwargs), with an exception raised by the scripted code itself turned into
    jit.Error, whose text is PyTorch's: the interpreter's notice, where it was raised, and
    `RuntimeError: <original type>: <message>`."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        frames = traceback.extract_tb(e.__traceback__)
        if not _raised_by_script_code(e, frames):
            raise
        scripted = [f for f in frames if not _in_ember(f)] or frames
        where = "".join(traceback.format_list(scripted[-1:]))
        raise Error("The following operation failed in the TorchScript interpreter.\n"
                    f"Traceback of TorchScript (most recent call last):\n{where}"
                    f"RuntimeError: {type(e).__name__}: {e}\n") from e


class _PythonScriptFunction:
    """A function scripted without example inputs: called, it runs the Python function (as
    PyTorch's script does under PYTORCH_JIT=0); it has no compiled graph to show or save."""

    def __init__(self, fn):
        self._fn = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return _call_as_script(self._fn, args, kwargs)

    def __getattr__(self, name):
        if name in _GRAPH_ATTRS:
            raise _no_graph(self.__name__, name, "function")
        raise AttributeError(f"'ScriptFunction' object has no attribute '{name}'")

    def __repr__(self):
        return f"<torch.jit.ScriptFunction object at {hex(id(self))}>"


_GRAPH_ATTRS = ("graph", "code", "save", "inlined_graph", "schema", "graph_for",
                "code_with_constants")


def _no_graph(what, name, kind):
    return ScriptError(
        f"ember.jit.script({what}) without example_inputs runs the Python {kind} and has no "
        f"TorchScript graph, so it has no '{name}'; script it with example_inputs=[(x,)] to "
        "record one")


class _PythonScriptModule:
    """The mixin of a Module scripted without example inputs (class name
    RecursiveScriptModule, as PyTorch's): it prints as PyTorch's scripted modules do and has
    no compiled graph to show or save."""

    def _get_name(self):
        return "RecursiveScriptModule"

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def __call__(self, *args, **kwargs):
        return _call_as_script(super().__call__, args, kwargs)

    def __getattr__(self, name):
        if name in _GRAPH_ATTRS:
            raise _no_graph(self.original_name, name, "module")
        return super().__getattr__(name)


_script_classes = {}


def _python_script_module(module):
    """A copy of `module` sharing its parameters and buffers, with each submodule scripted
    the same way (PyTorch's script copies the module tree and shares the tensors), whose
    forward is the module's own Python."""
    if isinstance(module, (_PythonScriptModule, _trace.ScriptModule)):
        return module
    _check_initialized(module)
    cls = type(module)
    scripted_cls = _script_classes.get(cls)
    if scripted_cls is None:
        scripted_cls = type("RecursiveScriptModule", (_PythonScriptModule, cls),
                            {"__module__": "torch.jit._script"})
        _script_classes[cls] = scripted_cls
    new = cls.__new__(cls)
    new.__dict__.update(module.__dict__)
    new.__dict__["_modules"] = {name: None if m is None else _python_script_module(m)
                                for name, m in module._modules.items()}
    new.__dict__["original_name"] = cls.__name__
    new.__class__ = scripted_cls
    return new


def _check_initialized(module):
    """A module whose lazy parameters or buffers are still uninitialized cannot be scripted
    (their shapes are unknown until a first forward), as in PyTorch."""
    from .. import typename
    for kind, tensors in (("parameters", module._parameters), ("buffers", module._buffers)):
        for name, t in tensors.items():
            if t is not None and is_lazy(t):
                raise RuntimeError(f"'{typename(type(module))}' has uninitialized {kind} "
                                   f"{name}. Did you forget to run a forward pass?")


def check_signature(module, tensors):
    want = module.__dict__.get("_signature")
    if want is None:
        return
    got = [(tuple(t.shape), t.dtype) for t in tensors]
    if got != want:
        raise ScriptError(f"this module was scripted for inputs {_fmt(want)} and got "
                          f"{_fmt(got)}; ember scripts by recording one run, so script it "
                          "again with example_inputs of these shapes")


def _fmt(sig):
    return ", ".join(f"{str(d).removeprefix('torch.')}{list(s)}" for s, d in sig)
