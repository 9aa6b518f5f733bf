"""The Python face of sparse compressed tensors (CSR, CSC, BSR, BSC): `ember.sparse_csr_tensor`
and its siblings, `Tensor.to_sparse_csr()` / `to_sparse_csc()` / `to_sparse_bsr()` /
`to_sparse_bsc()` / `to_sparse(layout=...)`, and the accessors of the stored parts. The layout
is ember/_core/sparse_compressed.py, the computations are ops (ember/_aten/sparse_compressed.py)."""
import numpy as np

from .._core import dtype as D
from .._core.layout import strided, sparse_coo
from .._core.sparse_compressed import BLOCKED, INDEX_NAMES, LAYOUTS, ROW_MAJOR
from .._core.tensor import Tensor
from .._dispatch.dispatcher import lookup as _op
from .factories import tensor as _tensor
from .sparse import _warn_implicit_invariants, values_on_cpu

__all__ = ["sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
           "sparse_bsr_tensor", "sparse_bsc_tensor"]

_construct = _op("_sparse_compressed_tensor_unsafe")


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None,
                             layout=None, device=None, pin_memory=False, requires_grad=False,
                             check_invariants=None):
    """A compressed tensor of the given layout from its index arrays and values."""
    if layout not in LAYOUTS.values():
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout "
                           f"but got {'none' if layout is None else layout.c10_name}")
    if check_invariants is None:
        _warn_implicit_invariants()
    compressed_indices, plain_indices = (
        i if isinstance(i, Tensor) else _tensor(np.asarray(i, dtype=np.int64))
        for i in (compressed_indices, plain_indices))
    values = values_on_cpu(values, dtype, device)
    if size is None:
        size = _estimated_size(layout, compressed_indices, plain_indices, values)
    out = _construct(compressed_indices, plain_indices, values, [int(s) for s in size],
                     layout.name)
    if requires_grad:
        out = out.detach()
        out.requires_grad = True
    return out


def _estimated_size(layout, compressed_indices, plain_indices, values):
    """The smallest size holding every entry, as PyTorch infers it when no size is given."""
    if plain_indices.numel() == 0:  # PyTorch's estimate has no case for no entries
        raise NotImplementedError(f"\"estimate_sparse_compressed_tensor_size\" not implemented "
                                  f"for '{D.scalar_type_name(values.dtype)}'")
    block = tuple(values.shape[1:3]) if layout in BLOCKED else (1, 1)
    dense = tuple(values.shape[3 if layout in BLOCKED else 1:])
    n_major = compressed_indices.shape[-1] - 1
    n_minor = int(plain_indices.max()) + 1
    rows, cols = (n_major, n_minor) if layout in ROW_MAJOR else (n_minor, n_major)
    return (rows * block[0], cols * block[1]) + dense


def _constructor(layout):
    compressed_name, plain_name = INDEX_NAMES[layout]

    def construct(compressed_indices, plain_indices, values, size=None, *, dtype=None,
                  device=None, pin_memory=False, requires_grad=False, check_invariants=None):
        return sparse_compressed_tensor(compressed_indices, plain_indices, values, size,
                                        dtype=dtype, layout=layout, device=device,
                                        pin_memory=pin_memory, requires_grad=requires_grad,
                                        check_invariants=check_invariants)
    construct.__name__ = construct.__qualname__ = f"{layout.name}_tensor"
    construct.__doc__ = (f"A {layout.name[7:].upper()} tensor from {compressed_name}, "
                         f"{plain_name} and values.")
    return construct


sparse_csr_tensor = _constructor(LAYOUTS["sparse_csr"])
sparse_csc_tensor = _constructor(LAYOUTS["sparse_csc"])
sparse_bsr_tensor = _constructor(LAYOUTS["sparse_bsr"])
sparse_bsc_tensor = _constructor(LAYOUTS["sparse_bsc"])


def empty_like_compressed(t, dtype=None):
    """empty_like of a compressed tensor: its indices (copied), values to be written."""
    p = t._sparse
    values = p.values.new_zeros(p.values.shape, dtype=dtype or t.dtype)
    return _construct(p.compressed_indices.clone(), p.plain_indices.clone(), values,
                      list(t.shape), t.layout.name)


# ---- conversions --------------------------------------------------------------------------
def to_compressed(self, layout, blocksize=None, dense_dim=None):
    """self in a compressed layout (what to_sparse(layout=...) and to_sparse_csr() do)."""
    if layout in BLOCKED:
        if blocksize is None:
            source = {strided: "dense_to_sparse", sparse_coo: "sparse_coo_to_sparse"}.get(
                self.layout, "to_sparse" if self.layout is layout else
                "sparse_compressed_to_sparse")
            raise RuntimeError(f"{source}: conversion from {self.layout.c10_name} to "
                               f"{layout.c10_name} without blocksize argument given is not "
                               f"supported")
        return _op(f"_to_sparse_{layout.name[7:]}")(self, list(blocksize), dense_dim)
    if self.layout is layout and dense_dim is None:  # the tensor itself, as PyTorch's
        return self
    return _op(f"_to_sparse_{layout.name[7:]}")(self, dense_dim)


def _to_sparse_csr(self, dense_dim=None):
    return to_compressed(self, LAYOUTS["sparse_csr"], None, dense_dim)


def _to_sparse_csc(self, dense_dim=None):
    return to_compressed(self, LAYOUTS["sparse_csc"], None, dense_dim)


def _blocksize(blocksize):
    """`int[2] blocksize`: one int stands for a square block, as PyTorch's argument parser
    expands it."""
    return (blocksize, blocksize) if isinstance(blocksize, int) else blocksize


def _to_sparse_bsr(self, blocksize, dense_dim=None):
    return to_compressed(self, LAYOUTS["sparse_bsr"], _blocksize(blocksize), dense_dim)


def _to_sparse_bsc(self, blocksize, dense_dim=None):
    return to_compressed(self, LAYOUTS["sparse_bsc"], _blocksize(blocksize), dense_dim)


def _part(name):
    op = _op(name)

    def method(self):
        return op(self)
    method.__name__ = name
    return method


METHODS = dict(to_sparse_csr=_to_sparse_csr, to_sparse_csc=_to_sparse_csc,
               to_sparse_bsr=_to_sparse_bsr, to_sparse_bsc=_to_sparse_bsc,
               **{name: _part(name) for name in ("crow_indices", "col_indices", "ccol_indices",
                                                 "row_indices")})
