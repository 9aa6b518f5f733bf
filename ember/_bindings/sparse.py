"""The Python face of sparse COO tensors: `ember.sparse_coo_tensor`, `Tensor.to_sparse()` /
`to_dense()` / `coalesce()` / `indices()` / `values()` and the layout queries. The computations
are ops (`ember/_aten/sparse.py`), so autograd sees them."""
import contextlib
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel

import numpy as np

from .._core import dtype as D
from .._core.layout import sparse_coo
from .._core.sparse import invariant_checks
from .._core.tensor import Tensor
from .._dispatch.dispatcher import lookup as _op
from .factories import tensor as _tensor, _dev

__all__ = ["sparse_coo_tensor", "_sparse_broadcast_to", "_validate_sparse_coo_tensor_args",
           "_validate_sparse_compressed_tensor_args", "spmm", "smm", "dsmm", "hsmm", "saddmm", "indices_copy",
           "values_copy", "crow_indices_copy", "col_indices_copy", "ccol_indices_copy",
           "row_indices_copy"]

_construct = _op("_sparse_coo_tensor_with_dims_and_tensors")


_NO_VALUES = object()


def sparse_coo_tensor(indices=None, values=_NO_VALUES, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """A sparse COO tensor with `values` at the coordinates in the columns of `indices`;
    `sparse_coo_tensor(size)` (or `size=` alone) is an empty one, every dim sparse."""
    if check_invariants is None:
        _warn_implicit_invariants()
    if values is _NO_VALUES:
        if indices is None and size is None:
            raise TypeError("sparse_coo_tensor() missing required argument 'size' (pos 1)")
        from .factories import _sparse_zeros
        return _sparse_zeros(indices if size is None else size, dtype, device, requires_grad)
    if not isinstance(indices, Tensor):
        indices = _tensor(np.asarray(indices), dtype=D.int64)
    values = values_on_cpu(values, dtype, device)
    if values.dim() == 0:  # a scalar stands for one stored value, as in NumPy
        values = values.expand(1)
    if indices.dtype is not D.int64:
        indices = indices.long()
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sparse_dim = indices.shape[0]
    if size is None:
        nnz_max = indices.amax(dim=1) + 1 if indices.shape[1] else ember_zeros(sparse_dim)
        size = [int(v) for v in nnz_max.tolist()] + list(values.shape[1:])
    size = [int(s) for s in size]
    dense_dim = len(size) - sparse_dim
    with _invariant_checks_as(check_invariants):
        out = _construct(sparse_dim, dense_dim, size, indices, values, is_coalesced=is_coalesced)
    if requires_grad:
        out = out.detach()
        out.requires_grad = True
    return out


def _validate_sparse_coo_tensor_args(indices, values, size, is_coalesced=None,
                                     check_pinning=None):
    """torch._validate_sparse_coo_tensor_args: raise PyTorch's error if `indices`, `values`
    and `size` do not make a valid COO tensor (whatever the global invariant switch says)."""
    size = [int(s) for s in size]
    sparse_dim = indices.shape[0] if indices.dim() == 2 else 0
    with _invariant_checks_as(True):
        _construct(sparse_dim, len(size) - sparse_dim, size, indices, values,
                   is_coalesced=is_coalesced)


def _validate_sparse_compressed_tensor_args(compressed_indices, plain_indices, values, size,
                                            layout, check_pinning=None):
    """torch._validate_sparse_compressed_tensor_args: raise PyTorch's error if the parts do not
    make a valid compressed tensor of `layout`."""
    from .._core.sparse_compressed import validate
    validate(layout, compressed_indices.numpy(), plain_indices.numpy(), tuple(values.shape),
             tuple(int(s) for s in size))


def _sparse_broadcast_to(self, size):
    """torch._sparse_broadcast_to: a COO tensor broadcast to `size` (new leading dims and grown
    size-1 dims sparse, as the entries repeat along them)."""
    from .._aten.sparse import _broadcast_entries, _from_arrays, _parts
    size = tuple(int(n) for n in size)
    old = tuple(self.shape)
    if len(size) < len(old) or any(o not in (1, n) for o, n in zip(old[::-1], size[::-1])):
        raise RuntimeError(f"The expanded size of the tensor does not broadcast: {list(old)} "
                           f"to {list(size)}")
    idx, vals, coalesced = _parts(self)
    return _from_arrays(*_broadcast_entries(idx, vals, coalesced, old, size)[:2], size,
                        coalesced and size == old)


def values_on_cpu(values, dtype, device):
    """A sparse constructor's values as a tensor of `dtype`, refusing devices but the CPU."""
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    device = _dev(device)
    if device is not None and device.type != "cpu":
        raise RuntimeError(f"sparse tensors are supported on the CPU only, got device {device}")
    return values


@contextlib.contextmanager
def _invariant_checks_as(check_invariants):
    """A constructor's check_invariants=True/False overrides the global switch while it runs
    (None leaves the switch as it is)."""
    if check_invariants is None:
        yield
        return
    saved = invariant_checks[0]
    invariant_checks[0] = bool(check_invariants)
    try:
        yield
    finally:
        invariant_checks[0] = saved


_warned_implicit = [False]


def _warn_implicit_invariants():
    """PyTorch warns once per process when a constructor leaves the invariant checks to a
    global default nobody set."""
    if _warned_implicit[0] or invariant_checks[1]:
        return
    _warned_implicit[0] = True
    warnings.warn("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) "
                  "will occur when operating on a sparse tensor which violates the invariants, "
                  "but checks incur performance overhead. To silence this warning, explicitly "
                  "opt in or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for "
                  "guidance. ", UserWarning, stacklevel=_user_stacklevel())


def ember_zeros(n):
    return _tensor([0] * n, dtype=D.int64)


def spmm(input, mat2):
    """torch.spmm: a sparse matrix times a dense one."""
    return input.mm(mat2)


def smm(input, mat):
    """torch.smm: a sparse matrix times a dense one, as a sparse result (sspaddmm onto an empty
    sparse matrix of the product's size)."""
    if input._sparse is None:
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if mat.dim() != 2:
        raise RuntimeError(f"sspaddmm: Argument #3: matrices expected, got {mat.dim()}D tensor")
    empty = sparse_coo_tensor(_tensor(np.zeros((2, 0), np.int64)),
                              _tensor([], dtype=input.dtype), (input.shape[0], mat.shape[-1]))
    return _op("sspaddmm")(empty, input, mat, beta=0, alpha=1)


def dsmm(input, mat2):
    """torch.dsmm: a sparse matrix times a dense one, dense result (mm)."""
    return input.mm(mat2)


def hsmm(mat1, mat2):
    """torch.hsmm: torch.hspmm under its older name."""
    return _op("hspmm")(mat1, mat2)


def saddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """torch.saddmm: torch.sspaddmm under its older name."""
    if out is not None:
        raise RuntimeError("saddmm: out= is not supported in ember")
    return _op("sspaddmm")(input, mat1, mat2, beta=beta, alpha=alpha)


def _to_dense(self, dtype=None, *, masked_grad=None):
    if self._sparse is None:
        return self if dtype is None or dtype is self.dtype else self.to(dtype)
    return _op("_to_dense")(self, dtype)


def _to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
    if layout is not None and layout is not sparse_coo:
        from .sparse_compressed import to_compressed  # it builds on this module's helpers
        return to_compressed(self, layout, blocksize, dense_dim)
    if self.is_sparse:
        return self
    sparse_dim = args[0] if args else (None if dense_dim is None else self.dim() - dense_dim)
    return _op("_to_sparse.sparse_dim")(self, sparse_dim)


def _check_sparse(self, what):
    if not self.is_sparse:
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got "
                           f"{self.layout.c10_name}")


