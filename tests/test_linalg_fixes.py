"""Fixes found by running PyTorch's test_linalg.py on ember, each compared with torch on the same
inputs: out= dtype checks of the linear-algebra ops, eigh's real eigenvalues, the conjugate
transposes of torch.svd's V and of pinv, the legacy pinv/matrix_rank overloads, linalg.norm's
dispatch, the error messages of inv / cond / lstsq / multi_dot / einsum, einsum's sublist labels,
and the torch.backends.cuda / opt_einsum switches and the matrix generators the tests import."""
import math
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")
from _ported import same  # noqa: E402


def _spd(L, n=3, dtype="float64"):
    g = np.random.default_rng(0)
    a = g.standard_normal((n, n))
    return L.tensor(a @ a.T + n * np.eye(n), dtype=getattr(L, dtype))


def _mat(L, shape=(3, 3), dtype="float64", seed=1):
    a = np.random.default_rng(seed).standard_normal(shape)
    if "complex" in dtype:
        a = a + 1j * np.random.default_rng(seed + 1).standard_normal(shape)
    return L.tensor(a, dtype=getattr(L, dtype))


def _out(L, dtype):
    return L.empty(0, dtype=getattr(L, dtype))


# op(L, out) for ops whose out= dtype PyTorch checks itself
OUT_CASES = {
    "linalg.inv": lambda L, o: L.linalg.inv(_spd(L), out=o),
    "inverse": lambda L, o: L.inverse(_spd(L), out=o),
    "linalg.cholesky": lambda L, o: L.linalg.cholesky(_spd(L), out=o),
    "linalg.eigvalsh": lambda L, o: L.linalg.eigvalsh(_spd(L), out=o),
    "linalg.eigh": lambda L, o: L.linalg.eigh(_spd(L), out=(o, L.empty(0, dtype=L.float64))),
    "linalg.eigvals": lambda L, o: L.linalg.eigvals(_spd(L), out=o),
    "linalg.eig": lambda L, o: L.linalg.eig(_spd(L), out=(o, o.clone())),
    "linalg.cond": lambda L, o: L.linalg.cond(_spd(L), "fro", out=o),
    "linalg.pinv": lambda L, o: L.linalg.pinv(_spd(L), out=o),
    "cholesky_solve": lambda L, o: L.cholesky_solve(_mat(L, (3, 2)), _spd(L), out=o),
    "linalg.matrix_rank": lambda L, o: L.linalg.matrix_rank(_spd(L), out=o),
    "linalg.solve": lambda L, o: L.linalg.solve(_spd(L), _mat(L, (3, 2)), out=o),
    "linalg.svd": lambda L, o: L.linalg.svd(_spd(L), out=(o, o.clone(), o.clone())),
    "linalg.qr": lambda L, o: L.linalg.qr(_spd(L), out=(o, o.clone())),
    "linalg.matrix_norm": lambda L, o: L.linalg.matrix_norm(_spd(L), out=o),
    "linalg.vector_norm": lambda L, o: L.linalg.vector_norm(_spd(L), out=o),
    "linalg.matrix_power": lambda L, o: L.linalg.matrix_power(_spd(L), 2, out=o),
    "linalg.multi_dot": lambda L, o: L.linalg.multi_dot([_spd(L), _spd(L)], out=o),
    "linalg.tensorinv": lambda L, o: L.linalg.tensorinv(_spd(L), ind=1, out=o),
}


@pytest.mark.parametrize("out_dtype", ["int32", "float32"])
@pytest.mark.parametrize("name", list(OUT_CASES))
def test_linalg_out_dtype_checked_as_torch(name, out_dtype):
    same(lambda L: OUT_CASES[name](L, _out(L, out_dtype)).__class__.__name__,
         match=r"dtype|castable|Found|expected")


