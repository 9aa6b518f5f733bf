"""torch.testing._internal.jit_utils: the TestCase base of PyTorch's TorchScript-era test files
(test_fx.py's TestFX among them). ember has no TorchScript, so JitTestCase is PyTorch's TestCase
without the scripting helpers; a test that calls torch.jit.script fails at that call."""
from ember.testing._internal.common_utils import TestCase

__all__ = ["JitTestCase"]


class JitTestCase(TestCase):
    pass
