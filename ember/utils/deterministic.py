"""torch.utils.deterministic: `fill_uninitialized_memory`, whether deterministic mode fills the
memory that `empty` and friends leave uninitialized (see ember/_core/deterministic.py)."""
import sys
import types

from .._core.deterministic import state as _state


class _Module(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        return _state.fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"expected a bool, but got {type(value).__name__}")
        _state.fill_uninitialized_memory = value


sys.modules[__name__].__class__ = _Module
