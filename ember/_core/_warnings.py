"""Where ember's warnings point: at the user's line, as PyTorch's C++ warnings do.

A warning raised inside ember names the first frame outside the ember package (the user's call),
however many ember frames (generated bindings, `__torch_function__` wrappers, module calls) lie
between: `warnings.warn(msg, stacklevel=user_stacklevel())`.
"""
import os
import sys

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INTERNAL = ("<ember generated bindings>",)


def user_stacklevel():
    """The `stacklevel` that makes warnings.warn, called by the caller of this function, name
    the innermost frame outside ember."""
    frame = sys._getframe(1)  # the function calling warnings.warn: stacklevel 1
    level = 1
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_EMBER_DIR) or name in _INTERNAL):
            return level
        frame = frame.f_back
        level += 1
    return 1
