"""torch.sym_int, sym_float, sym_max, ...: PyTorch's helpers that work on symbolic sizes
(SymInt) under tracing as well as on plain numbers. ember's sizes are always concrete, so these are
the plain-number operations, with PyTorch's promotion (sym_max/sym_min give a float if either
argument is one)."""
import builtins
import math

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt",
           "sym_sum", "sym_fresh_size", "sym_constrain_range", "sym_constrain_range_for_size"]

_NUMBERS = (builtins.int, builtins.float, builtins.bool)


def _check(*values):
    for v in values:
        if not isinstance(v, _NUMBERS):
            raise AssertionError(f"expected {_NUMBERS}, got {type(v)}")


def sym_int(a):
    """int(a), truncating toward zero."""
    return builtins.int(math.trunc(a)) if isinstance(a, builtins.float) else builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def sym_max(a, b):
    _check(a, b)
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a, b):
    _check(a, b)
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    """t if b else f (both branches of the same type)."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(args):
    return builtins.sum(args)


def sym_fresh_size(expr):
    return expr


def sym_constrain_range(size, *, min=None, max=None):
    """Sizes are concrete here: check the range instead of recording it."""
    if (min is not None and size < min) or (max is not None and size > max):
        raise RuntimeError(f"Invalid value {size} for range [{min}:{max}]")


def sym_constrain_range_for_size(size, *, min=None, max=None):
    sym_constrain_range(size, min=min, max=max)
