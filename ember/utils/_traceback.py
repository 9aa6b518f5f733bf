"""torch.utils._traceback: short traceback formatting and cheap stack capture.

- `report_compile_source_on_error()`: code generated at run time and run with `exec` has the
  file name "<string>", so a traceback through it shows no source lines. If the generating code
  put the source in the executed globals as `__compile_source__`, this context manager writes
  that source to a temporary file and re-points each such frame at it, so the traceback
  that escapes shows the generated lines.
- `format_frame` / `format_traceback_short`: one line per frame, `file.py:12 in fn`, the path
  shortened relative to the package directory.
- `CapturedTraceback.extract()`: records (file, line, function) for each frame of the current
  stack, and builds the `traceback.StackSummary` (reading source lines) only when formatted.
"""
import contextlib
import inspect
import os.path
import sys
import tempfile
import traceback
from types import TracebackType

__all__ = ["report_compile_source_on_error", "shorten_filename", "format_frame",
           "format_traceback_short", "CapturedTraceback"]


def _frame_with_file(frame, filename):
    """A live frame like `frame` (same globals, locals, function name and line table) whose
    code claims to come from `filename`: it evaluates `currentframe()` in a code object
    compiled under that file name and dressed with frame's line table."""
    code = compile("__currentframe()", filename, "eval").replace(co_name=frame.f_code.co_name)
    code = code.replace(co_linetable=frame.f_code.co_linetable,
                        co_firstlineno=frame.f_code.co_firstlineno)
    return eval(code, frame.f_globals, {**frame.f_locals, "__currentframe": inspect.currentframe})


@contextlib.contextmanager
def report_compile_source_on_error():
    try:
        yield
    except Exception as exc:
        entries = []
        tb = exc.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            source = frame.f_globals.get("__compile_source__")
            if frame.f_code.co_filename == "<string>" and source is not None:
                with tempfile.NamedTemporaryFile("w", delete=False, suffix=".py") as f:
                    f.write(source)
                entries.append(TracebackType(None, _frame_with_file(frame, f.name), tb.tb_lasti,
                                             tb.tb_lineno))
            else:
                entries.append(tb)
            tb = tb.tb_next
        head = None
        for entry in reversed(entries):     # relink the chain through the replaced entries
            entry.tb_next = head
            head = entry
        raise exc.with_traceback(head)  # noqa: B904


def shorten_filename(fn, *, base=None):
    """`fn` relative to `base` (default: the package directory), when it lies under it."""
    if base is None:
        base = os.path.dirname(os.path.dirname(__file__))
    try:
        prefix = os.path.commonpath([fn, base])
    except ValueError:
        return fn
    return fn[len(prefix) + 1:]


def format_frame(frame, *, base=None, line=False):
    """A FrameSummary on one line: `path:lineno in name`, preceded by its code if `line`."""
    code = f"{frame.line}  # " if line else ""
    return f"{code}{shorten_filename(frame.filename, base=base)}:{frame.lineno} in {frame.name}"


def format_traceback_short(tb):
    """The innermost frame of a traceback, formatted by `format_frame`."""
    return format_frame(traceback.extract_tb(tb)[-1])


class CapturedTraceback:
    """A stack recorded cheaply now and formatted (source lines read) later.

    `tb` holds (filename, lineno, function name) tuples, innermost first; `skip` counts the
    innermost entries formatting leaves out (the capturing machinery itself)."""
    __slots__ = ["tb", "skip"]

    def __init__(self, tb, skip=0):
        self.tb = tb
        self.skip = skip

    def cleanup(self):
        self.tb = None

    def summary(self):
        if self.tb is None:
            return traceback.StackSummary()
        return traceback.StackSummary.from_list(
            [traceback.FrameSummary(filename, lineno, name)
             for filename, lineno, name in reversed(self.tb[self.skip:])])

    def __getstate__(self):
        return (None, {"tb": None, "skip": self.skip})     # the frames are not pickled

    @staticmethod
    def extract(*, script=False, cpp=False, skip=0):
        """The current Python stack, like traceback.extract_stack() but without reading source.
        ember has no TorchScript or C++ frames: `script`/`cpp` add nothing."""
        if (script or cpp) and skip != 0:
            raise AssertionError("skip with script/cpp NYI")
        frames = []
        frame = sys._getframe(1)
        while frame is not None:
            frames.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
            frame = frame.f_back
        return CapturedTraceback(frames, skip)

    def format(self):
        """The stack as `traceback.format_list` gives it."""
        return traceback.format_list(self.summary())

    @staticmethod
    def format_all(tbs):
        """`format()` of each captured traceback (an empty list for a cleaned-up one)."""
        return [traceback.format_list(tb.summary()) if tb.tb is not None else [] for tb in tbs]
