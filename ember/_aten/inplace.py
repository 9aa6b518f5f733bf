"""In-place kernels derived from out-of-place ones (`exp_` from `exp`), as PyTorch's structured
kernels derive `exp_` and `exp.out` from one implementation.

A schema line marked `inplace` defines the op `<name>_` too (see native_functions.py). A family
module may register a kernel of its own for it (computing straight into `self`, which saves a
temporary); every backend key it leaves empty gets the wrapper below: run the out-of-place
kernel, check that the result fits `self` as PyTorch checks an in-place result (same shape, a
dtype that casts to self's), and write it into `self`'s memory. Computing first and writing
after also makes an in-place op whose other operand overlaps `self` safe.
"""
import numpy as np

from .._core import complex32 as _c32
from .._dispatch import dispatcher as _dispatcher
from .._core.tensor import _wrap
from .elementwise import can_cast, _scalar_type_name
from .sparse import _dense_array


def check_result_fits(self, result):
    """PyTorch's errors for a result that cannot be written into `self`."""
    if result._size != self._size:
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                           f"shape {list(result._size)}")
    if result.dtype is not self.dtype and not can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {_scalar_type_name(result.dtype)} can't be cast to the "
                           f"desired output type {_scalar_type_name(self.dtype)}")


def _cpu_wrapper(functional):
    def kernel(self, *args):
        result = functional(self, *args)
        check_result_fits(self, result)
        _c32.copyto(self._np, result._np)
        return self
    return kernel


def _meta_wrapper(functional):
    def kernel(self, *args):
        check_result_fits(self, functional(self, *args))
        return self
    return kernel


def _sparse_wrapper(functional, restrides=False):
    """In-place ops with a sparse operand: a dense `self` (`p.addmm_(sparse, dense)`) is written
    as on CPU; a sparse `self` takes the sparse result's entries (and, for an in-place view op
    such as `t_`, its size)."""
    def kernel(self, *args):
        result = functional(self, *args)
        if restrides and self._sparse is not None and result._sparse is not None:
            self._size, self._sparse = result._size, result._sparse
            return self
        check_result_fits(self, result)
        if self._sparse is None:
            dense = result._np if result._sparse is None else _dense_array(result)
            np.copyto(self._np, dense, casting="unsafe")
            return self
        if result._sparse is None:
            raise RuntimeError(f"{functional.__name__}: the result of an in-place op on a sparse "
                               f"tensor must be sparse")
        indices, values, coalesced = result._sparse
        if values.dtype is not self.dtype:
            values = _wrap(values._np.astype(self.dtype._np))
        self._sparse = (indices, values, coalesced)
        return self
    return kernel


_WRAPPERS = {"CPU": _cpu_wrapper, "Meta": _meta_wrapper, "SparseCPU": _sparse_wrapper}


def register_inplace_kernels():
    """Give every derived in-place op a kernel for each key its functional op has one for."""
    for op in list(_dispatcher._registry.values()):
        functional = op.functional
        if functional is None:
            continue
        for key, kernel in functional._table.items():
            if key not in op._table and key in _WRAPPERS:
                wrapped = _sparse_wrapper(kernel, getattr(op, "_inplace_view", False)) \
                    if key == "SparseCPU" else _WRAPPERS[key](kernel)
                wrapped.__name__ = f"{op.schema.name}_from_{kernel.__name__}"
                wrapped.__qualname__ = wrapped.__name__
                _dispatcher.register_kernel(op, key, wrapped)