def test_eigh_values_are_real_and_uplo_either_case():
    for dtype in ("complex64", "complex128", "float32"):
        H = lambda L: _mat(L, dtype=dtype) + _mat(L, dtype=dtype).mH
        same(lambda L: L.linalg.eigh(H(L), UPLO="u").eigenvalues)
        same(lambda L: L.linalg.eigh(H(L), UPLO="u").eigenvectors.abs())  # up to each phase
        same(lambda L: L.linalg.eigvalsh(_mat(L, dtype=dtype) + _mat(L, dtype=dtype).mH))
    same(lambda L: L.linalg.eigh(_spd(L), UPLO="x"), match="Expected UPLO")


def test_complex_svd_v_and_pinv():
    same(lambda L: L.svd(_mat(L, (4, 3), "complex128")).S)
    same(lambda L: (lambda U, S, V: U @ S.to(U.dtype).diag_embed() @ V.mH)(
        *L.svd(_mat(L, (4, 3), "complex128"))))
    same(lambda L: L.linalg.pinv(_mat(L, (4, 3), "complex128")))
    A = lambda L: _mat(L, dtype="complex128") @ _mat(L, dtype="complex128").mH
    same(lambda L: L.linalg.pinv(A(L), hermitian=True))


def test_legacy_tolerance_overloads_and_batched_tolerances():
    A = lambda L: _mat(L, (3, 4, 4))
    same(lambda L: L.linalg.pinv(A(L), 0.3))
    same(lambda L: L.linalg.pinv(A(L), rcond=L.tensor([0.1, 0.5, 0.9], dtype=L.float64)))
    same(lambda L: L.linalg.matrix_rank(A(L), 0.8, True))
    same(lambda L: L.linalg.matrix_rank(A(L), atol=L.tensor([0.1, 1.0, 3.0])))
    same(lambda L: L.linalg.pinv(A(L), rtol=L.full((), 1j)), match="complex type")


NORM_CASES = [((10,), "fro", None), ((10,), None, (0, 0)), ((3, 4), None, (0, 1)),
              ((3, 4), "nuc", (0, 0)), ((2, 3, 4), 1, None), ((2, 3, 4), 1, (0, 1, 2)),
              ((3, 4), "fro", 0), ((3, 4), 2, (-1, 1)), ((2, 3, 4), "fro", None)]


@pytest.mark.parametrize("shape, ord, dim", NORM_CASES)
def test_linalg_norm_dispatch(shape, ord, dim):
    same(lambda L: L.linalg.norm(_mat(L, shape), ord, dim), match=r"linalg\.|dim")


