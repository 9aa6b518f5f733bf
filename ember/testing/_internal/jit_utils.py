"""torch.testing._internal.jit_utils: the TestCase base of PyTorch's TorchScript-era test files
(test_fx.py's TestFX among them). ember has no TorchScript, so JitTestCase is PyTorch's TestCase
with the output-capturing helpers and without the scripting ones; a test that calls
torch.jit.script fails at that call."""
import io
import sys

from ember.testing._internal.common_utils import TestCase

__all__ = ["JitTestCase"]


class _Capture(list):
    """`with self.capture_stderr() as captured:` replaces the stream with a buffer; on leaving,
    what was written is appended to the list (captured[0])."""
    stream = None

    def __enter__(self):
        self._saved = getattr(sys, self.stream)
        self._buffer = io.StringIO()
        setattr(sys, self.stream, self._buffer)
        return self

    def __exit__(self, *exc):
        self.append(self._buffer.getvalue())
        setattr(sys, self.stream, self._saved)


class JitTestCase(TestCase):
    class capture_stdout(_Capture):
        stream = "stdout"

    class capture_stderr(_Capture):
        stream = "stderr"
