"""detect_anomaly / set_detect_anomaly: name the forward op whose backward produced NaN.

While anomaly mode is on, every node created records the stack of the forward call that made
it, and a node created while another node's backward runs (a double-backward graph) records
that node as its parent; the engine checks each node's output gradients and, on NaN or an
error, raises PyTorch's error and warns with that forward stack, then each parent's.
"""
import os
import threading
import traceback
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

_enabled = False
_check_nan = True


def is_anomaly_enabled():
    return _enabled


def is_anomaly_check_nan_enabled():
    return _check_nan


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        global _enabled, _check_nan
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = True, self.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=_user_stacklevel())

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self.prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self.__class__(self.check_nan):
                return fn(*a, **k)
        return wrapper


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        global _enabled, _check_nan
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = bool(mode), check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self.prev


_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def record_forward_trace(node):
    """The user's stack where the node was made, as PyTorch shows it: without ember's own
    frames (bindings, dispatcher, autograd), which PyTorch's C++ layers do not add, nor the
    `python -m ember` runner's."""
    frames = traceback.extract_stack()[:-1]
    for i in range(len(frames) - 1, -1, -1):
        if frames[i].filename == _EMBER_DIR + "__main__.py":
            frames = frames[i + 1:]
            break
    user = [f for f in frames if not f.filename.startswith(_EMBER_DIR)
            and f.filename not in ("<ember generated bindings>", "<frozen runpy>")]
    node._anomaly_trace = "".join(traceback.format_list(user))
    parent = getattr(_running, "node", None)
    if parent is not None:
        node._anomaly_parent = parent


_running = threading.local()  # .node: the node whose backward runs now, under anomaly mode


def run_node_checked(node, buffer):
    outer = getattr(_running, "node", None)
    _running.node = node
    try:
        outs = node.apply(buffer)
    except Exception:
        _print_trace(node)
        raise
    finally:
        _running.node = outer
    if _check_nan:
        for i, g in enumerate(outs):
            if g is not None and g._np is not None and (g.dtype.is_floating_point or
                                                        g.dtype.is_complex):
                import numpy as np
                if np.isnan(g._np).any():
                    _print_trace(node)
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
    return outs


_NO_FORWARD_INFO = ("No forward pass information available. Enable detect anomaly during "
                    "forward pass for more information.")


def _print_trace(node):
    level = _user_stacklevel()
    if node._anomaly_trace:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{node._anomaly_trace}", UserWarning, stacklevel=level)
    else:
        warnings.warn(f"Error detected in {node.name()}. {_NO_FORWARD_INFO}", UserWarning,
                      stacklevel=level)
    parent = node.__dict__.get("_anomaly_parent")
    while parent is not None:
        where = (f"Traceback of forward call that induced the previous calculation:\n"
                 f"{parent._anomaly_trace}" if parent._anomaly_trace else _NO_FORWARD_INFO)
        warnings.warn(f"\n\nPrevious calculation was induced by {parent.name()}. {where}",
                      UserWarning, stacklevel=level)
        parent = parent.__dict__.get("_anomaly_parent")


def set_anomaly_enabled(enabled, check_nan=True):
    """torch.set_anomaly_enabled: turn anomaly mode on or off for the rest of the program."""
    global _enabled, _check_nan
    _enabled, _check_nan = bool(enabled), check_nan
