"""torch._VF: the functions of torch._C._VariableFunctions, including the ones the torch
namespace hides or wraps in Python (unique_dim, the raw split/norm overloads...): each name is
ember's function of that name, or else the aten op."""
import ember


def __getattr__(name):
    if not name.startswith("__"):
        func = getattr(ember, name, None)
        if func is None:
            func = getattr(ember.ops.aten, name, None)
        if func is not None:
            return func
    raise AttributeError(f"module 'torch._VF' has no attribute '{name}'")