ERROR_CASES = {
    "inv_batch": lambda L: L.linalg.inv(L.eye(3, dtype=L.float64).repeat(4, 1, 1)
                                        .index_put_((L.tensor([2]), L.tensor([2]),
                                                     L.tensor([2])), L.tensor(0.))),
    "tensorinv": lambda L: L.linalg.tensorinv(L.zeros(4, 2, 2), ind=1),
    "cond_norm": lambda L: L.linalg.cond(L.ones(3, 3), "wrong"),
    "cond_singular": lambda L: L.linalg.cond(L.tensor([[1., 0], [0, 0]]), "nuc"),
    "lstsq_1d": lambda L: L.linalg.lstsq(L.ones(3), L.ones(3)),
    "lstsq_shape": lambda L: L.linalg.lstsq(L.ones(2, 3), L.ones(3)),
    "eig_nan": lambda L: L.linalg.eig(L.tensor([[1., math.nan], [0, 1]])),
    "dot_dtype": lambda L: L.dot(L.ones(1), L.ones(3, dtype=L.float64)),
    "multi_dot_0d": lambda L: L.linalg.multi_dot([L.tensor(1.), L.ones(2)]),
    "multi_dot_shapes": lambda L: L.linalg.multi_dot([L.ones(2), L.ones(3, 2), L.ones(2)]),
    "chain_matmul_1d": lambda L: L.chain_matmul(L.ones(2), L.ones(2)),
    "einsum_stray_dot": lambda L: L.einsum(". ..", [L.ones(2)]),
    "einsum_more_subscripts": lambda L: L.einsum("ai...", [L.ones(2)]),
    "einsum_repeated": lambda L: L.einsum("aa", [L.ones(2, 3)]),
    "einsum_output_twice": lambda L: L.einsum("a->aa", [L.ones(2)]),
    "einsum_no_operand": lambda L: L.einsum("", []),
    "einsum_sublist_range": lambda L: L.einsum(L.ones(2), [52]),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_errors_and_values_as_torch(name):
    t = None
    try:
        ERROR_CASES[name](torch)
    except Exception as exc:  # the message torch gives is what ember must give
        t = str(exc).splitlines()[0]
    same(ERROR_CASES[name], match=None if t is None else re.escape(t))


def test_einsum_sublist_labels_order_as_torch():
    x = lambda L: _mat(L, (2, 3))
    y = lambda L: _mat(L, (3, 4), seed=5)
    same(lambda L: L.einsum(x(L), [30, 2], y(L), [2, 5]))        # implicit output: F before e
    same(lambda L: L.einsum(x(L), [0, Ellipsis], [Ellipsis, 0]))


def test_backends_cuda_and_opt_einsum_switches():
    same(lambda L: (L.backends.cuda.matmul.allow_tf32, L.backends.cuda.is_built(),
                    str(L.backends.cuda.preferred_linalg_library()),
                    L.backends.opt_einsum.is_available()))
    same(lambda L: L.backends.cuda.preferred_linalg_library("cusolver"), match="cuSOLVER")
    same(lambda L: setattr(L.backends.cuda.matmul, "bogus", 1), match="Unknown attribute")
    same(lambda L: L._C._infer_size(L.Size([2, 1]), L.Size([3, 1, 2])))
    assert ember._C.has_lapack is torch._C.has_lapack


def test_matrix_generators_give_the_matrices_their_names_promise():
    from ember.testing._internal import common_utils as cu
    ember.manual_seed(0)
    A = cu.random_hermitian_pd_matrix(4, 2, dtype=ember.complex128, device="cpu")
    assert bool((ember.linalg.eigvalsh(A) > 0).all()) and ember.allclose(A, A.mH)
    S = ember.linalg.svdvals(cu.make_fullrank_matrices_with_distinct_singular_values(
        5, 5, device="cpu", dtype=ember.float64))
    np.testing.assert_allclose(sorted(S.tolist()), sorted(1 + 1 / k for k in
                                                          (2, -3, 4, -5, 6)), rtol=1e-12)
    assert ember.linalg.matrix_rank(cu.random_lowrank_matrix(2, 6, 5, dtype=ember.float64)) == 2
    W = cu.random_well_conditioned_matrix(4, 3, dtype=ember.float32, device="cpu")
    assert float(ember.linalg.cond(W)) < 1.01
    sp = cu.random_sparse_matrix(6, 6, 0.2)
    assert sp.is_sparse and sp.shape == (6, 6)


@pytest.mark.parametrize("shape", [(1, 2), (1, 1), (4, 2), (2, 2, 3)])
def test_lstsq_drivers_and_rcond_as_torch(shape):
    """gels ignores rcond, gelsd reads rcond >= 1 as eps and keeps a lone singular value, rank
    and residuals (real for complex input) come from the singular values kept."""
    g = np.random.default_rng(3)
    a, b = g.standard_normal(shape), g.standard_normal(shape[:-1] + (2,))
    for driver in ("gels", "gelsd", "gelss", None):
        for rcond in (None, 1.0, 0.5, -1) if driver else (None, -1):  # gelsy's cut: not here
            same(lambda L: tuple(L.linalg.lstsq(L.tensor(a), L.tensor(b), rcond=rcond,
                                                driver=driver)))
    same(lambda L: L.linalg.lstsq(L.tensor(a + 1j * a.T[..., :1].sum()),
                                  L.tensor(b + 0j), driver="gelsd").residuals)


def _grad(L, arr, loss):
    x = L.tensor(arr, requires_grad=True)
    loss(L, x).backward()
    return x.grad


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_complex_svd_and_eigh_gradients(shape):
    """Phase-invariant losses through the singular vectors / eigenvectors of complex matrices
    (the conjugate transposes, the skew-Hermitian parts and svd's diagonal phase term)."""
    g = np.random.default_rng(4)
    a = g.standard_normal(shape) + 1j * g.standard_normal(shape)
    svd_loss = lambda L, x: (lambda U, S, Vh: (U[:, :2] @ Vh[:2]).abs().sum() + S.sum())(
        *L.linalg.svd(x, full_matrices=False))
    same(lambda L: _grad(L, a, svd_loss))
    same(lambda L: _grad(L, a, lambda L, x: (L.linalg.svd(x, full_matrices=False).U.abs() ** 3)
                          .sum()))
    eigh_loss = lambda L, x: (lambda w, V: (V.abs() ** 2 * w).sum())(*L.linalg.eigh(x @ x.mH))
    same(lambda L: _grad(L, a, eigh_loss))
    same(lambda L: _grad(L, a[:3, :3], lambda L, x: L.linalg.eigh(x + x.mH).eigenvectors.sum()
                         .abs()), match="ill-defined")
    same(lambda L: _grad(L, a[:3, :3], lambda L, x: (lambda U, S, Vh: (U + Vh).sum().abs())(
        *L.linalg.svd(x))), match="ill-defined")


def test_skip_cpu_if_no_mkl_runs_the_fft_tests():
    """PyTorch's FFT tests are gated on MKL; ember's FFTs need none, so they run."""
    from ember.testing._internal.common_device_type import skipCPUIfNoMkl
    ran = []
    skipCPUIfNoMkl(lambda self, device: ran.append(device))(None, "cpu")
    assert ran == ["cpu"]


# ---- out= of the matrix products: the result's dtype only, with each kernel's message ----------
_PRODUCTS_OUT = {
    "mm": lambda L, a, b, o: L.mm(a, b, out=o(2, 2)),
    "addmm": lambda L, a, b, o: L.addmm(L.zeros(2, 2, dtype=L.float64), a, b, out=o(2, 2)),
    "bmm": lambda L, a, b, o: L.bmm(a[None], b[None], out=o(1, 2, 2)),
    "baddbmm": lambda L, a, b, o: L.baddbmm(L.zeros(1, 2, 2, dtype=L.float64), a[None], b[None],
                                            out=o(1, 2, 2)),
    "addbmm": lambda L, a, b, o: L.addbmm(L.zeros(2, 2, dtype=L.float64), a[None], b[None],
                                          out=o(2, 2)),
    "mv": lambda L, a, b, o: L.mv(a, b[:, 0], out=o(2)),
    "addmv": lambda L, a, b, o: L.addmv(L.zeros(2, dtype=L.float64), a, b[:, 0], out=o(2)),
    "matmul": lambda L, a, b, o: L.matmul(a, b, out=o(2, 2)),
    "inner": lambda L, a, b, o: L.inner(a, a, out=o(2, 2)),
    "tensordot": lambda L, a, b, o: L.tensordot(a, b, 1, out=o(2, 2)),
}


@pytest.mark.parametrize("name", list(_PRODUCTS_OUT))
@pytest.mark.parametrize("out_dtype", ["float32", "int64", "float64"])
def test_matrix_products_out_dtype(name, out_dtype):
    def run(L):
        a = L.tensor(np.arange(6.0).reshape(2, 3), dtype=L.float64)
        b = L.tensor(np.arange(6.0).reshape(3, 2), dtype=L.float64)
        return _PRODUCTS_OUT[name](L, a, b, lambda *s: L.empty(*s, dtype=getattr(L, out_dtype)))
    same(run, match=None if out_dtype == "float64" else
         r"dtype|must have the same dtype|can't be cast")
