"""The op test table's rows for sparse COO tensors: construction from indices and values,
conversion to and from dense, coalescing, the stored values and indices, masking, and a sparse
matrix times a dense one. Same conventions as op_db.py, which appends these rows to its OPS; the
rows build their sparse operands inside the call and return dense results, so values and
gradients (through the values or the dense operand) are compared as dense tensors."""
from op_db import ErrorInput, OpInfo, Sample, f32, make

FLOAT = ("float32", "float64")
INDICES = [[0, 1, 1, 0, 2], [1, 0, 2, 1, 2]]  # (0, 1) twice: uncoalesced


def _values(dtype, rng):
    return [Sample(make(rng, (5,), dtype)), Sample(make(rng, (5, 2), dtype))]


def _dense(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype)), Sample(make(rng, (2, 3, 2), dtype)),
            Sample(make(rng, (4,), dtype))]


def _sparse_product(name, **kw):
    """m.<name>(sparse (3, 3), dense (3, 4)) with the sparse result's stored indices and values
    (the order and duplicates are PyTorch's, so they are compared as they are)."""
    def op(m, v, x):
        r = getattr(m, name)(_construct(m, v), x, **kw).detach()
        return r._indices(), r._values()
    return op


def _sspaddmm(m, v, w, x, **kw):
    r = m.sspaddmm(_construct(m, w), _construct(m, v), x, **kw).detach()
    return r._indices(), r._values()


def _product_samples(dtype, rng):
    return [Sample(make(rng, (5,), dtype), make(rng, (3, 4), dtype))]


def _sspaddmm_samples(dtype, rng):
    return [Sample(make(rng, (5,), dtype), make(rng, (5,), dtype), make(rng, (3, 3), dtype)),
            Sample(make(rng, (5,), dtype), make(rng, (5,), dtype), make(rng, (3, 3), dtype),
                   beta=0.5, alpha=-2)]


def _product_errors():
    return [ErrorInput(f32(5), f32(2, 4), match="Expected dim 0 size 3")]


def _construct(m, v):
    return m.sparse_coo_tensor(INDICES, v, (3, 3) + tuple(v.shape[1:]))


SPARSE_OPS = [
    OpInfo("sparse_coo_tensor.to_dense", lambda m, v: _construct(m, v).to_dense(), FLOAT,
           _values, other_dtypes_raise=False),
    OpInfo("to_sparse.to_dense", lambda m, x: (x.to_sparse() * 2).to_dense(), FLOAT, _dense,
           other_dtypes_raise=False),
    OpInfo("coalesce.values", lambda m, v: _construct(m, v).coalesce().values(), FLOAT, _values,
           other_dtypes_raise=False),
    OpInfo("coalesce.indices", lambda m, v: _construct(m, v).coalesce().indices(), FLOAT,
           _values, grad=False, other_dtypes_raise=False),
    OpInfo("sparse_mask", lambda m, v, x: x.sparse_mask(_construct(m, v).coalesce()).to_dense(),
           FLOAT, lambda dtype, rng: [Sample(make(rng, (5,), dtype), make(rng, (3, 3), dtype))],
           other_dtypes_raise=False),
    OpInfo("sparse.mm", lambda m, v, x: m.sparse.mm(_construct(m, v), x), FLOAT,
           lambda dtype, rng: [Sample(make(rng, (5,), dtype), make(rng, (3, 4), dtype))],
           other_dtypes_raise=False),
    # products that keep a sparse result: not differentiable in PyTorch (backward raises)
    OpInfo("hspmm", _sparse_product("hspmm"), FLOAT, _product_samples, grad=False,
           other_dtypes_raise=False, errors=_product_errors),
    OpInfo("smm", _sparse_product("smm"), FLOAT, _product_samples, grad=False,
           other_dtypes_raise=False, errors=_product_errors),
    OpInfo("sspaddmm", _sspaddmm, FLOAT, _sspaddmm_samples, grad=False,
           other_dtypes_raise=False),
    OpInfo("dsmm", lambda m, v, x: m.dsmm(_construct(m, v), x), FLOAT, _product_samples,
           other_dtypes_raise=False),
    # resize_as_sparse_: the stored entries stay, the sparse sizes grow (an empty tensor may
    # change its sparse/dense split too)
    OpInfo("resize_as_sparse_",
           lambda m, v: _construct(m, v.detach()).resize_as_sparse_(
               m.zeros((4, 5) + tuple(v.shape[1:])).to_sparse(2)).to_dense(), FLOAT, _values,
           grad=False, other_dtypes_raise=False),
]


