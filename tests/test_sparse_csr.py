"""Sparse compressed tensors (CSR, CSC, BSR, BSC) against torch, program by program: what comes
out (layout, size, dtype, index arrays and their dtypes, values) or the exception raised (its
type, and for PyTorch's checks its message), byte-identical reprs, gradients through the values
and the dense operands, and a graph convolution written with a CSR adjacency and `@`."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")]

DENSE = [[0., 2., 0.], [3., 0., 4.]]
CROW, COL, VAL = [0, 1, 3], [1, 0, 2], [2., 3., 4.]


def _csr(T, values=VAL, index_dtype=None, **kw):
    dt = getattr(T, index_dtype) if index_dtype else T.int64
    return T.sparse_csr_tensor(T.tensor(CROW, dtype=dt), T.tensor(COL, dtype=dt),
                               T.tensor(values), (2, 3), **kw)


def _outcome(fn, lib):
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return ("raises", type(e).__name__, str(e).split("\n")[0])
    return _describe(out)


class _Close:
    """Floating values, equal to others within float32 rounding (BLAS builds differ in the last
    bit of a product, so exact or rounded equality depends on the machine)."""

    def __init__(self, a):
        self.a = a

    def __eq__(self, other):
        return isinstance(other, _Close) and self.a.shape == other.a.shape and \
            np.allclose(self.a, other.a, rtol=1e-5, atol=1e-6, equal_nan=True)

    def __repr__(self):
        return repr(self.a.tolist())


def _array(t):
    a = t.detach().numpy()
    return _Close(a.copy()) if a.dtype.kind in "fc" else a.tolist()


def _describe(out):
    if isinstance(out, (tuple, list)):
        return tuple(_describe(o) for o in out)
    layout = str(getattr(out, "layout", ""))
    if layout.endswith(("csr", "csc", "bsr", "bsc")):
        if layout.endswith(("csr", "bsr")):
            parts = (out.crow_indices(), out.col_indices())
        else:
            parts = (out.ccol_indices(), out.row_indices())
        return (layout, tuple(out.shape), str(out.dtype),
                [(str(p.dtype), p.numpy().tolist()) for p in parts], _array(out.values()))
    if layout.endswith("coo"):
        c = out.coalesce()
        return (layout, tuple(out.shape), str(out.dtype), c.indices().numpy().tolist(),
                _array(c.values()))
    if hasattr(out, "numpy"):
        return ("dense", tuple(out.shape), str(out.dtype), _array(out))
    return out if not hasattr(out, "name") else str(out)


def _bsr(T):
    return T.sparse_bsr_tensor([0, 1, 2], [1, 0], T.arange(8.).view(2, 2, 2), (4, 4))


def _checked(T, crow, col, values=(1., 1., 1.), size=(2, 3), **kw):
    values = values if isinstance(values, T.Tensor) else T.tensor(values)
    return T.sparse_csr_tensor(T.tensor(crow), T.tensor(col), values, size,
                               check_invariants=True, **kw)


PROGRAMS = {
    # construction and conversions
    "construct": lambda T: _csr(T),
    "construct int32": lambda T: _csr(T, index_dtype="int32"),
    "construct lists": lambda T: T.sparse_csr_tensor(CROW, COL, VAL, (2, 3)),
    "construct lists infer size": lambda T: T.sparse_csr_tensor(CROW, COL, [1, 2, 3]),
    "construct dtype": lambda T: T.sparse_csr_tensor(CROW, COL, [1, 2, 3], (2, 3),
                                                     dtype=T.float64),
    "construct dense dims": lambda T: T.sparse_csr_tensor(CROW, COL, T.ones(3, 2), (2, 3, 2)),
    "csc": lambda T: T.sparse_csc_tensor([0, 1, 3], [1, 0, 2], VAL, (3, 2)),
    "csc infer size": lambda T: T.sparse_csc_tensor([0, 1, 3], [1, 0, 2], VAL),
    "compressed csr": lambda T: T.sparse_compressed_tensor(CROW, COL, VAL, (2, 3),
                                                           layout=T.sparse_csr),
    "compressed no layout": lambda T: T.sparse_compressed_tensor(CROW, COL, VAL, (2, 3)),
    "compressed strided": lambda T: T.sparse_compressed_tensor(CROW, COL, VAL, (2, 3),
                                                               layout=T.strided),
    "bsr": _bsr,
    "bsr infer size": lambda T: T.sparse_bsr_tensor([0, 1, 2], [1, 0], T.arange(8.).view(2, 2, 2)),
    "bsr to_dense": lambda T: _bsr(T).to_dense(),
    "bsc to_dense": lambda T: T.sparse_bsc_tensor([0, 1, 2], [1, 0], T.arange(8.).view(2, 2, 2),
                                                  (4, 4)).to_dense(),
    "to_dense": lambda T: _csr(T).to_dense(),
    "to_dense dense dims": lambda T: T.sparse_csr_tensor(CROW, COL, T.arange(6.).view(3, 2),
                                                         (2, 3, 2)).to_dense(),
    "to_sparse_csr": lambda T: T.tensor(DENSE).to_sparse_csr(),
    "to_sparse_csc": lambda T: T.tensor(DENSE).to_sparse_csc(),
    "to_sparse_csr dense_dim": lambda T: T.arange(12.).view(2, 3, 2).to_sparse_csr(dense_dim=1),
    "to_sparse_bsr": lambda T: T.tensor([[0., 1], [2, 0]]).to_sparse_bsr((2, 2)),
    "to_sparse_bsc": lambda T: T.arange(16.).view(4, 4).tril().to_sparse_bsc((2, 2)),
    "to_sparse_bsr bad block": lambda T: T.tensor([[0., 1], [2, 0]]).to_sparse_bsr((3, 2)),
    "to_sparse layout": lambda T: T.tensor(DENSE).to_sparse(layout=T.sparse_csc),
    "to_sparse bsr no block": lambda T: T.tensor(DENSE).to_sparse(layout=T.sparse_bsr),
    "to_sparse bsr block": lambda T: T.tensor(DENSE).to_sparse(layout=T.sparse_bsr,
                                                               blocksize=(1, 1)),
    "csr to csc": lambda T: _csr(T).to_sparse_csc(),
    "csr int32 to csc": lambda T: _csr(T, index_dtype="int32").to_sparse_csc(),
    "csc to csr": lambda T: T.tensor(DENSE).to_sparse_csc().to_sparse_csr(),
    "csr to coo": lambda T: _csr(T).to_sparse(),
    "csr int32 to coo": lambda T: _csr(T, index_dtype="int32").to_sparse_coo(),
    "coo to csr": lambda T: T.tensor(DENSE).to_sparse().to_sparse_csr(),
    "coo to csc": lambda T: T.tensor(DENSE).to_sparse().to_sparse_csc(),
    "coo 3 dims to csr": lambda T: T.ones(2, 2, 2).to_sparse(3).to_sparse_csr(),
    "bsr to csr": lambda T: _bsr(T).to_sparse_csr(),
    "bsr to coo": lambda T: _bsr(T).to_sparse(),
    "csr to bsr": lambda T: T.tensor(DENSE).to_sparse_csr().to_sparse_bsr((1, 1)),
    "bsr to bsc": lambda T: _bsr(T).to_sparse_bsc((2, 2)),
    "empty": lambda T: T.zeros(2, 3).to_sparse_csr(),
    # the parts and what a compressed tensor says of itself
    "parts": lambda T: (_csr(T).crow_indices(), _csr(T).col_indices(), _csr(T).values()),
    "csc parts": lambda T: (T.tensor(DENSE).to_sparse_csc().ccol_indices(),
                            T.tensor(DENSE).to_sparse_csc().row_indices()),
    "ccol of csr": lambda T: _csr(T).ccol_indices(),
    "row_indices of csr": lambda T: _csr(T).row_indices(),
    "crow of csc": lambda T: T.tensor(DENSE).to_sparse_csc().crow_indices(),
    "crow of dense": lambda T: T.tensor(DENSE).crow_indices(),
    "crow of coo": lambda T: T.tensor(DENSE).to_sparse().crow_indices(),
    "values of dense": lambda T: T.ones(2).values(),
    "indices of csr": lambda T: _csr(T).indices(),
    "coalesce of csr": lambda T: _csr(T).coalesce(),
    "is_coalesced of csr": lambda T: _csr(T).is_coalesced(),
    "copies": lambda T: (T.crow_indices_copy(_csr(T)), T.values_copy(_csr(T))),
    "facts": lambda T: (str(_csr(T).layout), _csr(T).is_sparse, _csr(T).is_sparse_csr,
                        T.tensor(DENSE).to_sparse_csc().is_sparse_csr, _csr(T)._nnz(),
                        _csr(T).sparse_dim(), _csr(T).dense_dim(), _bsr(T).sparse_dim(),
                        _bsr(T).dense_dim(), tuple(_csr(T).shape), _csr(T).numel(),
                        _csr(T).dim()),
    "strides": lambda T: _csr(T).stride(),
    "numpy": lambda T: _csr(T).numpy(),
    # products
    "mm": lambda T: _csr(T).mm(T.arange(6.).view(3, 2)),
    "mm int32": lambda T: _csr(T, index_dtype="int32").mm(T.arange(6.).view(3, 2)),
    "matmul": lambda T: _csr(T) @ T.arange(6.).view(3, 2),
    "matmul vector": lambda T: _csr(T) @ T.tensor([1., 2., 3.]),
    "mv": lambda T: _csr(T).mv(T.tensor([1., 2., 3.])),
    "dense @ csr": lambda T: T.arange(4.).view(2, 2) @ _csr(T),
    "vector @ csr": lambda T: T.tensor([1., -2.]) @ _csr(T),
    "csc @ dense": lambda T: T.tensor(DENSE).to_sparse_csc() @ T.arange(6.).view(3, 2),
    "dense @ csc": lambda T: T.arange(4.).view(2, 2) @ T.tensor(DENSE).to_sparse_csc(),
    "bsr @ dense": lambda T: _bsr(T) @ T.arange(8.).view(4, 2),
    "bsc @ dense": lambda T: _bsr(T).to_sparse_bsc((2, 2)) @ T.arange(8.).view(4, 2),
    "csr @ csr": lambda T: T.tensor([[0., 1], [2, 0]]).to_sparse_csr() @
    T.tensor([[1., 0], [-2, 3]]).to_sparse_csr(),
    "empty row": lambda T: T.tensor([[0., 0, 0], [1, 0, 2]]).to_sparse_csr() @ T.ones(3, 2),
    "no entries": lambda T: T.zeros(2, 3).to_sparse_csr() @ T.ones(3, 2),
    "sparse.mm": lambda T: T.sparse.mm(_csr(T), T.ones(3, 4)),
    "addmm": lambda T: T.addmm(T.ones(2, 2), _csr(T), T.ones(3, 2), beta=0.5, alpha=2),
    "sparse.addmm": lambda T: T.sparse.addmm(T.ones(2, 2), _csr(T), T.ones(3, 2)),
    "sampled_addmm": lambda T: T.sparse.sampled_addmm(_csr(T), T.arange(8.).view(2, 4),
                                                      T.arange(12.).view(4, 3), beta=0.5,
                                                      alpha=2),
    "sampled_addmm dense": lambda T: T.sparse.sampled_addmm(T.ones(2, 3), T.ones(2, 4),
                                                            T.ones(4, 3)),
    "sampled_addmm csc": lambda T: T.sparse.sampled_addmm(T.tensor(DENSE).to_sparse_csc(),
                                                          T.ones(2, 2), T.ones(2, 3)),
    "sampled_addmm self shape": lambda T: T.sparse.sampled_addmm(_csr(T), T.ones(3, 2),
                                                                 T.ones(2, 3)),
    "sampled_addmm dtypes": lambda T: T.sparse.sampled_addmm(
        _csr(T), T.ones(2, 2, dtype=T.float64), T.ones(2, 3)),
    "sampled_addmm sparse mat1": lambda T: T.sparse.sampled_addmm(
        _csr(T), T.ones(2, 2).to_sparse_csr(), T.ones(2, 3)),
    "sampled_addmm beta 0": lambda T: T.sparse.sampled_addmm(_csr(T), T.ones(2, 2),
                                                             T.ones(2, 3), beta=0),
    "mv matrix": lambda T: _csr(T).mv(T.ones(3, 1)),
    "addmm compressed self": lambda T: T.addmm(_csr(T), _csr(T), T.ones(3, 3)),
    "addmm shape": lambda T: T.addmm(T.ones(3, 3), _csr(T), T.ones(3, 2)),
    "mm shape mismatch": lambda T: _csr(T).mm(T.ones(4, 2)),
    "mm 3-D": lambda T: _csr(T).mm(T.ones(3, 2, 2)),
    "mm dtype mismatch": lambda T: _csr(T).mm(T.ones(3, 2, dtype=T.float64)),
    "mm integer": lambda T: T.tensor(DENSE).long().to_sparse_csr().mm(T.ones(3, 2).long()),
    "mv mismatch": lambda T: _csr(T).mv(T.ones(2)),
    # elementwise, layout, copies, reductions
    "neg": lambda T: -_csr(T),
    "mul scalar": lambda T: _csr(T) * 2,
    "rmul scalar": lambda T: 3 * _csr(T),
    "mul int32": lambda T: _csr(T, index_dtype="int32") * _csr(T, index_dtype="int32"),
    "mul dense": lambda T: _csr(T) * T.arange(6.).view(2, 3),
    "mul csr": lambda T: _csr(T) * T.tensor([[1., 1, 0], [0, 0, 2]]).to_sparse_csr(),
    "add csr": lambda T: _csr(T) + T.tensor([[1., 0, 0], [-3, 0, 2]]).to_sparse_csr(),
    "add int32": lambda T: _csr(T, index_dtype="int32") + _csr(T, index_dtype="int32"),
    "add dense": lambda T: _csr(T) + T.ones(2, 3),
    "dense add": lambda T: T.ones(2, 3) + _csr(T),
    "sin": lambda T: T.sin(_csr(T)),
    "abs sqrt relu": lambda T: (T.abs(-_csr(T)), T.sqrt(_csr(T)), T.relu(-_csr(T))),
    "signbit": lambda T: T.signbit(_csr(T)),
    "exp": lambda T: T.exp(_csr(T)),
    "sub": lambda T: _csr(T) - _csr(T),
    "div": lambda T: _csr(T) / 2,
    "eq": lambda T: _csr(T) == _csr(T),
    "view": lambda T: _csr(T).view(3, 2),
    "softmax": lambda T: T.softmax(_csr(T), 0),
    "t": lambda T: _csr(T).t(),
    "transpose": lambda T: _csr(T).transpose(0, 1),
    "t of bsr": lambda T: _bsr(T).t(),
    "t of csc": lambda T: T.tensor(DENSE).to_sparse_csc().t(),
    "clone": lambda T: _csr(T).clone(),
    "double": lambda T: _csr(T).double(),
    "to int": lambda T: _csr(T).to(T.int32),
    "detach": lambda T: _csr(T).detach(),
    "sum": lambda T: _csr(T).sum(),
    "sum int": lambda T: T.sparse_csr_tensor(CROW, COL, [1, 2, 3], (2, 3)).sum(),
    "sparse.sum": lambda T: T.sparse.sum(_csr(T)),
    "sparse_mask": lambda T: T.arange(6.).view(2, 3).sparse_mask(_csr(T)),
    "sparse_mask bsr": lambda T: T.arange(16.).view(4, 4).sparse_mask(_bsr(T)),
    "to_dense dtype": lambda T: _csr(T).to_dense(dtype=T.float64),
    "bool": lambda T: bool(T.tensor([[1.]]).to_sparse_csr()),
    "sum dim": lambda T: _csr(T).sum(0),
    "dense @ bsr": lambda T: T.arange(8.).view(2, 4) @ _bsr(T),
    "dense @ bsc": lambda T: T.arange(8.).view(2, 4) @ _bsr(T).to_sparse_bsc((2, 2)),
    "bsr mv": lambda T: _bsr(T).mv(T.arange(4.)),
    "to_sparse_csr dense_dim of csr": lambda T: _csr(T).to_sparse_csr(dense_dim=0),
    "transpose with dense dims": lambda T: T.arange(12.).view(2, 3, 2).to_sparse_csr(
        dense_dim=1).transpose(0, 1),
    "sum rows keepdim": lambda T: T.tensor([[0., 2, 0], [0, 0, 0], [3, 0, 4]]).to_sparse_csr()
    .sum(1, keepdim=True),
    "sum columns keepdim": lambda T: _csr(T).sum(0, keepdim=True),
    "sum all keepdim": lambda T: T.sparse_csr_tensor(CROW, COL, [1, 2, 3], (2, 3)).sum(
        (0, 1), keepdim=True),
    "sum csc keepdim": lambda T: T.tensor(DENSE).to_sparse_csc().sum(0, keepdim=True),
    "select row": lambda T: T.tensor([[0., 2, 0], [0, 0, 0], [3, 0, 4]]).to_sparse_csr()
    .select(0, 2),
    "select column": lambda T: _csr(T).select(1, 0),
    "index empty row": lambda T: T.tensor([[0., 2, 0], [0, 0, 0], [3, 0, 4]]).to_sparse_csr()[1],
    "select csc": lambda T: T.tensor(DENSE).to_sparse_csc().select(1, 2),
    "select out of range": lambda T: _csr(T).select(0, 5),
    # like-constructors and in-place ops
    "zeros_like": lambda T: T.zeros_like(_csr(T), dtype=T.float64),
    "ones_like": lambda T: T.ones_like(_csr(T)),
    "empty_like": lambda T: (tuple(T.empty_like(_csr(T)).shape), T.empty_like(_csr(T))._nnz(),
                             str(T.empty_like(_csr(T)).layout)),
    "mul_": lambda T: _csr(T).mul_(2),
    "mul_ int by float": lambda T: T.sparse_csr_tensor(CROW, COL, [1, 2, 3], (2, 3)).mul_(1.5),
    "neg_ abs_": lambda T: _csr(T).neg_().abs_(),
    "zero_": lambda T: _csr(T).zero_(),
    "copy_": lambda T: _csr(T).copy_(_csr(T) * 3),
    "values alias sees mul_": lambda T: (lambda s: (s.values(), s.mul_(2))[0])(_csr(T)),
    # PyTorch's invariant checks
    "bad crow start": lambda T: _checked(T, [1, 1, 3], [1, 0, 2]),
    "bad crow end": lambda T: _checked(T, [0, 1, 2], [1, 0, 2]),
    "bad crow length": lambda T: _checked(T, [0, 1, 2, 3], [1, 0, 2]),
    "col out of range": lambda T: _checked(T, [0, 1, 3], [1, 0, 5]),
    "col unsorted": lambda T: _checked(T, [0, 1, 3], [1, 2, 0]),
    "col repeated": lambda T: _checked(T, [0, 1, 3], [1, 2, 2]),
    "crow decreasing": lambda T: _checked(T, [0, 2, 1, 3], [1, 2, 2], size=(3, 3)),
    "nnz mismatch": lambda T: _checked(T, [0, 1, 3], [1, 0, 2], (1., 1., 1., 1.)),
    "wrong dims": lambda T: _checked(T, [0, 1, 3], [1, 0, 2], size=(3,)),
    "dense dims mismatch": lambda T: _checked(T, [0, 1, 3], [1, 0, 2], T.ones(3, 2)),
    "bsr not divisible": lambda T: T.sparse_bsr_tensor([0, 1, 2], [1, 0], T.ones(2, 2, 2),
                                                       (5, 4), check_invariants=True),
    "index dtypes differ": lambda T: T.sparse_csr_tensor(
        T.tensor(CROW, dtype=T.int32), T.tensor(COL), T.ones(3), (2, 3), check_invariants=True),
    "index dtype short": lambda T: T.sparse_csr_tensor(
        T.tensor(CROW, dtype=T.int16), T.tensor(COL, dtype=T.int16), T.ones(3), (2, 3),
        check_invariants=True),
    "index dims differ": lambda T: T.sparse_csr_tensor(
        T.tensor([CROW]), T.tensor(COL), T.ones(3), (2, 3), check_invariants=True),
}

# programs whose exception message is PyTorch's word for word (the rest: the same type)
SAME_MESSAGE = {
    "compressed no layout", "compressed strided", "to_sparse_bsr bad block",
    "to_sparse bsr no block", "coo 3 dims to csr", "bsr to csr", "ccol of csr",
    "row_indices of csr", "crow of csc", "crow of dense", "crow of coo", "values of dense",
    "indices of csr", "coalesce of csr", "is_coalesced of csr", "strides", "numpy",
    "mm shape mismatch", "mm 3-D", "mm dtype mismatch", "mm integer", "mv mismatch", "exp",
    "sub", "div", "eq", "sparse.sum",
    "bad crow start", "bad crow end", "bad crow length", "col out of range", "col unsorted",
    "col repeated", "crow decreasing", "nnz mismatch", "wrong dims", "dense dims mismatch",
    "bsr not divisible", "index dtypes differ", "index dtype short", "index dims differ",
    "to_dense dtype", "sum dim", "dense @ bsr", "to_sparse_csr dense_dim of csr",
    "transpose with dense dims", "sum csc keepdim", "select out of range",
    "sampled_addmm csc", "sampled_addmm self shape", "sampled_addmm dtypes",
    "sampled_addmm sparse mat1", "mv matrix", "addmm compressed self", "addmm shape",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compressed_program_equals_torch(name):
    got, want = _outcome(PROGRAMS[name], ember), _outcome(PROGRAMS[name], torch)
    if want[0] == "raises" and name not in SAME_MESSAGE:
        got, want = got[:2], want[:2]
    assert got == want


def test_every_message_listed_is_an_exception():
    for name in SAME_MESSAGE:
        assert _outcome(PROGRAMS[name], torch)[0] == "raises", name


@pytest.mark.parametrize("make", [
    lambda T: _csr(T),
    lambda T: _csr(T, index_dtype="int32"),
    lambda T: _csr(T, values=[1., 2., 3.5]).double(),
    lambda T: _csr(T, requires_grad=True),
    lambda T: _csr(T, values=[1., 2., 3.]).to_sparse_csc(),
    lambda T: T.zeros(2, 3).to_sparse_csr(),
    lambda T: _bsr(T),
    lambda T: T.tensor(DENSE).to_sparse_bsc((1, 1)),
    lambda T: T.sparse_csr_tensor(CROW, COL, [1, 2, 3], (2, 3)),
    lambda T: T.sparse_csr_tensor(CROW, COL, T.arange(6.).view(3, 2), (2, 3, 2)),
    lambda T: T.sparse_csr_tensor(CROW, COL, T.tensor(VAL, requires_grad=True), (2, 3)) * 2,
    lambda T: T.sparse_csr_tensor(CROW, COL, T.tensor(VAL, requires_grad=True), (2, 3)),
])
def test_compressed_repr_equals_torch(make):
    assert repr(make(ember)) == repr(make(torch))


def _grads(lib):
    """Gradients of the stored values and of the dense operands through the products, the
    conversions and the elementwise ops."""
    values = lib.tensor(VAL, dtype=lib.float64, requires_grad=True)
    dense = lib.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    left = lib.tensor(np.arange(4.0).reshape(2, 2), requires_grad=True)
    m1 = lib.tensor(np.arange(8.0).reshape(2, 4) / 7, requires_grad=True)
    m2 = lib.tensor(np.arange(12.0).reshape(4, 3) / 5, requires_grad=True)
    s = lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor(COL), values, (2, 3))
    loss = ((s @ dense) ** 2).sum() + (s.to_dense() * lib.arange(6.0).view(2, 3)).sum() \
        + (s * 3).values().sum() + (-s).to_dense().sum() + (s.t() @ left).pow(2).sum() \
        + (left @ s).sum() * 2 + s.mv(dense[:, 0]).sum() \
        + lib.addmm(left, s, dense, beta=0.5, alpha=2).sum() \
        + lib.sparse.sampled_addmm(s, m1, m2, beta=0.5, alpha=2).to_dense().pow(2).sum() \
        + s.to_sparse_csc().to_dense().pow(3).sum()
    loss.backward()
    return [t.grad.numpy() for t in (values, dense, left, m1, m2)]


def test_gradients_through_compressed_ops_equal_torchs():
    for got, want in zip(_grads(ember), _grads(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _leaf_grads(lib):
    """A compressed leaf's gradient, and a dense tensor's through to_sparse_csr()."""
    leaf = lib.tensor(DENSE, dtype=lib.float64).to_sparse_csr().requires_grad_()
    dense = lib.tensor(DENSE, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(np.arange(6.0).reshape(3, 2))
    (leaf @ w).sum().backward()
    (dense.to_sparse_csr() @ w).pow(2).sum().backward()
    return [(str(t.grad.layout), t.grad.numpy()) for t in (leaf, dense)]


def test_leaf_gradients_equal_torchs():
    for (got_layout, got), (want_layout, want) in zip(_leaf_grads(ember), _leaf_grads(torch)):
        assert got_layout == want_layout
        np.testing.assert_allclose(got, want)


def test_grad_fn_names_equal_torchs():
    def names(lib):
        v = lib.tensor(VAL, requires_grad=True)
        s = lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor(COL), v, (2, 3))
        d = lib.tensor(DENSE, requires_grad=True)
        return [type(x.grad_fn).__name__ for x in (
            s, s.values(), d.to_sparse_csr(), d.to_sparse_csc(), s @ d.t(), s.t(), -s,
            lib.sparse.sampled_addmm(s, d[:, :2], d))]
    assert names(ember) == names(torch)


def test_graph_convolution_with_a_csr_adjacency_equals_torch():
    """A GCN layer as GNN code writes it: a normalised CSR adjacency `@` dense features."""
    rng = np.random.default_rng(0)
    n, edges = 7, rng.integers(0, 7, size=(2, 12))
    feats = rng.standard_normal((n, 5)).astype(np.float32)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)

    def layer(T):
        adj = T.zeros(n, n)
        adj[T.tensor(edges[0]), T.tensor(edges[1])] = 1.0
        adj = adj + T.eye(n)
        deg = adj.sum(1).rsqrt()
        adj = (deg[:, None] * adj * deg[None, :]).to_sparse_csr()
        w = T.tensor(w0, requires_grad=True)
        out = adj @ (T.tensor(feats) @ w)
        out.relu().log_softmax(1).sum().backward()
        return out.detach().numpy(), w.grad.numpy()
    for got, want in zip(layer(ember), layer(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_index_dtype_kept_through_ops():
    s = _csr(ember, index_dtype="int32")
    for out in (s.clone(), -s, s * 2, s.t(), s.to_sparse_csc(), s.double(), s + s):
        parts = out._sparse
        assert (parts.compressed_indices.dtype, parts.plain_indices.dtype) == \
            (ember.int32, ember.int32)


PRODUCTS = ["mm", "mm int32", "matmul vector", "mv", "dense @ csr", "csc @ dense",
            "dense @ csc", "bsr @ dense", "empty row", "no entries", "addmm", "csr @ csr"]


@pytest.mark.parametrize("name", PRODUCTS)
def test_products_without_scipy_equal_torch(name, monkeypatch):
    """The NumPy products (what runs when the `scipy` extra is not installed)."""
    from ember._aten import sparse_compressed
    monkeypatch.setattr(sparse_compressed, "_scipy_matrix", lambda *args: None)
    assert _outcome(PROGRAMS[name], ember) == _outcome(PROGRAMS[name], torch)


@pytest.mark.parametrize("make", [
    lambda T: _csr(T, index_dtype="int32"),
    lambda T: T.tensor(DENSE).to_sparse_csc(),
    lambda T: _bsr(T),
    lambda T: T.tensor(DENSE).to_sparse(),  # COO pickles by its parts the same way
])
def test_pickle_and_save_round_trip_with_torch(make):
    import io
    import pickle
    s = make(ember)
    back = pickle.loads(pickle.dumps(s))
    assert repr(back) == repr(s) and back.layout is s.layout
    for save, load in ((ember.save, torch.load), (torch.save, ember.load)):
        buf = io.BytesIO()
        save(make(ember) if save is ember.save else make(torch), buf)
        buf.seek(0)
        assert repr(load(buf, weights_only=True)) == repr(make(torch))


def _leaf_grad(T, loss):
    """The .grad of a compressed leaf after loss(T, leaf).backward()."""
    leaf = T.tensor(DENSE).to_sparse_csr().requires_grad_()
    loss(T, leaf).backward()
    return leaf.grad


LEAF_LOSSES = {
    "values": lambda T, c: c.values().sum(),
    "to_dense": lambda T, c: (c.to_dense() * T.arange(6.).view(2, 3)).sum(),
    "mul": lambda T, c: (c * 2).to_dense().sum(),
    "neg": lambda T, c: (-c).values().sum(),
    "t @ dense": lambda T, c: (c.t() @ T.ones(2, 2)).sum(),
    "product and to_dense": lambda T, c: (c @ T.ones(3, 2)).sum() + c.to_dense().sum(),
    "sampled_addmm": lambda T, c: T.sparse.sampled_addmm(c, T.ones(2, 2), T.ones(2, 3))
    .values().sum(),
    "sum": lambda T, c: c.sum(),
    "to coo": lambda T, c: c.to_sparse().to_dense().sum(),
    "to csc": lambda T, c: c.to_sparse_csc().to_dense().sum(),
    "clone": lambda T, c: c.clone().values().sum(),
    "double": lambda T, c: c.double().values().sum(),
    "sin": lambda T, c: c.sin().values().sum(),
    "add": lambda T, c: (c + c).values().sum(),
}


@pytest.mark.parametrize("name", sorted(LEAF_LOSSES))
def test_compressed_leaf_gradient_equals_torchs(name):
    """The gradient's layout (dense after a product, compressed otherwise), indices, values."""
    def program(T):
        return _leaf_grad(T, LEAF_LOSSES[name])
    assert _outcome(program, ember) == _outcome(program, torch)


