"""Fixes found by running the second part of PyTorch's test_linalg.py on ember (matmul tests
to the end of TestLinalg), each compared with torch on the same inputs: ormqr's argument checks
and out=, geqrf's column-major factors and out=, householder_product's out=, cholesky_inverse
of a factor with a zero diagonal, the pivot checks of lu_solve and lu_unpack,
torch._addmm_activation, torch._compute_linear_combination, pca_lowrank of a sparse matrix,
torch._linalg_utils, and the harness pieces PyTorch's tests import (random_sparse_pd_matrix,
largeTensorTest on a device ember does not have)."""
import re
import unittest

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")
from _ported import same  # noqa: E402


def _t(L, a, dtype="float64"):
    return L.tensor(np.asarray(a), dtype=getattr(L, dtype))


def _mat(L, shape, dtype="float64", seed=0):
    g = np.random.default_rng(seed)
    a = g.standard_normal(shape)
    if "complex" in dtype:
        a = a + 1j * g.standard_normal(shape)
    return _t(L, a, dtype)


def _first_line(fn):
    """torch's message for fn(torch) (its first line), or None when torch returns."""
    try:
        fn(torch)
    except Exception as exc:  # the message torch gives is what ember must give
        return re.escape(str(exc).splitlines()[0])
    return None


def same_as_torch(fn):
    same(fn, match=_first_line(fn))


# ---- ormqr, geqrf, householder_product ------------------------------------------------------
ORMQR_CASES = [  # (input, tau, other) shapes, keywords; dtypes of tau / other
    ((10,), (2,), (2,), {}), ((2, 2), (2,), (2,), {}), ((10, 6), (20,), (10, 6), {}),
    ((6, 6), (5,), (5, 5), {}), ((6, 6), (5,), (5, 5), {"left": False}),
    ((1, 2, 2), (2, 2), (1, 2, 2), {}), ((1, 2, 2), (1, 2), (2, 2, 2), {}),
    ((6, 4), (2, 4), (6, 3), {}), ((6, 4), (4,), (2, 6, 3), {}),
    ((2, 1, 6, 4), (2, 2, 4), (2, 1, 6, 3), {}),
    ((6, 4), (4,), (6, 3), {"tau_dtype": "float32"}),
    ((6, 4), (4,), (6, 3), {"other_dtype": "float32"}),
    ((6, 4), (4,), (6, 3), {}), ((4, 6), (4,), (3, 4), {"left": False, "transpose": True}),
]


@pytest.mark.parametrize("a, tau, c, kw", ORMQR_CASES)
def test_ormqr_checks_and_values(a, tau, c, kw):
    kw = dict(kw)
    td, cd = kw.pop("tau_dtype", "float64"), kw.pop("other_dtype", "float64")
    same_as_torch(lambda L: L.ormqr(_mat(L, a), _mat(L, tau, td, 1), _mat(L, c, cd, 2), **kw))


def test_ormqr_applies_geqrf_reflectors():
    for left, transpose in ((True, False), (False, True)):
        def fn(L):
            A = _mat(L, (2, 5, 3), "complex128")
            C = _mat(L, (2, 5, 4) if left else (2, 4, 5), "complex128", 3)
            return L.ormqr(*L.geqrf(A), C, left=left, transpose=transpose)
        same(fn)


def test_geqrf_factors_are_column_major():
    for shape in ((5, 3), (2, 3, 5)):
        t, e = torch.geqrf(_mat(torch, shape)), ember.geqrf(_mat(ember, shape))
        assert e[0].stride() == t[0].stride() and e[1].stride() == t[1].stride()
        assert e[0].mT.is_contiguous()
        same(lambda L: L.geqrf(_mat(L, shape)))