# ---- compressed layouts (CSR, CSC, BSR, BSC): rows build the compressed operand from values
# or from a dense tensor inside the call and return dense results or the stored parts
CROW, COL = [0, 1, 3, 5], [1, 0, 2, 0, 1]  # a 3 x 3 CSR pattern with 5 entries


def _csr(m, v):  # checked: the edge-case rows give it values of other shapes (torch crashes)
    return m.sparse_csr_tensor(CROW, COL, v, (3, 3) + tuple(v.shape[1:]), check_invariants=True)


def _bsr(m, v):
    return m.sparse_bsr_tensor([0, 1, 2], [1, 0], v, (4, 4), check_invariants=True)


def _blocks(dtype, rng):
    return [Sample(make(rng, (2, 2, 2), dtype))]


def _index_parts(layout):
    """A dense matrix's compressed index arrays in `layout` (no gradient: indices)."""
    names = ("crow_indices", "col_indices") if layout == "csr" else ("ccol_indices",
                                                                     "row_indices")

    def op(m, x):
        s = getattr(x.detach(), f"to_sparse_{layout}")()
        return tuple(getattr(s, name)() for name in names)
    return op


def _square(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype)), Sample(make(rng, (2, 3, 2), dtype), dense_dim=1)]


SPARSE_OPS += [
    OpInfo("sparse_csr_tensor.to_dense", lambda m, v: _csr(m, v).to_dense(), FLOAT, _values,
           other_dtypes_raise=False),
    OpInfo("sparse_bsr_tensor.to_dense", lambda m, v: _bsr(m, v).to_dense(), FLOAT, _blocks,
           other_dtypes_raise=False),
    OpInfo("sparse_csr.values", lambda m, v: (_csr(m, v) * 2).values(), FLOAT, _values,
           other_dtypes_raise=False),
    OpInfo("to_sparse_csr.to_dense", lambda m, x, **kw: x.to_sparse_csr(**kw).to_dense() * 2,
           FLOAT, _square, other_dtypes_raise=False),
    OpInfo("to_sparse_csc.to_dense", lambda m, x: x.to_sparse_csc().to_dense() * 2, FLOAT,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype))], other_dtypes_raise=False),
    OpInfo("to_sparse_bsr.to_dense", lambda m, x: x.to_sparse_bsr((1, 2)).to_dense() * 2,
           FLOAT, lambda dtype, rng: [Sample(make(rng, (3, 4), dtype))],
           other_dtypes_raise=False),
    OpInfo("to_sparse_bsc.to_dense", lambda m, x: x.to_sparse_bsc((3, 2)).to_dense() * 2,
           FLOAT, lambda dtype, rng: [Sample(make(rng, (3, 4), dtype))],
           other_dtypes_raise=False),
    OpInfo("csr.crow_col_indices", _index_parts("csr"), FLOAT,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype))], grad=False,
           other_dtypes_raise=False),
    OpInfo("csc.ccol_row_indices", _index_parts("csc"), FLOAT,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype))], grad=False,
           other_dtypes_raise=False),
    OpInfo("csr.mm", lambda m, v, x: _csr(m, v) @ x, FLOAT,
           lambda dtype, rng: [Sample(make(rng, (5,), dtype), make(rng, (3, 4), dtype))],
           other_dtypes_raise=False),
    OpInfo("sparse.sampled_addmm",
           lambda m, v, a, b, **kw: m.sparse.sampled_addmm(_csr(m, v), a, b, **kw).to_dense(),
           FLOAT, lambda dtype, rng: [Sample(make(rng, (5,), dtype), make(rng, (3, 2), dtype),
                                             make(rng, (2, 3), dtype), beta=0.5, alpha=2)],
           other_dtypes_raise=False),
]
