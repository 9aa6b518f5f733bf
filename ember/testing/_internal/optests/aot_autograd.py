"""optests.aot_autograd_check: a function and a second run of it agree (outputs and input
gradients). PyTorch compares eager with an AOTAutograd-traced run; ember has no AOT tracer, so
the second run is eager too, which checks the repeatability such a trace relies on."""
import re

from ...._library.opcheck import _fresh
from ...._library.utils import flat_tensors
from ...._core.tensor import Tensor


class assert_raises_regex:
    """A `with` block that must raise `exception_cls` with a message matching `regex`."""

    def __init__(self, exception_cls, regex):
        self.exception_cls = exception_cls
        self.regex = regex

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_val, traceback):
        if exc_type == self.exception_cls:
            if not re.search(self.regex, str(exc_val)):
                raise AssertionError(f"Expected exception to match regex. regex: {self.regex}, "
                                     f"exception: {exc_val}")
            return True
        if exc_type is not None:
            raise AssertionError(f"Expected {self.exception_cls} to be raised, instead got "
                                 f"exception {exc_type}")
        raise AssertionError("Expected exception to be raised but none was")


def aot_autograd_check(func, args, kwargs, dynamic, assert_raises_regex_fn=None,
                       assert_equals_fn=None, check_gradients=True, try_check_data_specialization=False,
                       skip_correctness_check=False):
    from ... import assert_close
    assert_equals = assert_equals_fn or assert_close
    first = func(*args, **kwargs)
    args2, kwargs2 = _fresh((args, kwargs))
    second = func(*args2, **kwargs2)
    if not skip_correctness_check:
        for a, b in zip(flat_tensors(first), flat_tensors(second)):
            assert_equals(b, a)
    if not check_gradients:
        return
    outs1 = [o for o in flat_tensors(first) if isinstance(o, Tensor) and o.requires_grad]
    outs2 = [o for o in flat_tensors(second) if isinstance(o, Tensor) and o.requires_grad]
    ins1 = [t for t in flat_tensors((args, kwargs)) if t.requires_grad]
    ins2 = [t for t in flat_tensors((args2, kwargs2)) if t.requires_grad]
    if not outs1 or not ins1:
        return
    from ....autograd import grad
    g1 = grad([o.sum() for o in outs1], ins1, allow_unused=True)
    g2 = grad([o.sum() for o in outs2], ins2, allow_unused=True)
    for a, b in zip(g1, g2):
        if a is not None and b is not None:
            assert_equals(b, a)