OUT_CASES = {
    "householder_product": lambda L, o: L.linalg.householder_product(_mat(L, (3, 3)),
                                                                     _mat(L, (3,)), out=o),
    "orgqr": lambda L, o: L.orgqr(_mat(L, (3, 3)), _mat(L, (3,)), out=o),
    "ormqr": lambda L, o: L.ormqr(_mat(L, (3, 3)), _mat(L, (3,)), _mat(L, (3, 2)), out=o),
    "geqrf_a": lambda L, o: L.geqrf(_mat(L, (3, 3)), out=(o, L.empty(0, dtype=L.float64))),
    "geqrf_tau": lambda L, o: L.geqrf(_mat(L, (3, 3)), out=(L.empty(0, dtype=L.float64), o)),
}


@pytest.mark.parametrize("out_dtype", ["int32", "float32", "complex128"])
@pytest.mark.parametrize("name", list(OUT_CASES))
def test_out_dtype_as_torch(name, out_dtype):
    fn = lambda L: OUT_CASES[name](L, L.empty(0, dtype=getattr(L, out_dtype)))  # noqa: E731
    same(lambda L: fn(L).__class__.__name__, match=_first_line(fn))


# ---- cholesky_inverse ---------------------------------------------------------------------------
def _factor_with_zero(L, batched):
    a = np.tril(np.random.default_rng(4).standard_normal((3, 3))) + 3 * np.eye(3)
    a[1, 1] = 0
    return _t(L, np.stack([np.eye(3), a]) if batched else a)


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_refuses_zero_diagonal(batched, upper):
    fn = lambda L: L.cholesky_inverse(_factor_with_zero(L, batched), upper)  # noqa: E731
    same(fn, match=_first_line(fn))
    with pytest.raises(ember.linalg.LinAlgError):
        fn(ember)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_values_and_gradient(upper):
    def fn(L):
        a = np.tril(np.random.default_rng(5).standard_normal((2, 4, 4))) + 3 * np.eye(4)
        F = _t(L, np.swapaxes(a, -1, -2) if upper else a).requires_grad_()
        r = L.cholesky_inverse(F, upper)
        (r * _mat(L, (2, 4, 4), seed=6)).sum().backward()
        return r, F.grad
    same(fn)
    same(lambda L: L.cholesky_inverse(_t(L, [[1., 0.], [0., 1e-30]], "float32")))


# ---- lu_solve / lu_unpack pivots ---------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1, 3, 100])
def test_lu_pivot_checks(bad):
    def factors(L):
        LU, piv = L.linalg.lu_factor(_mat(L, (3, 2, 2)))
        piv[0] = bad
        return LU, piv
    same_as_torch(lambda L: L.linalg.lu_solve(*factors(L), _mat(L, (3, 2, 2), seed=1)))
    same_as_torch(lambda L: L.linalg.lu_solve(*factors(L), _mat(L, (3, 2, 2), seed=1),
                                              left=False, adjoint=True))
    same_as_torch(lambda L: L.lu_unpack(*factors(L)))
    same_as_torch(lambda L: L.lu_unpack(*factors(L), unpack_pivots=False)[0].shape)


# ---- the private ops -------------------------------------------------------------------------
def _addmm_args(L, dtype="float64"):
    return _mat(L, (3, 4), dtype), _mat(L, (3, 5), dtype, 1), _mat(L, (5, 4), dtype, 2)


def test_addmm_activation():
    same(lambda L: L._addmm_activation(*_addmm_args(L)))
    same(lambda L: L._addmm_activation(*_addmm_args(L), beta=0.5, alpha=2, use_gelu=True))
    same(lambda L: _addmm_args(L)[0]._addmm_activation(*_addmm_args(L)[1:], beta=0))
    same(lambda L: L._addmm_activation(_t(L, [1, 2], "int64"), _t(L, [[1, -5]], "int64"),
                                       _t(L, [[1, 2], [1, 1]], "int64")))
    same_as_torch(lambda L: L._addmm_activation(*_addmm_args(L), out=L.empty(0)))
    same_as_torch(lambda L: L._addmm_activation(_addmm_args(L)[0], _addmm_args(L, "float32")[1],
                                                _addmm_args(L)[2]))

    def out(L):
        o = L.empty(3, 4, dtype=L.float64)
        return L._addmm_activation(*_addmm_args(L), out=o) is o, o
    same(out)

    def backward(L):
        M, a, b = _addmm_args(L)
        L._addmm_activation(M.requires_grad_(), a, b).sum().backward()
    same(backward, match="derivative for aten::_addmm_activation is not implemented")