def _coalesce(self):
    _check_sparse(self, "coalesce")
    return self if self._sparse[2] else _op("_coalesce")(self)


def _is_coalesced(self):
    _check_sparse(self, "is_coalesced")
    return self._sparse[2]


def _set_coalesced(self, coalesced):
    """Tensor._coalesced_: mark a COO tensor coalesced or not in place (its entries as they
    are; the caller vouches for the flag)."""
    if not self.is_sparse:
        raise NotImplementedError(f"Could not run 'aten::_coalesced_' with arguments from the "
                                  f"'{self.device.type.upper()}' backend.")
    indices, values, _ = self._sparse
    self._sparse = (indices, values, bool(coalesced))
    return self


def _coalesced_part(op_name, what):
    def method(self):
        _check_sparse(self, what)
        if not self._sparse[2]:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call "
                               f".coalesce() first")
        return _op(op_name)(self)
    method.__name__ = what
    return method


def _raw_part(op_name, what):
    """_indices() / _values(): the stored parts as they are, outside autograd (PyTorch's
    `_values` is not differentiable; `values()` is)."""
    def method(self):
        _check_sparse(self, what)
        return _op(op_name)(self).detach()
    method.__name__ = what
    return method


def _copy_accessor(what, layouts):
    """torch.<what>_copy: a copy of a compressed tensor's part. PyTorch has no SparseCPU kernel
    for these (they serve the compressed layouts and functionalization); on a strided tensor its
    layout check speaks first."""
    def fn(input, *, out=None):
        if input._sparse is not None and not input.is_sparse:
            return getattr(input, what)().clone()
        if input._sparse is not None:
            raise NotImplementedError(f"Could not run 'aten::{what}_copy' with arguments from the "
                                      f"'SparseCPU' backend. 'aten::{what}_copy' is only "
                                      f"available for the strided and sparse compressed layouts.")
        raise RuntimeError(f"{what} expected {layouts} tensor layout but got Strided")
    fn.__name__ = fn.__qualname__ = what + "_copy"
    return fn


