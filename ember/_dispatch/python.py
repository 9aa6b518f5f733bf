"""torch._dispatch.python: PyTorch's switch between its C++ dispatcher and the Python one, in
which decompositions and meta functions registered from Python run. ember has a single dispatcher,
written in Python, whose kernels (meta ones included) are what both of PyTorch's would run: the
switches are contexts that change nothing."""
import contextlib


@contextlib.contextmanager
def enable_python_dispatcher():
    yield


@contextlib.contextmanager
def no_python_dispatcher():
    yield


@contextlib.contextmanager
def suspend_functionalization():
    yield