def test_compute_linear_combination():
    same(lambda L: L._compute_linear_combination(_mat(L, (3, 2, 2), "complex64"),
                                                 _mat(L, (4, 3), "float32", 1)))
    same(lambda L: L._compute_linear_combination(_mat(L, (3, 2)), _mat(L, (4, 3), seed=1)))
    same(lambda L: L._compute_linear_combination(
        _t(L, [[1., 2], [3, 4]]), _t(L, [[1., 1]]), out=L.full((1, 2), 10., dtype=L.float64)))
    same_as_torch(lambda L: L._compute_linear_combination(L.ones(()), L.ones(2, 2)))
    same_as_torch(lambda L: L._compute_linear_combination(L.ones(0, 2), L.ones(2, 2)))

    def backward(L):
        L._compute_linear_combination(_mat(L, (3, 2)).requires_grad_(), _mat(L, (4, 3))).sum() \
            .backward()
    same(backward, match="is not implemented")


# ---- pca_lowrank of a sparse matrix -------------------------------------------------------------
def test_pca_lowrank_sparse_input():
    a = np.random.default_rng(7).standard_normal((9, 5)) * (np.arange(45).reshape(9, 5) % 3 == 0)

    def fn(L):
        L.manual_seed(0)
        u, s, v = L.pca_lowrank(_t(L, a).to_sparse(), q=5)
        return u @ s.diag_embed() @ v.mT   # the centred matrix, whatever the factors' signs
    same(fn)
    same_as_torch(lambda L: L.pca_lowrank(_t(L, np.ones((2, 3, 3))).to_sparse(), q=2))


# ---- torch._linalg_utils and the test harness ---------------------------------------------------
def test_linalg_utils_module():
    import torch._linalg_utils as tu
    import ember._linalg_utils as eu
    assert sorted(eu.__all__) == sorted(n for n in dir(tu) if n in eu.__all__)
    S = _mat(ember, (4, 2)), _mat(torch, (4, 2))
    A = _mat(ember, (4, 4), seed=1), _mat(torch, (4, 4), seed=1)
    for e_out, t_out in ((eu.qform(A[0], S[0]), tu.qform(A[1], S[1])),
                         (eu.bform(S[0], None, S[0]), tu.bform(S[1], None, S[1])),
                         (eu.matmul(A[0].to_sparse(), S[0]), tu.matmul(A[1].to_sparse(), S[1])),
                         (eu.symeig(A[0] + A[0].mT, True)[0],
                          tu.symeig(A[1] + A[1].mT, True)[0])):
        np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), rtol=1e-12, atol=1e-12)
    assert eu.get_floating_dtype(ember.ones(1, dtype=ember.int32)) is ember.float32
    with pytest.raises(TypeError):
        eu.is_sparse(np.ones(2))
    from ember._lobpcg import lobpcg
    assert lobpcg is ember.lobpcg


def test_random_sparse_pd_matrix_spectrum_and_density():
    from ember.testing._internal.common_utils import random_sparse_pd_matrix
    A = random_sparse_pd_matrix(20, density=0.3)
    assert A.is_sparse and A.dtype is ember.float64
    dense = A.to_dense().numpy()
    assert np.count_nonzero(dense) >= 0.3 * 400
    np.testing.assert_allclose(dense, dense.T, atol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(dense), np.arange(1, 21) / 20, atol=1e-10)


def test_large_tensor_test_on_a_device_ember_lacks_skips():
    from ember.testing._internal.common_device_type import largeTensorTest

    class T(unittest.TestCase):
        device_type = "cpu"

        @largeTensorTest("1GB", device="cuda")
        def test_cuda(self):
            raise AssertionError("ran")

        @largeTensorTest(1)
        def test_cpu(self):
            pass
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(T).run(result)
    assert [reason for _, reason in result.skipped] == ["Insufficient cuda memory"]
    assert result.testsRun == 2 and not result.failures and not result.errors