indices_copy = _copy_accessor("indices", "sparse coordinate")
values_copy = _copy_accessor("values", "sparse")
crow_indices_copy = _copy_accessor("crow_indices", "sparse row compressed")
col_indices_copy = _copy_accessor("col_indices", "sparse row compressed")
ccol_indices_copy = _copy_accessor("ccol_indices", "sparse column compressed")
row_indices_copy = _copy_accessor("row_indices", "sparse column compressed")


def _nnz(self):
    if self._sparse is not None and not self.is_sparse:
        return self._sparse.values.shape[0]
    _check_sparse(self, "_nnz")
    return self._sparse[1].shape[0]


def _sparse_dim(self):
    if self._sparse is None:
        return 0
    return self._sparse[0].shape[0] if self.is_sparse else 2


def _dense_dim(self):
    if self._sparse is None:
        return self.dim()
    return self._sparse[1].dim() - 1 if self.is_sparse else self.dim() - 2


def _values(self):
    """The stored values: a coalesced COO tensor's, or a compressed tensor's."""
    if self._sparse is not None and not self.is_sparse:
        return _values_op(self)
    if self._sparse is None:
        raise RuntimeError("values expected sparse tensor layout but got Strided")
    return _coalesced_values(self)


_values_op = _op("values")
_coalesced_values = _coalesced_part("_values", "values")


METHODS = dict(to_dense=_to_dense, to_sparse=_to_sparse, to_sparse_coo=_to_sparse,
               coalesce=_coalesce, is_coalesced=_is_coalesced, _coalesced_=_set_coalesced,
               indices=_coalesced_part("_indices", "indices"),
               values=_values,
               _indices=_raw_part("_indices", "_indices"), _values=_raw_part("_values", "_values"),
               _nnz=_nnz, sparse_dim=_sparse_dim, dense_dim=_dense_dim, smm=smm)
