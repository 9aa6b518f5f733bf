"""Sparse COO tensors against torch: construction, printing, coalescing, conversion both ways,
products with dense matrices, elementwise ops, sums, transposes, gradients, and the errors of
ops that have no sparse kernel."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse invariant checks")

IDX = [[0, 1, 1, 0], [1, 0, 2, 1]]  # (0, 1) twice: uncoalesced
VAL = [1.0, 2.0, 3.0, 4.0]


def _outcome(fn, lib):
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return ("raises", type(e).__name__)
    return _describe(out)


def _describe(out):
    if isinstance(out, (tuple, list)):
        return tuple(_describe(o) for o in out)
    if hasattr(out, "is_sparse") and out.is_sparse:
        c = out.coalesce()
        return ("sparse", tuple(out.shape), str(out.dtype), c.indices().numpy().tolist(),
                np.round(c.values().detach().numpy(), 5).tolist())
    if hasattr(out, "numpy"):
        return ("dense", tuple(out.shape), str(out.dtype),
                np.round(out.detach().numpy(), 5).tolist())
    return out


PROGRAMS = {
    "construct": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)),
    "infer size": lambda T: T.sparse_coo_tensor(IDX, VAL),
    "dense values": lambda T: T.sparse_coo_tensor([[0, 2]], T.ones(2, 3), (3, 3)),
    "int values": lambda T: T.sparse_coo_tensor(IDX, [1, 2, 3, 4], (2, 3)).to_dense(),
    "dtype": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3), dtype=T.float64),
    "to_dense": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).to_dense(),
    "to_sparse": lambda T: T.tensor([[0., 2., 0.], [3., 0., 4.]]).to_sparse(),
    "to_sparse dim 1": lambda T: T.tensor([[0., 2.], [0., 0.], [3., 4.]]).to_sparse(1),
    "coalesce": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).coalesce().values(),
    "is_coalesced": lambda T: (T.sparse_coo_tensor(IDX, VAL, (2, 3)).is_coalesced(),
                               T.sparse_coo_tensor(IDX, VAL, (2, 3)).coalesce().is_coalesced(),
                               T.ones(2, 2).to_sparse().is_coalesced()),
    "meta": lambda T: (T.sparse_coo_tensor(IDX, VAL, (2, 3)).sparse_dim(),
                       T.sparse_coo_tensor(IDX, VAL, (2, 3)).dense_dim(),
                       T.sparse_coo_tensor(IDX, VAL, (2, 3))._nnz(),
                       str(T.sparse_coo_tensor(IDX, VAL, (2, 3)).layout),
                       T.sparse_coo_tensor(IDX, VAL, (2, 3)).is_sparse, T.ones(1).is_sparse),
    "mm": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).mm(T.arange(6.).view(3, 2)),
    "matmul": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)) @ T.arange(6.).view(3, 2),
    "spmm": lambda T: T.spmm(T.sparse_coo_tensor(IDX, VAL, (2, 3)), T.ones(3, 4)),
    "sparse.mm": lambda T: T.sparse.mm(T.sparse_coo_tensor(IDX, VAL, (2, 3)), T.ones(3, 1)),
    "mv": lambda T: T.mv(T.sparse_coo_tensor(IDX, VAL, (2, 3)), T.tensor([1., 2., 3.])),
    "addmm": lambda T: T.addmm(T.ones(2, 2), T.sparse_coo_tensor(IDX, VAL, (2, 3)),
                               T.ones(3, 2), beta=0.5, alpha=2),
    "sparse.addmm": lambda T: T.sparse.addmm(T.ones(2, 2), T.sparse_coo_tensor(IDX, VAL, (2, 3)),
                                             T.ones(3, 2)),
    "dense + sparse": lambda T: T.eye(3)[:2] + T.sparse_coo_tensor(IDX, VAL, (2, 3)),
    "sparse + dense": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)) + T.ones(2, 3),
    "sparse + sparse": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)) +
    T.sparse_coo_tensor([[1], [1]], [5.], (2, 3)),
    "mul scalar": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)) * 2,
    "rmul scalar": lambda T: 3 * T.sparse_coo_tensor(IDX, VAL, (2, 3)),
    "mul dense": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)) * T.arange(6.).view(2, 3),
    "mul sparse": lambda T: (T.sparse_coo_tensor(IDX, VAL, (2, 3)) *  # torch keeps explicit 0s
                             T.sparse_coo_tensor([[0, 1], [1, 1]], [2., 5.], (2, 3))).to_dense(),
    "div": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)) / 2,
    "int div": lambda T: T.sparse_coo_tensor(IDX, [1, 2, 3, 4], (2, 3)) / 2,
    "neg": lambda T: -T.sparse_coo_tensor(IDX, VAL, (2, 3)),
    "sum": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).sum(),
    "sparse.sum": lambda T: T.sparse.sum(T.sparse_coo_tensor(IDX, VAL, (2, 3))),
    "sparse.sum dim": lambda T: T.sparse.sum(T.sparse_coo_tensor(IDX, VAL, (2, 3)), 0),
    "sparse.sum all dims": lambda T: T.sparse.sum(T.sparse_coo_tensor(IDX, VAL, (2, 3)), (0, 1)),
    "t": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).t(),
    "transpose": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).transpose(0, 1),
    "clone": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).clone(),
    "double": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).double(),
    "detach": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).detach(),
    "sparse_mask": lambda T: T.arange(6.).view(2, 3).sparse_mask(
        T.sparse_coo_tensor(IDX, VAL, (2, 3)).coalesce()),
    "values of uncoalesced": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).values(),
    "indices of uncoalesced": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).indices(),
    "_values of uncoalesced": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3))._values(),
    "no kernel": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).exp(),
    "out of bounds": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 2), check_invariants=True),
    "nnz mismatch": lambda T: T.sparse_coo_tensor(IDX, VAL[:3], (2, 3)),
    "numpy": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).numpy(),
    "strides": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).stride(),
    "mm shape mismatch": lambda T: T.sparse_coo_tensor(IDX, VAL, (2, 3)).mm(T.ones(2, 2)),
    "diag to_sparse": lambda T: T.diag(T.tensor([1., 0., 3.])).to_sparse(),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sparse_program_equals_torch(name):
    program = PROGRAMS[name]
    assert _outcome(program, ember) == _outcome(program, torch)


@pytest.mark.parametrize("make", [
    lambda T: T.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2)),
    lambda T: T.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2), dtype=T.float64,
                                  requires_grad=True),
    lambda T: T.sparse_coo_tensor(T.zeros(2, 0, dtype=T.int64), T.zeros(0), (2, 2)),
    lambda T: T.sparse_coo_tensor([[0, 1]], T.ones(2, 3), (2, 3)),
    lambda T: T.sparse_coo_tensor([[0, 1], [1, 0]], T.tensor([1., 2.], requires_grad=True),
                                  (2, 2)) * 2,
])
def test_sparse_repr_equals_torch(make):
    assert repr(make(ember)) == repr(make(torch))


def _grads(lib):
    idx = lib.tensor(IDX)
    values = lib.tensor(VAL, dtype=lib.float64, requires_grad=True)
    dense = lib.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    s = lib.sparse_coo_tensor(idx, values, (2, 3))
    loss = ((s @ dense) ** 2).sum() + (s.to_dense() * lib.arange(6.0).view(2, 3)).sum() \
        + (s * 3).coalesce().values().sum()
    loss.backward()
    return values.grad.numpy(), dense.grad.numpy()


def test_gradients_through_sparse_ops_equal_torchs():
    for got, want in zip(_grads(ember), _grads(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_graph_convolution_step_equals_torch():
    """The step of pytorch/examples' GCN: a normalised sparse adjacency times dense features."""
    rng = np.random.default_rng(0)
    edges = rng.integers(0, 6, size=(2, 10))
    feats = rng.standard_normal((6, 4)).astype(np.float32)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)

    def step(T):
        adj = T.sparse_coo_tensor(T.tensor(edges), T.ones(10), (6, 6))
        adj = T.eye(6) + adj
        deg = T.sqrt(1 / T.sum(adj, dim=1))
        deg = T.diag(deg).to_sparse()
        adj = (deg @ adj @ deg.to_dense()).to_sparse()
        x = T.tensor(feats).to_sparse()
        w = T.tensor(w0, requires_grad=True)
        out = T.spmm(adj, T.mm(x, w))
        out.log_softmax(1).sum().backward()
        return out.detach().numpy(), w.grad.numpy()
    for got, want in zip(step(ember), step(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_implicit_invariant_checks_warn_once_per_process():
    """sparse_coo_tensor warns once per process while nobody chose the invariant checks;
    check_invariants= or an explicit enable()/disable() silence it (fresh processes)."""
    import subprocess
    import sys
    pytest.importorskip("torch")
    script = ("import warnings, {lib} as torch\n"
              "warnings.simplefilter('always')\n"
              "i, v = torch.tensor([[0]]), torch.tensor([1.])\n"
              "with warnings.catch_warnings(record=True) as w:\n"
              "    torch.sparse_coo_tensor(i, v, (2,), check_invariants=False)\n"
              "    torch.sparse_coo_tensor(i, v, (2,)); torch.sparse_coo_tensor(i, v, (2,))\n"
              "print(sum('implicitly disabled' in str(x.message) for x in w))\n"
              "torch.sparse.check_sparse_tensor_invariants.disable()\n")
    counts = [subprocess.run([sys.executable, "-c", script.format(lib=lib)], capture_output=True,
                             text=True, timeout=120).stdout.strip() for lib in ("torch", "ember")]
    assert counts[0] == counts[1] == "1"
