"""Helpers symbolic functions written for PyTorch import (torch.onnx.symbolic_helper).

ember hands a symbolic function its non-tensor arguments as the Python values the op was called
with, so `parse_args` has nothing to convert: it keeps PyTorch-style functions working as written.
"""
import functools


def parse_args(*arg_descriptors):
    """Decorator kept for PyTorch-style symbolic functions ("v", "i", "f", "is", ...)."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            return fn(g, *args, **kwargs)
        return wrapper
    return deco