def test_beta_warning_once_per_process_as_torch():
    """The first compressed tensor of a process warns that the layouts are beta (fresh
    processes: the warning is once per process in both)."""
    import subprocess
    import sys
    script = ("import warnings, {lib} as torch\n"
              "warnings.simplefilter('always')\n"
              "with warnings.catch_warnings(record=True) as w:\n"
              "    torch.ones(2, 2).to_sparse_csr(); torch.ones(2, 2).to_sparse_csc()\n"
              "print(sum('in beta state' in str(x.message) for x in w))\n")
    counts = [subprocess.run([sys.executable, "-c", script.format(lib=lib)], capture_output=True,
                             text=True, timeout=120).stdout.strip() for lib in ("torch", "ember")]
    assert counts[0] == counts[1] == "1"


@pytest.mark.parametrize("program", [
    lambda T: T.tensor(DENSE).to_sparse() @ T.arange(6.).view(3, 2),
    lambda T: T.sparse_coo_tensor([[0, 1, 1, 0], [1, 0, 2, 1]], [1., 2., 3., 4.], (2, 3)).mv(
        T.tensor([1., 2., 3.])),
])
def test_coo_products_without_scipy_equal_torch(program, monkeypatch):
    """COO's NumPy products (uncoalesced entries add up), what runs without the scipy extra."""
    from ember._aten import sparse
    monkeypatch.setattr(sparse, "scipy_sparse", lambda dtype: None)
    assert _outcome(program, ember) == _outcome(program, torch)


@pytest.mark.parametrize("seed", range(6))
def test_random_matrices_convert_and_multiply_as_torch(seed):
    """Random sparse matrices (empty rows and columns, all-zero blocks): every conversion's
    parts and the products with a dense matrix on either side."""
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 5, size=2) * 2
    a = (rng.standard_normal((n, m)) * (rng.random((n, m)) < rng.uniform(0.05, 0.6)))
    a = a.astype(np.float32)
    right, left = rng.standard_normal((m, 3)).astype(np.float32), \
        rng.standard_normal((2, n)).astype(np.float32)

    def program(T):
        x = T.tensor(a)
        outs = [x.to_sparse_csr(), x.to_sparse_csc(), x.to_sparse_bsr((2, 2)),
                x.to_sparse_bsc((2, 1)), x.to_sparse().to_sparse_csr(),
                x.to_sparse_csc().to_sparse_csr(), x.to_sparse_csr().to_sparse()]
        for s in outs[:3]:
            outs += [s @ T.tensor(right), s.to_dense()]
        outs += [T.tensor(left) @ x.to_sparse_csr(), T.tensor(left) @ x.to_sparse_csc()]
        return outs
    assert _outcome(program, ember) == _outcome(program, torch)
