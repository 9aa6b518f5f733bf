"""What the op-db rows of tests/op_db_linalg.py do not cover: the new linalg ops on meta tensors,
their `out=` forms, complex inputs (values and PyTorch's conjugate-Wirtinger gradients of the
products and solvers the eig/qr derivatives are written with), and a loss that depends on the
eigenvectors' arbitrary phase, which PyTorch and ember both refuse."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")
from _torch_oracle import assert_same  # noqa: E402


def _meta_pair(shape, dtype="float32"):
    return (ember.empty(shape, dtype=getattr(ember, dtype), device="meta"),
            torch.empty(shape, dtype=getattr(torch, dtype), device="meta"))


META_CASES = [
    ("inv_ex", lambda m, A: m.linalg.inv_ex(A), [(2, 3, 3)]),
    ("solve_ex", lambda m, A, B: m.linalg.solve_ex(A, B), [(2, 3, 3), (3, 4)]),
    ("solve_ex_vector", lambda m, A, B: m.linalg.solve_ex(A, B), [(2, 3, 3), (2, 3)]),
    ("cholesky_ex", lambda m, A: m.linalg.cholesky_ex(A, upper=True), [(2, 4, 4)]),
    ("ldl_factor_ex", lambda m, A: m.linalg.ldl_factor_ex(A), [(2, 4, 4)]),
    ("ldl_solve", lambda m, A, B: m.linalg.ldl_solve(
        A, m.zeros(A.shape[:-1], dtype=m.int32, device="meta"), B), [(2, 4, 4), (4, 3)]),
    ("matrix_exp", lambda m, A: m.linalg.matrix_exp(A), [(2, 4, 4)]),
    ("eig", lambda m, A: m.linalg.eig(A), [(2, 3, 3)]),
    ("vander", lambda m, x: m.linalg.vander(x, N=4), [(2, 3)]),
]


@pytest.mark.parametrize("name, fn, shapes", META_CASES, ids=[c[0] for c in META_CASES])
def test_meta_shapes_and_dtypes(name, fn, shapes):
    pairs = [_meta_pair(s) for s in shapes]
    out_e = fn(ember, *[p[0] for p in pairs])
    out_t = fn(torch, *[p[1] for p in pairs])
    assert_same(out_e, out_t)


def test_out_forms():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    for lib in (ember, torch):
        A = lib.tensor(a)
        inverse, info = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32)
        result = lib.linalg.inv_ex(A, out=(inverse, info))
        assert result.inverse is inverse and result.info is info
        np.testing.assert_allclose(inverse.numpy(), np.linalg.inv(a), atol=1e-12)
        X = lib.empty(0, dtype=lib.float64)
        lib.linalg.tensorinv(A[0], ind=1, out=X)
        np.testing.assert_allclose(X.numpy(), np.linalg.inv(a[0]), atol=1e-12)


def _complex(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


COMPLEX_CASES = [
    ("matmul", lambda m, A, B: A.matmul(B), [(3, 3), (3, 2)]),
    ("mm", lambda m, A, B: A.mm(B), [(3, 3), (3, 2)]),
    ("bmm", lambda m, A, B: A.bmm(B), [(2, 3, 3), (2, 3, 2)]),
    ("dot", lambda m, a, b: a.matmul(b), [(3,), (3,)]),
    ("inv", lambda m, A, B: m.linalg.inv(A), [(3, 3), (1,)]),
    ("solve", lambda m, A, B: m.linalg.solve(A, B), [(3, 3), (3, 2)]),
    ("solve_ex", lambda m, A, B: m.linalg.solve_ex(A, B).result, [(3, 3), (3, 2)]),
    ("inv_ex", lambda m, A, B: m.linalg.inv_ex(A).inverse, [(3, 3), (1,)]),
    ("qr", lambda m, A, B: m.linalg.qr(A), [(4, 3), (1,)]),
    ("qr_wide", lambda m, A, B: m.linalg.qr(A), [(3, 5), (1,)]),
    ("matrix_exp", lambda m, A, B: m.linalg.matrix_exp(A), [(3, 3), (1,)]),
    ("eigvals", lambda m, A, B: m.linalg.eigvals(A), [(3, 3), (1,)]),
]


@pytest.mark.parametrize("name, fn, shapes", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_complex_values_and_gradients(name, fn, shapes):
    rng = np.random.default_rng(len(name))
    arrays = [_complex(rng, s) for s in shapes]
    results = []
    for lib in (ember, torch):
        ins = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ins)
        outs = out if isinstance(out, tuple) else (out,)
        loss = 0
        for k, o in enumerate(outs):
            w = lib.tensor(np.cos(np.arange(o.numel()) + k).reshape(tuple(o.shape)) + 0.5j)
            loss = loss + (o * w).real.sum()
        loss.backward()
        results.append(([o.detach().numpy() for o in outs],
                        [t.grad.numpy() if t.grad is not None else None for t in ins]))
    (e_out, e_grad), (t_out, t_grad) = results
    for e, t in zip(e_out, t_out):
        np.testing.assert_allclose(e, t, atol=1e-10)
    for e, t in zip(e_grad, t_grad):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e, t, atol=1e-10)


def test_complex_gradcheck():
    """Finite differences in float64 through complex matrices built from real leaves (ember's
    gradcheck perturbs real inputs)."""
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((3, 3, 2)), requires_grad=True)
    for fn in (ember.linalg.eigvals, ember.linalg.matrix_exp, ember.linalg.inv,
               lambda A: ember.linalg.qr(A)[1]):
        f = lambda x: ember.view_as_real(fn(ember.view_as_complex(x)))  # noqa: E731
        assert ember.autograd.gradcheck(f, (x,))


def test_eig_loss_depending_on_phase_is_refused():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 3))
    for lib in (ember, torch):
        A = lib.tensor(a, requires_grad=True)
        V = lib.linalg.eig(A).eigenvectors
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            lib.view_as_real(V).sum().backward()


def test_eig_of_real_input_gives_a_real_gradient_without_warning():
    A = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.view_as_real(ember.linalg.eigvals(A)).sum().backward()
    assert A.grad.dtype is ember.float64


@pytest.mark.parametrize("hermitian", [True, False])
def test_ldl_complex_against_torch(hermitian):
    """Complex symmetric (sytrf) and Hermitian (hetrf) LDL factors, and solves with them."""
    rng = np.random.default_rng(3)
    a = _complex(rng, (2, 4, 4))
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))
    b = _complex(rng, (4, 2))
    results = []
    for lib in (ember, torch):
        LD, pivots, info = lib.linalg.ldl_factor_ex(lib.tensor(a), hermitian=hermitian)
        X = lib.linalg.ldl_solve(LD, pivots, lib.tensor(b), hermitian=hermitian)
        results.append([LD.numpy(), pivots.numpy(), info.numpy(), X.numpy()])
    for e, t in zip(*results):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, atol=1e-10)
    np.testing.assert_allclose(a @ results[0][3], np.broadcast_to(b, (2, 4, 2)), atol=1e-10)


def test_python_signatures_as_torch():
    """Keyword-only arguments where PyTorch's bindings have them; torch.masked's signatures."""
    import inspect
    with pytest.raises(TypeError):
        ember.linalg.vander(ember.tensor([1., 2.]), 3)
    with pytest.raises(TypeError):
        ember.linalg.inv_ex(ember.eye(2), True)
    for name in ember.masked.__all__:
        ours = inspect.signature(getattr(ember.masked, name))
        theirs = inspect.signature(getattr(torch.masked, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name
