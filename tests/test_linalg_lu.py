"""LU with partial pivoting as PyTorch's ops against torch: linalg_lu_factor_ex and linalg_lu
(LAPACK's getrf; column-major packed factors, 1-based int32 pivots, info), their errors, and
their backward (PyTorch's linalg_lu_backward: square, wide and tall, real and complex)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle for these tests")

SHAPES = [(3, 3), (2, 4, 4), (3, 5), (5, 3), (2, 3, 5), (2, 5, 3)]


def _pair(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal(shape)
    return (ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True), rng)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("shape", SHAPES)
def test_factors_and_gradients_match_torch(shape, dtype):
    ea, ta, rng = _pair(shape, dtype)
    er, tr = ember.linalg.lu_factor_ex(ea), torch.linalg.lu_factor_ex(ta)
    np.testing.assert_allclose(er.LU.detach().numpy(), tr.LU.detach().numpy(), atol=1e-12)
    assert er.LU.stride() == tr.LU.stride()
    assert er.pivots.tolist() == tr.pivots.tolist() and er.info.tolist() == tr.info.tolist()
    assert type(er.LU.grad_fn).__name__ == type(tr.LU.grad_fn).__name__ == \
        "LinalgLuFactorExBackward0"
    g = rng.standard_normal(shape)
    ge, = ember.autograd.grad(er.LU, ea, ember.tensor(g).to(er.LU.dtype))
    gt, = torch.autograd.grad(tr.LU, ta, torch.tensor(g).to(tr.LU.dtype))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), atol=1e-10)

    (Pe, Le, Ue), (Pt, Lt, Ut) = ember.linalg.lu(ea), torch.linalg.lu(ta)
    for e, t in ((Pe, Pt), (Le, Lt), (Ue, Ut)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=1e-12)
        assert e.stride() == t.stride() and str(e.dtype) == str(t.dtype)
    assert not Pe.requires_grad and type(Le.grad_fn).__name__ == "LinalgLuBackward0"
    ge, = ember.autograd.grad(Le.abs().sum() + Ue.abs().pow(2).sum(), ea)
    gt, = torch.autograd.grad(Lt.abs().sum() + Ut.abs().pow(2).sum(), ta)
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 4), (4, 3)])
def test_gradcheck_and_gradgradcheck(shape):
    a = ember.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: ember.linalg.lu_factor_ex(x).LU, (a,))
    assert ember.autograd.gradgradcheck(lambda x: ember.linalg.lu(x)[1:], (a,))


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # the type and message are what is compared
        return type(e).__name__, str(e)
    return [tuple(x.shape) for x in r], [x.stride() for x in r], [str(x.dtype) for x in r]


@pytest.mark.parametrize("case", [
    lambda L: L.linalg.lu_factor_ex(L.ones(3)), lambda L: L.linalg.lu(L.ones(3)),
    lambda L: L.linalg.lu_factor(L.ones(3)),
    lambda L: L.linalg.lu_factor_ex(L.ones(2, 2), pivot=False),
    lambda L: L.linalg.lu(L.ones(2, 2), pivot=False),
    lambda L: L.linalg.lu_factor_ex(L.ones(2, 2, dtype=L.int64), pivot=False),
    lambda L: L.linalg.lu(L.ones(2, 2, dtype=L.float16)),
    lambda L: L.linalg.lu_factor(L.zeros(2, 2)),
    lambda L: L.linalg.lu_factor(L.zeros(3, 2, 2)),
    lambda L: L.linalg.lu_factor_ex(L.zeros(2, 2), check_errors=True),
    lambda L: L.linalg.lu_factor_ex(L.zeros(3, 2, 2), check_errors=True),
    lambda L: L.linalg.lu_factor_ex(L.zeros(2, 2)),
    lambda L: L.linalg.lu_factor_ex(L.zeros(3, 0)), lambda L: L.linalg.lu_factor_ex(L.zeros(0, 5)),
    lambda L: L.linalg.lu(L.zeros(2, 0, 0)), lambda L: L.linalg.lu(L.zeros(3, 4, 2).mT),
    lambda L: L.linalg.lu_factor_ex(L.zeros(3, 4, 2, device="meta")),
    lambda L: L.linalg.lu(L.zeros(4, 2, device="meta")),
], ids=lambda c: "")
def test_errors_shapes_and_layouts_match_torch(case):
    assert _outcome(lambda: case(ember)) == _outcome(lambda: case(torch)), case


def test_schemas_are_pytorchs():
    for name in ("linalg_lu_factor_ex", "linalg_lu"):
        assert str(getattr(ember.ops.aten, name).default._schema) == \
            str(getattr(torch.ops.aten, name).default._schema)
